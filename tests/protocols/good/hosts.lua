-- shell.lua: the cost of starting /bin/true through sh -c, on every node
-- of the loopback cluster (tests/slurm/hosts.sh).
protocol {
  id = "shell-hosts",
  title = "Does the cost of a shell carry over across nodes?",
  question = "How much longer does /bin/true take through sh -c, on each node?",
  arms = {
    { name = "bare", reference = true },
    { name = "sh", run = "sh -c '{cmd}'" },
  },
  workloads = {
    { name = "start", runs = 12, warmup = 1, cmd = "/bin/true",
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
    { id = "H1", says = "sh -c costs at least 1.2x a direct start", workload = "start",
      metric = "wall_s", arms = { "sh" }, claim = at_least(1.2) },
  },
  hosts = {
    backend = "slurm", nodes = { "n1", "n2", "n3" }, min_completed = 0.8,
    across = { same_verdict = true, max_spread = 3 },
    kubernetes = { image = "registry.example/prereg:0.1", runtime_classes = { sh = "gvisor" } },
  },
}
