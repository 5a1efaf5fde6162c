#!/usr/bin/python3
# cross_check.py: prereg's bootstrap against two independent implementations
# (R boot with strata, scipy.stats.bootstrap paired=False percentile) and
# against its own documented stream layout.
# SPDX-License-Identifier: MIT
#
# Usage: cross_check.py BOOT_CI WORKDIR
#
# Three kinds of check:
#
# 1. Statistical agreement, on several datasets (small n, ties, unequal n,
#    heavy tails, a realistic one). The three tools draw different random
#    streams, so their endpoints can only agree within Monte Carlo error.
#    We measure that error on the probability scale, where it is known
#    exactly and where lumpy bootstrap distributions (medians of small
#    samples have few support points) do not break it: pool the replicates
#    of K seeds of the other tool into an empirical CDF F, and require that
#    our endpoint lo sits at probability a = (1 - 0.95)/2 in it, i.e.
#    F(lo-) - d <= a <= F(lo) + d (F(lo-): mass strictly below lo), and
#    likewise for hi at 1 - a. Our endpoint is the a-quantile of B = 10,000
#    replicates, whose rank error has standard deviation
#    sqrt(a(1 - a)/B) = 0.00156; the pooled F of K x B replicates adds
#    sqrt(a(1-a)/(K B)). d is 4.5 times the combined SE (about 0.0077): a
#    false alarm has probability below 1e-5 per check. We also print the
#    endpoints and check, on the value scale, that the mean endpoint over
#    K seeds of each tool differs by less than 4.5 x the SE of that
#    difference, estimated from the spread (sd) of the endpoints over the
#    K seeds of each tool (pooled), plus the local gap between support
#    points (a lumpy distribution can put all K seeds of a tool on one
#    atom, sd 0).
# 2. The quantile step, deterministically: our sorted replicates are
#    dumped; np.percentile (linear), scipy.stats.bootstrap with
#    bootstrap_result= and n_resamples=0, and R's quantile(type = 7) must
#    give our endpoints within a few ulps.
# 3. The stream layout, exactly: a pure-Python MT19937 (seeded as GSL's
#    gsl_rng_set), the documented seed derivation (SHA-256) and
#    gsl_rng_uniform_int's rejection rule rebuild our replicates bit for
#    bit.
import hashlib
import math
import os
import subprocess
import sys

import numpy as np
import scipy.stats

BOOT_CI, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
B = 10000
CONF = 0.95
K = 5  # seeds per tool
ALPHA = (1 - CONF) / 2
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print("ok    " + what)
    else:
        failed += 1
        print("FAIL  " + what)


