-- bad: a metric declared that no workload measures
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
  metrics = { out_mib = { kind = "size" } },
  rule = {
    seed = 1,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.1 },
      { "tie", ci_within = { 0.95, 1.05 } },
    },
  },
}
