#!/usr/bin/env bash
# cli_analyze.sh: `prereg analyze` through the real binary: an import-only
# sheet, the same JSON bytes on every run and thread count, numbers equal
# to NumPy's medians and to the bootstrap driver, verdicts, a Lua function
# claim (the seed's H3), supersession by an amendment filed after data and
# the original rule beside it, and the errors.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${BUILD:?}" "${SRC:?}"
PY=/usr/bin/python3
BOOT_CI="$BUILD/tests/analysis/boot_ci"
T=$(mktemp -d /tmp/prereg-analyze-cli.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
export PREREG_NOW=1792540800 # 2026-10-21T00:00:00Z

# in_files CMD...: CMD with its stdout kept in ./out and its stderr in
# ./err (has reads them), both shown when expect fails on its exit code.

write_sheet() { # write_sheet AMENDMENT...
  cat >sheet.lua <<'LUA'
protocol {
  id = "files-cost",
  title = "What gVisor and Kata cost on small files",
  question = "Is many-small-files the workload gVisor makes most expensive?",
  author = "T. Ester",
  arms = {
    { name = "runc", reference = true },
    { name = "gvisor" },
    { name = "kata" },
  },
  workloads = {
    { name = "startup", metrics = { "wall_s" } },
    { name = "files", metrics = { "inner_s" } },
  },
  rule = {
    estimator = "median", confidence = 0.95, resamples = 4000, seed = 17,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.10 },
      { "faster", ci_excludes = 1, ratio_below = 1 / 1.10 },
      { "tie",    ci_within = { 0.95, 1.05 } },
    },
  },
  hypotheses = {
    { id = "H1", says = "Kata takes at least 3x as long to start",
      workload = "startup", metric = "wall_s", arms = { "kata" },
      claim = at_least(3) },
    { id = "H2", says = "gVisor ties runc on files",
      workload = "files", metric = "inner_s", arms = { "gvisor" },
      claim = verdict_is("tie") },
    { id = "H3",
      says = "Many small files is the workload gVisor makes most expensive",
      arms = { "gvisor" },
      claim = function(results)
        local top, top_ratio = nil, -1
        for _, r in ipairs(results) do
          if r.arm == "gvisor" and r.ratio > top_ratio then
            top, top_ratio = r.workload, r.ratio
          end
        end
        if top == nil then return "inconclusive", "no gvisor results" end
        return top == "files" and "held" or "not held",
          string.format("most expensive for gvisor: %s (%.2fx)", top,
                        top_ratio)
      end },
  },
  amendments = {
LUA
  for a in "$@"; do echo "    $a," >>sheet.lua; done
  printf '  },\n}\n' >>sheet.lua
}

# Deterministic data: start-up 0.22 s (runc), 0.33 (gvisor), 7.1 (kata),
# 30 runs; files 15.0 / 15.4 / 24.2 s, 10 runs, one invalid gvisor run.
gen_csv() { # gen_csv SHIFT > file: files rows (SHIFT moves kata's files)
  $PY - "$1" <<'PY'
import sys
shift = float(sys.argv[1])
print("workload,arm,metric,value,run,valid,note")
for i in range(30):
    for arm, m in (("runc", 0.22), ("gvisor", 0.33), ("kata", 7.1)):
        v = m * (1 + 0.02 * ((i * 7919) % 13 - 6) / 6)
        print("startup,%s,wall_s,%.6f,s%d,," % (arm, v, i))
for i in range(10):
    for arm, m in (("runc", 15.0), ("gvisor", 15.4), ("kata", 24.2 + shift)):
        v = m * (1 + 0.01 * ((i * 104729) % 11 - 5) / 5)
        print("files,%s,inner_s,%.6f,f%d,," % (arm, v, i))
print("files,gvisor,inner_s,,f10,false,hung for 120 s")
PY
}

# before registration
write_sheet
expect 1 "analyze before register" in_files "$PREREG" analyze sheet.lua
has err "analyze before register" "not registered"
expect 0 "register" in_files "$PREREG" register sheet.lua
expect 0 "analyze without data" in_files "$PREREG" analyze sheet.lua --json
has out "analyze without data" '"results": []'
has out "analyze without data" '"verdict": "inconclusive"'

# one import, determinism
gen_csv 0 >batch1.csv
expect 0 "import" in_files "$PREREG" import sheet.lua batch1.csv
expect 0 "analyze --json" in_files "$PREREG" analyze sheet.lua --json
cp out a1.json
expect 0 "analyze --json again" in_files "$PREREG" analyze --json sheet.lua
if cmp -s a1.json out; then ok; else bad "two runs differ"; fi
PREREG_THREADS=1 "$PREREG" analyze sheet.lua --json >t1.json 2>&1
PREREG_THREADS=2 "$PREREG" analyze sheet.lua --json >t2.json 2>&1
if cmp -s a1.json t1.json && cmp -s a1.json t2.json; then ok; else
  bad "thread counts give different bytes"; fi
expect 2 "bad PREREG_THREADS" in_files env PREREG_THREADS=lots "$PREREG" \
  analyze sheet.lua
has err "bad PREREG_THREADS" "PREREG_THREADS: 'lots' is not a thread count"

# Every real is written in its shortest exact form (what the sheet says,
# "confidence": 0.95, not 0.94999999999999996): each reads back as the
# same double, and no shorter text would.
if $PY - a1.json <<'PY'
import re, sys
text = open(sys.argv[1]).read()
assert '"confidence": 0.95,' in text, "confidence not as declared"
reals = re.findall(r'(?<=[:\[ ])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?=[,\n\]])', text)
reals = [r for r in reals if any(c in r for c in ".eE")]
assert len(reals) > 20, reals
for r in reals:
    x = float(r)
    digits = len(re.sub(r"[eE].*|[-.]", "", r).strip("0")) or 1
    shortest = len(re.sub(r"[eE].*|[-.]", "", repr(x)).strip("0")) or 1
    assert digits <= shortest, (r, repr(x))
PY
then ok; else bad "reals not in shortest exact form"; fi

# Contents, checked against NumPy and the bootstrap driver.
$PY - a1.json batch1.csv "$BOOT_CI" >check.out 2>&1 <<'PY'
import csv, json, subprocess, sys
import numpy as np
j = json.load(open(sys.argv[1]))
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["valid"] != "false"]
fails = []
def want(cond, what):
    if not cond:
        fails.append(what)
