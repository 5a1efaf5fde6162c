#!/usr/bin/env bash
# selection.sh: a run's processes beyond its own tree, through the real
# binary, on fabricated cgroup trees (PREREG_CGROUP_ROOT): a cgroup and
# everything below it (v2; v1 with the memory hierarchy first and the
# others as fallback), the container ID a command writes to {cidfile}
# matched on command lines, each process listed with its reason and ended
# with the run; a selection that cannot be read named as the cause in the
# row, on the terminal and in the report; a leak after cleanup stopped and
# named; the cgroup folders a run made removed, those it found kept. The
# test and its runs live in a private PID namespace: the processes its
# selections name and end are its own, whatever else runs on the machine
# (another copy of this test included).
# SPDX-License-Identifier: MIT
set -u
if [ -z "${PREREG_IN_PIDNS:-}" ]; then
  exec unshare -p -f --mount-proc env PREREG_IN_PIDNS=1 bash "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-sel-XXXXXX)
kids=()
on_exit 'for p in "${kids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$T"'
cd "$T"

# Processes of the test's own (not prereg's tree), which the selections
# make the runs'. holder NAME: a sleep whose command line is "NAME 300"
# (one process: nothing of it outlives a kill), its PID in $pid.
holder() {
  bash -c 'exec -a "$0" sleep 300' "$1" </dev/null >/dev/null 2>&1 &
  pid=$!
  disown "$pid" # its end, by prereg, is no news for this shell
  kids+=("$pid")
  # Returned once it shows that command line (a selection by command line
  # must not find the bash it starts as, however loaded the machine).
  until tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$1 300"; do sleep 0.01; done
}
alive() { [ -d "/proc/$1" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat")" != Z ]; }
# dead_within PID [SECONDS]: the process is gone (or a zombie) in time
# (default 30: what prereg ended may take a loaded machine a while to go;
# what it left is a sleep of 300 s).
dead_within() {
  local i=0
  while alive "$1"; do
    [ $i -lt $((${2:-30} * 10)) ] || return 1
    sleep 0.1
    i=$((i + 1))
  done
}

sheet() { # sheet FILE ID WORKLOAD: a two-arm sheet with one workload
  cat >"$1" <<LUA
protocol {
  id = "$2", title = "Selections", arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { $3 },
  rule = { seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
}
# run_sheet FILE: register and run into a fresh data folder; stdout in
# $T/out, stderr in $T/err, exit status in $rc.
run_sheet() {
  rm -rf "$T/data"
  "$PREREG" register "$1" --data "$T/data" >/dev/null || bad "register $1"
  "$PREREG" run "$1" --data "$T/data" >"$T/out" 2>"$T/err"
  rc=$?
}
field() { # field CSV RUN_ID COLUMN
  python3 -c 'import csv,sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["run_id"] == sys.argv[2]: print(r[sys.argv[3]]); break' "$@"
}
# listed LIST PID REASON: the process list counts PID with exactly REASON
# among its reasons.
listed() {
  awk -F'\t' -v p="$2" -v r="$3" '$1 == p && $4 == "counted" {
      n = split($5, rs, ","); for (i = 1; i <= n; i++) if (rs[i] == r) f = 1 }
    END { exit !f }' "$1"
}

# --- cgroup v2: the named cgroup and everything below it ----------------
V2=$T/cg2
mkdir -p "$V2" && : >"$V2/cgroup.controllers"
declare -A top leaf
for r in b0001-0001 b0001-0002; do
  mkdir -p "$V2/sel/v2/$r/leaf"
  holder "top-$r" && top[$r]=$pid && echo "$pid" >"$V2/sel/v2/$r/cgroup.procs"
  holder "leaf-$r" && leaf[$r]=$pid && echo "$pid" >"$V2/sel/v2/$r/leaf/cgroup.procs"
  : >"$V2/sel/v2/$r/leaf/cgroup.controllers"
done
sheet v2.lua v2 '{ name = "idle", runs = 1, cmd = "sleep 30", metrics = { "pss_mib" },
    sample_after_s = 0.3, processes = { descendants = false, cgroup = "/sel/{experiment}/{run_id}" } }'
