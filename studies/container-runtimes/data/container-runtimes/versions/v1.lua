-- container-runtimes.lua: the Kubernetes runtime comparison of seed 004
-- (k8s-runtimes.lua: containerd, CRI-O and gVisor under sysbench, fio and
-- wrk2 as pods) moved off Kubernetes and measured on a Debian 12 host:
-- each pod a container that a private containerd starts with the arm's
-- runtime (runc, or gVisor's runsc under the same runc shim), from one
-- image built offline, with seed 003's small-files read beside it. Its
-- first version (container-runtimes/v0.lua) named CRI-O too; CRI-O is not
-- packaged for Debian 12, so the first amendment drops that arm. Run it
-- with scripts/rerun-container-runtimes.sh, which starts the containerd,
-- builds the image, registers and amends, runs, reports and stops it.
-- SPDX-License-Identifier: MIT

-- The figures the tools print, read on the host from the container's
-- output (out.txt, in the run's folder, shown as the run's stdout) and
-- written to $PREREG_METRICS: sysbench's events/s and MiB/sec, fio's terse
-- line (fields 8 and 49: read and write IOPS, exact), wrk's Requests/sec
-- and its 99% latency (us, ms, s or m, in ms), iperf3's receiver line in
-- Gbit/s, read-files' own line. Opening braces are doubled ({{ is a
-- literal {): a sheet's command strings reserve them for placeholders.
local awk = [[awk '/events per second:/ {{ print "events_per_s=" $NF }]]
  .. [[ /MiB\/sec\)/ {{ v = $0; sub(/.*\(/, "", v); sub(/ MiB.*/, "", v);]]
  .. [[ print "mib_per_s=" v }]]
  .. [[ /^3;fio-/ {{ split($0, f, ";"); print "read_iops=" f[8];]]
  .. [[ print "write_iops=" f[49] }]]
  .. [[ /^Requests\/sec:/ {{ print "requests_per_s=" $2 }]]
  .. [[ /^ +99% / {{ v = $2; x = v + 0; if (v ~ /us$/) x = x / 1000;]]
  .. [[ else if (v ~ /[0-9]s$/) x = x * 1000;]]
  .. [[ else if (v ~ /m$/) x = x * 60000; print "p99_ms=" x }]]
  .. [[ /Gbits\/sec/ && / receiver$/ {{ for (i = 1; i < NF; i++)]]
  .. [[ if ($(i + 1) == "Gbits/sec") print "gbit_per_s=" $i }]]
  .. [[ /^read_files_s=/ {{ print }' out.txt >> "$PREREG_METRICS"]]

-- One container per run, started by the private containerd with the
-- arm's runtime binary under the runc shim: named by the experiment and
-- the run (which holds the batch), in the cgroup /prereg/EXPERIMENT/RUN,
-- its FIFOs and the runtime's state under the containerd's folder, the
-- pod's memory limit (8 GiB). The exit status is the workload's.
local function ctr(binary)
  return "{ctr} run --rm --fifo-dir {ctrd}/fifo --runc-root {ctrd}/runc"
    .. " --runc-binary " .. binary
    .. " --cgroup /prereg/{experiment}/{run_id} --memory-limit 8589934592"
    .. " {image} prereg-{experiment}-{run_id} {cmd} > out.txt; rc=$?;"
    .. " cat out.txt; " .. awk .. "; exit $rc"
end

-- The containerd first, so that without it the refusal names it; then the
-- runtime binary, the image, then a real container of it.
local function needs(binary)
  return { "{ctr} version", binary .. " --version",
           "{ctr} images ls -q name=={image} | grep -qx {image}",
           "{ctr} run --rm --fifo-dir {ctrd}/fifo --runc-root {ctrd}/runc"
             .. " --runc-binary " .. binary
             .. " {image} prereg-{experiment}-{arm}-check true" }
end

-- A run's processes: its tree (the ctr client), the container's cgroup
-- and everything below it, and the processes whose command line names the
-- container (the shim; runsc's sandbox and gofer). Ending the run ends
-- them; the cleanup deletes what containerd still holds of it.
local container = { descendants = true,
                    cgroup = "/prereg/{experiment}/{run_id}",
                    cmdline = { "prereg-{experiment}-{run_id}" } }
local gone = "{ctr} tasks kill -s SIGKILL prereg-{experiment}-{run_id}"
  .. " > /dev/null 2>&1; {ctr} tasks delete -f prereg-{experiment}-{run_id}"
  .. " > /dev/null 2>&1; {ctr} containers delete"
  .. " prereg-{experiment}-{run_id} > /dev/null 2>&1; true"

local function w(name, runs, cmd, metrics)
  return { name = name, runs = runs, warmup = 1, timeout_s = 180, cmd = cmd,
           metrics = metrics, processes = container, cleanup = gone }
end

protocol {
  id = "container-runtimes",
  title = "Container runtimes: containerd with runc and with gVisor under "
    .. "CPU, memory, IO, network and small-file workloads, seed 004's "
    .. "Kubernetes study measured off Kubernetes on Debian 12",
  question = "How much throughput does gVisor give up against runc, both "
    .. "started by containerd, for CPU-, memory-, IO- and network-bound "
    .. "work and for reading many small files, and do the study's ratios "
    .. "hold on another host and other versions?",
  author = "prereg, measuring seed 004's study off Kubernetes",

  vars = {
    -- The private containerd (scripts/containerd/start.sh
    -- /var/tmp/prereg-containerd) and its client, named by path.
    ctrd = "/var/tmp/prereg-containerd",
    ctr = "/usr/bin/ctr -a /var/tmp/prereg-containerd/containerd.sock "
      .. "-n prereg",
    -- sysbench, fio, nginx, wrk, iperf3 and read-files, from Debian 12's
    -- packages (scripts/containerd/bench-image.sh), its digest on every row.
    image = "prereg/container-bench:1",
    -- runsc with --network=none, written by scripts/containerd/start.sh.
    runsc = "/var/tmp/prereg-containerd/runsc-network-none",
  },

  arms = {
    { name = "containerd-runc", reference = true, run = ctr("/usr/sbin/runc"),
      requires = needs("/usr/sbin/runc"),
      versions = { "{ctr} version", "runc --version", "uname -sr",
                   "dpkg-query -W containerd runc sysbench fio nginx-light "
                     .. "wrk iperf3" } },
    -- /usr/bin/runsc through {runsc}, which adds --network=none: this
    -- runsc (20221219) takes any network namespace on Linux 6.18 for the
    -- root one (net.core.rmem_default, its test, is in every namespace
    -- now) and refuses to start; with none it gives the container the
    -- loopback of its own netstack, which iperf3 and wrk use.
    { name = "containerd-gvisor", run = ctr("{runsc}"),
      requires = needs("{runsc}"),
      versions = { "runsc --version", "dpkg-query -W runsc", "cat {runsc}" } },
    -- CRI-O's arm, driven through its CRI socket by crictl, is dropped by
    -- the first amendment: CRI-O is not packaged for Debian 12.
  },

  image = { digest = "{ctr} images ls name=={image} | sed -n "
    .. "'s/.* \\(sha256:[0-9a-f]*\\) .*/\\1/p'" },

  metrics = {
    events_per_s = { better = "higher", unit = "events/s" },
    mib_per_s = { better = "higher", unit = "MiB/s" },
    read_iops = { better = "higher", unit = "IOPS" },
    write_iops = { better = "higher", unit = "IOPS" },
    requests_per_s = { better = "higher", unit = "requests/s" },
    p99_ms = { kind = "time", unit = "ms" },
    gbit_per_s = { better = "higher", unit = "Gbit/s" },
  },

  -- The study's workloads with their parameters; only the durations (and
  -- fio's file) are scaled down (threats).
  workloads = {
    w("cpu", 5, "sysbench cpu --cpu-max-prime=20000 --threads=4 --time=5 run",
      { "events_per_s" }),
    w("memory", 5, "sysbench memory --memory-block-size=1M "
        .. "--memory-total-size=100G --threads=4 --time=5 run",
      { "mib_per_s" }),
    w("io", 5, "fio --name=randrw --filename=/tmp/fio.dat --size=256M "
        .. "--rw=randrw --bs=4k --iodepth=32 --ioengine=libaio --direct=1 "
        .. "--runtime=5 --time_based --output-format=normal,terse",
      { "read_iops", "write_iops" }),
    w("http", 5, "sh -c 'nginx && wrk -t8 -c1000 -d5s --latency "
        .. "http://127.0.0.1:8080/'",
      { "requests_per_s", "p99_ms" }),
    w("network", 5, "sh -c 'iperf3 -s -1 -D && sleep 1 && "
        .. "iperf3 -c 127.0.0.1 -t 5 -f g'",
      { "gbit_per_s" }),
    -- Seed 003's measurement: 3,000 files of 1 KiB in the image, each
    -- opened, stat'ed and read, timed inside the container.
    w("small-files", 10, "read-files /data/files", { "read_files_s" }),
  },

  -- A ratio is the arm's median over the reference's. On a throughput a
  -- ratio below 1 is a loss and reads "slower"; on a time (p99, the
  -- small files) a ratio above 1 is.
  rule = {
    estimator = "median", confidence = 0.95, resamples = 10000, seed = 17,
    verdicts = {
      { "higher", ci_excludes = 1, ratio_above = 1.10,
        names = { time = "slower", other = "faster" } },
      { "lower", ci_excludes = 1, ratio_below = 1 / 1.10,
        names = { time = "faster", other = "slower" } },
      { "tie", ci_within = { 0.95, 1.05 } },
    },
  },

  hypotheses = {
    -- H1 (CRI-O ties with containerd on CPU) is withdrawn with its arm by
    -- the first amendment.
    { id = "H2", says = "gVisor keeps at least 90% of runc's CPU "
        .. "throughput",
      workload = "cpu", metric = "events_per_s",
      arms = { "containerd-gvisor" }, claim = at_least(0.90) },
    { id = "H3", says = "gVisor keeps under half of runc's random read "
        .. "IOPS",
      workload = "io", metric = "read_iops", arms = { "containerd-gvisor" },
      claim = below(0.5) },
    { id = "H4", says = "gVisor keeps under half of runc's HTTP "
        .. "throughput",
      workload = "http", metric = "requests_per_s",
      arms = { "containerd-gvisor" }, claim = below(0.5) },
    { id = "H5", says = "gVisor takes at least twice as long as runc to "
        .. "read 3,000 small files",
      workload = "small-files", metric = "read_files_s",
      arms = { "containerd-gvisor" }, claim = at_least(2) },
  },

  threats = {
    "Off Kubernetes: no kubelet, no pod sandbox (pause container) and no "
      .. "CNI; each run is one container started by containerd's own "
      .. "client (ctr), as a pod's container is by the CRI.",
    "The HTTP and iperf3 clients run in the same container as the "
      .. "servers, so they pay the runtime's cost too.",
    "fio's file lives in the container's writable layer (overlayfs on the "
      .. "host's disk, through gVisor's gofer in gVisor).",
    "Throughput figures come from the tools' own summaries (sysbench, "
      .. "fio's terse line, wrk, iperf3), parsed from their output on the "
      .. "host.",
    "Durations scaled down so that the whole plan runs in under 15 minutes "
      .. "on this 2-core host: sysbench 5 s (the study: 300 s), fio 5 s "
      .. "(600 s) on a 256 MiB file (4 GiB), wrk 5 s (60 s), iperf3 5 s "
      .. "(600 s); k8s-runtimes.lua keeps the study's durations. Short runs "
      .. "weigh start-up and warm-up more.",
    "wrk 4.1.0, not wrk2: no fixed rate (the study's -R50000); wrk sends "
      .. "as fast as it can with 8 threads and 1,000 connections, so "
      .. "requests/s is the most the container serves and p99 is taken at "
      .. "that load, not at a fixed one.",
    "gVisor runs with --network=none (this runsc cannot use a network "
      .. "namespace on this kernel): its loopback is its own netstack, as "
      .. "with a pod's network, but no packet leaves the sandbox; a pod's "
      .. "traffic through CNI is not measured.",
    "One host, a virtual machine (Firecracker) with 2 cores and a shared "
      .. "disk, other builds running alongside (the batch facts record the "
      .. "load); the study's was a 28-core Xeon Gold 6348 with NVMe. "
      .. "Debian 12's versions: containerd 1.6.20, runc 1.1.5, runsc "
      .. "20221219 (ptrace), against containerd 1.7.13, CRI-O 1.28.2 and "
      .. "runsc 20240205.",
    "sysbench's 4 threads on 2 cores; no CPU limit (the pods had 4 CPUs), "
      .. "the pods' 8 GiB memory limit kept.",
    "The hypotheses H2-H4 are the study's; H5 and the small-files "
      .. "workload were written after one pilot run of each workload here.",
  },

  amendments = {
    { date = "2026-12-01",
      why = "CRI-O is not packaged for Debian 12 (no cri-o or conmon "
        .. "package in bookworm; its own repositories are not reachable "
        .. "offline), so `prereg run` refuses the crio arm by its requires. "
        .. "The arm is dropped; containerd-runc and containerd-gvisor remain, "
        .. "interleaved in every workload. H1, about CRI-O alone, cannot be "
        .. "tested here and is withdrawn, not replaced. The title and the "
        .. "question drop CRI-O and ask whether the study's ratios hold "
        .. "here; the study's figures for gVisor, and seed 003's for Kata on "
        .. "the small files, are declared as published ratios so that the "
        .. "report sets them beside the measured ones, the study's CRI-O "
        .. "figures in their notes, marked as not measured here." },
  },

  -- The study's figures (seed 004's text), and seed 003's small-files read
  -- under Kata, beside the ratios measured here.
  published = {
    { workload = "cpu", metric = "events_per_s", arm = "containerd-gvisor",
      ratio = 0.939, source = "seed 004, sysbench cpu: gVisor 2987.3 "
        .. "events/s against containerd's 3182.4 (a 6.1% loss)",
      note = "CRI-O 3167.8 there (0.995 of containerd, 'within 2%'), not "
        .. "measured here (not packaged for Debian 12); 300 s there, 5 s "
        .. "here; a 28-core Xeon there, 2 shared cores here" },
    { workload = "memory", metric = "mib_per_s", arm = "containerd-gvisor",
      ratio = 0.974, source = "seed 004, sysbench memory: gVisor 14.8 GB/s "
        .. "against containerd's 15.2 GB/s",
      note = "CRI-O 15.1 GB/s there (0.993), not measured here; 300 s "
        .. "there, 5 s here" },
    { workload = "io", metric = "read_iops", arm = "containerd-gvisor",
      ratio = 0.236, source = "seed 004, fio 4k random read: gVisor 43k "
        .. "IOPS against containerd's 182k",
      note = "CRI-O 179k there (0.984), not measured here; NVMe and a 4 GiB "
        .. "file for 600 s there, a shared virtual disk and 256 MiB for 5 s "
        .. "here" },
    { workload = "io", metric = "write_iops", arm = "containerd-gvisor",
      ratio = 0.256, source = "seed 004, fio 4k random write: gVisor 31k "
        .. "IOPS against containerd's 121k",
      note = "CRI-O 118k there (0.975), not measured here" },
    { workload = "http", metric = "requests_per_s", arm = "containerd-gvisor",
      ratio = 0.363, source = "seed 004, wrk2 with 1,000 connections: "
        .. "gVisor 11,800 requests/s against containerd's 32,500",
      note = "wrk2 at a fixed rate (-R50000) for 60 s there; wrk 4.1.0 "
        .. "without a rate for 5 s here; runsc 20240205 there, 20221219 "
        .. "with --network=none here" },
    { workload = "http", metric = "p99_ms", arm = "containerd-gvisor",
      ratio = 3.15, source = "seed 004, wrk2 p99: gVisor 38.7 ms against "
        .. "containerd's 12.3 ms",
      note = "wrk's p99 at the most it can send here, not at a fixed rate" },
    { workload = "small-files", metric = "read_files_s",
      arm = "containerd-gvisor", ratio = 36.7,
      source = "seed 003, reading 3,000 small files: 2.9 s under Kata "
        .. "Containers 4.0.0 with QEMU against 79 ms under runc",
      note = "another sandbox: Kata (a VM, files through virtio-fs) there, "
        .. "gVisor (files through its gofer) here; the ratio is Kata's, set "
        .. "beside gVisor's as the cost of the same work; an 8-core Proxmox "
        .. "guest there" },
  },
}
