#!/usr/bin/python3
# plan_truth.py: does prereg plan's recommendation hold for the truth?
# For each of three distributions whose truth this script knows (a
# log-normal of spread 0.15, a gamma of shape 40 and a shifted
# exponential, each with a true ratio of medians of 1.2), PILOTS pilots
# of 5 values per arm are fabricated, imported (prereg import) and
# planned (prereg plan --pilot DATA/ID --power 0.8 --json); the true
# power at each recommended size is then simulated here on the true
# distributions (K experiments of n values per arm, the percentile
# bootstrap of the ratio of medians at B resamples, the sheet's rule).
# Prints, per distribution and in all: how many pilots get a
# recommendation, how many of those reach a true power of 0.75, and the
# median recommendation. Target: >= 85% reach 0.75, >= half of the
# pilots get one, median <= 50 runs per arm. Not a ctest (minutes).
# Usage: plan_truth.py PREREG WORKDIR [PILOTS (30)] [K (1000)]
# SPDX-License-Identifier: MIT
import json
import os
import statistics
import subprocess
import sys

import numpy as np

PREREG, WORK = sys.argv[1], sys.argv[2]
PILOTS = int(sys.argv[3]) if len(sys.argv) > 3 else 30
K = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
B = 2000
CONF = 0.95
RATIO = 1.2
TARGET = 0.75

SHEET = """protocol {
  id = "truth", title = "truth", question = "q", author = "a",
  arms = { { name = "ref", reference = true }, { name = "arm" } },
  workloads = { { name = "w", runs = 5, metrics = { "wall_s" } } },
  rule = {
    estimator = "median", confidence = 0.95, resamples = 10000, seed = 1,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.05 },
      { "faster", ci_excludes = 1, ratio_below = 1 / 1.05 },
      { "tie",    ci_within = { 0.95, 1.05 } },
    },
  },
}
"""


# Each draws m values with median 1 (the reference) or RATIO (the arm).
def lognormal(g, scale, m):
    return scale * g.lognormal(0.0, 0.15, m)


def gamma(g, scale, m):
    # shape 40: spread (sd / mean) 0.16; its median is about 39.67.
    return scale * g.gamma(40.0, 1.0, m) / 39.6668


def shiftexp(g, scale, m):
    # 1 + Exp(mean 0.2), its median 1 + 0.2 ln 2, scaled to 1.
    return scale * (1.0 + g.exponential(0.2, m)) / (1.0 + 0.2 * np.log(2))


DISTS = [("lognormal 0.15", lognormal), ("gamma 40", gamma),
         ("shifted exponential", shiftexp)]


def verdicts(ratio, lo, hi):
    excl = (lo > 1) | (hi < 1)
    return (excl & (ratio > 1.05)) | (excl & (ratio < 1 / 1.05)) | \
        ((lo >= 0.95) & (hi <= 1.05))


def true_power(dist, n, seed):
    g = np.random.default_rng(seed)
    a = (1 - CONF) / 2
    decided = 0
    for _ in range(K):
        xr, xc = dist(g, 1.0, n), dist(g, RATIO, n)
        mr = np.median(xr[g.integers(0, n, (B, n))], axis=1)
        mc = np.median(xc[g.integers(0, n, (B, n))], axis=1)
        lo, hi = np.quantile(mc / mr, [a, 1 - a])
        decided += bool(verdicts(np.median(xc) / np.median(xr), lo, hi))
    return decided / K


def plan_one(dist, g, i):
    d = os.path.join(WORK, "d%d" % i)
    csv = os.path.join(WORK, "p%d.csv" % i)
    with open(csv, "w") as f:
        f.write("workload,arm,metric,value\n")
        for arm, scale in (("ref", 1.0), ("arm", RATIO)):
            for x in dist(g, scale, 5):
                f.write("w,%s,wall_s,%.17g\n" % (arm, x))
    for args in (["register", "truth.lua"], ["import", "truth.lua", csv]):
        subprocess.run([PREREG] + args + ["--data", d], check=True,
                       capture_output=True)
    out = subprocess.run([PREREG, "plan", "truth.lua", "--pilot",
                          os.path.join(d, "truth"), "--power", "0.8",
                          "--json", "--data", d], capture_output=True,
                         text=True)
    return json.loads(out.stdout)["recommended"]["w"]


os.chdir(WORK)
with open("truth.lua", "w") as f:
    f.write(SHEET)
total = {"pilots": 0, "picks": [], "reach": 0}
for k, (name, dist) in enumerate(DISTS):
    g = np.random.default_rng(1000 + k)
    picks = [plan_one(dist, g, k * PILOTS + i) for i in range(PILOTS)]
    got = [p for p in picks if p]
    power = {n: true_power(dist, n, 7 + n) for n in sorted(set(got))}
    reach = sum(power[p] >= TARGET for p in got)
    print("%s: true power at the sizes recommended: %s" % (name, ", ".join(
        "%d: %.3f" % (n, power[n]) for n in sorted(power))))
    print("%s: %d of %d pilots get a recommendation; %d of them reach a true "
          "power of %.2f; median %s runs per arm; recommendations: %s" % (
              name, len(got), PILOTS, reach, TARGET,
              statistics.median(got) if got else "-",
              ", ".join(str(p) for p in picks)))
    total["pilots"] += PILOTS
    total["picks"] += got
    total["reach"] += reach
got = total["picks"]
share = total["reach"] / len(got) if got else 0.0
print("all: %d of %d pilots get a recommendation (%.0f%%; target >= 50%%), "
      "%d of %d reach a true power of %.2f (%.0f%%; target >= 85%%), median "
      "%s runs per arm (target <= 50)" % (
          len(got), total["pilots"], 100.0 * len(got) / total["pilots"],
          total["reach"], len(got), TARGET, 100.0 * share,
          statistics.median(got) if got else "-"))
