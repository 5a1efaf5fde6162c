-- k8s-runtimes.lua: the Kubernetes runtime comparison of seed 004
-- ("containerd, CRI-O and gVisor under different workloads") as a sheet:
-- the same pod, scheduled through runtimeClassName, running sysbench cpu
-- and memory, fio and wrk2 through kubectl. It runs where kubectl reaches
-- a cluster with the three runtime classes, and refuses clearly elsewhere.
-- SPDX-License-Identifier: MIT

-- One pod per run, under the arm's runtime class: created, waited for,
-- the workload run in it with kubectl exec, the pod deleted whatever
-- happened. The workload's output is kept in the run's folder (out.txt)
-- and shown; the figures the tools print become metrics through
-- $PREREG_METRICS (sed, because a sheet's command strings reserve braces
-- for placeholders). The exit status is the workload's.
local extract = table.concat({
  "sed -n",
  [[-e "s/^ *events per second: *\([0-9.]*\).*/events_per_s=\1/p"]],
  [[-e "s/.*(\([0-9.]*\) MiB\/sec).*/mib_per_s=\1/p"]],
  [[-e "s/^ *read: *IOPS=\([0-9.]*\),.*/read_iops=\1/p"]],
  [[-e "s/^ *write: *IOPS=\([0-9.]*\),.*/write_iops=\1/p"]],
  [[-e "s/^Requests\/sec: *\([0-9.]*\).*/requests_per_s=\1/p"]],
  [[-e "s/^ *99\.000% *\([0-9.]*\)ms.*/p99_ms=\1/p"]],
  [[out.txt >> "$PREREG_METRICS"]],
}, " ")

local function pod(class)
  local name = "prereg-{experiment}-{run_id}"
  local yaml = "apiVersion: v1\\nkind: Pod\\nmetadata:\\n  name: " .. name
    .. "\\nspec:\\n  runtimeClassName: " .. class
    .. "\\n  restartPolicy: Never\\n  containers:\\n  - name: bench"
    .. "\\n    image: {bench_image}\\n    command: [sleep, \"3600\"]"
    .. "\\n    resources:\\n      limits:\\n        cpu: \"4\""
    .. "\\n        memory: 8Gi\\n"
  return "printf '" .. yaml .. "' | kubectl apply -f - > /dev/null"
    .. " && kubectl wait --for=condition=Ready pod/" .. name
    .. " --timeout=120s > /dev/null"
    .. " && kubectl exec " .. name .. " -- {cmd} > out.txt; rc=$?;"
    .. " kubectl delete pod " .. name
    .. " --force --grace-period=0 > /dev/null 2>&1; cat out.txt; "
    .. extract .. "; exit $rc"
end

local function needs(class)
  return { "kubectl version --client", "kubectl cluster-info",
           "kubectl get runtimeclass " .. class }
end

protocol {
  id = "k8s-runtimes",
  title = "Kubernetes container runtimes: containerd, CRI-O and gVisor "
    .. "under CPU, memory, IO and network workloads",
  question = "How much throughput do CRI-O and gVisor give up against "
    .. "containerd for CPU-, memory-, IO- and network-bound pods?",
  author = "the author of the runtime comparison (seed 004)",

  vars = {
    -- An image with sysbench, fio, nginx and wrk2.
    bench_image = "registry.example.org/bench/sysbench-fio-wrk2:1",
  },

  -- runtimeClassName selects the runtime; a RuntimeClass for containerd
  -- and one for CRI-O need node pools running each (scheduling.
  -- nodeSelector in the RuntimeClass), one for gVisor a runsc handler.
  arms = {
    { name = "containerd", reference = true, run = pod("containerd"),
      requires = needs("containerd"),
      versions = { "kubectl version", "kubectl get nodes -o wide",
                   "kubectl get runtimeclass -o wide" } },
    { name = "crio", run = pod("crio"), requires = needs("crio") },
    { name = "gvisor", run = pod("gvisor"), requires = needs("gvisor") },
  },

  workloads = {
    { name = "cpu", runs = 5, warmup = 1, timeout_s = 600,
      cmd = "sysbench cpu --cpu-max-prime=20000 --threads=4 --time=300 run",
      metrics = { "events_per_s", "wall_s" } },
    { name = "memory", runs = 5, warmup = 1, timeout_s = 600,
      cmd = "sysbench memory --memory-block-size=1M "
        .. "--memory-total-size=100G --threads=4 --time=300 run",
      metrics = { "mib_per_s", "wall_s" } },
    { name = "io", runs = 5, warmup = 1, timeout_s = 900,
      cmd = "fio --name=randrw --filename=/tmp/fio.dat --size=4G "
        .. "--rw=randrw --bs=4k --iodepth=32 --ioengine=libaio --direct=1 "
        .. "--runtime=600 --time_based",
      metrics = { "read_iops", "write_iops", "wall_s" } },
    { name = "http", runs = 5, warmup = 1, timeout_s = 300,
      cmd = "sh -c 'nginx && wrk -t8 -c1000 -d60s -R50000 --latency "
        .. "http://127.0.0.1:80/'",
      metrics = { "requests_per_s", "p99_ms" } },
  },

  rule = {
    estimator = "median", confidence = 0.95, resamples = 10000, seed = 17,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_below = 1 / 1.10 },
      { "faster", ci_excludes = 1, ratio_above = 1.10 },
      { "tie", ci_within = { 0.95, 1.05 } },
    },
  },

  -- Throughput metrics: a ratio below 1 is a loss (hence the verdicts
  -- above read "slower" for ratio_below).
  hypotheses = {
    { id = "H1", says = "CRI-O ties with containerd on CPU-bound work",
      workload = "cpu", metric = "events_per_s", arms = { "crio" },
      claim = verdict_is("tie") },
    { id = "H2", says = "gVisor keeps at least 90% of containerd's CPU "
        .. "throughput",
      workload = "cpu", metric = "events_per_s", arms = { "gvisor" },
      claim = at_least(0.90) },
    { id = "H3", says = "gVisor keeps under half of containerd's random "
        .. "read IOPS",
      workload = "io", metric = "read_iops", arms = { "gvisor" },
      claim = below(0.5) },
    { id = "H4", says = "gVisor keeps under half of containerd's HTTP "
        .. "throughput",
      workload = "http", metric = "requests_per_s", arms = { "gvisor" },
      claim = below(0.5) },
  },

  threats = {
    "containerd and CRI-O are each the CRI of a whole node: comparing them "
      .. "through runtime classes needs node pools, which differ in more "
      .. "than the runtime.",
    "The HTTP load generator runs in the same pod as the server, so it "
      .. "pays the runtime's cost too.",
    "fio's file lives in the container's writable layer; storage drivers "
      .. "differ between the two CRIs.",
    "The image is named by its tag; pin it by digest in bench_image "
      .. "before registering.",
    "Throughput figures come from the tools' own summaries (sysbench, fio, "
      .. "wrk2), parsed from their output.",
  },

  amendments = {},
}
