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
# 3. The seed derivation (SHA-256, as documented), and the law of one
#    resample median: our order-statistic draws against the exact law of
#    drawing n indices with replacement, by a chi-square test (details
#    in section 3). The stream itself is rebuilt bit for bit from its
#    documentation in test_stats.c.
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


# 1. Agreement on several datasets

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

# 2. The quantile step on the same replicates

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

# 3. Seeds, and the law of one resample median
#
# The library draws a resample median without drawing n indices: for
# n <= 2048 (ANALYSIS_TABLE_MAX) the ranks of the middle values by inverse
# CDF over exact rank tables, above it from two Beta order statistics
# (analysis/bootstrap.c explains why both are the same law; test_stats.c
# rebuilds the stream bit for bit from the documented layout). Here we
# check the law itself against the method it replaces, index resampling,
# computed exactly: with a one-value reference arm (median 1), every
# replicate is the candidate's resample median, and candidate values
# chosen so that the median names the rank(s) it came from (x_i = 2^i for
# small n; x_i = i * 2^24 + i^2 for large n, whose pairwise sums are all
# different). Over 200,000 replicates the law of the middle rank(s) must
# match the exact one: for n <= 7 the joint law, by enumerating all n^n
# index tuples; for n = 24 (even: whether the two middle draws are the
# same value, the "gap" of the rank tables, and how far apart) the joint
# law by a multinomial sum, itself checked against the enumeration at
# n = 6; for n = 25, 40, 2048 (the largest table) and 2050 (Beta draws)
# the marginal law of each middle rank, P(I_(k) <= a) =
# P(Binomial(n, (a + 1) / n) >= k). Chi-square, bins with expected counts
# below 5 pooled, fails below p = 1e-6 (seeded: the outcome is fixed).
# The same counts must reject a wrong law (the median of fewer draws),
# which shows the check has power.


def seed32(*parts):
    h = hashlib.sha256(b"\0".join(p.encode() for p in parts)).digest()
    return int.from_bytes(h[:4], "big")


cseed = seed32("prereg-bootstrap-v1", "17", "files", "wall_s", "gvisor")
out = subprocess.run([BOOT_CI, "--rule-seed", "17", "files", "wall_s",
                      "gvisor"], capture_output=True, text=True,
                     check=True).stdout.split()
check(int(out[0]) == cseed and
      [int(x) for x in out[1:]] ==
      [seed32("prereg-block-v1", str(cseed), str(k)) for k in range(3)],
      "comparison and block seeds follow the documented SHA-256 derivation")

NREP = 200000
P_MIN = 1e-6