def boot_ci(ref, cand, seed, resamples=B, dump=None, threads=1):
    args = [BOOT_CI, "--resamples", str(resamples), "--seed", str(seed),
            "--confidence", repr(CONF), "--threads", str(threads)]
    if dump:
        args += ["--dump", dump]
    text = " ".join(repr(float(v)) for v in ref) + "\n" + \
        " ".join(repr(float(v)) for v in cand) + "\n"
    out = subprocess.run(args, input=text, capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def stat(c, r, axis=-1):
    return np.median(c, axis=axis) / np.median(r, axis=axis)


def scipy_runs(ref, cand):
    los, his, reps = [], [], []
    for s in range(1, K + 1):
        res = scipy.stats.bootstrap(
            (np.asarray(cand), np.asarray(ref)), stat, paired=False,
            vectorized=True, axis=-1, n_resamples=B, method="percentile",
            confidence_level=CONF, random_state=np.random.RandomState(s))
        los.append(res.confidence_interval.low)
        his.append(res.confidence_interval.high)
        reps.append(res.bootstrap_distribution)
    return np.array(los), np.array(his), np.concatenate(reps)


R_BOOT = r"""
suppressMessages(library(boot))
a <- commandArgs(TRUE)
l <- readLines(a[1])
ref <- as.numeric(strsplit(l[1], " ")[[1]])
cand <- as.numeric(strsplit(l[2], " ")[[1]])
B <- as.integer(a[2]); K <- as.integer(a[3]); conf <- as.numeric(a[4])
d <- c(ref, cand); g <- c(rep(1L, length(ref)), rep(2L, length(cand)))
st <- function(d, i) { x <- d[i]; median(x[g == 2L]) / median(x[g == 1L]) }
al <- (1 - conf) / 2
for (s in 1:K) {
  set.seed(s)
  b <- boot(d, st, R = B, strata = g)
  q <- quantile(b$t, c(al, 1 - al), type = 7, names = FALSE)
  cat(sprintf("%.17g %.17g\n", q[1], q[2]))
  writeBin(as.vector(b$t), file.path(a[5], sprintf("r%d.bin", s)))
}
"""

R_QUANT = r"""
a <- commandArgs(TRUE)
t <- readBin(a[1], "double", n = as.integer(a[2]), size = 8)
al <- (1 - as.numeric(a[3])) / 2
q <- quantile(sort(t), c(al, 1 - al), type = 7, names = FALSE)
cat(sprintf("%.17g %.17g\n", q[1], q[2]))
"""


def r_runs(ref, cand, name):
    d = os.path.join(WORK, "r-" + name)
    os.makedirs(d, exist_ok=True)
    data = os.path.join(d, "data.txt")
    with open(data, "w") as f:
        f.write(" ".join(repr(float(v)) for v in ref) + "\n")
        f.write(" ".join(repr(float(v)) for v in cand) + "\n")
    script = os.path.join(WORK, "boot.R")
    with open(script, "w") as f:
        f.write(R_BOOT)
    out = subprocess.run(["Rscript", script, data, str(B), str(K),
                          repr(CONF), d], capture_output=True, text=True,
                         check=True).stdout.split()
    los = np.array([float(x) for x in out[0::2]])
    his = np.array([float(x) for x in out[1::2]])
    reps = np.concatenate([np.fromfile(os.path.join(d, "r%d.bin" % s))
                           for s in range(1, K + 1)])
    return los, his, reps


def support_gap(pooled, x):
    """Distance from x to the nearest other support point of pooled."""
    u = np.unique(pooled)
    i = np.searchsorted(u, x)
    gaps = [abs(u[j] - x) for j in (i - 1, i, i + 1)
            if 0 <= j < len(u) and u[j] != x]
    return min(gaps) if gaps else 0.0


def agree(name, ours_lo, ours_hi, ours_k, tool, lo, hi, reps, pooled_sd):
    se = math.sqrt(ALPHA * (1 - ALPHA) / B) * math.sqrt(1 + 1 / K)
    d = 4.5 * se
    n = len(reps)
    for end, x, p, mean, sd, own in (
            ("low", ours_lo, ALPHA, lo.mean(), pooled_sd[0], ours_k[0]),
            ("high", ours_hi, 1 - ALPHA, hi.mean(), pooled_sd[1],
             ours_k[1])):
        own_mean = own.mean()
        below = np.count_nonzero(reps < x) / n
        at_or_below = np.count_nonzero(reps <= x) / n
        check(below - d <= p <= at_or_below + d,
              "%s %s %s: ours %.6g at P[%.4f, %.4f] of %s's %d replicates "
              "(want %.4f +- %.4f)" % (name, tool, end, x, below,
                                        at_or_below, tool, n, p, d))
        # Means over K seeds of each tool: the SE of their difference is
        # sd * sqrt(2 / K), sd the Monte Carlo spread of one endpoint,
        # pooled over the three tools (they estimate the same quantity
        # with the same B, and 3(K - 1) degrees of freedom are much
        # steadier than K - 1).
        tol = 4.5 * sd * math.sqrt(2 / K) + support_gap(reps, mean) + \
            1e-12 * abs(mean)
        check(abs(own_mean - mean) <= tol,
              "%s %s %s: our mean %.6g vs %s mean %.6g over %d seeds "
              "(pooled sd %.2g); |diff| %.3g <= %.3g" %
              (name, tool, end, own_mean, tool, mean, K, sd,
               abs(own_mean - mean), tol))


# {==== 1. Agreement on several datasets ====

rng = np.random.RandomState(20261130)
datasets = {
    # n = 5 and 6: the smallest samples a sheet would plausibly have.
    "small": (rng.normal(1.0, 0.05, 5), rng.normal(1.1, 0.05, 6)),
    # Integer milliseconds: many ties, a lumpy bootstrap distribution.
    "ties": (np.round(rng.normal(220, 4, 15)) / 1000,
             np.round(rng.normal(330, 6, 12)) / 1000),
    # Unequal n, as after invalid runs were dropped.
    "unequal": (rng.normal(7.2, 0.2, 30), rng.normal(8.3, 0.4, 10)),
    # Heavy tails: lognormal reference, Pareto-tailed candidate.
    "heavy": (rng.lognormal(0.0, 0.6, 25),
              1.2 * (1 + rng.pareto(1.5, 25))),
    # A realistic start-up comparison.
    "startup": (rng.normal(0.224, 0.01, 30), rng.normal(0.330, 0.02, 30)),
}

for name, (ref, cand) in datasets.items():
    ours = [boot_ci(ref, cand, s) for s in range(1, K + 1)]
    ours_lo = np.array([o[1] for o in ours])
    ours_hi = np.array([o[2] for o in ours])
    # Seed 1's endpoints are placed in the other tool's distribution; all
    # K seeds give our mean and spread.
    lo, hi = ours_lo[0], ours_hi[0]
    point = stat(np.asarray(cand), np.asarray(ref))
    check(abs(ours[0][0] - point) <= 1e-15 * abs(point),
          "%s: ratio of medians %.17g equals NumPy's %.17g" %
          (name, ours[0][0], point))
    s_lo, s_hi, s_reps = scipy_runs(ref, cand)
    r_lo, r_hi, r_reps = r_runs(ref, cand, name)
    pooled = tuple(math.sqrt(np.mean([a.var(ddof=1) for a in arrays]))
                   for arrays in ((ours_lo, s_lo, r_lo),
                                  (ours_hi, s_hi, r_hi)))
    agree(name, lo, hi, (ours_lo, ours_hi), "scipy", s_lo, s_hi, s_reps,
          pooled)
    agree(name, lo, hi, (ours_lo, ours_hi), "R-boot", r_lo, r_hi, r_reps,
          pooled)

# }==== */

# {==== 2. The quantile step on the same replicates ====

ULP_TOL = 4
for name, (ref, cand) in datasets.items():
    dump = os.path.join(WORK, "reps-%s.txt" % name)
    _, lo, hi = boot_ci(ref, cand, 17, dump=dump)
    t = np.loadtxt(dump)
    check(len(t) == B and np.all(np.diff(t) >= 0),
          "%s: %d sorted replicates dumped" % (name, len(t)))
    np_lo, np_hi = np.percentile(t, [100 * ALPHA, 100 * (1 - ALPHA)])

    class Given:
        bootstrap_distribution = t
    res = scipy.stats.bootstrap(
        (np.asarray(cand), np.asarray(ref)), stat, paired=False,
        vectorized=True, axis=-1, n_resamples=0, method="percentile",
        confidence_level=CONF, bootstrap_result=Given())
    bin_path = os.path.join(WORK, "reps-%s.bin" % name)
    t.astype("<f8").tofile(bin_path)
    script = os.path.join(WORK, "quant.R")
    with open(script, "w") as f:
        f.write(R_QUANT)
    rq = subprocess.run(["Rscript", script, bin_path, str(len(t)),
                         repr(CONF)], capture_output=True, text=True,
                        check=True).stdout.split()
    for tool, a, b in (("np.percentile", np_lo, np_hi),
                       ("scipy bootstrap_result", res.confidence_interval.low,
                        res.confidence_interval.high),
                       ("R quantile type 7", float(rq[0]), float(rq[1]))):
        ulo = abs(a - lo) / np.spacing(abs(lo))
        uhi = abs(b - hi) / np.spacing(abs(hi))
        check(ulo <= ULP_TOL and uhi <= ULP_TOL,
              "%s: %s [%.17g, %.17g] vs ours [%.17g, %.17g] (%g, %g ulps)"
              % (name, tool, a, b, lo, hi, ulo, uhi))

# }==== */

# {==== 3. The stream layout, rebuilt from its description ====


class MT19937:
    """MT19937 with GSL's gsl_rng_set seeding (seed 0 means 4357)."""

    def __init__(self, seed):
        seed = seed & 0xffffffff or 4357
        self.mt = [seed]
        for i in range(1, 624):
            prev = self.mt[-1]
            self.mt.append((1812433253 * (prev ^ (prev >> 30)) + i)
                           & 0xffffffff)
        self.i = 624

    def get(self):
        if self.i >= 624:
            mt = self.mt
            for k in range(624):
                y = (mt[k] & 0x80000000) | (mt[(k + 1) % 624] & 0x7fffffff)
                mt[k] = mt[(k + 397) % 624] ^ (y >> 1) ^ \
                    (0x9908b0df if y & 1 else 0)
            self.i = 0
        y = self.mt[self.i]
        self.i += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9d2c5680
        y ^= (y << 15) & 0xefc60000
        y ^= y >> 18
        return y & 0xffffffff

    def uniform_int(self, n):
        scale = 0xffffffff // n
        while True:
            k = self.get() // scale
            if k < n:
                return k


def seed32(*parts):
    h = hashlib.sha256(b"\0".join(p.encode() for p in parts)).digest()
    return int.from_bytes(h[:4], "big")


def py_median(x):
    x = sorted(x)
    n = len(x)
    return x[n // 2] if n % 2 else 0.5 * (x[n // 2 - 1] + x[n // 2])


cseed = seed32("prereg-bootstrap-v1", "17", "files", "wall_s", "gvisor")
out = subprocess.run([BOOT_CI, "--rule-seed", "17", "files", "wall_s",
                      "gvisor"], capture_output=True, text=True,
                     check=True).stdout.split()
check(int(out[0]) == cseed and
      [int(x) for x in out[1:]] ==
      [seed32("prereg-block-v1", str(cseed), str(k)) for k in range(3)],
      "comparison and block seeds follow the documented SHA-256 derivation")

ref = sorted([15.2, 14.9, 15.0, 15.4, 15.1, 14.8, 15.3])
cand = sorted([15.5, 15.1, 16.0, 15.2, 15.7, 15.9, 15.3, 15.6])
NB = 1234  # three blocks, the last one partial
reps = []
for b in range(NB):
    k = b // 500
    if b % 500 == 0:
        g = MT19937(seed32("prereg-block-v1", str(cseed), str(k)))
    mr = py_median([ref[g.uniform_int(len(ref))] for _ in ref])
    mc = py_median([cand[g.uniform_int(len(cand))] for _ in cand])
    reps.append(mc / mr)
reps.sort()
dump = os.path.join(WORK, "layout.txt")
# Unsorted input on purpose: indices point into the sorted values.
boot_ci(list(reversed(ref)), cand, cseed, resamples=NB, dump=dump, threads=2)
ours = np.loadtxt(dump)
check(len(ours) == NB and all(float(a) == b for a, b in zip(ours, reps)),
      "replicates rebuilt from the documented layout match bit for bit "
      "(%d replicates, 3 blocks)" % NB)

# }==== */

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
