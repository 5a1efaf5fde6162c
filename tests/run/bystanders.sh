#!/usr/bin/env bash
# bystanders.sh: a selection names only the run's processes. Bystanders
# are harmless sleeps whose command lines hold what a loose selection
# would match (another experiment's run id, a container ID of "e", a
# cgroup path up to the hierarchy's root); the test and its runs live in
# a private PID namespace, so that nothing outside it can be touched. A
# sheet whose selection could name another's process is refused at check;
# a cidfile that holds no container ID selects nothing and says so in the
# row; a process prereg ends outside the run's own tree is named in the
# row, which stays valid.
# SPDX-License-Identifier: MIT
set -u
if [ -z "${PREREG_IN_PIDNS:-}" ]; then
  exec unshare -p -f --mount-proc env PREREG_IN_PIDNS=1 bash "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-bys-XXXXXX)
kids=()
on_exit 'for p in "${kids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$T"'
cd "$T"

# bystander COMMAND-LINE: a sleep that shows that command line, its PID
# in $pid.
bystander() {
  bash -c 'exec -a "$0" sleep 300' "$1" </dev/null >/dev/null 2>&1 &
  pid=$!
  disown "$pid"
  kids+=("$pid")
  # (the command line of sleep, not of the bash it starts as, which holds
  # "$1" too)
  until tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$1 300"; do sleep 0.01; done
}
alive() { [ -d "/proc/$1" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat")" != Z ]; }
# gone PID: not alive within 30 s (prereg ended it; a loaded machine may
# take a while to let it go, while one left running is a sleep of 300 s).
gone() {
  local i
  for ((i = 0; i < 300; i++)); do alive "$1" || return 0; sleep 0.1; done
  return 1
}
sheet() { # sheet FILE ID WORKLOAD
  cat >"$1" <<LUA
protocol {
  id = "$2", title = "Bystanders", arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { $3 },
  rule = { seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
}
run_sheet() { # run_sheet FILE: register and run into a fresh data folder
  rm -rf "$T/data"
  "$PREREG" register "$1" --data "$T/data" >/dev/null 2>&1
  "$PREREG" run "$1" --data "$T/data" >"$T/out" 2>"$T/err"
  rc=$?
}
field() { # field CSV RUN_ID METRIC COLUMN
  python3 -c 'import csv,sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["run_id"] == sys.argv[2] and r["metric"] == sys.argv[3]:
        print(r[sys.argv[4]]); break' "$@"
}

# --- check explains the rule ------------------------------------------
RULE="Hold both \\{experiment\\} and \\{run_id\\}"
sheet loose.lua loose '{ name = "w", runs = 1, cmd = "sleep 1", metrics = { "pss_mib" },
    processes = { cmdline = { "prereg-{run_id}" } } }'
expect 2 "a {run_id}-only cmdline is refused" "$PREREG" check loose.lua
check_grep "... naming the field and the rule" \
  "loose.lua:[0-9]+: workloads\\[1\\]\\.processes\\.cmdline\\[1\\]: \"prereg-\\{run_id\\}\" could name processes that are not this run's.*$RULE" "$out"
sheet loosecg.lua loosecg '{ name = "w", runs = 1, cmd = "sleep 1",
    processes = { cgroup = "/prereg/{run_id}" } }'
expect 2 "a {run_id}-only cgroup is refused" "$PREREG" check loosecg.lua
check_grep "... naming the field" "workloads\\[1\\]\\.processes\\.cgroup: .*$RULE" "$out"
for cg in "/prereg/{experiment}/{run_id}/../.." "/sys/fs/cgroup/../../tmp/{experiment}/{run_id}"; do
  sheet dots.lua dots "{ name = \"w\", runs = 1, cmd = \"sleep 1\",
    processes = { cgroup = \"$cg\" } }"
  expect 2 "cgroup $cg is refused" "$PREREG" check dots.lua
  check_grep "... with the field and the fix" \
    "workloads\\[1\\]\\.processes\\.cgroup: .* has a \"\\.\\.\" component; a cgroup path goes down from the cgroup root only" "$out"
done
# The issue's own forms: the rule's second half too.
sheet dots2.lua dots2 '{ name = "w", runs = 1, cmd = "sleep 1",
    processes = { cgroup = "/prereg/{run_id}/../.." } }'
expect 2 "cgroup /prereg/{run_id}/../.. is refused" "$PREREG" check dots2.lua
sheet dots3.lua dots3 '{ name = "w", runs = 1, cmd = "sleep 1",
    processes = { cgroup = "/sys/fs/cgroup/../../tmp/{run_id}" } }'
expect 2 "cgroup /sys/fs/cgroup/../../tmp/{run_id} is refused" "$PREREG" check dots3.lua
sheet good.lua good '{ name = "w", runs = 1, cmd = "sleep 1",
    processes = { cgroup = "/prereg/{experiment}/{run_id}",
                  cmdline = { "prereg-{experiment}-{run_id}", "{cid}" } } }'
expect 0 "{experiment} with {run_id}, and {cid} alone, pass" "$PREREG" check good.lua

# --- bystanders named like another experiment's runs --------------------
bystander "less /home/me/notes-on-prereg-b0001-0001.txt" && less_pid=$pid
bystander "docker logs -f prereg-b0001-0002" && logs_pid=$pid
bystander "docker run --name prereg-other-b0001-0001 alpine" && other_pid=$pid
run_sheet loose.lua
check "the {run_id}-only sheet does not run (exit $rc)" [ "$rc" -eq 2 ]
for p in $less_pid $logs_pid $other_pid; do
  check "bystander $p is alive after it" alive "$p"
