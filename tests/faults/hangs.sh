#!/usr/bin/env bash
# hangs.sh: input made to hang prereg or eat its memory: sheets and
# claims whose work hides inside single instructions (sorts of long
# strings, conversions of long digit strings), FIFOs and devices where a
# sheet, an import file or a metrics file is read, a sparse 3 GB sheet,
# nesting past the parser's C stack. Each must end promptly, with exit 2
# and a FILE:LINE message where the input is bad, or with the run marked
# invalid; the time limit (0.2 s of CPU) may be passed by a small factor
# only.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"
# The terminal summary wraps its prose to the width: one line per reason.
export COLUMNS=400

since() { awk -v t0="$1" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.2f", t1 - t0 }'; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
# Every command here runs under a cap: a regression must fail, not hang
# the suite or take the machine's memory. (AddressSanitizer reserves its
# shadow memory up front and cannot start under ulimit -v.)
ASAN=0
grep -qa __asan_init "$PREREG" && ASAN=1
capped() {
  (if [ $ASAN = 0 ]; then ulimit -v 3000000; fi
   exec timeout -s KILL "${HANG_CAP:-120}" "$@")
}
# The declarations every sheet below ends with ($1: extra fields).
decl() {
  cat <<LUA
protocol {
  id = "hg", title = "Hangs", question = "Does it end?", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "imp", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 3,
           verdicts = { { "slower", ci_excludes = 1 } } },
  ${1:-}
}
LUA
}
# bounded WHAT MAX-SECONDS PATTERN CMD...: exit 2 (or $CODE) within MAX
# seconds of CPU (twice that under AddressSanitizer, whose checks of every
# byte written and whose bigger process add as much as the sheet's work:
# 0.8 s of CPU for the sort below on a loaded machine), the output
# matching PATTERN.
bounded() {
  local what=$1 max=$2 pat=$3 t0 dt cpu code=${CODE:-2}
  [ $ASAN = 1 ] && max=$(awk -v m="$max" 'BEGIN { print m * 2 }')
  shift 3
  rm -f "$T/used"
  t0=$(date +%s.%N)
  expect "$code" "$what: ends (exit $code)" capped /usr/bin/time -o "$T/used" -f '%U %S %M' "$@"
  dt=$(since "$t0")
  out=$(printf '%s\n' "$out" | grep -v '^Command exited with')
  check_grep "$what: says why" "$pat" "$out"
  cpu=$(awk '!/exited/ { print $1 + $2 }' "$T/used" 2>/dev/null)
  rss=$(awk '!/exited/ { print $3 }' "$T/used" 2>/dev/null)
  echo "  $what: ${cpu:-?} s of CPU, ${dt} s wall, ${rss:-?} KB"
  check "$what: stops within ${max}s of CPU (${cpu:-?}s, ${dt}s wall)" below "${cpu:-99}" "$max"
}
LIMIT='CPU time limit of 0\.2 s exceeded|instruction budget exceeded'

scenario "table.sort over references to two 20 MiB strings"
{ cat <<'LUA'
local a = string.rep("x", 20 * 1024 * 1024)
local b = string.rep("x", 20 * 1024 * 1024 - 1) .. "y"
local t = {}
for i = 1, 100000 do t[i] = i % 2 == 0 and a or b end
table.sort(t)
LUA
  decl; } >sort.lua
# Line 5, the sort; or line 4 where filling the table takes the 0.2 s
# already (a sanitizer's build is that slow).
bounded "sort, n=100000" 1.5 "sort.lua:[45]: ($LIMIT)" "$PREREG" check sort.lua
sed 's/^table.sort(t)$/table.sort(t, function(x, y) return x < y end)/' sort.lua >sortf.lua
bounded "sort with a comparator" 1.5 "sortf.lua:[0-9]+: ($LIMIT)" "$PREREG" check sortf.lua

scenario "450 lines of a = s + s on a 31 MB digit string"
{ echo 'local s = string.rep("7", 31000000)'
  echo 'local a'
  for ((i = 0; i < 450; i++)); do echo 'a = s + s'; done
  decl; } >concat.lua
bounded "s + s" 1.5 "concat.lua:[0-9]+: ($LIMIT)" "$PREREG" check concat.lua

scenario "conversions the budget cannot price: a for loop's limit"
{ echo 'local s = string.rep("7", 31000000)'
  echo 'for i = 1, 2000 do for j = 1, s do break end end'
  decl; } >forlim.lua
bounded "for limit" 1.5 "forlim.lua:2: ($LIMIT)" "$PREREG" check forlim.lua

