#!/bin/sh
# fuzz.sh [SECONDS] [TARGET...]: builds prereg's libFuzzer targets with
# clang in build-fuzz (address and undefined sanitizers, leaks checked)
# and runs each for SECONDS (default 12) from the committed seed corpus
# in tests/fuzz/corpus/TARGET. Prints the executions of each target and
# the total. A crash, leak, sanitizer report or time-out fails the run;
# its input is copied to tests/fuzz/regressions/TARGET/ so that the
# ordinary ctest suite (test fuzz_regressions) replays it from then on:
# commit it together with the fix.
set -eu
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-12}
[ $# -gt 0 ] && shift
TARGETS=${*:-sheet batch import_csv import_json import_go manifest sheet_cost bundle node_line stamp sshsig quote}
BUILD=${FUZZ_BUILD:-build-fuzz}
JOBS=${JOBS:-2}

case "$SECONDS_EACH" in
  ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, not '$SECONDS_EACH'" >&2
               exit 2 ;;
esac
command -v clang >/dev/null || {
  echo "fuzz.sh: clang is missing: sh scripts/deps.sh test" >&2; exit 2; }

cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER=clang -DPREREG_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
for t in $TARGETS; do
  cmake --build "$BUILD" -j "$JOBS" --target "fuzz_$t" >/dev/null
done

dict_for() {
  case "$1" in
    sheet|sheet_cost) echo tests/fuzz/sheet.dict ;;
    import_json) echo tests/fuzz/json.dict ;;
    bundle) echo tests/fuzz/bundle.dict ;;
    *) echo tests/fuzz/csv.dict ;;
  esac
}

# A real bundle's tar stream (the bundle target's seed) is about 100 KiB.
max_len_for() {
  case "$1" in
    bundle) echo 262144 ;;
    *) echo 65536 ;;
  esac
}

# The data targets' scratch folders: a crash exits without cleaning up.
SCRATCH=$(mktemp -d "$( [ -d /dev/shm ] && echo /dev/shm || echo /tmp)/prereg-fuzz-run-XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
total=0
failed=""
summary=""
for t in $TARGETS; do
  work="$BUILD/fuzz-corpus/$t"      # new inputs land here, not in git
  art="$BUILD/fuzz-artifacts/$t/"
  log="$BUILD/fuzz-$t.log"
  mkdir -p "$work" "$art"
  rc=0
  # -timeout: one input running 10 s is a hang, reported like a crash.
  TMPDIR=$SCRATCH ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$BUILD/tests/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" \
      -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len_for "$t")" \
      -print_final_stats=1 -dict="$(dict_for "$t")" \
      -artifact_prefix="$art" "$work" "tests/fuzz/corpus/$t" \
      >"$log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  runs=${runs:-0}
  total=$((total + runs))
  if [ "$rc" -ne 0 ]; then
    failed="$failed $t"
    mkdir -p "tests/fuzz/regressions/$t"
    for a in "$art"*; do
      [ -f "$a" ] || continue
      cp "$a" "tests/fuzz/regressions/$t/"
      echo "fuzz.sh: $t: new regression input tests/fuzz/regressions/$t/$(basename "$a")" >&2
    done
    echo "---- $log (last 40 lines)" >&2
    tail -40 "$log" >&2
    summary="$summary$(printf '%-12s %10s executions  FAILED (exit %s)' "$t" "$runs" "$rc")
"
  else
    summary="$summary$(printf '%-12s %10s executions  ok' "$t" "$runs")
"
  fi
done
printf '%s' "$summary"
printf 'fuzz executions: %s in total, %s s per target\n' "$total" "$SECONDS_EACH"
if [ -n "$failed" ]; then
  echo "fuzz.sh: failures in:$failed" >&2
  exit 1
fi
