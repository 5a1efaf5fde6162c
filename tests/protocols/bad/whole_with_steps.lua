-- bad: whole-command arms and workload steps
protocol {
  id = "bad-sheet",
  title = "A sheet with one mistake",
  vars = { flags = "-n 5" },
  arms = {
    { name = "bare", reference = true, run = "/bin/true" },
    { name = "nice", run = "nice {flags} /bin/true" },
  },
  workloads = {
    { name = "startup", runs = 5, metrics = { "wall_s" } },
    { name = "other", runs = 5, steps = { "/bin/true" } },
  },
  rule = {
    seed = 1,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.1 },
      { "tie", ci_within = { 0.95, 1.05 } },
    },
  },
  hypotheses = {
    { id = "H1", says = "nice costs under 2x", workload = "startup",
      metric = "wall_s", claim = below(2) },
  },
  amendments = {
    { date = "2026-01-02", why = "A reason." },
  },
}
