#!/usr/bin/env bash
# registered.sh: an amendment reads as what it did, through the real
# binary, on imported values. A hypothesis the registered version did not
# state is "not in the registered plan" in the terminal, the report and
# the JSON, never "changed", and is not counted among the verdicts and
# outcomes that differ at the registered sample; the terminal's
# registered-sample block shows only what differs, or says nothing does.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
T=$(mktemp -d /tmp/prereg-registered.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
D=$T/data

sheet() { # sheet HYPOTHESES AMENDMENTS
  cat >reg.lua <<LUA
protocol {
  id = "reg", title = "Registered", question = "Does b cost?", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 500, seed = 7,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.2 } } },
  hypotheses = {
    { id = "H1", says = "b is at least 1.5x a", workload = "w",
      metric = "wall_s", arms = { "b" }, claim = at_least(1.5) },
    $1
  },
  amendments = { $2 },
}
LUA
}
sheet "" ""
"$PREREG" register reg.lua --data "$D" >/dev/null || bad "register"
{
  echo "workload,arm,metric,value"
  for v in 1.00 1.02 0.98 1.01 0.99 1.03; do echo "w,a,wall_s,$v"; done
  for v in 2.00 2.04 1.96 2.02 1.98 2.06; do echo "w,b,wall_s,$v"; done
} >values.csv
"$PREREG" import reg.lua values.csv --data "$D" >/dev/null || bad "import"
sheet '{ id = "H2", says = "b is under 3x a", workload = "w", metric = "wall_s",
      arms = { "b" }, claim = below(3) },' \
  '{ date = "2026-12-01", why = "A second hypothesis, stated after the data." }'
"$PREREG" amend reg.lua --data "$D" >/dev/null || bad "amend"

expect 0 "analyze" "$PREREG" analyze reg.lua --data "$D"
table=$out
check_grep "the registered-sample block names H2 as not in the plan" \
  "^  hypothesis H2: not in the registered plan$" "$table"
check "H1, the same at the registered sample, is not repeated there" \
  bash -c '! grep -q "^  hypothesis H1" <<<"$1"' _ "$table"
check "the registered block does not repeat the hypotheses" \
  [ "$(grep -c '^Hypotheses$' <<<"$table")" -eq 1 ]
check_grep "it says the rest is decided the same" \
  "every comparison and hypothesis the registered plan has is decided the same \(1 comparison, 1 hypothesis\)" "$table"
check "nothing says changed" bash -c '! grep -qi "changed" <<<"$1"' _ "$table"

"$PREREG" analyze reg.lua --data "$D" --json >a.json 2>/dev/null || bad "analyze --json"
check "JSON: H2 under not_registered, nothing changed" python3 - a.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["registered_sample"]
assert r["hypotheses_changed"] == [], r
assert r["verdicts_changed"] == [], r
assert {"hypothesis": "H2", "outcome": "held"} in r["not_registered"], r
PY

expect 0 "report" "$PREREG" report reg.lua --data "$D" --out "$T/rep"
md=$(cat "$T/rep/report.md")
check_grep "report: H2's sentence says not in the registered plan" \
  "^- H2 \*\*held\*\*; not in the registered plan: b is under 3x a" "$md"
check "report: H2 never reads changed" bash -c '! grep -q "H2.*changed" <<<"$1"' _ "$md"
check_grep "report: a line counts it" "^1 hypothesis is not in the registered plan" "$md"
check "report: not counted among those that differ" \
  bash -c '! grep -Eq "[0-9]+ verdicts? or outcomes? differs? at the registered" <<<"$1"' _ "$md"
check_grep "report: the rest is the same" "every verdict and outcome is the same" "$md"
check_grep "report: Deviations names it" \
  "^\| hypothesis H2 \| held \| \(not in the registered plan\) \|$" "$md"

# --- an imported workload says how its data were collected ---------------
cat >hf.lua <<'LUA'
protocol {
  id = "hf", title = "Imported", question = "Which starts faster?", author = "t",
  arms = { { name = "sh", reference = true, run = "sh -c true" },
           { name = "perl", run = "perl -e 1" } },
  workloads = { { name = "start", runs = 3, source = "import" } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 7,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.2 } } },
}
LUA
cat >hf.json <<'JSON'
{"results": [
 {"command": "sh", "mean": 0.001, "times": [0.0010, 0.0011, 0.0009], "exit_codes": [0, 0, 0]},
 {"command": "perl", "mean": 0.002, "times": [0.0020, 0.0021, 0.0019], "exit_codes": [0, 0, 0]}
]}
JSON
"$PREREG" register hf.lua --data "$D" >/dev/null || bad "register hf"
expect 0 "import a hyperfine file" "$PREREG" import hf.lua hf.json --data "$D"
expect 0 "report it" "$PREREG" report hf.lua --data "$D" --out "$T/hfrep"
heading=$(grep '^### start' "$T/hfrep/report.md")
check_grep "the tool and its blocks" \
  "^### start: each arm's command, 3 runs per arm, imported from hyperfine, which ran each arm's runs in one block, not interleaved$" "$heading"
check "not 'interleaved, cache warm'" bash -c '! grep -q "interleaved, cache" <<<"$1"' _ "$heading"
check_grep "a CSV says it does not give the order" \
  "^### w: imported data, as many runs as imported, imported from a CSV file, which does not say in what order its runs were collected$" \
  "$(grep '^### w' "$T/rep/report.md")"

# --- one workload from a CSV file and hyperfine: both said, in order -----
sed -e 's/id = "hf"/id = "mix"/' -e 's/runs = 3/runs = 6/' hf.lua >mix.lua
{
  echo "workload,arm,metric,value"
  for v in 0.0010 0.0011 0.0012; do echo "start,sh,wall_s,$v"; done
  for v in 0.0020 0.0022 0.0021; do echo "start,perl,wall_s,$v"; done
} >mix.csv
"$PREREG" register mix.lua --data "$D" >/dev/null || bad "register mix"
"$PREREG" import mix.lua hf.json --data "$D" >/dev/null || bad "import mix hyperfine"
"$PREREG" import mix.lua mix.csv --data "$D" >/dev/null || bad "import mix csv"
expect 0 "report the mix" "$PREREG" report mix.lua --data "$D" --out "$T/mixrep"
check_grep "both tools, the blocks and the CSV's order" \
  "^### start: each arm's command, 6 runs per arm, imported from a CSV file and hyperfine \(the tools ran each arm's runs in one block, not interleaved\); the CSV file does not say in what order its runs were collected$" \
  "$(grep '^### start' "$T/mixrep/report.md")"

done_testing 21
