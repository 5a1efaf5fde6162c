#!/usr/bin/python3
# plan_vs_numpy.py: prereg plan against the same simulation written with
# NumPy (vectorised resampling, np.median along an axis) on one
# comparison: a pilot of 10 values per arm, the sheet's 10,000 resamples,
# seven sizes (5 to 200), K simulated experiments per size, each with
# both arms from the pilot and with both from the reference (as plan
# does). The sides alternate over several passes; prints each pass and
# the ratio of the medians. Not a ctest (timings).
# Usage: plan_vs_numpy.py PREREG WORKDIR [SIMS] [PASSES]
# SPDX-License-Identifier: MIT
import os
import statistics
import subprocess
import sys
import time

import numpy as np

PREREG, WORK = sys.argv[1], sys.argv[2]
SIMS = int(sys.argv[3]) if len(sys.argv) > 3 else 20
PASSES = int(sys.argv[4]) if len(sys.argv) > 4 else 3
SIZES = [5, 10, 20, 30, 50, 100, 200]
B = 10000
CONF = 0.95

os.chdir(WORK)
open("bench.lua", "w").write("""protocol {
  id = "bench-plan", title = "bench", author = "bench",
  arms = { { name = "ref", reference = true }, { name = "arm" } },
  workloads = { { name = "w", runs = 10, metrics = { "wall_s" } } },
  rule = {
    estimator = "median", confidence = 0.95, resamples = 10000, seed = 1,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.10 },
      { "faster", ci_excludes = 1, ratio_below = 1 / 1.10 },
      { "tie",    ci_within = { 0.95, 1.05 } },
    },
  },
}
""")
g = np.random.default_rng(11)
ref = g.lognormal(0, 0.15, 10)
arm = g.lognormal(np.log(1.15), 0.15, 10)
with open("pilot.csv", "w") as f:
    f.write("workload,arm,metric,value\n")
    for a, v in (("ref", ref), ("arm", arm)):
        for x in v:
            f.write("w,%s,wall_s,%.17g\n" % (a, x))
for args in (["register", "bench.lua"], ["import", "bench.lua", "pilot.csv"]):
    subprocess.run([PREREG] + args, check=True, capture_output=True)


def verdict(ratio, lo, hi):
    if (lo > 1 or hi < 1) and ratio > 1.10:
        return 0
    if (lo > 1 or hi < 1) and ratio < 1 / 1.10:
        return 1
    if 0.95 <= lo and hi <= 1.05:
        return 2
    return 3


def numpy_side():
    rng = np.random.default_rng(1)
    a = (1 - CONF) / 2
    out = {}
    for n in SIZES:
        for null in (0, 1):
            counts = np.zeros(4)
            for _ in range(SIMS):
                xr = rng.choice(ref, n)
                xc = rng.choice(ref if null else arm, n)
                mr = np.median(xr[rng.integers(0, n, (B, n))], axis=1)
                mc = np.median(xc[rng.integers(0, n, (B, n))], axis=1)
                lo, hi = np.quantile(mc / mr, [a, 1 - a])
                counts[verdict(np.median(xc) / np.median(xr), lo, hi)] += 1
            out[(n, null)] = counts / SIMS
    return out


def prereg_side():
    subprocess.run([PREREG, "plan", "bench.lua", "--pilot", "data/bench-plan",
                    "--sims", str(SIMS), "--json", "--sizes",
                    ",".join(map(str, SIZES))], check=True,
                   capture_output=True)


ours, theirs = [], []
for p in range(PASSES):
    for side in ((0, 1) if p % 2 == 0 else (1, 0)):
        t = time.monotonic()
        numpy_side() if side else prereg_side()
        dt = time.monotonic() - t
        (theirs if side else ours).append(dt)
        print("pass %d %-6s %8.3f s" % (p + 1, "numpy" if side else "prereg",
                                         dt))
mo, mt = statistics.median(ours), statistics.median(theirs)
print("one comparison, %d sizes (5..200), %d simulated experiments per size "
      "and %d resamples, pilot and reference-only: prereg plan %.3f s, "
      "NumPy %.3f s (medians of %d passes)" % (len(SIZES), SIMS, B, mo, mt,
                                                PASSES))
print("ratio NumPy / prereg: %.1f (target >= 2)" % (mt / mo))
