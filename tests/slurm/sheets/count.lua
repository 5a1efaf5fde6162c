-- count.lua: a small plan on each of n1-n3 of the loopback cluster
-- (tests/slurm/count.sh): which runs count is decided per host.
protocol {
  id = "count-hosts",
  title = "Is a round filled only by its own host?",
  question = "Does sh -c cost anything over a bare true, on each node?",
  arms = {
    { name = "bare", reference = true },
    { name = "sh", run = "sh -c '{cmd}'" },
  },
  workloads = {
    { name = "t", runs = 4, cmd = "true", metrics = { "wall_s" } },
  },
  rule = {
    seed = 5, resamples = 500,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.10 },
      { "faster", ci_excludes = 1, ratio_below = 1 / 1.10 },
    },
  },
  hosts = {
    backend = "slurm", nodes = { "n1", "n2", "n3" }, min_completed = 1,
    across = { same_verdict = true, max_spread = 3 },
  },
}