scenario "string functions on a long string"
{ echo 'local s = string.rep("7", 31000000)'
  echo 'local n = 0'
  echo 'for i = 1, 2000 do n = n + utf8.len(s) + #tostring(tonumber(s)) end'
  decl; } >strlib.lua
bounded "utf8.len, tonumber" 1.5 "strlib.lua:3: ($LIMIT)" "$PREREG" check strlib.lua

scenario "string.rep(\"ab\", math.maxinteger)"
{ echo 'local s = string.rep("ab", math.maxinteger)'; decl; } >rep.lua
bounded "rep maxinteger" 1 "rep.lua: memory limit of 64 MiB exceeded" "$PREREG" check rep.lua

scenario "300 nested brackets"
{ echo '-- deep'; python3 -c "print('local t = ' + '{' * 300 + '}' * 300)"; decl; } >nest.lua
bounded "nested brackets" 1 "^prereg: nest.lua:2: nested too deeply" "$PREREG" check nest.lua
{ echo; echo; python3 -c "print('local x = ' + '(' * 300 + '1' + ')' * 300)"; decl; } >nest2.lua
bounded "nested parentheses" 1 "^prereg: nest2.lua:3: nested too deeply" "$PREREG" check nest2.lua

scenario "a function claim that sorts long strings, in analyze and from a bundle"
{ cat <<'LUA'
local function slow(results)
  local a = string.rep("x", 20 * 1024 * 1024)
  local b = string.rep("x", 20 * 1024 * 1024 - 1) .. "y"
  local t = {}
  for i = 1, 100000 do t[i] = i % 2 == 0 and a or b end
  table.sort(t)
  return "held"
end
LUA
  decl 'hypotheses = { { id = "H1", says = "it ends", claim = slow } },'; } >claim.lua
printf 'workload,arm,metric,value\nimp,a,wall_s,1\nimp,a,wall_s,1.1\nimp,a,wall_s,1.2\nimp,b,wall_s,2\nimp,b,wall_s,2.1\nimp,b,wall_s,2.2\n' >imp.csv
expect 0 "claim: check passes (the claim runs at analyze)" "$PREREG" check claim.lua
"$PREREG" register claim.lua --data "$T/dc" >/dev/null || bad "claim: register"
"$PREREG" import claim.lua imp.csv --data "$T/dc" >/dev/null || bad "claim: import"
# A claim that fails is inconclusive, its reason the error: analyze and
# report go on (exit 0).
CAUGHT="claim's function failed: it spent the sheet's Lua budget"
CODE=0 bounded "claim in analyze" 1.5 "$CAUGHT" "$PREREG" analyze claim.lua --data "$T/dc"
check_grep "claim in analyze: inconclusive" "H1 +inconclusive" "$out"
CODE=0 bounded "claim in report" 3 "report.md" "$PREREG" report claim.lua --data "$T/dc"
check "claim in report: the reason is in the report" grep -q "it spent the sheet's Lua budget" "$T/dc/hg/report/report.md"
if "$PREREG" publish claim.lua --data "$T/dc" --out "$T/claim.tar.gz" >pub.out 2>&1; then
  ok
  CODE=0 bounded "claim in analyze BUNDLE" 1.5 "$CAUGHT" "$PREREG" analyze "$T/claim.tar.gz"
else
  bad "claim: publish: $(head -c 300 pub.out)"
fi

scenario "a FIFO, a device and a 3 GB sparse file as the sheet"
mkfifo sheet.fifo
bounded "FIFO sheet" 1 "sheet.fifo: is a FIFO" "$PREREG" check sheet.fifo
bounded "/dev/zero sheet" 1 "/dev/zero: is a character device" "$PREREG" check /dev/zero
ln -s /dev/urandom random.lua
bounded "link to /dev/urandom as sheet" 1 "random.lua: is a character device" "$PREREG" check random.lua
truncate -s 3G sparse.lua
bounded "3 GB sparse sheet" 1 "sparse.lua: is 3221225472 bytes; a sheet may have at most 1024 KiB" "$PREREG" check sparse.lua
check "3 GB sparse sheet: not read (max RSS ${rss:-?} KB)" [ "${rss:-999999}" -lt 65536 ]
rm -f sparse.lua

scenario "a FIFO and a device as the import file"
"$PREREG" register claim.lua --data "$T/di" >/dev/null || bad "register"
mkfifo imp.fifo
bounded "FIFO import" 1 "imp.fifo: is a FIFO" "$PREREG" import claim.lua imp.fifo --data "$T/di"
bounded "/dev/zero import" 1 "/dev/zero: is a character device" "$PREREG" import claim.lua /dev/zero --data "$T/di"
check "FIFO import: nothing imported" test ! -e "$T/di/hg/batches/b0001.csv"

