#!/usr/bin/python3
# bootstrap_vs_scipy.py: the helper of bootstrap_vs_scipy.sh (see there).
# SPDX-License-Identifier: MIT
import os
import resource
import subprocess
import sys
import time

import numpy as np
import scipy
import scipy.stats

PREREG, BOOT_CI, WORK = sys.argv[1:4]
B = 10000
REPEAT = 5
rng = np.random.RandomState(7)

# 6 workloads x 3 non-reference arms = 18 comparisons, 10-30 runs per arm.
ARMS = ["ref", "a", "b", "c"]
WORKLOADS = [("w%d" % i, int(n)) for i, n in
             enumerate(rng.randint(10, 31, size=6))]
data = {}
for w, n in WORKLOADS:
    for k, arm in enumerate(ARMS):
        # Unequal n as after invalid runs: each arm loses 0-3 runs.
        m = n - int(rng.randint(0, 4)) if k else n
        data[w, arm] = rng.lognormal(np.log(1 + 0.2 * k), 0.1, max(m, 10))


def cpu_now():
    """User + system time of this process and its waited-for children,
    in microseconds' resolution (os.times() has clock ticks)."""
    t = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        u = resource.getrusage(who)
        t += u.ru_utime + u.ru_stime
    return t


def best(f, repeat=REPEAT):
    """Best wall time and best CPU time (this process and its children)
    of repeat calls: on a shared machine the CPU time is the steadier."""
    walls, cpus = [], []
    for _ in range(repeat):
        c0 = cpu_now()
        t = time.perf_counter()
        f()
        walls.append(time.perf_counter() - t)
        cpus.append(cpu_now() - c0)
    return min(walls), min(cpus)


# prereg analyze on a sheet with those 18 comparisons
os.chdir(WORK)
with open("bench.lua", "w") as f:
    f.write('protocol {\n  id = "bench", title = "bootstrap bench",\n'
            '  question = "q", author = "bench",\n  arms = {\n')
    for k, arm in enumerate(ARMS):
        f.write('    { name = "%s"%s },\n' %
                (arm, ", reference = true" if k == 0 else ""))
    f.write("  },\n  workloads = {\n")
    for w, _ in WORKLOADS:
        f.write('    { name = "%s", metrics = { "wall_s" } },\n' % w)
    f.write('  },\n  rule = { estimator = "median", confidence = 0.95, '
            'resamples = %d, seed = 17,\n    verdicts = { { "slower", '
            'ci_excludes = 1, ratio_above = 1.1 } } },\n}\n' % B)
with open("data.csv", "w") as f:
    f.write("workload,arm,metric,value\n")
    for (w, arm), v in data.items():
        for x in v:
            f.write("%s,%s,wall_s,%r\n" % (w, arm, float(x)))
subprocess.run([PREREG, "register", "bench.lua"], check=True,
               capture_output=True)
subprocess.run([PREREG, "import", "bench.lua", "data.csv"], check=True,
               capture_output=True)


def analyze():
    out = subprocess.run([PREREG, "analyze", "bench.lua", "--json"],
                         check=True, capture_output=True).stdout
    assert out.count(b'"ci_low"') == 18


t_cli = best(analyze)

# The bootstrap alone, through the test driver, same data.
text = ""
for w, _ in WORKLOADS:
    for arm in ARMS[1:]:
        text += " ".join(repr(float(x)) for x in data[w, "ref"]) + "\n"
        text += " ".join(repr(float(x)) for x in data[w, arm]) + "\n"


def driver():
    out = subprocess.run([BOOT_CI, "--resamples", str(B), "--threads", "0"],
                         input=text, text=True, check=True,
                         capture_output=True).stdout
    assert len(out.splitlines()) == 18


t_drv = best(driver)


# The same bootstrap timed inside the process, as SciPy's is (no process
# start, no parsing): the like-for-like comparison.
def in_process():
    tf = os.path.join(os.getcwd(), "boot_time.txt")
    subprocess.run([BOOT_CI, "--resamples", str(B), "--threads", "0",
                    "--time", tf], input=text, text=True, check=True,
                   capture_output=True)
    return float(open(tf).read())


t_inp = min(in_process() for _ in range(5))

# SciPy, the same 18 comparisons


def stat(c, r, axis=-1):
    return np.median(c, axis=axis) / np.median(r, axis=axis)


def scipy_all():
    for w, _ in WORKLOADS:
        for arm in ARMS[1:]:
            scipy.stats.bootstrap(
                (data[w, arm], data[w, "ref"]), stat, paired=False,
                vectorized=True, axis=-1, n_resamples=B, method="percentile",
                confidence_level=0.95, random_state=np.random.RandomState(1))


t_sci = best(scipy_all, 3)

print("18 comparisons, %d resamples, %d-%d values per arm (SciPy %s, "
      "NumPy %s):" % (B, min(len(v) for v in data.values()),
                      max(len(v) for v in data.values()),
                      scipy.__version__, np.__version__))
print("                                          wall      CPU")
print("  prereg analyze --json (whole command): %7.3f s %7.3f s" % t_cli)
print("  prereg bootstrap alone (boot_ci):      %7.3f s %7.3f s" % t_drv)
print("  prereg bootstrap, in-process:          %7.3f s" % t_inp)
print("  scipy.stats.bootstrap:                 %7.3f s %7.3f s" % t_sci)
print("  ratio scipy / prereg analyze:   %6.1fx %7.1fx (target >= 10x)" %
      (t_sci[0] / t_cli[0], t_sci[1] / t_cli[1]))
print("  ratio scipy / prereg bootstrap: %6.1fx %7.1fx" %
      (t_sci[0] / t_drv[0], t_sci[1] / t_drv[1]))
print("  ratio scipy / prereg, both in-process (like for like): %6.1fx "
      "(target >= 10x)" % (t_sci[0] / t_inp))

# Two arms of 100,000 values
big = rng.lognormal(0, 0.3, 100000), rng.lognormal(0.1, 0.3, 100000)
text = " ".join(repr(float(x)) for x in big[0]) + "\n" + \
    " ".join(repr(float(x)) for x in big[1]) + "\n"
for threads in (0, 1):
    c0 = cpu_now()
    t = time.perf_counter()
    out = subprocess.run([BOOT_CI, "--resamples", str(B), "--threads",
                          str(threads)], input=text, text=True, check=True,
                         capture_output=True).stdout.split()
    t = time.perf_counter() - t
    cpu = cpu_now() - c0
    print("2 x 100,000 values, %d resamples, %s: %.2f s wall, %.2f s CPU "
          "(CI %.6f-%.6f)%s" %
          (B, "%d threads (all cores)" % os.cpu_count() if threads == 0
           else "1 thread", t, cpu, float(out[1]),
           float(out[2]), " (target < 10 s wall)" if threads == 0 else ""))