want(list(j)[:5] == ["protocol", "sheet_sha256", "rule", "results",
                     "hypotheses"], "contract keys first, in order")
want(j["protocol"] == "files-cost", "protocol")
want(j["rule"] == {"estimator": "median", "confidence": 0.95,
                   "resamples": 4000, "seed": 17, "min_n": 3}, "rule")
keys = ["workload", "metric", "arm", "reference", "n", "n_reference",
        "median", "median_reference", "ratio", "ci_low", "ci_high",
        "verdict"]
want([(r["workload"], r["arm"]) for r in j["results"]] ==
     [("startup", "gvisor"), ("startup", "kata"), ("files", "gvisor"),
      ("files", "kata")], "one result per workload and non-reference arm")
for r in j["results"]:
    want(list(r)[:12] == keys, "result keys in order")
    vals = lambda arm: [float(x["value"]) for x in rows
                        if x["workload"] == r["workload"] and x["arm"] == arm]
    ref, cand = vals("runc"), vals(r["arm"])
    want(r["n"] == len(cand) and r["n_reference"] == len(ref), "n")
    want(r["median"] == float(np.median(cand)) and
         r["median_reference"] == float(np.median(ref)) and
         r["ratio"] == float(np.median(cand)) / float(np.median(ref)),
         "medians and ratio equal NumPy's for %s/%s" % (r["workload"],
                                                       r["arm"]))
    text = " ".join(repr(v) for v in ref) + "\n" + \
        " ".join(repr(v) for v in cand) + "\n"
    out = subprocess.run([sys.argv[3], "--resamples", "4000", "--seed",
                          str(r["seed"])], input=text, capture_output=True,
                         text=True, check=True).stdout.split()
    want(float(out[1]) == r["ci_low"] and float(out[2]) == r["ci_high"],
         "CI equals the driver's with the comparison seed for %s/%s" %
         (r["workload"], r["arm"]))