done
sheet named.lua bys '{ name = "w", runs = 2, cmd = "sleep 30", metrics = { "pss_mib" },
    sample_after_s = 0.1, processes = { cmdline = { "prereg-{experiment}-{run_id}" } } }'
# What a daemon started for run 1 (a container not below the run).
bystander "prereg-bys-b0001-0001 container" && mine=$pid
run_sheet named.lua
B=$T/data/bys/batches/b0001
check "named: the batch runs (exit $rc)" [ "$rc" -eq 0 ] || cat "$T/err" >&2
for p in $less_pid $logs_pid $other_pid; do
  check "named: bystander $p is alive after the run" alive "$p"
  check "named: bystander $p is not in pss_mib's process list" \
    [ "$(cut -f1 "$B/b0001-0001.procs.tsv" "$B/b0001-0002.procs.tsv" | grep -cx "$p")" -eq 0 ]
done
check "named: the run's own container was counted" \
  [ "$(cut -f1 "$B/b0001-0001.procs.tsv" | grep -cx "$mine")" -eq 1 ]
check "named: and ended with the run" gone "$mine"
check "named: the run stays valid" [ "$(field "$B.csv" b0001-0001 pss_mib valid)" = 1 ]
check_grep "named: its row names what prereg ended outside its tree" \
  "^ended outside the run's tree: $mine prereg-bys-b0001-0001 container 300 \\(cmdline:prereg-bys-b0001-0001\\)\$" \
  "$(field "$B.csv" b0001-0001 pss_mib reason)"
check "named: run 2 ended nothing outside its tree" \
  [ -z "$(field "$B.csv" b0001-0002 pss_mib reason)" ]

# --- a cidfile that holds no container ID ------------------------------
bystander "vim /home/me/todo.txt" && vim_pid=$pid
for id in e ..; do
  sheet cid.lua cid "{ name = \"w\", runs = 1, metrics = { \"pss_mib\" }, sample_after_s = 0.1,
    cmd = [[sh -c 'echo $id > {cidfile}; sleep 30']], processes = { cmdline = { \"{cid}\" } } }"
  run_sheet cid.lua
  B=$T/data/cid/batches/b0001
  check "cid '$id': vim is alive after the run" alive "$vim_pid"
  check "cid '$id': vim is not in the process list" \
    [ "$(cut -f1 "$B/b0001-0001.procs.tsv" 2>/dev/null | grep -cx "$vim_pid")" -eq 0 ]
  check_grep "cid '$id': the row says why nothing was selected" \
    "^pss_mib: \\{cid\\}: .*b0001-0001\\.cid holds \"$(printf '%s' "$id" | sed 's/\./\\./g')\", which is not a container ID \\(at least 12 hex digits" \
    "$(field "$B.csv" b0001-0001 pss_mib reason)"
  check "cid '$id': the run is invalid" [ "$(field "$B.csv" b0001-0001 pss_mib valid)" = 0 ]
done

# A cgroup of "/prereg/{cid}" with ".." would be the hierarchy's root,
# which lists every process.
V2=$T/cg2
mkdir -p "$V2/prereg" && : >"$V2/cgroup.controllers"
echo "$vim_pid" >"$V2/cgroup.procs"
sheet cgcid.lua cgcid "{ name = \"w\", runs = 1, metrics = { \"pss_mib\" }, sample_after_s = 0.1,
    cmd = [[sh -c 'echo .. > {cidfile}; sleep 30']], processes = { cgroup = \"/prereg/{cid}\" } }"
PREREG_CGROUP_ROOT=$V2 run_sheet cgcid.lua
check "cgroup /prereg/{cid} with '..': vim is alive" alive "$vim_pid"
check_grep "... and the row says the ID is none" "which is not a container ID" \
  "$(field "$T/data/cgcid/batches/b0001.csv" b0001-0001 pss_mib reason)"

# A var's value can put ".." in a cgroup path only after substitution; a
# link in the tree can lead out of the cgroup root: both select nothing.
sheet cgvar.lua cgvar "{ name = \"w\", runs = 1, metrics = { \"pss_mib\" }, sample_after_s = 0.1,
    cmd = \"sleep 30\", processes = { cgroup = \"/prereg/{up}/{experiment}/{run_id}\" } }"
sed -i 's/^  id = "cgvar",/  id = "cgvar", vars = { up = ".." },/' cgvar.lua
expect 0 "a var in a cgroup path passes check" "$PREREG" check cgvar.lua
PREREG_CGROUP_ROOT=$V2 run_sheet cgvar.lua
check "cgroup with '..' from a var: vim is alive" alive "$vim_pid"
check_grep "... the row says why nothing was selected" \
  "^pss_mib: cgroup /prereg/\.\./cgvar/b0001-0001: has a \. or \.\. component" \
  "$(field "$T/data/cgvar/batches/b0001.csv" b0001-0001 pss_mib reason)"
mkdir -p "$T/outside" "$V2/prereg/cgsym"
echo "$vim_pid" >"$T/outside/cgroup.procs"
ln -s "$T/outside" "$V2/prereg/cgsym/b0001-0001"
sheet cgsym.lua cgsym '{ name = "w", runs = 1, metrics = { "pss_mib" }, sample_after_s = 0.1,
    cmd = "sleep 30", processes = { cgroup = "/prereg/{experiment}/{run_id}" } }'
PREREG_CGROUP_ROOT=$V2 run_sheet cgsym.lua
check "cgroup through a link out of the root: vim is alive" alive "$vim_pid"
check_grep "... the row says it leads out" "leads out of the cgroup root" \
  "$(field "$T/data/cgsym/batches/b0001.csv" b0001-0001 pss_mib reason)"

done_testing 42