PREREG_CGROUP_ROOT=$V2 run_sheet v2.lua
check "v2: the batch runs (exit $rc)" [ $rc -eq 0 ] || cat "$T/err" >&2
B=$T/data/v2/batches/b0001
for r in b0001-0001 b0001-0002; do
  check "v2 $r: valid pss_mib" [ "$(field "$B.csv" "$r" valid)" = 1 ] ||
    field "$B.csv" "$r" reason >&2
  check "v2 $r: the cgroup's member counted with its folder" \
    listed "$B/$r.procs.tsv" "${top[$r]}" "cgroup:$V2/sel/v2/$r"
  check "v2 $r: a member of the cgroup below it, with that folder" \
    listed "$B/$r.procs.tsv" "${leaf[$r]}" "cgroup:$V2/sel/v2/$r/leaf"
  check "v2 $r: the run's own process is not selected (descendants = false)" \
    [ "$(grep -c $'\t'run $B/$r.procs.tsv)" -eq 0 ]
  check "v2 $r: both were ended with the run" dead_within "${top[$r]}" &&
    check "v2 $r: ... the one below too" dead_within "${leaf[$r]}"
  check "v2 $r: the cgroup folders the run found are kept" [ -d "$V2/sel/v2/$r/leaf" ]
done

# --- cgroup v1: the memory hierarchy first, the others as fallback -----
V1=$T/cg1
mkdir -p "$V1/memory" "$V1/cpu" "$V1/pids" "$V1/unified"
# Run 1's cgroup is only in cpu (runsc leaves v2 at the root; a host may
# lack the memory controller): found there. Run 2's is in memory and in
# pids: memory's is the one counted.
mkdir -p "$V1/cpu/sel/v1/b0001-0001" "$V1/memory/sel/v1/b0001-0002" "$V1/pids/sel/v1/b0001-0002"
holder fallback && fb=$pid && echo "$pid" >"$V1/cpu/sel/v1/b0001-0001/cgroup.procs"
holder inmem && mem=$pid && echo "$pid" >"$V1/memory/sel/v1/b0001-0002/cgroup.procs"
holder inpids && pids=$pid && echo "$pid" >"$V1/pids/sel/v1/b0001-0002/cgroup.procs"
sheet v1.lua v1 '{ name = "idle", runs = 1, cmd = "sleep 30", metrics = { "pss_mib" },
    sample_after_s = 0.3, processes = { descendants = false, cgroup = "/sel/{experiment}/{run_id}" } }'
PREREG_CGROUP_ROOT=$V1 run_sheet v1.lua
check "v1: the batch runs (exit $rc)" [ $rc -eq 0 ] || cat "$T/err" >&2
B=$T/data/v1/batches/b0001
check "v1: found in the cpu hierarchy when memory has none" \
  listed "$B/b0001-0001.procs.tsv" "$fb" "cgroup:$V1/cpu/sel/v1/b0001-0001"
check "v1: the memory hierarchy's members are counted" \
  listed "$B/b0001-0002.procs.tsv" "$mem" "cgroup:$V1/memory/sel/v1/b0001-0002"
check "v1: another hierarchy's folder of the same path is not" \
  [ "$(cut -f1 "$B/b0001-0002.procs.tsv" | grep -cx "$pids")" -eq 0 ]
check "v1: what was selected was ended" dead_within "$fb"
kill -9 "$pids" 2>/dev/null

# --- a cgroup that is not there: the cause, everywhere ------------------
sheet missing.lua missing '{ name = "idle", runs = 1, cmd = "sleep 30", metrics = { "pss_mib" },
    sample_after_s = 0.3, processes = { cgroup = "/nowhere/{experiment}/{run_id}" } }'
PREREG_CGROUP_ROOT=$V2 run_sheet missing.lua
why="pss_mib: cgroup /nowhere/missing/b0001-0001: not found in $V2"
check "missing cgroup: the batch still ends (exit $rc)" [ $rc -eq 0 ]
check "missing cgroup: the row gives the cause" \
  [ "$(field "$T/data/missing/batches/b0001.csv" b0001-0001 reason)" = "$why" ]
check_grep "missing cgroup: the terminal line gives it" "round 1: $why" "$(cat "$T/err")"
"$PREREG" report missing.lua --data "$T/data" >/dev/null 2>&1
check_grep "missing cgroup: the report gives it" "cgroup /nowhere/missing/b0001-0001: not found" \
  "$(cat "$T/data/missing/report/report.md")"
check "missing cgroup: no 'not reported' in its place" \
  [ "$(grep -c "not reported" "$T/data/missing/batches/b0001.csv")" -eq 0 ]

