#!/usr/bin/python3
# plan_looks_check.py: prereg plan --looks against a simulation of the
# same sequential design written here with NumPy, by resampling (no exact
# law): pilot values from known distributions (no difference, a small
# one, a clear 2x one), each experiment drawing the last look's values per
# arm with replacement, deciding at each look on the first values with
# the percentile bootstrap at the look's confidence 1 - (1 - c) / K and
# stopping at the first look that decides. Prints one "ok    ..." or
# "FAIL  ..." line per check.
#
# Tolerance as in plan_check.py: two independent binomial proportions,
# 4.5 sd plus 0.01; expected runs: 4.5 sd of the difference of two means
# plus 0.3 runs.
# Usage: plan_looks_check.py PREREG WORKDIR
# SPDX-License-Identifier: MIT
import json
import math
import os
import subprocess
import sys

import numpy as np

PREREG, WORK = sys.argv[1], sys.argv[2]
RESAMPLES = 1000
CONF = 0.95
LOOKS = [5, 10, 30]
SIMS_PREREG = 3000
SIMS_NUMPY = 300
PILOT = 40
failures = 0


def say(good, what):
    global failures
    print(("ok    " if good else "FAIL  ") + what)
    if not good:
        failures += 1


SHEET = """protocol {
  id = "looks-check",
  title = "looks check", question = "q", author = "a",
  arms = { { name = "ref", reference = true }, { name = "same" },
           { name = "small" }, { name = "double" } },
  workloads = { { name = "w", runs = %(p)d, metrics = { "wall_s" } } },
  rule = {
    estimator = "median", confidence = %(c)g, resamples = %(b)d, seed = 9,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.10 },
      { "faster", ci_excludes = 1, ratio_below = 1 / 1.10 },
      { "tie",    ci_within = { 0.95, 1.05 } },
    },
  },
}
""" % {"p": PILOT, "c": CONF, "b": RESAMPLES}

gen = np.random.default_rng(20261205)
pilot = {
    "ref": gen.lognormal(0, 0.2, PILOT),
    "same": gen.lognormal(0, 0.2, PILOT),
    "small": gen.lognormal(math.log(1.15), 0.2, PILOT),
    "double": gen.lognormal(math.log(2), 0.2, PILOT),
}
os.chdir(WORK)
with open("sheet.lua", "w") as f:
    f.write(SHEET)
with open("pilot.csv", "w") as f:
    f.write("workload,arm,metric,value\n")
    for arm, v in pilot.items():
        for x in v:
            f.write("w,%s,wall_s,%.17g\n" % (arm, x))


def run(*args):
    return subprocess.run([PREREG] + list(args), capture_output=True,
                          text=True)


for args in (("register", "sheet.lua"), ("import", "sheet.lua",
                                         "pilot.csv")):
    p = run(*args)
    say(p.returncode == 0, "prereg %s: exit %d %s" % (args[0], p.returncode,
                                                      p.stderr.strip()))
p = run("plan", "sheet.lua", "--pilot", "data/looks-check", "--json",
        "--sizes", "5,30", "--looks", ",".join(map(str, LOOKS)),
        "--sims", str(SIMS_PREREG))
say(p.returncode == 0, "prereg plan --looks --json: exit %d %s" %
    (p.returncode, p.stderr.strip()))
plan = json.loads(p.stdout)
names = ["slower", "faster", "tie", "inconclusive", "insufficient data"]
say(plan["looks"] == LOOKS, "plan --json: looks %s" % plan["looks"])
look_conf = 1 - (1 - CONF) / len(LOOKS)
say(abs(plan["look_confidence"] - look_conf) < 1e-9,
    "plan --json: look_confidence %.6f" % plan["look_confidence"])


def verdict(ratio, lo, hi):
    if (lo > 1 or hi < 1) and ratio > 1.10:
        return 0
    if (lo > 1 or hi < 1) and ratio < 1 / 1.10:
        return 1
    if 0.95 <= lo and hi <= 1.05:
        return 2
    return 3


def experiment(ref, cand, rng):
    """One sequential experiment: (outcome, runs per arm taken)."""
    a = (1 - look_conf) / 2
    xr = rng.choice(ref, LOOKS[-1])
    xc = rng.choice(cand, LOOKS[-1])
    for n in LOOKS:
        r, c = xr[:n], xc[:n]
        ratio = np.median(c) / np.median(r)
        mr = np.median(r[rng.integers(0, n, (RESAMPLES, n))], axis=1)
        mc = np.median(c[rng.integers(0, n, (RESAMPLES, n))], axis=1)
        lo, hi = np.quantile(mc / mr, [a, 1 - a])
        o = verdict(ratio, lo, hi)
        if o < 3:
            break
    return o, n


def simulate(ref, cand, rng):
    counts, runs = np.zeros(5), []
    for _ in range(SIMS_NUMPY):
        o, n = experiment(ref, cand, rng)
        counts[o] += 1
        runs.append(n)
    return counts / SIMS_NUMPY, np.array(runs, dtype=float)


def close(p1, p2, k1, k2):
    p = (p1 * k1 + p2 * k2) / (k1 + k2)
    sd = math.sqrt(p * (1 - p) * (1 / k1 + 1 / k2))
    return abs(p1 - p2) <= 4.5 * sd + 0.01, sd


rng = np.random.default_rng(11)
seq = len(plan["comparisons"][0]["p_decided"]) - 1
say(seq == 2, "plan --json: two fixed sizes, then the sequential design")
for comp in plan["comparisons"]:
    arm = comp["arm"]
    for null, key in ((0, "p_verdicts"), (1, "p_verdicts_no_difference")):
        if null and arm != "same":
            continue  # one null simulation per workload and metric
        ours, runs = simulate(pilot["ref"], pilot["ref" if null else arm],
                              rng)
        for o, name in enumerate(names):
            theirs = comp[key][name][seq]
            good, sd = close(theirs, ours[o], SIMS_PREREG, SIMS_NUMPY)
            say(good, "%s %s %s under looks: prereg %.4f, numpy %.4f "
                "(sd %.4f)" % (arm, "null" if null else "pilot", name,
                               theirs, ours[o], sd))
        if null:
            continue
        e = comp["expected_runs"][seq]
        sd = math.sqrt(runs.var() / SIMS_NUMPY * (1 + SIMS_NUMPY /
                                                   SIMS_PREREG))
        say(abs(e - runs.mean()) <= 4.5 * sd + 0.3,
            "%s expected runs: prereg %.3f, numpy %.3f (sd %.3f)" %
            (arm, e, runs.mean(), sd))
        say(comp["expected_runs"][:seq] == [5, 30],
            "%s: a fixed size's expected runs are its size" % arm)
    # The false directional rate under looks: at most 1 - confidence.
    say(comp["p_false"][seq] <= 1 - CONF,
        "%s: p_false under looks %.4f <= %.2f" % (arm, comp["p_false"][seq],
                                                  1 - CONF))
    dec = sum(comp["p_verdicts"][k][seq] for k in names[:3])
    say(abs(dec - comp["p_decided"][seq]) < 1e-9,
        "%s: p_decided under looks is the sum of the decided verdicts" % arm)
double = [c for c in plan["comparisons"] if c["arm"] == "double"][0]
say(double["expected_runs"][seq] <= 0.5 * LOOKS[-1] and
    double["p_verdicts"]["slower"][seq] >= 0.9,
    "a clear 2x difference: slower in %.3f, %.2f runs per arm expected of "
    "at most %d" % (double["p_verdicts"]["slower"][seq],
                    double["expected_runs"][seq], LOOKS[-1]))
sys.exit(1 if failures else 0)
