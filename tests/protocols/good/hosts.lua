-- shell.lua: a 20 ms sleep, alone and twice through sh -c, on every node
-- of the loopback cluster (tests/slurm/hosts.sh): a ratio near 2 that
-- noise from other work on the machine cannot hide.
protocol {
  id = "shell-hosts",
  title = "Does twice the sleep carry over across nodes?",
  question = "How much longer do two sleeps through sh -c take, on each node?",
  arms = {
    { name = "bare", reference = true },
    { name = "sh", run = "sh -c '{cmd}; {cmd}'" },
  },
  workloads = {
    { name = "start", runs = 12, warmup = 1, cmd = "sleep 0.02",
      metrics = { "wall_s" } },
  },
  rule = {
    seed = 11, resamples = 2000,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.10 },
      { "faster", ci_excludes = 1, ratio_below = 1 / 1.10 },
    },
  },
  hypotheses = {
    { id = "H1", says = "two sleeps take at least 1.5x one", workload = "start",
      metric = "wall_s", arms = { "sh" }, claim = at_least(1.5) },
  },
  hosts = {
    backend = "slurm", nodes = { "n1", "n2", "n3" }, min_completed = 0.8,
    across = { same_verdict = true, max_spread = 1.5 },
    kubernetes = { image = "registry.example/prereg:0.1", runtime_classes = { sh = "gvisor" } },
  },
}
