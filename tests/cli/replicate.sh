#!/usr/bin/env bash
# replicate.sh: prereg replicate, through the real binary. An experiment
# of imported values is published; replicate writes a replication's sheet
# in a fresh folder (another --data) whose `published` block is the
# bundle's analysis, with the original's inputs beside it and its raw data
# under DATA/ID/original/ (which verify checks, and fails on a changed
# byte); it runs nothing and lists the commands. The replication, also of
# imported values, reports each comparison as published and as measured,
# the ratio of ratios with its interval and an outcome.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
T=$(mktemp -d /tmp/prereg-replicate.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
mkdir -p "$T/study" "$T/rep"
json() { # json FILE PYTHON-EXPRESSION-ON-j
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

# The original: three arms of imported values; b is twice as slow as a,
# c the same as a.
cat >"$T/study/s.lua" <<'LUA'
protocol {
  id = "orig", title = "Original", question = "Is b slower?", author = "t",
  inputs = { "work.sh" },
  arms = { { name = "a", reference = true, run = "sh {sheet_dir}/work.sh a",
             versions = { "sh --version" } },
           { name = "b", run = "sh {sheet_dir}/work.sh b" },
           { name = "c", run = "sh {sheet_dir}/work.sh c" } },
  workloads = { { name = "w", runs = 10, source = "import",
                  prepare = "true prepare", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 400,
           seed = 7, verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.1 },
                                  { "faster", ci_excludes = 1, ratio_below = 0.9 } } },
  hypotheses = { { id = "H1", says = "b is slower", workload = "w",
                   metric = "wall_s", arms = { "b" },
                   claim = at_least(1.2) } },
}
LUA
echo 'exit 0' >"$T/study/work.sh"
values() { # values FILE B-FACTOR C-FACTOR
  python3 - "$@" <<'PY'
import sys
out, fb, fc = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
with open(out, "w") as f:
    f.write("workload,arm,metric,value\n")
    for i in range(10):
        x = 1.0 + 0.01 * i
        f.write(f"w,a,wall_s,{x}\nw,b,wall_s,{fb * x}\n"
                f"w,c,wall_s,{fc * (1.0 + 0.01 * ((i * 7) % 10))}\n")
PY
}
values "$T/orig.csv" 2.0 0.5
cd "$T/study" || exit 1
expect 0 "register the original" "$PREREG" register s.lua --data "$T/d1"
expect 0 "import the original's values" "$PREREG" import s.lua "$T/orig.csv" --data "$T/d1"
expect 0 "publish it" "$PREREG" publish s.lua --data "$T/d1" --out "$T/orig.tar.gz"
"$PREREG" analyze s.lua --data "$T/d1" --json >"$T/orig.json"

# replicate, in a fresh folder with another data folder
cd "$T/rep" || exit 1
expect 0 "replicate" "$PREREG" replicate "$T/orig.tar.gz" --data "$T/d2"
rep_out=$out
S=protocols/orig-replication.lua
check "the sheet is written at protocols/ID.lua" test -f "$S"
check_grep "it names the bundle's digest" \
  "bundle_sha256 = \"$(sha256sum "$T/orig.tar.gz" | cut -c1-64)\"" "$(cat "$S")"
check_grep "replicates names the experiment and version" \
  'replicates = \{ experiment = "orig", version = 0' "$(cat "$S")"
check "the original's text follows unchanged" grep -qF "$(cat "$T/study/s.lua")" "$S"
check "the inputs are beside it" cmp "$T/study/work.sh" protocols/work.sh
check "the original's raw data are under DATA/ID/original/" \
  cmp "$T/d1/orig/MANIFEST" "$T/d2/orig-replication/original/orig/MANIFEST"
check "with their batches" test -f "$T/d2/orig-replication/original/orig/batches/b0001.csv"
check_grep "it lists the arms' commands" 'arm b run +sh \{sheet_dir\}/work.sh b' "$rep_out"
check_grep "the versions commands" 'arm a versions +sh --version' "$rep_out"
check_grep "the workloads' prepare" 'workload w prepare +true prepare' "$rep_out"
check_grep "and says it ran nothing" 'nothing was run' "$rep_out"
check "nothing was registered" test ! -e "$T/d2/orig-replication/versions"
expect 2 "never overwrites the sheet" "$PREREG" replicate "$T/orig.tar.gz" --data "$T/d2"
check_grep "and says so" 'already exists' "$out"
expect 2 "an --id that cannot name a folder" "$PREREG" replicate "$T/orig.tar.gz" --id "x/y" --data "$T/d3"
check "leaves nothing behind" test ! -e "protocols/x"
expect 2 "a file that is no bundle" "$PREREG" replicate "$T/orig.csv" --data "$T/d3"

# The published block is the bundle's analysis, number for number.
expect 0 "the sheet checks" "$PREREG" check "$S"
python3 - "$T/orig.json" "$S" <<'PY' && ok || bad "published differs from the bundle's analysis"
import json, re, sys
j = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
entries = re.findall(r'\{ workload = "([^"]+)", metric = "([^"]+)", arm = "([^"]+)",'
                     r'\s+ratio = ([^,]+), ci_low = ([^,]+), ci_high = ([^,]+),'
                     r'\s+verdict = "([^"]+)"', text)
got = {(w, m, a): (float(r), float(l), float(h), v) for w, m, a, r, l, h, v in entries}
want = {(r["workload"], r["metric"], r["arm"]):
        (r["ratio"], r["ci_low"], r["ci_high"], r["verdict"]) for r in j["results"]}
if got != want:
    sys.exit(f"got {got}\nwant {want}")
PY

# The replicator changes arm c's command before registering: here b is
# as slow as in the original, c slower instead of faster.
sed -i 's|work.sh c"|work.sh c --other"|' "$S"
check "the edit took" grep -q 'work.sh c --other' "$S"
# The replication registered; verify checks the original's data it holds.
expect 0 "register the replication" "$PREREG" register "$S" --data "$T/d2"
expect 0 "verify the replication's folder" "$PREREG" verify "$S" --data "$T/d2"
check_grep "verify names the original's data" 'original orig: ok: 5 files' "$out"
O=$T/d2/orig-replication/original/orig/batches/b0001.csv
cp "$O" "$T/b0001.keep"
chmod u+w "$O" && sed -i '2s/,wall_s,/,wall_s,9/' "$O"
expect 1 "a changed byte of the original's data fails verify" \
  "$PREREG" verify "$S" --data "$T/d2"
check_grep "naming the file" 'original orig: .*batches/b0001.csv: content differs' "$out"
cat "$T/b0001.keep" >"$O" && chmod 0444 "$O"
expect 0 "verify again once restored" "$PREREG" verify "$S" --data "$T/d2"

values "$T/rep.csv" 2.0 1.5
expect 0 "import the replication's values" "$PREREG" import "$S" "$T/rep.csv" --data "$T/d2"
"$PREREG" analyze "$S" --data "$T/d2" --json >"$T/rep.json"
check_grep "--json counts the outcomes" \
  '^1 of 2 comparisons replicated, 1 did not, 0 inconclusive$' \
  "$(json "$T/rep.json" 'j["replication"]["summary"]')"
python3 - "$T/orig.json" "$T/rep.json" <<'PY' && ok || bad "--json per result: published and replication"
import json, sys
o = {r["arm"]: r for r in json.load(open(sys.argv[1]))["results"]}
j = json.load(open(sys.argv[2]))
rs = {r["arm"]: r for r in j["results"]}
for arm, outcome in (("b", "replicated"), ("c", "not replicated")):
    r, p, x = rs[arm], rs[arm]["published"], rs[arm]["replication"]
    for k in ("ratio", "ci_low", "ci_high", "verdict"):
        assert p[k] == o[arm][k], (arm, k, p[k], o[arm][k])
    assert "orig.tar.gz" in p["source"], p
    assert x["outcome"] == outcome, (arm, x)
    assert abs(x["ratio_of_ratios"] - r["ratio"] / p["ratio"]) < 1e-12, x
    assert x["ci_low"] < x["ratio_of_ratios"] < x["ci_high"], x
assert 0.9 < rs["b"]["replication"]["ratio_of_ratios"] < 1.1
assert rs["c"]["replication"]["ci_low"] > 2.5, rs["c"]
h = j["hypotheses"][0]["replication"]
assert h == {"outcome": "replicated", "original": "held"}, h
PY
expect 0 "report the replication" "$PREREG" report "$S" --data "$T/d2"
R=$T/d2/orig-replication/report/report.md
check_grep "the summary opens with the outcomes" \
  '^1 of 2 comparisons replicated, 1 did not, 0 inconclusive' \
  "$(sed -n '/^## Summary/,/^## /p' "$R" | sed -n 3p)"
check_grep "each comparison: both ratios, the ratio of ratios, the outcome" \
  '^\| w \| wall_s \| b \| 2\.00× \[[0-9.]+–[0-9.]+\] slower \| 2\.00× \[[0-9.]+–[0-9.]+\] slower \| 1\.00× \[[0-9.]+–[0-9.]+\] \| \*\*replicated\*\* \|$' \
  "$(cat "$R")"
check_grep "the changed comparison did not replicate" \
  '^\| w \| wall_s \| c \| 0\.500× .* faster \| 1\.50× .* slower \| 3\.00× .* \*\*not replicated\*\* \|$' \
  "$(cat "$R")"
check_grep "what differs lists the changed command" \
  '^\| arm c run \| `sh \{sheet_dir\}/work.sh c` \| `sh \{sheet_dir\}/work.sh c --other` \|$' \
  "$(sed -n '/^## What differs from the original/,/^## /p' "$R")"
check_grep "and counts the differences" '^1 difference between the original.s protocol \(orig v0\)' \
  "$(sed -n '/^## What differs from the original/,/^## /p' "$R")"
check_grep "the host facts side by side, the arms' versions too" \
  '^\| a: `sh --version` \| not recorded \| not recorded \|$' \
  "$(sed -n '/^## What differs from the original/,/^## /p' "$R")"
check_grep "the hypothesis gets the same words" 'H1: held here, held in the original: \*\*replicated\*\*' "$(cat "$R")"

# The replication's bundle carries the original's data and verify checks
# them: against the bundle's digests, and as a data folder of their own.
expect 0 "publish the replication" "$PREREG" publish "$S" --data "$T/d2" --out "$T/rep.tar.gz"
expect 0 "verify its bundle" "$PREREG" verify "$T/rep.tar.gz"
check_grep "verify of the bundle names the original's data" 'original orig: ok: 5 files' "$out"
M=orig-replication/original/orig/batches/b0001.csv
python3 "$SRC/tests/data/tamper.py" byte "$T/rep.tar.gz" "$T/t1.tar.gz" "$M"
expect 1 "a changed byte of the original's data in the bundle fails" \
  "$PREREG" verify "$T/t1.tar.gz"
check_grep "naming the member" 'original/orig/batches/b0001.csv' "$out"
python3 "$SRC/tests/data/tamper.py" edit "$T/rep.tar.gz" "$T/t2.tar.gz" "$M" ",wall_s," ",wall_s,9"
expect 1 "re-signed in the bundle, the original's own MANIFEST still fails it" \
  "$PREREG" verify "$T/t2.tar.gz"
check_grep "naming the file" 'original/orig/batches/b0001.csv: content differs from the MANIFEST' "$out"

# A second replication drops arm c: listed as not replicated, with why.
mkdir -p "$T/rep2" && cd "$T/rep2" || exit 1
expect 0 "replicate again under another id" "$PREREG" replicate "$T/orig.tar.gz" --id drop --data "$T/d2"
sed -i '/name = "c", run/d; s|work.sh b" },|work.sh b" } },|' protocols/drop.lua
expect 0 "the sheet without c checks" "$PREREG" check protocols/drop.lua
expect 0 "register it" "$PREREG" register protocols/drop.lua --data "$T/d2"
grep -v ',c,' "$T/rep.csv" >"$T/drop.csv"
expect 0 "import its values" "$PREREG" import protocols/drop.lua "$T/drop.csv" --data "$T/d2"
"$PREREG" analyze protocols/drop.lua --data "$T/d2" --json >"$T/drop.json"
check_grep "the dropped arm is not replicated, with why" \
  "^c not replicated arm \"c\" is not in this sheet$" \
  "$(json "$T/drop.json" '";".join(" ".join([g["published"]["arm"], g["replication"]["outcome"], g["replication"]["why"]]) for g in j["replication"]["not_here"])')"
check_grep "and counted" '^1 of 2 comparisons replicated, 1 did not' \
  "$(json "$T/drop.json" 'j["replication"]["summary"]')"
expect 0 "report it" "$PREREG" report protocols/drop.lua --data "$T/d2"
check_grep "the report lists it with why" \
  '\| c \| 0\.500× .* faster \| – \| – \| \*\*not replicated\*\*: arm .+c.+ is not in this sheet \|' \
  "$(grep '^| w | wall' "$T/d2/drop/report/report.md")"
check_grep "what differs lists the dropped arm" \
  '^\| arm c \| `sh \{sheet_dir\}/work.sh c` \| `dropped` \|$' \
  "$(cat "$T/d2/drop/report/report.md")"

# A replication of 3 values per arm: too few for a 95% interval, so the
# ratio of ratios has none, and says why (as each comparison does).
mkdir -p "$T/rep3" && cd "$T/rep3" || exit 1
expect 0 "replicate with few values" "$PREREG" replicate "$T/orig.tar.gz" --id few --data "$T/d2"
expect 0 "register it" "$PREREG" register protocols/few.lua --data "$T/d2"
head -n 10 "$T/rep.csv" >"$T/few.csv"
expect 0 "import 3 values per arm" "$PREREG" import protocols/few.lua "$T/few.csv" --data "$T/d2"
"$PREREG" analyze protocols/few.lua --data "$T/d2" --json >"$T/few.json"
check_grep "3 values per arm: no interval of the ratio of ratios, and why" \
  '^None None no interval of the ratio of ratios: the replication has 3 values for b and 3 for a; a 95% interval needs at least 5 per arm$' \
  "$(json "$T/few.json" '[" ".join(str(x) for x in (r["replication"]["ci_low"], r["replication"]["ci_high"], r["replication"]["why"])) for r in j["results"] if r["arm"] == "b"][0]')"

# Image digests and host facts, from real runs of `true` (no verdict is
# asserted): the replication's image differs from the original's.
mkdir -p "$T/img" "$T/imgrep" && cd "$T/img" || exit 1
cat >img.lua <<'LUA'
protocol {
  id = "img", title = "Img", question = "Same image?", author = "t",
  image = { digest = "echo sha256:aaaa" },
  arms = { { name = "a", reference = true, run = "true" },
           { name = "b", run = "true", versions = { "echo tool 1.0" } } },
  workloads = { { name = "w", runs = 3 } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200,
           seed = 3, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
expect 0 "register an experiment that runs" "$PREREG" register img.lua --data "$T/d4"
expect 0 "run it" "$PREREG" run img.lua --data "$T/d4"
expect 0 "publish it" "$PREREG" publish img.lua --data "$T/d4" --out "$T/img.tar.gz"
cd "$T/imgrep" || exit 1
expect 0 "replicate it" "$PREREG" replicate "$T/img.tar.gz" --data "$T/d5"
sed -i 's/sha256:aaaa/sha256:bbbb/; s/tool 1.0/tool 2.0/' protocols/img-replication.lua
expect 0 "register the replication" "$PREREG" register protocols/img-replication.lua --data "$T/d5"
expect 0 "run it" "$PREREG" run protocols/img-replication.lua --data "$T/d5"
expect 0 "report it" "$PREREG" report protocols/img-replication.lua --data "$T/d5"
D=$(sed -n '/^## What differs from the original/,/^## The data/p' "$T/d5/img-replication/report/report.md")
check_grep "the image digests recorded differ" \
  '^\| arm b image digest recorded \| `sha256:aaaa` \| `sha256:bbbb` \|$' "$D"
check_grep "the cores of both, side by side" '^\| cores \| [0-9]+ \| [0-9]+ \|$' "$D"
check_grep "the kernel of both" '^\| kernel \| .+ \| .+ \|$' "$D"
check_grep "the arm's versions output of both" \
  '^\| b: `echo tool 2.0` \| tool 1.0 \| tool 2.0 \|$' "$D"
check_grep "and the changed versions command" \
  '^\| arm b versions 1 \| `echo tool 1.0` \| `echo tool 2.0` \|$' "$D"

done_testing 73
