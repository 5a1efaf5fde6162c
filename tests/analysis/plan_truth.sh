#!/usr/bin/env bash
# plan_truth.sh: `prereg plan` with the pilot's own uncertainty, through
# the real binary on fabricated (imported) pilots: the recommendation is
# the smallest size whose power_low reaches the power; a higher
# assurance never recommends fewer runs; a pilot whose interval spans a
# bound of the rule is called too small, with the rounds that would
# settle it, and no advice to change the rule; the simulation errors are
# the binomial's; the numbers do not depend on the threads.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${SRC:?}"
PY=/usr/bin/python3
T=$(mktemp -d /tmp/prereg-plan-truth.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
export PREREG_NOW=1792540800 # 2026-10-21T00:00:00Z

sheet() { # ID
  cat >"$1.lua" <<LUA
protocol {
  id = "$1", title = "t", question = "q", author = "a",
  arms = { { name = "ref", reference = true }, { name = "arm" } },
  workloads = { { name = "w", runs = 5, metrics = { "wall_s" } } },
  rule = {
    estimator = "median", confidence = 0.95, resamples = 2000, seed = 1,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.05 },
      { "faster", ci_excludes = 1, ratio_below = 1 / 1.05 },
      { "tie",    ci_within = { 0.95, 1.05 } },
    },
  },
}
LUA
}
pilot() { # ID REF... -- ARM...
  local id=$1 arm=ref
  shift
  echo "workload,arm,metric,value" >"$id.csv"
  for v in "$@"; do
    if [ "$v" = -- ]; then arm=arm; else echo "w,$arm,wall_s,$v" >>"$id.csv"; fi
  done
  sheet "$id"
  "$PREREG" register "$id.lua" >/dev/null && "$PREREG" import "$id.lua" "$id.csv" >/dev/null
}

# A pilot that cannot tell: its interval spans the bound 1.05.
pilot small 1.00 1.05 0.95 1.10 0.90 -- 1.10 1.30 0.95 1.25 1.05
expect 0 "plan of a pilot too small" "$PREREG" plan small.lua --pilot data/small \
  --sizes 5,10,20 --sims 200
check_grep "too small: said" "the pilot is too small to tell: its interval \[[0-9.]+, [0-9.]+\] \(5 and 5 values\) spans the rule's bound 1.05" "$out"
check_grep "too small: the rounds that would settle it" "a pilot of about [0-9]+ rounds would settle it" "$out"
check "too small: no advice to change the rule" sh -c "! printf '%s' \"\$1\" | grep -q 'change the rule'" _ "$out"

# A clear pilot: the recommendation is the smallest size whose power_low
# reaches the power; a higher assurance never asks fewer runs.
pilot clear 1.00 1.02 0.98 1.01 0.99 -- 1.31 1.29 1.33 1.30 1.28
for a in 0.5 0.8 0.95; do
  expect 0 "plan at assurance $a" "$PREREG" plan clear.lua --pilot data/clear \
    --sizes 3,5,10,20,50 --sims 400 --assurance "$a" --json
  printf '%s' "$out" >"a$a.json"
done
check "the recommendation reads power_low, the JSON names the assurance" $PY - <<'PY'
import json, math
prev = 0
for a in ("0.5", "0.8", "0.95"):
    p = json.load(open("a%s.json" % a))
    assert p["assurance"] == float(a) and p["truths"] == 40, p["assurance"]
    c = p["comparisons"][0]
    low = c["power_low"]
    want = next((n for n, l in zip(c["sizes"], low) if l >= 0.8), None)
    assert p["recommended"]["w"] == want, (a, low, p["recommended"])
    assert want is not None and want >= prev, (a, want, prev)
    prev = want
    for s, pd in enumerate(c["p_decided"]):
        assert abs(c["p_decided_se"][s] - math.sqrt(pd * (1 - pd) / 400)) < 1e-9
        pf = c["p_false"][s]
        assert abs(c["p_false_se"][s] - math.sqrt(pf * (1 - pf) / 400)) < 1e-9
        assert 0 <= low[s] <= 1 and 0 <= c["power"][s] <= 1
        assert c["power_se"][s] >= 0
PY
expect 0 "plan, one thread" env PREREG_THREADS=1 "$PREREG" plan clear.lua \
  --pilot data/clear --sizes 3,5,10,20,50 --sims 400 --json
check "the same numbers on one thread as on several" \
  sh -c 'printf "%s" "$1" | cmp -s - a0.8.json' _ "$out"
expect 0 "plan, text" "$PREREG" plan clear.lua --pilot data/clear \
  --sizes 3,5,10 --sims 400
check_grep "text: the power over the truths and at the assurance" \
  "power, truths .*power in 80% " "$(printf '%s' "$out" | tr '\n' ' ')"
check_grep "text: the simulation's errors" "\+- \(sim. error\)" "$out"
expect 2 "--assurance out of range refused" "$PREREG" plan clear.lua \
  --pilot data/clear --assurance 1.5
check_grep "--assurance named" "--assurance 1.5" "$out"
done_testing 15