scenario "a command that makes \$PREREG_METRICS a FIFO or a link to /dev/zero"
cat >met.lua <<'LUA'
protocol {
  id = "mt", title = "Metrics", question = "Does it end?", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = {
    { name = "fifo", runs = 2, cmd = "sh -c 'mkfifo \"$PREREG_METRICS\"'" },
    { name = "zero", runs = 2, cmd = "sh -c 'ln -s /dev/zero \"$PREREG_METRICS\"'" },
  },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 3,
           verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
"$PREREG" register met.lua --data "$T/dm" >/dev/null || bad "register"
t0=$(date +%s.%N)
expect 0 "metrics: the run ends" capped "$PREREG" run met.lua --data "$T/dm"
dt=$(since "$t0")
check "metrics: promptly (${dt}s)" below "$dt" 60
check "metrics: every run invalid, saying why" python3 - "$T/dm/mt/batches/b0001.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 8, rows
for r in rows:
    assert r["valid"] == "0", r
    assert "not a regular file" in r["reason"], r["reason"]
PY
check "metrics: no FIFO or link left in the batch" bash -c "[ -z \"\$(find '$T/dm/mt/batches' ! -type f ! -type d)\" ]"
check "metrics: verify passes" "$PREREG" verify met.lua --data "$T/dm"
expect 0 "metrics: --resume is not blocked" capped "$PREREG" run met.lua --data "$T/dm" --resume


scenario "SIGTERM to a run whose commands make \$PREREG_METRICS a link to /dev/zero or a FIFO"
# Each command naps as long as nap.s says when it starts: 0.2 s, then 300 s
# once the SIGTERM is due, so that the signal finds the run going however
# long the machine takes to get there (the plan cannot end first).
echo 0.2 >"$T/nap.s"
cat >term.lua <<LUA
protocol {
  id = "tm", title = "Metrics, then SIGTERM", question = "Does it end?", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" }, { name = "c" } },
  workloads = {
    { name = "zero", runs = 4, cmd = "sh -c 'ln -s /dev/zero \\"\$PREREG_METRICS\\"; sleep \$(cat $T/nap.s)'" },
    { name = "fifo", runs = 4, cmd = "sh -c 'mkfifo \\"\$PREREG_METRICS\\"; sleep \$(cat $T/nap.s)'" },
  },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 3,
           verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
"$PREREG" register term.lua --data "$T/dt" >/dev/null || bad "register"
# Capped as above but without timeout(1), so that $! is prereg itself
# (timeout would take the SIGTERM); it is killed below if it hangs.
(if [ $ASAN = 0 ]; then ulimit -v 3000000; fi
 exec "$PREREG" run term.lua --data "$T/dt") >term.out 2>term.err &
pid=$!
# SIGTERM once both kinds of metrics file have been met: a reader stuck
# in the first one would never get here, and is sent SIGTERM all the same.
csv=$T/dt/tm/batches/b0001.csv
for ((i = 0; i < 2400; i++)); do
  [ -f "$csv" ] && grep -q ',zero,' "$csv" && grep -q ',fifo,' "$csv" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.05
done
echo 300 >"$T/nap.s"
check "SIGTERM: both kinds of metrics file were met before it" bash -c "grep -q ',zero,' '$csv' && grep -q ',fifo,' '$csv'"
check "SIGTERM: sent while the run goes on" kill -0 $pid
kill -TERM $pid
t0=$(date +%s.%N)
# A reader stuck in a metrics file would never end; the bound is far
# above what ending a run takes on any machine, and far below that.
for ((i = 0; i < 1200; i++)); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
dt=$(since "$t0")
check "SIGTERM: prereg ends promptly (${dt}s)" below "$dt" 60
echo 0.2 >"$T/nap.s"
kill -KILL $pid 2>/dev/null
wait $pid; rc=$?
check "SIGTERM: exit 1, as an interrupted run (rc=$rc)" [ $rc -eq 1 ]
check_grep "SIGTERM: says interrupted and how to go on" "interrupted.*--resume" "$(cat term.err)"
check "SIGTERM: the batch is frozen" [ -z "$(find "$T/dt/tm/batches" -name 'b*.csv' -perm -u+w)" ]
check "SIGTERM: no FIFO or link left in the batch" bash -c "[ -z \"\$(find '$T/dt/tm/batches' ! -type f ! -type d)\" ]"
check "SIGTERM: verify passes" "$PREREG" verify term.lua --data "$T/dt"
check "SIGTERM: nothing doubled" env ALLOW_MISSING=1 bash -c "$(declare -f plan_check); plan_check '$T/dt/tm' zero:4:wall_s fifo:4:wall_s"
expect 0 "SIGTERM: --resume finishes the batch" capped "$PREREG" run term.lua --data "$T/dt" --resume
check "SIGTERM: after --resume, every run exactly once" plan_check "$T/dt/tm" zero:4:wall_s fifo:4:wall_s
scenario "100 function claims, each near the budget: one budget for them all"
{ echo 'local function busy() local n = 0 for i = 1, 4000000 do n = n + i end return "held" end'
  echo 'local h = {}'
  echo 'for i = 1, 100 do h[i] = { id = "H" .. i, says = "busy", claim = busy } end'
  decl 'hypotheses = h,'; } >claims.lua
"$PREREG" register claims.lua --data "$T/dm" >/dev/null || bad "claims: register"
"$PREREG" import claims.lua imp.csv --data "$T/dm" >/dev/null || bad "claims: import"
# Each claim alone would spend the whole budget (0.1 s or more): 100 of
# them took 10 s when each had its own.
CODE=0 bounded "100 claims in analyze" 3 "H100 +inconclusive" "$PREREG" analyze claims.lua --data "$T/dm"

scenario "caps on what a sheet declares"
cat >cells.lua <<'LUA'
local a, w = {}, {}
for i = 1, 1000 do a[i] = { name = "a" .. i, reference = i == 1 } end
for i = 1, 1000 do
  w[i] = { name = "w" .. i, metrics = { "wall_s", "user_s", "sys_s", "maxrss_kib", "m5" } }
end
protocol { id = "cells", title = "Cells", arms = a, workloads = w,
  rule = { resamples = 100, seed = 3, verdicts = { { "slower", ci_excludes = 1 } } } }
LUA
CAP_CELLS="cells.lua:[0-9]+: workloads: declares 5000000 cells .*at most 10000"
for c in check status analyze report; do
  bounded "1000 arms x 1000 workloads x 5 metrics: $c" 3 "$CAP_CELLS" "$PREREG" $c cells.lua --data "$T/dcells"
done
cat >plan.lua <<'LUA'
local a, w = {}, {}
for i = 1, 10 do a[i] = { name = "a" .. i, reference = i == 1 } end
for i = 1, 100 do w[i] = { name = "w" .. i, runs = 1000000, cmd = "true" } end
protocol { id = "plan", title = "Plan", arms = a, workloads = w,
  rule = { resamples = 100, seed = 3, verdicts = { { "slower", ci_excludes = 1 } } } }
LUA
bounded "10^9 planned runs: run --dry-run" 3 "plan.lua:[0-9]+: workloads: plans 1000000000 runs .*at most 1000000" \
  "$PREREG" run plan.lua --data "$T/dplan" --dry-run
cat >hyp.lua <<'LUA'
local h = {}
for i = 1, 20000 do h[i] = { id = "H" .. i, says = "x", workload = "imp", metric = "wall_s", arms = { "b" }, claim = below(0.5) } end
LUA
decl 'hypotheses = h,' >>hyp.lua
bounded "20000 hypotheses" 3 "hyp.lua:[0-9]+: hypotheses: has 20000 hypotheses; a sheet may state at most 500" "$PREREG" check hyp.lua
cat >res.lua <<'LUA'
local w = {}
for i = 1, 5000 do w[i] = { name = "w" .. i } end
protocol { id = "res", title = "R", arms = { { name = "a", reference = true }, { name = "b" } }, workloads = w,
  rule = { resamples = 1e7, seed = 3, verdicts = { { "slower", ci_excludes = 1 } } } }
LUA
bounded "5000 workloads x 10^7 resamples" 3 "res.lua:[0-9]+: rule.resamples: 10000000 resamples x 5000 comparisons .* at most 1e\+08" "$PREREG" check res.lua
# 40,000 workloads in a 300-byte sheet: validation compared each name
# with every earlier one (12 s to check); now the names go through a
# hash and the cells cap refuses the sheet as soon as it is read.
cat >many.lua <<'LUA'
local w = {}
for i = 1, 40000 do w[i] = { name = "w" .. i } end
protocol { id = "many", title = "M", arms = { { name = "a", reference = true }, { name = "b" } }, workloads = w,
  rule = { resamples = 100, seed = 3, verdicts = { { "slower", ci_excludes = 1 } } } }
LUA
bounded "40000 workloads: check" 3 "many.lua:[0-9]+: workloads: declares 80000 cells" "$PREREG" check many.lua
report_scenarios
done_testing 91
