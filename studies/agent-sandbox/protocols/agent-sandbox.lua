-- agent-sandbox.lua: the published study "Isolating a coding agent with
-- gVisor or Kata: what it costs compared with Docker, measured" (seed 002)
-- as its author would have written it with prereg: four Docker runtimes,
-- five workloads, three hypotheses, the rule, and the four amendments with
-- their reasons, in order. It runs only where Docker and the runtimes are
-- installed; elsewhere `prereg run` refuses and names what is missing.
-- SPDX-License-Identifier: MIT

-- Every container gets the same limits, the same image and the run's
-- folder at /work (a fresh one per run, made by prereg).
local function docker(runtime)
  return "docker run --rm --runtime=" .. runtime
    .. " --cpus 2 --memory 2g --network none"
    .. " --cgroup-parent /prereg/{experiment}/{run_id}"
    .. " --name prereg-{experiment}-{run_id}"
    .. " -v \"$PWD\":/work -w /work {image} {cmd}"
end

-- The requires of an arm: Docker first, so that on a machine without it
-- the refusal names Docker; then the runtime's own binary, then a real
-- container of the image under that runtime.
local function needs(runtime, binary)
  return { "docker --version", "docker info", binary .. " --version",
           "docker image inspect {image}",
           "docker run --rm --runtime=" .. runtime .. " {image} true" }
end

-- The stored command logs of six agent sessions, byte for byte in the
-- image (/replay/log.txt, one command a line, 40 after the filter); step i
-- runs line i with stdin closed. Built here because a sheet is Lua.
local replay = {}
for i = 1, 40 do replay[i] = "replay-step " .. i end

protocol {
  id = "agent-sandbox",
  title = "Isolating a coding agent with gVisor or Kata: what it costs "
    .. "compared with Docker, measured",
  question = "What do gVisor and Kata Containers cost in time and memory "
    .. "with agent work, compared with Docker's default runtime, on the "
    .. "same machine and with the same limits?",
  author = "the author of the published study",

  vars = {
    -- Debian-based image with git, gcc, make, python3 and the workloads'
    -- inputs (Lua 5.4.7 sources, a local package index, the replay logs).
    image = "agent-sandbox:2026-10",
  },

  arms = {
    { name = "runc", reference = true, run = docker("runc"),
      requires = needs("runc", "runc"),
      versions = { "docker version", "containerd --version",
                   "runc --version", "uname -sr" } },
    { name = "gvisor", run = docker("runsc"),
      requires = needs("runsc", "runsc"),
      versions = { "runsc --version" } },
    { name = "kata-qemu", run = docker("kata-qemu"),
      requires = needs("kata-qemu", "kata-runtime"),
      versions = { "kata-runtime --version",
                   "qemu-system-x86_64 --version" } },
    -- The first amendment's arm (see amendments, below).
    { name = "kata-clh", run = docker("kata-clh"),
      requires = needs("kata-clh", "cloud-hypervisor"),
      versions = { "kata-runtime --version",
                   "cloud-hypervisor --version" } },
  },

  image = { digest = "docker image ls --no-trunc --quiet {image}" },

  workloads = {
    -- docker run --rm of the image running true, timed from the host.
    { name = "startup", runs = 30, warmup = 1, cmd = "true",
      metrics = { "wall_s" } },

    -- An idle container; after 10 s the PSS of its processes on the host:
    -- those in its cgroup, the descendants of the launching process, and
    -- the runtime helpers whose command line names the container (shims,
    -- the gVisor sandbox and gofer, QEMU or Cloud Hypervisor, virtiofsd).
    -- Fixed by the fourth amendment; rerun in full.
    { name = "idle-memory", runs = 10, cmd = "sleep 300",
      metrics = { "pss_mib" }, sample_after_s = 10, timeout_s = 120,
      processes = { descendants = true,
                    cgroup = "/prereg/{experiment}/{run_id}",
                    cmdline = { "prereg-{experiment}-{run_id}" } } },

    -- The recorded agent commands, in order, in a git repository with its
    -- first commit; stdin closed, each step capped at 120 s (Kata waited on
    -- stdin in the first rerun). A run counts only if every step returns
    -- the same exit code as in runc. Fixed by the fourth amendment.
    { name = "replay", runs = 10, steps = replay,
      prepare = "git init -q . && git commit -q --allow-empty -m first",
      expect_exit = "reference", timeout_s = 120, metrics = { "wall_s" } },

    -- The whole of Lua 5.4.7, make and clean; inner_s from a clock inside
    -- the container (second amendment).
    { name = "compile", runs = 10, warmup = 1,
      cmd = "inner-time make -C /src/lua-5.4.7 all clean",
      metrics = { "wall_s", "inner_s" }, timeout_s = 600 },

    -- A Python virtual environment, JupyterLab from a local index without
    -- network, and a tree of 5,000 files extracted, checked file by file.
    -- Fixed by the fourth amendment (it could fail unnoticed).
    { name = "files", runs = 10, warmup = 1, cmd = "inner-time files-workload",
      metrics = { "wall_s", "inner_s" }, timeout_s = 600 },
  },

