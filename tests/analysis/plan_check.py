#!/usr/bin/python3
# plan_check.py: prereg plan's probabilities against a simulation of the
# same experiments written here with NumPy, by resampling (no exact law):
# pilot values drawn from distributions this script knows (normal,
# log-normal, a shifted exponential, a two-valued one with ties), each n
# values per arm drawn with replacement, the percentile bootstrap of the
# ratio of medians at the sheet's resamples, the sheet's rule. Prints one
# "ok    ..." or "FAIL  ..." line per check.
#
# Tolerance: the two estimates of one probability are independent
# binomial proportions (prereg's K1 and NumPy's K2 experiments), so their
# difference has sd sqrt(p(1-p)(1/K1 + 1/K2)); 4.5 sd plus 0.01 (NumPy's
# intervals come from B resamples, prereg's from the exact law B tends to,
# which moves a verdict only when an end sits within the bootstrap's own
# Monte Carlo error of a bound).
# Usage: plan_check.py PREREG WORKDIR
# SPDX-License-Identifier: MIT
import json
import math
import os
import subprocess
import sys

import numpy as np

PREREG, WORK = sys.argv[1], sys.argv[2]
RESAMPLES = 2000
CONF = 0.95
SIZES = [5, 12, 25]
SIMS_PREREG = 4000
SIMS_NUMPY = 500
PILOT = 40
failures = 0


def say(good, what):
    global failures
    print(("ok    " if good else "FAIL  ") + what)
    if not good:
        failures += 1


SHEET = """protocol {
  id = "plan-check",
  title = "plan check", question = "q", author = "a",
  arms = { { name = "ref", reference = true }, { name = "arm" } },
  workloads = {
    { name = "normal", runs = %(p)d, metrics = { "wall_s" } },
    { name = "lognormal", runs = %(p)d, metrics = { "wall_s" } },
    { name = "shiftexp", runs = %(p)d, metrics = { "wall_s" } },
    { name = "twovalued", runs = %(p)d, metrics = { "wall_s" } },
  },
  rule = {
    estimator = "median", confidence = %(c)g, resamples = %(b)d, seed = 5,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.10 },
      { "faster", ci_excludes = 1, ratio_below = 1 / 1.10 },
      { "tie",    ci_within = { 0.95, 1.05 } },
    },
  },
}
""" % {"p": PILOT, "c": CONF, "b": RESAMPLES}

gen = np.random.default_rng(20261201)
pilot = {
    "normal": (gen.normal(10, 1, PILOT), gen.normal(11.5, 1, PILOT)),
    "lognormal": (gen.lognormal(0, 0.25, PILOT),
                  gen.lognormal(math.log(1.15), 0.25, PILOT)),
    "shiftexp": (1 + gen.exponential(0.3, PILOT),
                 1 + gen.exponential(0.45, PILOT)),
    "twovalued": (gen.choice([1.0, 1.2], PILOT, p=[0.6, 0.4]),
                  gen.choice([1.0, 1.2], PILOT, p=[0.3, 0.7])),
}

os.chdir(WORK)
with open("sheet.lua", "w") as f:
    f.write(SHEET)
with open("pilot.csv", "w") as f:
    f.write("workload,arm,metric,value\n")
    for w, (r, c) in pilot.items():
        for x in r:
            f.write("%s,ref,wall_s,%.17g\n" % (w, x))
        for x in c:
            f.write("%s,arm,wall_s,%.17g\n" % (w, x))


def run(*args):
    return subprocess.run([PREREG] + list(args), capture_output=True,
                          text=True)


for args in (("register", "sheet.lua"), ("import", "sheet.lua",
                                         "pilot.csv")):
    p = run(*args)
    say(p.returncode == 0, "prereg %s: exit %d %s" % (args[0], p.returncode,
                                                      p.stderr.strip()))
p = run("plan", "sheet.lua", "--pilot", "data/plan-check", "--json",
        "--sizes", ",".join(map(str, SIZES)), "--sims", str(SIMS_PREREG))
say(p.returncode == 0, "prereg plan --json: exit %d %s" %
    (p.returncode, p.stderr.strip()))