# The spread of every cell against NumPy, its drift test against SciPy's
# Mann-Whitney (exact without ties for small samples, else asymptotic
# with continuity), on the same values split the same way.
from scipy.stats import mannwhitneyu
for c in j["cells"]:
    v = [float(x["value"]) for x in rows
         if x["workload"] == c["workload"] and x["arm"] == c["arm"]]
    a = np.array(v)
    q1, q3 = np.percentile(a, [25, 75])
    mad = float(np.median(np.abs(a - np.median(a))))
    out = int(np.sum((a < q1 - 1.5 * (q3 - q1)) | (a > q3 + 1.5 * (q3 - q1))))
    name = "%s/%s" % (c["workload"], c["arm"])
    want(abs(c["q1"] - q1) <= 1e-12 * abs(q1) and
         abs(c["q3"] - q3) <= 1e-12 * abs(q3), "quartiles of %s" % name)
    want(abs(c["mad"] - mad) <= 1e-12 * max(abs(mad), 1e-300), "MAD of " + name)
    want(c["min"] == a.min() and c["max"] == a.max(), "extremes of " + name)
    want(c["outliers"] == out, "Tukey outliers of %s: %s, NumPy %d" %
         (name, c["outliers"], out))
    h = len(v) // 2
    first, second = v[:h], v[h:]
    ties = len(set(v)) < len(v)
    p = mannwhitneyu(first, second, alternative="two-sided",
                     method="asymptotic" if ties or len(v) > 60 else "exact",
                     use_continuity=True).pvalue
    d = c["drift"]
    want(d is not None and d["between"] == "halves" and
         abs(d["p"] - p) <= 1e-9 * max(p, 1e-300) and
         abs(d["shift"] - np.median(second) / np.median(first)) <= 1e-15,
         "drift of %s: %s, SciPy p %r" % (name, d, p))
verdicts = {(r["workload"], r["arm"]): r["verdict"] for r in j["results"]}
want(verdicts == {("startup", "gvisor"): "slower",
                  ("startup", "kata"): "slower", ("files", "gvisor"): "tie",
                  ("files", "kata"): "slower"}, "verdicts %s" % verdicts)
h = {x["id"]: x for x in j["hypotheses"]}
want(h["H1"]["verdict"] == "held", "H1 held")
want(h["H2"]["verdict"] == "held", "H2 held")
want(h["H3"]["verdict"] == "not held" and
     "most expensive for gvisor: startup" in h["H3"]["reason"],
     "H3, a Lua function over all results, not held: %s" % h["H3"])
ex = j["exclusions"]
want(len(ex) == 1 and ex[0]["arm"] == "gvisor" and ex[0]["runs"] == 1 and
     ex[0]["reason"] == "hung for 120 s", "exclusions %s" % ex)
want(j["original"] is None, "no original rule without an amendment")
want("gsl_rng_mt19937" in j["rng"]["layout"], "rng layout recorded")
for f in fails:
    print("FAIL:", f)
print(len(fails))
PY
if [ "$(tail -n 1 check.out)" = 0 ]; then ok; else
  bad "JSON contents"; cat check.out >&2; fi

expect 0 "analyze table" in_files env COLUMNS=120 "$PREREG" analyze sheet.lua
has out "table" "startup · wall_s"
# The matrix: arms across, the reference's median and IQR, then each
# arm's ratio, CI and verdict under its median.
if grep -qE '^startup · wall_s +0\.220 s \(IQR 0\.0048\) +0\.329 s' out &&
  grep -qE '^ +reference, n=30 +1\.50× \[1\.49, 1\.52\] slower +32\.3×' out
then ok; else
  bad "table: the matrix rows"; cat out >&2; fi
has out "table" "× ["
expect 0 "narrow table" in_files env COLUMNS=70 "$PREREG" analyze sheet.lua
if [ "$($PY -c 'import sys; print(max(len(l) for l in open(sys.argv[1], encoding="utf-8").read().split("\n")))' out)" -le 70 ] &&
  grep -qE '^ +runc +gvisor$' out && grep -qE '^ +kata$' out
