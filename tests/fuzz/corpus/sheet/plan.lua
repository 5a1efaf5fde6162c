-- A sheet with the plan block prereg plan --write writes: the runs of
-- each workload and how they were chosen.
protocol {
  id = "planned", title = "A planned sheet", author = "t",
  arms = { { name = "ref", reference = true }, { name = "b" } },
  workloads = {
    { name = "w", runs = 20, metrics = { "wall_s" } },
    { name = "v", runs = 30, metrics = { "wall_s", "maxrss_kib" } },
  },

  plan = {
    power = 0.8, sims = 1000,
    sizes = { 5, 10, 20, 30, 50, 100, 200 },
    pilot = {
      sha256 = "88dbf263608277c70aefa82d3f4af36f4b4f427caf2481aebb1243d5d62e52ba",
      runs = 5, source = "pilot",
    },
    comparisons = 3, expected = 2.61,
  },
  rule = { seed = 3, verdicts = {
    { "slower", ci_excludes = 1, ratio_above = 1.10 },
    { "tie", ci_within = { 0.95, 1.05 } } } },
}