plan = json.loads(p.stdout)
names = ["slower", "faster", "tie", "inconclusive", "insufficient data"]


def verdict(ratio, lo, hi):
    if (lo > 1 or hi < 1) and ratio > 1.10:
        return 0
    if (lo > 1 or hi < 1) and ratio < 1 / 1.10:
        return 1
    if 0.95 <= lo and hi <= 1.05:
        return 2
    return 3


def smoothed(ref, n, rng):
    """n values of ref smoothed as plan's no-difference simulation draws
    them: ref[J] times exp(h Z), h the sd of log(ref) / sqrt(len)."""
    h = np.std(np.log(ref), ddof=1) / math.sqrt(len(ref))
    return rng.choice(ref, n) * np.exp(h * rng.standard_normal(n))


def simulate(ref, cand, n, sims, rng, null=False):
    """Outcome counts of sims experiments, each its own bootstrap."""
    a = (1 - CONF) / 2
    counts = np.zeros(5)
    for _ in range(sims):
        xr = smoothed(ref, n, rng) if null else rng.choice(ref, n)
        xc = smoothed(ref, n, rng) if null else rng.choice(cand, n)
        ratio = np.median(xc) / np.median(xr)
        mr = np.median(xr[rng.integers(0, n, (RESAMPLES, n))], axis=1)
        mc = np.median(xc[rng.integers(0, n, (RESAMPLES, n))], axis=1)
        lo, hi = np.quantile(mc / mr, [a, 1 - a])
        counts[verdict(ratio, lo, hi)] += 1
    return counts / sims


def close(p1, p2, k1, k2):
    p = (p1 * k1 + p2 * k2) / (k1 + k2)
    sd = math.sqrt(p * (1 - p) * (1 / k1 + 1 / k2))
    return abs(p1 - p2) <= 4.5 * sd + 0.01, sd


rng = np.random.default_rng(7)
for comp in plan["comparisons"]:
    w = comp["workload"]
    ref, cand = pilot[w]
    say(comp["sizes"] == SIZES, "%s: sizes %s" % (w, comp["sizes"]))
    for si, n in enumerate(SIZES):
        for null, key in ((0, "p_verdicts"), (1, "p_verdicts_no_difference")):
            ours = simulate(ref, cand, n, SIMS_NUMPY, rng, null)
            for o, name in enumerate(names):
                theirs = comp[key][name][si]
                good, sd = close(theirs, ours[o], SIMS_PREREG, SIMS_NUMPY)
                say(good, "%s n=%d %s %s: prereg %.4f, numpy %.4f (sd %.4f)"
                    % (w, n, "null" if null else "pilot", name, theirs,
                       ours[o], sd))
        # The rule's false decisions, per direction, within Monte Carlo
        # error of (1 - confidence) / 2.
        cap = (1 - CONF) / 2
        for d in ("p_false_up", "p_false_down"):
            v = comp[d][si]
            sd = math.sqrt(cap * (1 - cap) / SIMS_PREREG)
            say(v <= cap + 3 * sd, "%s n=%d %s %.4f <= %.3f + 3 sd" %
                (w, n, d, v, cap))
        # Over the plausible truths: a mean of 40 powers, between the
        # lowest and highest, power_low among them, errors the binomial's.
        pw, low = comp["power"][si], comp["power_low"][si]
        say(0 <= low <= 1 and 0 <= pw <= 1 and comp["power_se"][si] >= 0,
            "%s n=%d power %.4f, power_low %.4f in [0, 1]" % (w, n, pw, low))
        pd = comp["p_decided"][si]
        say(abs(comp["p_decided_se"][si] -
                math.sqrt(pd * (1 - pd) / SIMS_PREREG)) < 1e-9,
            "%s n=%d p_decided_se is the binomial error" % (w, n))
        dec = sum(comp["p_verdicts"][k][si] for k in names[:3])
        say(abs(dec - comp["p_decided"][si]) < 1e-9,
            "%s n=%d p_decided is the sum of the decided verdicts" % (w, n))
sys.exit(1 if failures else 0)
