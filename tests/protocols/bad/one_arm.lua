-- bad: only one arm, and a claim about another
protocol {
  id = "bad-sheet",
  title = "A sheet with one mistake",
  vars = { flags = "-n 5" },
  arms = {
    { name = "bare", reference = true },
  },
  workloads = {
    { name = "startup", runs = 5, cmd = "/bin/true", metrics = { "wall_s" } },
    { name = "other", runs = 5, cmd = "/bin/true" },
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
