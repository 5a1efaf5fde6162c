#!/bin/bash
# heldout.sh: a small Docker sheet as a new user writes it, not tuned to
# prereg: runc against runsc, idle-memory selecting the descendants, the
# cgroup named by --cgroup-parent /prereg/{experiment}/{run_id} and the
# container's --name (no {cid}), and no cleanup of its own. Every
# run must give a valid pss_mib whose process list holds the container's
# own processes (runc's sleep; gVisor's runsc-sandbox and runsc-gofer),
# each with its reason, and no container or runtime process of any run
# may survive the batch.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
src=$(cd "$(dirname "$0")/../.." && pwd)
D=/usr/bin/docker
for b in "$D" /usr/sbin/dockerd /usr/bin/containerd /usr/bin/runsc /usr/bin/ctr; do
  [ -x "$b" ] || { bad "$b missing (sh scripts/deps.sh docker)"; done_testing; }
done

T=$(mktemp -d "${TMPDIR:-/tmp}/pdh.XXXXXX")
E="$T/e"
on_exit '[ ! -f "$E/started.pids" ] || sh "$src/scripts/docker/stop.sh" "$E" >/dev/null 2>&1; grep -q " $T/" /proc/self/mountinfo || rm -rf "$T"'

expect 0 "the private engine starts" sh "$src/scripts/docker/start.sh" "$E" || done_testing
expect 0 "the offline image is built and loaded" sh "$src/scripts/docker/image.sh" "$E" || done_testing
DH="unix://$E/docker.sock"
CTR="ctr -a $E/containerd/containerd.sock -n moby"
daemons=$(awk '{ printf "%s ", $2 }' "$E/started.pids")

cat > "$T/heldout.lua" <<LUA
local function docker(runtime)
  return "$D -H $DH run --rm --pull never --runtime=" .. runtime
    .. " --network none --cgroup-parent /prereg/{experiment}/{run_id}"
    .. " --name prereg-{experiment}-{run_id} prereg/busybox:1 {cmd}"
end
protocol {
  id = "heldout-docker",
  title = "Idle memory of a container: runc and gVisor",
  arms = {
    { name = "runc", reference = true, run = docker("runc") },
    { name = "runsc", run = docker("runsc") },
  },
  workloads = {
    { name = "idle-memory", runs = 4, cmd = "sleep 300",
      metrics = { "pss_mib" }, sample_after_s = 6, timeout_s = 60,
      processes = { descendants = true,
                    cgroup = "/prereg/{experiment}/{run_id}",
                    cmdline = { "prereg-{experiment}-{run_id}" } } },
  },
  rule = { seed = 3, verdicts = { { "more", ci_excludes = 1 } } },
}
LUA
Dd="$T/data"
# The cgroup folders that exist before the batch (another engine's runs
# may have theirs): any other one named /prereg/... after it is a run's.
cgroups() { find /sys/fs/cgroup/*/prereg -mindepth 1 -maxdepth 1 -type d 2> /dev/null | sort; }
cgroups > "$T/cg.before"
expect 0 "register the sheet" "$PREREG" register "$T/heldout.lua" --data "$Dd"
"$PREREG" run "$T/heldout.lua" --data "$Dd" > "$T/run.out" 2> "$T/run.err"
rc=$?
check "the batch runs (exit $rc)" [ $rc -eq 0 ] || sed -n 1,40p "$T/run.err" >&2
check_grep "every run is valid" "batch b0001: 8 runs, 8 valid, 0 invalid" "$(cat "$T/run.out")"

B="$Dd/heldout-docker/batches/b0001"
python3 - "$B.csv" "$B" <<'PY' && ok || bad "rows and process lists"
import csv, os, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
errs = []
def need(c, m):
    if not c:
        errs.append(m)
need(len(rows) == 8, "%d rows, expected 8" % len(rows))
for r in rows:
    rid, arm = r["run_id"], r["arm"]
    need(r["valid"] == "1" and r["metric"] == "pss_mib" and float(r["value"] or 0) > 1,
         "%s %s: pss_mib %r not valid: %s" % (rid, arm, r["value"], r["reason"]))
    lst = os.path.join(sys.argv[2], rid + ".procs.tsv")
    if not os.path.exists(lst):
        errs.append(rid + ": no process list")
        continue
    procs = list(csv.DictReader(open(lst), delimiter="\t", quoting=csv.QUOTE_NONE))
    for p in procs:
        need(p["reasons"] != "", "%s: pid %s (%s) without a reason" % (rid, p["pid"], p["cmdline"]))
    # The container's processes are in /prereg/EXPERIMENT/RUN_ID/CID of
    # the memory hierarchy (cgroup v1 on this kind of machine).
    cg = r"cgroup:/sys/fs/cgroup/memory/prereg/heldout-docker/%s/[0-9a-f]{64}" % rid
    def counted(cmd):
        return [p for p in procs if p["cmdline"].startswith(cmd)
                and p["status"] == "counted" and re.search(cg, p["reasons"])]
    if arm == "runc":
        need(counted("sleep 300"), rid + ": runc's sleep not counted by its cgroup")
    else:
        need(counted("runsc-sandbox"), rid + ": runsc-sandbox not counted by its cgroup")
        need(counted("runsc-gofer"), rid + ": runsc-gofer not counted by its cgroup")
    need(any(p["cmdline"].startswith("/usr/bin/docker") and "run" in p["reasons"]
             and "cmdline:prereg-heldout-docker-" + rid in p["reasons"]
             for p in procs),
         rid + ": the docker client is not listed as the run, named by --name")
for e in errs:
    print(e, file=sys.stderr)
sys.exit(1 if errs else 0)
PY

# After the batch: no container, task, shim or runsc process of any run
# (warm-ups included), and no cgroup folder a run named.
left=""
for c in /proc/[0-9]*; do
  p=${c#/proc/}
  case " $daemons " in *" $p "*) continue ;; esac
  [ "$(awk '{ print $3 }' "$c/stat" 2>/dev/null)" != Z ] || continue
  cmd=$(tr '\0' ' ' 2> /dev/null < "$c/cmdline") || continue
  case "$cmd" in *"$E/"*) left="$left; $p $cmd" ;; esac
done
check "no shim or runsc process is left (${left#; })" [ -z "$left" ]
check "no container is left ($(DOCKER_HOST=$DH $D ps -a --format '{{.Names}}' | tr '\n' ' '))" \
  [ -z "$(DOCKER_HOST=$DH $D ps -aq)" ]
check "no containerd task is left" [ -z "$($CTR tasks ls -q)" ]
cgroups > "$T/cg.after"
cgs=$(comm -13 "$T/cg.before" "$T/cg.after" | tr '\n' ' ')
check "no cgroup folder of a run is left ($cgs)" [ -z "$cgs" ]

expect 0 "the report" "$PREREG" report "$T/heldout.lua" --data "$Dd"
check_grep "the report compares runsc with runc on idle memory" "idle-memory" \
  "$(cat "$Dd/heldout-docker/report/report.md")"
expect 0 "the engine stops" sh "$src/scripts/docker/stop.sh" "$E"
done_testing 13
