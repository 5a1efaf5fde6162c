#!/bin/bash
# runs.sh: `prereg run` of Docker containers under runc and runsc on a
# private engine: idle-memory counts the container's processes (cgroup,
# command lines naming it, the container ID from --cidfile), each with its
# reason; runs that end normally, time out, fail to start or are
# interrupted leave no container, shim or runsc process; what a cleanup
# starts again is caught as a leak, stopped, and named in the row, on the
# terminal and in the report.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
src=$(cd "$(dirname "$0")/../.." && pwd)
D=/usr/bin/docker
# This test installs nothing (make test does: scripts/deps.sh docker) and
# fails, not skips, where the engine cannot start.
for b in "$D" /usr/sbin/dockerd /usr/bin/containerd /usr/bin/runsc /usr/bin/ctr; do
  [ -x "$b" ] || { bad "$b missing (sh scripts/deps.sh docker)"; done_testing; }
done

T=$(mktemp -d "${TMPDIR:-/tmp}/pdr.XXXXXX")
E="$T/e"
# Unique to this test's run, so that another engine's containers, cgroups
# or a leftover of an earlier run never meet ours.
X="dkr-$(basename "$T" | tr -dc 'a-z0-9' | tr 'A-Z' 'a-z')$$"
X=$(printf '%s' "$X" | tr 'A-Z' 'a-z')
# The engine stopped by its records; then this experiment's cgroup
# folders (only empty ones can go) and the scratch folder.
on_exit '[ ! -f "$E/started.pids" ] || sh "$src/scripts/docker/stop.sh" "$E" >/dev/null 2>&1; for h in /sys/fs/cgroup/*/prereg/"$X"; do [ ! -d "$h" ] || find "$h" -depth -type d -exec rmdir {} + 2>/dev/null; done; grep -q " $T/" /proc/self/mountinfo || rm -rf "$T"'

expect 0 "the private engine starts" sh "$src/scripts/docker/start.sh" "$E" || done_testing
expect 0 "the offline image is built and loaded" sh "$src/scripts/docker/image.sh" "$E" || done_testing
DH="unix://$E/docker.sock"
CTR="ctr -a $E/containerd/containerd.sock -n moby"
daemons=$(awk '{ printf "%s ", $2 }' "$E/started.pids")

# What of the engine is alive besides its two daemons: shims and runtime
# processes (named by the engine's folder on their command lines) and
# whatever sits in this experiment's cgroups. One "PID CMDLINE" a line.
engine_leftovers() {
  local c p cmd
  for c in /proc/[0-9]*; do
    p=${c#/proc/}
    case " $daemons " in *" $p "*) continue ;; esac
    [ "$(awk '{ print $3 }' "$c/stat" 2>/dev/null)" != Z ] || continue
    cmd=$(tr "\\0" " " 2>/dev/null < "$c/cmdline") || continue
    case "$cmd" in
      *"$E/"*) echo "$p $cmd" ;;
      *) grep -q ":/prereg/$X/" "$c/cgroup" 2>/dev/null && echo "$p (cgroup) $cmd" ;;
    esac
  done
  return 0
}
nothing_left() {
  local left
  left=$(engine_leftovers)
  [ -z "$left" ] || { echo "left: $left" >&2; return 1; }
  [ -z "$(DOCKER_HOST=$DH $D ps -aq)" ] || { echo "docker ps -a: $(DOCKER_HOST=$DH $D ps -a)" >&2; return 1; }
  [ -z "$($CTR tasks ls -q)" ] || { echo "tasks: $($CTR tasks ls)" >&2; return 1; }
  ! ls -d /sys/fs/cgroup/*/prereg/"$X" 2>/dev/null | grep -q . ||
    { echo "cgroups left: $(ls -d /sys/fs/cgroup/*/prereg/"$X")" >&2; return 1; }
}

# The held-out style: the container named by --name and --cgroup-parent,
# its ID written to the run's {cidfile}; no cleanup of its own.
cat > "$T/runs.lua" <<LUA
local function docker(rt)
  return "$D -H $DH run --rm --pull never --runtime=" .. rt
    .. " -e PREREG_RUN_ID --network none"
    .. " --cgroup-parent /prereg/{experiment}/{run_id}"
    .. " --name prereg-{experiment}-{run_id} --cidfile {cidfile}"
    .. " prereg/busybox:1 {cmd}"