# --- {cidfile} and {cid}: an ID written while the run goes on -----------
# A container ID is hex digits: 0123456789ab followed by the run id's.
for r in b0001-0001 b0001-0002; do holder "holder-0123456789ab${r//[b-]/}" && h[${r: -1}]=$pid; done
sheet cid.lua cid "{ name = \"idle\", runs = 1, metrics = { \"pss_mib\" }, sample_after_s = 0.3,
    cmd = [[sh -c 'echo {run_id} | tr -d b- | sed s/^/0123456789ab/ > {cidfile}; sleep 30']],
    processes = { cmdline = { \"holder-{cid}\" } } }"
run_sheet cid.lua
check "cid: the batch runs (exit $rc)" [ $rc -eq 0 ] || cat "$T/err" >&2
B=$T/data/cid/batches/b0001
for r in b0001-0001 b0001-0002; do
  check "cid $r: valid" [ "$(field "$B.csv" "$r" valid)" = 1 ] ||
    field "$B.csv" "$r" reason >&2
  check "cid $r: the process naming the ID is counted, by it" \
    listed "$B/$r.procs.tsv" "${h[${r: -1}]}" "cmdline:holder-0123456789ab${r//[b-]/}"
  check "cid $r: and ended with the run" dead_within "${h[${r: -1}]}"
done
check "cid: the cidfiles are gone from the batch" [ -z "$(find "$B" -name '*.cid')" ]

sheet nocid.lua nocid '{ name = "idle", runs = 1, cmd = "sleep 30", metrics = { "pss_mib" },
    sample_after_s = 0.3, processes = { cmdline = { "{cid}" } } }'
run_sheet nocid.lua
why=$(field "$T/data/nocid/batches/b0001.csv" b0001-0001 reason)
check_grep "cidfile never written: the cause in the row" \
  "^pss_mib: \\{cid\\}: $T/data/nocid/batches/b0001/b0001-0001.cid held no container ID 2 s after the sample was due" "$why"
check_grep "cidfile never written: on the terminal" "held no container ID" "$(cat "$T/err")"

# --- a leak: what the cleanup leaves behind is stopped and named --------
mkfifo "$T/go" "$T/ack"
(
  while read -r id <"$T/go"; do
    sh -c 'sleep 300' "leak-$id" </dev/null >/dev/null 2>&1 &
    echo "$!" >>"$T/leaked"
    disown "$!"
    # answered once it is what the selection looks for (not the forked
    # shell it starts as)
    until tr '\0' ' ' <"/proc/$!/cmdline" | grep -q "leak-$id"; do sleep 0.01; done
    echo ok >"$T/ack"
  done
) &
kids+=("$!")
sheet leak.lua leak "{ name = \"w\", runs = 1, cmd = \"true\",
    cleanup = [[sh -c 'echo {experiment}-{run_id} > $T/go; read ok < $T/ack']],
    processes = { cmdline = { \"leak-{experiment}-{run_id}\" } } }"
run_sheet leak.lua
B=$T/data/leak/batches/b0001
check "leak: the batch ends, both runs invalid" grep -q "2 runs, 0 valid, 2 invalid" "$T/out"
lp=$(head -n 1 "$T/leaked")
check_grep "leak: the row names it, and its child" \
  "^left running: $lp sh -c sleep 300 leak-leak-b0001-0001; [0-9]+ sleep 300\$" \
  "$(field "$B.csv" b0001-0001 reason)"
check_grep "leak: the terminal line names it" "left running: [0-9]+ sh -c sleep 300 leak-leak-b0001-000" "$(cat "$T/err")"
check "leak: stopped" dead_within "$lp"
check "leak: said in the run's stderr file" grep -q "stopped: $lp " "$B/b0001-0001.stderr"
"$PREREG" report leak.lua --data "$T/data" >/dev/null 2>&1
check_grep "leak: the report counts such runs" "2 runs left processes running" \
  "$(cat "$T/data/leak/report/report.md")"

# --- cgroup folders the run made are removed ----------------------------
sheet made.lua made "{ name = \"w\", runs = 1, cmd = \"mkdir -p $V2/made/{experiment}/{run_id}/sub/leaf\",
    processes = { cgroup = \"/made/{experiment}/{run_id}\" } }"
mkdir -p "$V2/kept"
PREREG_CGROUP_ROOT=$V2 run_sheet made.lua
check "made: the batch runs (exit $rc)" [ $rc -eq 0 ] || cat "$T/err" >&2
check "made: the folders the runs made are gone, up to the first that was new" [ ! -e "$V2/made" ]
check "made: folders beside them stay" [ -d "$V2/kept" ] && [ -d "$V2/sel/v2/b0001-0001" ]

done_testing 40