  rule = {
    estimator = "median", confidence = 0.95, resamples = 10000, seed = 17,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.10 },
      { "tie", ci_within = { 0.95, 1.05 } },
    },
  },

  hypotheses = {
    { id = "H1", says = "Kata takes at least three times as long as runc "
        .. "to start a container",
      workload = "startup", metric = "wall_s", arms = { "kata-qemu" },
      claim = at_least(3) },
    { id = "H2", says = "gVisor and Kata take less than 1.5 times runc on "
        .. "the agent command replay",
      workload = "replay", metric = "wall_s",
      arms = { "gvisor", "kata-qemu" }, claim = below(1.5) },
    { id = "H3", says = "The many-small-files workload is the one gVisor "
        .. "makes most expensive",
      arms = { "gvisor" },
      -- Among the timed workloads (the inner clock where there is one),
      -- the one with gVisor's highest ratio to runc must be files.
      claim = function(results)
        local by = {}
        for _, r in ipairs(results) do
          if r.arm == "gvisor" and r.metric ~= "pss_mib" then
            local cur = by[r.workload]
            if cur == nil or r.metric == "inner_s" then by[r.workload] = r end
          end
        end
        local top
        for w, r in pairs(by) do
          if top == nil or r.ratio > top.ratio
              or (r.ratio == top.ratio and w < top.workload) then
            top = r
          end
        end
        if top == nil then return "inconclusive", "no gVisor results" end
        local why = string.format("highest ratio: %s %s (%.2fx)",
                                  top.workload, top.metric, top.ratio)
        return top.workload == "files" and "held" or "not held", why
      end },
  },

  threats = {
    "One machine, a laptop with a SATA SSD: the absolute numbers do not "
      .. "carry over to a server; the ratios between arms are what counts.",
    "Each technology in its default configuration (plus Cloud "
      .. "Hypervisor); gVisor's other platforms and Kata's tuning and "
      .. "templates were not tried.",
    "The same limits do not give the same resources: nproc says 8 in runc, "
      .. "2 in gVisor and 3 in Kata.",
    "Cloud Hypervisor's start-up and compile runs are not interleaved with "
      .. "the others.",
    "The replay is a filtered subset of recorded commands without model "
      .. "calls; six sessions spread over ten repetitions.",
    "Memory is the PSS of the selected processes, not the host's total.",
    "No security was measured and no escape attempted.",
  },

  amendments = {
    { date = "2026-10-21",
      why = "Kata with QEMU takes about 7 s to start; people who use Kata "
        .. "seriously switch hypervisors, so the same Kata with its official "
        .. "Cloud Hypervisor configuration is added as an arm. Its start-up "
        .. "and compile runs are done after those of the other three arms "
        .. "(blocked, not interleaved); the other workloads are "
        .. "interleaved." },
    { date = "2026-10-21",
      why = "Time from the host includes bringing the container up, 6 to 7 "
        .. "s in Kata; a clock inside the container (inner_s) is added to "
        .. "compile and files so that the work itself is timed too." },
    { date = "2026-10-22",
      why = "The no-container baseline on the host is dropped: on NixOS the "
        .. "host lacks the image's Debian tools, the replay failed on paths "
        .. "and the compile used another GCC, so it is not comparable. runc "
        .. "stays the reference." },
    { date = "2026-10-22",
      why = "An external audit rejected three workloads: the replay failed "
        .. "silently (the folder was not a git repository and some commands "
        .. "were re-escaped wrongly), the files workload could fail without "
        .. "the harness noticing, and the memory workload's process "
        .. "selection had errors. All three are fixed and rerun in full, "
        .. "interleaving the four arms; each step now runs with stdin "
        .. "closed and a 120 s cap.",
      supersedes = { "replay", "files", "idle-memory" } },
  },
}
