-- bad: memory declared as a time
protocol {
  id = "bad-sheet",
  title = "A sheet with one mistake",
  arms = {
    { name = "bare", reference = true },
    { name = "nice", run = "nice {cmd}" },
  },
  workloads = {
    { name = "startup", runs = 5, cmd = "/bin/true", metrics = { "wall_s", "pss_mib" },
      processes = { cmdline = { "prereg-{experiment}-{run_id}" } } },
  },
  metrics = { pss_mib = { kind = "time" } },
  rule = { seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
