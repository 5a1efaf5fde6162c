-- blocked.lua: a blocked workload (one step for all its rounds on a host)
-- and reference parity across hosts (tests/slurm/hosts.sh).
protocol {
  id = "blocked-hosts",
  title = "Blocked order and exit-code parity on every host",
  arms = { { name = "bare", reference = true }, { name = "sh", run = "sh -c '{cmd}'" } },
  workloads = {
    { name = "block", runs = 3, warmup = 1, order = "blocked", cmd = "/bin/true" },
    { name = "parity", runs = 3, steps = { "true", "test {arm} = bare" },
      expect_exit = "reference" },
  },
  rule = { seed = 3, resamples = 500, verdicts = { { "slower", ci_excludes = 1 } } },
  hosts = { backend = "slurm", nodes = { "n1", "n2" }, min_completed = 1, min_hosts = 2,
            across = { max_spread = 10 } },
}
