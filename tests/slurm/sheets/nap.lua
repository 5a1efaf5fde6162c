-- nap.lua: rounds long enough to lose a node in the middle of one
-- (tests/slurm/loss.sh): two arms of a one-second sleep.
protocol {
  id = "nap-hosts",
  title = "A node lost in the middle of a round",
  arms = {
    { name = "bare", reference = true },
    { name = "sh", run = "sh -c '{cmd}'" },
  },
  workloads = {
    { name = "nap", runs = 5, cmd = "sleep 1", metrics = { "wall_s" } },
  },
  rule = { seed = 5, resamples = 1000,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.10 } } },
  hosts = {
    backend = "slurm", nodes = { "n1", "n2", "n3" }, min_completed = 0.9,
    across = { same_verdict = true, max_spread = 2 },
  },
}