end
local by_id = { descendants = true, cgroup = "/prereg/{experiment}/{run_id}",
                cmdline = { "prereg-{experiment}-{run_id}", "{cid}" } }
protocol {
  id = "$X", title = "Docker runs end with nothing left",
  arms = { { name = "runc", reference = true, run = docker("runc") },
           { name = "gvisor", run = docker("runsc") } },
  workloads = {
    -- Sampled 6 s in: a container starts in well under a second, a few
    -- on a loaded machine.
    { name = "idle", runs = 2, cmd = "sleep 300", metrics = { "pss_mib" },
      sample_after_s = 6, timeout_s = 60, processes = by_id },
    { name = "byname", runs = 1, cmd = "sleep 300", metrics = { "pss_mib" },
      sample_after_s = 6, timeout_s = 60,
      processes = { descendants = true, cgroup = "/prereg/{experiment}/{run_id}",
                    cmdline = { "prereg-{experiment}-{run_id}" } } },
    { name = "startup", runs = 2, cmd = "true", processes = by_id },
    -- Its warm-up (run id BATCH-wNNN) ends at once, so that the run timing
    -- out is a result, not a setup mistake stopping the batch before the
    -- plan: the time-out leaves a container start (runsc's takes seconds
    -- on a loaded machine) ample room.
    { name = "timeout", runs = 1, warmup = 1, timeout_s = 20,
      cmd = "sh -c 'case \$PREREG_RUN_ID in *-w*) exit 0;; esac; exec sleep 300'",
      processes = by_id },
    -- runsc leaves the task and its shim of a container whose command is
    -- missing (tests/docker/NOTES.md); the run's selection finds them.
    { name = "nostart", runs = 1, cmd = "no-such-command", expect_exit = 127,
      processes = by_id },
  },
  rule = { seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
Dd="$T/data"
expect 0 "register" "$PREREG" register "$T/runs.lua" --data "$Dd"
t0=$(date +%s)
"$PREREG" run "$T/runs.lua" --data "$Dd" >"$T/run.out" 2>"$T/run.err"
rc=$?
check "the batch runs (exit $rc; $(($(date +%s) - t0)) s)" [ $rc -eq 0 ] ||
  sed -n 1,40p "$T/run.err" >&2
check "nothing of any run is left: no container, task, shim, runsc process or cgroup" nothing_left
B="$Dd/$X/batches/b0001"
python3 - "$Dd/$X/batches/b0001.csv" "$B" <<'PY' && ok || bad "rows and process lists"
import csv, glob, os, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
errs = []
def need(c, m):
    if not c: errs.append(m)
runs = {}
for r in rows:
    runs.setdefault(r["run_id"], []).append(r)
for rid, rs in runs.items():
    r = rs[0]
    w, arm, valid, why = r["workload"], r["arm"], r["valid"], r["reason"]
    if w in ("idle", "byname"):
        need(valid == "1" and r["metric"] == "pss_mib" and float(r["value"]) > 1,
             "%s %s %s: pss_mib not valid: %s %s" % (rid, w, arm, r["value"], why))
        lst = os.path.join(sys.argv[2], rid + ".procs.tsv")
        need(os.path.exists(lst), rid + ": no process list")
        if not os.path.exists(lst): continue
        procs = list(csv.DictReader(open(lst), delimiter="\t", quoting=csv.QUOTE_NONE))
        for p in procs:
            need(p["reasons"] != "", "%s: pid %s without a reason" % (rid, p["pid"]))
        def has(cmd, reason):
            return any(p["cmdline"].startswith(cmd) and re.search(reason, p["reasons"])
                       and p["status"] == "counted" for p in procs)
        cg = r"cgroup:/sys/fs/cgroup/memory/prereg/[a-z0-9-]+/%s/[0-9a-f]{64}" % rid
        if arm == "runc":
            need(has("sleep 300", cg), rid + ": runc's sleep not counted by its cgroup")
        else:
            need(has("runsc-sandbox", cg), rid + ": runsc-sandbox not counted by its cgroup")
            need(has("runsc-gofer", cg), rid + ": runsc-gofer not counted by its cgroup")
        if w == "idle":
            need(has("/usr/bin/containerd-shim-runc-v2", r"cmdline:[0-9a-f]{64}"),
                 rid + ": the shim not counted by the container ID")
        need(has("/usr/bin/docker", "run"), rid + ": the docker client is not the run")
    elif w == "startup":
        need(valid == "1", "%s startup %s invalid: %s" % (rid, arm, why))
    elif w == "timeout":
        need(valid == "0" and "timeout after 20 s" in why, "%s timeout: %s" % (rid, why))
        need("left running" not in why, "%s timeout left something: %s" % (rid, why))
    elif w == "nostart":
        need(valid == "1" and r["exit_code"] == "127", "%s nostart %s: %s %s" % (rid, arm, r["exit_code"], why))
need(len(runs) == 14, "%d runs" % len(runs))
for e in errs: print(e, file=sys.stderr)
sys.exit(1 if errs else 0)
PY
check "no cidfile is left in the batch" [ -z "$(find "$B" -name '*.cid')" ]

# Interrupted: SIGINT to prereg while an idle container runs, under each
# runtime (both arms of the sheet use it); prereg ends the container and
# its runtime, and nothing is left.
for rt in runc runsc; do
  sed -e "s/docker(\"runc\")/docker(\"$rt\")/; s/docker(\"runsc\")/docker(\"$rt\")/" \
    "$T/runs.lua" > "$T/int-$rt.lua"
  rm -rf "$Dd"
  "$PREREG" register "$T/int-$rt.lua" --data "$Dd" >/dev/null
  log="$T/int-$rt.err"
  "$PREREG" run "$T/int-$rt.lua" --data "$Dd" --only idle >/dev/null 2>"$log" &
  pid=$!
  i=0
  until grep -qs . /sys/fs/cgroup/memory/prereg/"$X"/*/*/cgroup.procs || [ $i -ge 600 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  check "SIGINT ($rt): a container was running" [ $i -lt 600 ]
  kill -INT $pid
  wait $pid
  rc=$?
  check "SIGINT ($rt): exit 1, interrupted" [ $rc -eq 1 ] && grep -q "interrupted" "$log"
  check "SIGINT ($rt): nothing of the interrupted run is left" nothing_left
done

# A cleanup that starts the container again: the leak is found once the
# run is over, stopped, and named everywhere a run's failure is.
cat > "$T/leak.lua" <<LUA
protocol {
  id = "$X", title = "A cleanup that leaks",
  arms = { { name = "runc", reference = true }, { name = "again" } },
  workloads = {
    { name = "leaky", runs = 1, cmd = "true",
      cleanup = "$D -H $DH run -d --rm --pull never --network none"
        .. " --cgroup-parent /prereg/{experiment}/{run_id}"
        .. " --name prereg-{experiment}-{run_id}-again prereg/busybox:1 sleep 300",
      processes = { cgroup = "/prereg/{experiment}/{run_id}" } },
  },
  rule = { seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
rm -rf "$Dd"
"$PREREG" register "$T/leak.lua" --data "$Dd" >/dev/null
"$PREREG" run "$T/leak.lua" --data "$Dd" >"$T/leak.out" 2>"$T/leak.err"
check "a leaky run does not stop the batch" grep -q "batch b0001: 2 runs, 0 valid, 2 invalid" "$T/leak.out"
check_grep "the terminal line names the leak" "leaky (runc|again) round 1: left running: [0-9]+ sleep 300" "$(cat "$T/leak.err")"
check_grep "the row names the leak" ',0,left running: [0-9]+ sleep 300,' "$(cat "$Dd/$X/batches/b0001.csv")"
check "the leak was stopped: nothing is left" nothing_left
"$PREREG" report "$T/leak.lua" --data "$Dd" >/dev/null 2>&1
check_grep "the report counts the runs that left processes running" "2 runs left processes running" "$(cat "$Dd/$X/report/report.md")"

expect 0 "the engine stops" sh "$src/scripts/docker/stop.sh" "$E"
done_testing 19
