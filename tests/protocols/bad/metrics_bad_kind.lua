-- bad: an unknown kind of metric
protocol {
  id = "bad-sheet",
  title = "A sheet",
  arms = {
    { name = "bare", reference = true },
    { name = "nice", run = "nice {cmd}" },
  },
  workloads = {
    { name = "startup", runs = 5, cmd = "/bin/true", metrics = { "wall_s", "pss_mib", "ops" } },
  },
  metrics = { ops = { kind = "speed" } },
  rule = {
    seed = 1,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.1 },
      { "tie", ci_within = { 0.95, 1.05 } },
    },
  },
}