then ok; else
  bad "narrow table: fewer arms per block, no line over 70"; cat out >&2; fi
has out "table" "H3  not held: Many small files"
has out "table" "files / gvisor: 1 run: hung for 120 s"

# an edited sheet is refused
cp sheet.lua sheet.orig
sed -i 's/seed = 17/seed = 18/' sheet.lua
expect 1 "edited sheet" in_files "$PREREG" analyze sheet.lua
has err "edited sheet" "differs from registered version v0"
cp sheet.orig sheet.lua

# supersession after data, with the original rule beside it
why="the files workload could fail silently; rerun"
write_sheet "{ date = \"2026-10-22\", why = \"$why\", supersedes = { \"files\" } }"
expect 0 "amend" in_files "$PREREG" amend sheet.lua
gen_csv 10 | grep -v '^startup' >batch2.csv
expect 0 "import v1" in_files "$PREREG" import sheet.lua batch2.csv
expect 0 "analyze amended" in_files "$PREREG" analyze sheet.lua --json
cp out a2.json
$PY - a2.json <<'PY' >check2.out 2>&1
import json, sys
j = json.load(open(sys.argv[1]))
fails = []
def want(cond, what):
    if not cond:
        fails.append(what)
res = {(r["workload"], r["arm"]): r for r in j["results"]}
want(j["sheet_version"] == 1, "sheet version 1")
want(res[("files", "kata")]["n"] == 10 and
     abs(res[("files", "kata")]["median"] - 34.2) < 0.5,
     "files/kata counts only the rerun: %s" % res[("files", "kata")])
want(res[("startup", "kata")]["n"] == 30, "startup rows still count")
sup = [e for e in j["exclusions"] if e["reason"].startswith("superseded")]
want([(e["workload"], e["arm"], e["runs"]) for e in sup] ==
     [("files", "runc", 10), ("files", "gvisor", 11), ("files", "kata", 10)]
     and sup[0]["reason"] == "superseded by amendment 1: the files workload "
    "could fail silently; rerun", "superseded exclusions %s" % sup)
o = j["original"]
want(o is not None and "superseded earlier rows of files" in
     j["original_why"], "original given: %s" % j.get("original_why"))
if o:
    ores = {(r["workload"], r["arm"]): r for r in o["results"]}
    want(ores[("files", "kata")]["n"] == 20,
         "original counts both batches of files")
    want(not any(e["reason"].startswith("superseded")
                 for e in o["exclusions"]), "original supersedes nothing")
for f in fails:
    print("FAIL:", f)
print(len(fails))
PY
if [ "$(tail -n 1 check2.out)" = 0 ]; then ok; else
  bad "amended JSON contents"; cat check2.out >&2; fi
expect 0 "analyze amended table" in_files "$PREREG" analyze sheet.lua
has out "amended table" \
  "At the registered sample and rule (version 0), because amendment 1"
has out "amended table" "files / runc: 10 runs: superseded by amendment 1"

# a frozen batch changed after freezing is refused
# analyze reads the rows only through their MANIFEST digests, as report
# and publish do: a changed batch is named, and nothing is computed.
cp -a data pristine
f=data/files-cost/batches/b0002.csv
chmod u+w "$f"
sed -i '2s/,inner_s,/,inner_s,9/' "$f"
expect 1 "analyze a changed batch" in_files "$PREREG" analyze sheet.lua --json
has err "changed batch named" \
  "data/files-cost/batches/b0002.csv: content differs from the MANIFEST"
if [ -s out ]; then bad "analyze printed results from changed rows"; else ok; fi
expect 1 "analyze table, changed batch" in_files "$PREREG" analyze sheet.lua
expect 1 "status, changed batch" in_files "$PREREG" status sheet.lua
has err "status names it" "batches/b0002.csv: content differs from the MANIFEST"
rm -rf data && mv pristine data
expect 0 "analyze restored" in_files "$PREREG" analyze sheet.lua --json

done_testing 37
