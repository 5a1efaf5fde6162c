-- fuzz.lua: the sheet the data fuzz targets register; its arms, workloads
-- and metrics are the names the seed corpus uses.
protocol {
  id       = "fz",
  title    = "Fuzzing the data readers",
  question = "Does any input crash a reader?",
  author   = "prereg tests",
  arms = {
    { name = "bare", reference = true },
    { name = "box", run = "{cmd}" },
  },
  workloads = {
    { name = "w", runs = 2, cmd = "/bin/true", metrics = { "wall_s", "inner_s" } },
    { name = "steps", runs = 1, steps = { "true", "false" }, expect_exit = "reference" },
    { name = "imported", metrics = { "wall_s", "maxrss_kib" } },
  },
  rule = {
    estimator = "median", confidence = 0.95, resamples = 200, seed = 7,
    verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.10 } },
  },
  hypotheses = {
    { id = "H1", says = "box is slower", workload = "w", metric = "wall_s",
      arms = { "box" }, claim = at_least(1.1) },
  },
  threats = { "Fuzz data." },
}
