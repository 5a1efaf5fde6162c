-- The seed experiment's sheet (../shared/seeds/002): three hypotheses,
-- a rule fixed before the first run, and four amendments.
protocol {
  id       = "agent-isolation",
  title    = "Isolating a coding agent with gVisor or Kata: what it costs",
  question = "How much time and memory does each runtime add over runc?",
  author   = "A. Person",

  vars = { image = "debian-agent", limits = "--cpus 2 --memory 2g --network none" },
  arms = {
    { name = "runc", reference = true,
      run = "docker run --rm {limits} {image} sh -c '{cmd}'" },
    { name = "gvisor", run = "docker run --rm --runtime runsc {limits} {image} sh -c '{cmd}'",
      requires = { "docker info --format '{{{{.Runtimes}}'" },
      versions = { "runsc --version" } },
    { name = "kata-qemu", run = "docker run --rm --runtime kata {limits} {image} sh -c '{cmd}'" },
    { name = "kata-clh", run = "docker run --rm --runtime kata-clh {limits} {image} sh -c '{cmd}'" },
  },
  image = { digest = "docker image inspect --format '{{{{.Id}}' {image}" },

  workloads = {
    { name = "startup", runs = 30, warmup = 1, cmd = "true" },
    { name = "idle-memory", runs = 10, cmd = "sleep 300", metrics = { "pss_mib" },
      sample_after_s = 10, timeout_s = 60,
      processes = { descendants = true, cmdline = { "{experiment}-{run_id}" } } },
    { name = "replay", runs = 10, steps = { "git init -q .", "ls", "cat missing" },
      expect_exit = "reference" },
    { name = "compile", runs = 10, cmd = "sh build.sh", metrics = { "wall_s", "inner_s" },
      prepare = "make clean", timeout_s = 600, cache = "warm" },
    { name = "files", runs = 10, cmd = "sh files.sh", metrics = { "wall_s", "inner_s" },
      order = "interleaved" },
    { name = "imported", metrics = { "wall_s" } },
  },

  rule = {
    estimator = "median", confidence = 0.95, resamples = 10000, seed = 17,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.10 },
      { "faster", ci_excludes = 1, ratio_below = 1 / 1.10 },
      { "tie",    ci_within = { 0.95, 1.05 } },
    },
  },

  hypotheses = {
    { id = "H1", says = "Kata takes at least 3x as long as runc to start",
      workload = "startup", metric = "wall_s", arms = { "kata-qemu" },
      claim = at_least(3) },
    { id = "H2", says = "gVisor and Kata cost under 1.5x runc on the replay",
      workload = "replay", metric = "wall_s", arms = { "gvisor", "kata-qemu" },
      claim = below(1.5) },
    { id = "H3", says = "many small files is the workload gVisor makes most expensive",
      claim = function(results)
        local top, top_ratio
        for _, r in ipairs(results) do
          if r.arm == "gvisor" and r.metric == "wall_s" and r.ratio then
            if not top_ratio or r.ratio > top_ratio then
              top, top_ratio = r.workload, r.ratio
            end
          end
        end
        if not top then return "inconclusive", "no gVisor results" end
        if top == "files" then
          return "held", string.format("files has the highest ratio (%.2f)", top_ratio)
        end
        return "not held", string.format("%s has the highest ratio (%.2f)", top, top_ratio)
      end },
    { id = "H4", says = "gVisor ties with runc on files timed inside",
      workload = "files", metric = "inner_s", arms = { "gvisor" },
      claim = verdict_is("tie") },
  },

  threats = {
    "One machine, a laptop, with a SATA SSD.",
    "Cloud Hypervisor's start-up and compile runs are not interleaved.",
  },

  amendments = {
    { date = "2026-10-21", why = "People who use Kata switch hypervisors: add the Cloud Hypervisor arm." },
    { date = "2026-10-21", why = "Add a clock inside the container to time only the work." },
    { date = "2026-10-22", why = "Drop the no-container baseline: not comparable on NixOS." },
    { date = "2026-10-22", why = "Redo replay, files and memory after the audit.",
      supersedes = { "replay", "files", "idle-memory" } },
  },
}
