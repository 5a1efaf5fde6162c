#!/bin/sh
# valgrind.sh BUILD/prereg: a representative session (new, check,
# register, run, import, status, analyze, report, verify) on a small sheet
# in a temporary folder, each command under
#   valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
# Fails when any command reports a memory error or a leak, or fails.
# Build without sanitizers (Debug or RelWithDebInfo): valgrind and ASan do
# not mix.
set -eu
PREREG=${1:?usage: scripts/valgrind.sh BUILD/prereg}
case "$PREREG" in /*) ;; *) PREREG=$(pwd)/$PREREG ;; esac
command -v valgrind >/dev/null || {
  echo "valgrind.sh: valgrind is missing: sh scripts/deps.sh test" >&2; exit 2; }
if nm "$PREREG" 2>/dev/null | grep -q __asan_init; then
  echo "valgrind.sh: $PREREG is built with ASan; use a plain build" >&2; exit 2
fi
T=$(mktemp -d /tmp/prereg-valgrind-XXXXXX)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
cd "$T"

cat > vg.lua <<'LUA'
protocol {
  id = "vg", title = "Under valgrind", question = "Is env slower than a direct exec?",
  author = "t",
  arms = { { name = "direct", reference = true }, { name = "env", run = "env {cmd}" } },
  workloads = {
    { name = "startup", runs = 5, cmd = "true", metrics = { "wall_s", "maxrss_kib" } },
    { name = "steps", runs = 2, steps = { "true", "echo hi" } },
    { name = "imported", metrics = { "wall_s" } },
  },
  rule = { estimator = "median", confidence = 0.95, resamples = 500, seed = 9,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.05 },
                        { "tie", ci_within = { 0.95, 1.05 } } } },
  hypotheses = {
    { id = "H1", says = "env is slower", workload = "startup", metric = "wall_s",
      arms = { "env" }, claim = at_least(1) },
    { id = "H2", says = "a function", claim = function(r) return "held", "ok" end },
  },
  threats = { "Under valgrind, everything is slower." },
}
LUA
printf 'workload,arm,metric,value,run\nimported,direct,wall_s,0.5,1\nimported,env,wall_s,0.6,1\nimported,direct,wall_s,0.52,2\nimported,env,wall_s,0.61,2\n' > imp.csv

n=0 failed=0
vg() {
  n=$((n + 1))
  # --trace-children=no: the commands a run starts are not prereg's code.
  if valgrind -q --error-exitcode=99 --leak-check=full \
       --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
       --log-file="vg-$n.log" "$PREREG" "$@" >"out-$n.txt" 2>"err-$n.txt"; then
    printf 'clean   prereg %s\n' "$*"
  else
    rc=$?
    failed=$((failed + 1))
    printf 'FAILED  prereg %s (exit %s)\n' "$*" "$rc"
    cat "vg-$n.log" "err-$n.txt" | head -40 | sed 's/^/    /'
  fi
}
vg new vgnew --data d
vg check vg.lua
vg register vg.lua --data d
vg run vg.lua --data d
vg import vg.lua imp.csv --data d
vg status vg.lua --data d
vg analyze vg.lua --data d
vg analyze vg.lua --data d --json
vg report vg.lua --data d --out "$T/report"
vg verify vg.lua --data d
echo "valgrind: $n commands, $((n - failed)) clean, $failed with errors"
[ "$failed" -eq 0 ]
