-- bad: a cgroup path up to the hierarchy root
protocol {
  id = "bad-sheet",
  title = "A sheet with one mistake",
  arms = {
    { name = "bare", reference = true },
    { name = "nice", run = "nice {cmd}" },
  },
  workloads = {
    { name = "startup", runs = 5, cmd = "/bin/true", metrics = { "wall_s", "pss_mib" },
      processes = { cgroup = "/prereg/{experiment}/{run_id}/../.." } },
  },
  
  rule = { seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
