-- bad: two verdicts that read the same on memory
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
  rule = {
    seed = 1,
    verdicts = {
      { "slower", names = { memory = "more memory" }, ci_excludes = 1, ratio_above = 1.1 },
      { "much slower", names = { memory = "more memory" }, ci_excludes = 1, ratio_above = 2 },
      { "tie", ci_within = { 0.95, 1.05 } },
    },
  },
}