def enumerate_law(n, draws):
    """Exact law of the middle rank(s) of `draws` indices into n values:
    dict (lo, hi) -> probability (lo == hi for odd draws)."""
    idx = np.indices((n,) * draws).reshape(draws, -1).T
    idx.sort(axis=1)
    m = (draws + 1) // 2
    lo = idx[:, m - 1]
    hi = idx[:, m] if draws % 2 == 0 else lo
    keys, counts = np.unique(lo * n + hi, return_counts=True)
    total = float(n) ** draws
    return {(int(k) // n, int(k) % n): c / total
            for k, c in zip(keys, counts)}


def joint_law(n, draws):
    """Exact law of the two middle ranks (lo, hi), 0-based, of an even
    number `draws` of indices into n values, by summing multinomial
    terms: for lo = a < hi = b (1-based), c indices fall below a (c < m),
    m - c at a, none strictly between, e >= 1 at b and the rest above b;
    for lo = hi = a, c below a (c < m) and at least m + 1 - c at a."""
    m = draws // 2
    law = {}

    def multinomial(*ks):
        out, left = 1, draws
        for k in ks:
            out *= math.comb(left, k)
            left -= k
        return out

    for a in range(1, n + 1):
        below, above = (a - 1) / n, (n - a) / n
        p = sum(multinomial(c, e) * below ** c * (1 / n) ** e *
                above ** (draws - c - e)
                for c in range(m) for e in range(m + 1 - c, draws - c + 1))
        if p > 0:
            law[(a - 1, a - 1)] = p
        for b in range(a + 1, n + 1):
            beyond = (n - b) / n
            p = sum(multinomial(c, m - c, e) * below ** c *
                    (1 / n) ** (m - c + e) * beyond ** (draws - m - e)
                    for c in range(m) for e in range(1, draws - m + 1))
            if p > 0:
                law[(a - 1, b - 1)] = p
    return law


def marginal_law(n, k):
    """Exact law of the k-th smallest of n indices into n values."""
    cdf = [scipy.stats.binom.sf(k - 1, n, (a + 1) / n) for a in range(n)]
    return {a: cdf[a] - (cdf[a - 1] if a else 0.0) for a in range(n)}


def chi2_p(observed, law, total):
    """p-value of observed counts (dict) under law (dict of
    probabilities), bins with expected count < 5 pooled."""
    keys = set(law) | set(observed)
    big, small_o, small_e = [], 0, 0.0
    for k in keys:
        e = law.get(k, 0.0) * total
        o = observed.get(k, 0)
        if e >= 5:
            big.append((o, e))
        else:
            small_o += o
            small_e += e
    if small_e > 0 or small_o > 0:
        if small_e < 5 and big:
            big.sort(key=lambda t: t[1])
            o, e = big.pop(0)
            small_o += o
            small_e += e
        if small_e == 0:
            return 0.0  # mass where the law has none
        big.append((small_o, small_e))
    if len(big) == 1:  # one possible outcome: all must be it
        return 1.0 if big[0][0] == total else 0.0
    stat = sum((o - e) ** 2 / e for o, e in big)
    return scipy.stats.chi2.sf(stat, len(big) - 1)


SPREAD = 2 ** 24  # > 2 n^2 for every n below


def median_ranks(n, seed):
    """Replicates of median(resample of the x_i) / 1, decoded into
    (lo, hi) ranks (None where a value decodes to no rank pair)."""
    small = n <= 40
    cand = [2.0 ** i if small else float(i * SPREAD + i * i)
            for i in range(n)]
    dump = os.path.join(WORK, "law-%d.txt" % n)
    # The values go in reversed: indices point into the sorted values.
    boot_ci([1.0], list(reversed(cand)), seed, resamples=NREP, dump=dump,
            threads=2)
    t = np.loadtxt(dump)
    if small:
        decode = {}
        for i in range(n):
            for j in range(i, n):
                decode[(cand[i] + cand[j]) / 2 if n % 2 == 0
                       else cand[i]] = (i, j if n % 2 == 0 else i)
        return [decode.get(float(v)) for v in t], len(t)
    # x_i + x_j = (i + j) SPREAD + i^2 + j^2, and i^2 + j^2 < SPREAD: the
    # sum and the sum of squares give i and j.
    ranks = []
    for v in t:
        s = int(2 * v)
        tot, sq = divmod(s, SPREAD)
        d = math.isqrt(max(2 * sq - tot * tot, 0))
        i, j = (tot - d) // 2, (tot + d) // 2
        ok = 0 <= i <= j < n and cand[i] + cand[j] == 2 * v and \
            (n % 2 == 0 or i == j)
        ranks.append((i, j) if ok else None)
    return ranks, len(t)


for n in range(1, 8):
    ranks, got = median_ranks(n, 1000 + n)
    observed = {}
    for r in ranks:
        observed[r] = observed.get(r, 0) + 1
    law = enumerate_law(n, n)
    p = chi2_p(observed, law, got) if None not in observed else 0.0
    check(got == NREP and p > P_MIN,
          "n = %d: median ranks of %d replicates match exact index "
          "resampling (%d rank pairs, chi-square p = %.3g)"
          % (n, got, len(law), p))
    if n >= 3:
        wrong = enumerate_law(n, n - 1)
        pw = chi2_p(observed, wrong, got)
        check(pw < P_MIN,
              "n = %d: the same counts reject the median of n - 1 draws "
              "(p = %.3g)" % (n, pw))

# The multinomial sum agrees with the enumeration, then checks n = 24.
law6 = joint_law(6, 6)
enum6 = enumerate_law(6, 6)
check(set(law6) == set(enum6) and
      max(abs(law6[k] - enum6[k]) for k in enum6) < 1e-14,
      "n = 6: the multinomial joint law equals the enumerated one")
ranks, got = median_ranks(24, 3024)
observed = {}
for r in ranks:
    observed[r] = observed.get(r, 0) + 1
law = joint_law(24, 24)
gaps = sum(c for (a, b), c in observed.items() if a != b)
p = chi2_p(observed, law, got) if None not in observed else 0.0
check(got == NREP and abs(sum(law.values()) - 1) < 1e-12 and p > P_MIN,
      "n = 24: joint law of both middle ranks over %d replicates (%d with "
      "a gap, %d rank pairs) matches exact index resampling (chi-square "
      "p = %.3g)" % (got, gaps, len(law), p))
pw = chi2_p(observed, joint_law(24, 22), got)
check(pw < P_MIN, "n = 24: the same counts reject the median of 22 draws "
      "(p = %.3g)" % pw)

for n in (25, 40, 2048, 2050):
    ranks, got = median_ranks(n, 2000 + n)
    ok = None not in ranks and got == NREP
    m = (n + 1) // 2
    sides = (("lower", m), ("upper", m + 1)) if n % 2 == 0 else \
        (("middle", m),)
    for which, k in sides:
        observed = {}
        for r in ranks:
            if r is not None:
                a = r[1] if which == "upper" else r[0]
                observed[a] = observed.get(a, 0) + 1
        p = chi2_p(observed, marginal_law(n, k), got) if ok else 0.0
        check(ok and p > P_MIN,
              "n = %d: %s middle rank (%d-th of %d draws) matches its exact "
              "binomial law over %d replicates (chi-square p = %.3g)"
              % (n, which, k, n, got, p))

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
