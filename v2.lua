protocol {
  id = "v2", title = "Selections", arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "idle", runs = 1, cmd = "sleep 30", metrics = { "pss_mib" },
    sample_after_s = 0.3, processes = { descendants = false, cgroup = "/sel/{run_id}" } } },
  rule = { seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
