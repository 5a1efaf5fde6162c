#!/bin/bash
# runtimes.sh: the container-runtimes sheet (studies/container-runtimes)
# on a private containerd of its own (scripts/containerd/start.sh in a
# fresh folder, stopped by its recorded PID): its first version is
# refused by the CRI-O arm's requires, by name and with the reason; the
# amended sheet runs with --quick, every run of both arms valid on the
# one imported image, its metrics read from the tools' output; nothing is
# left running (no containerd task, shim, runsc or container process, by
# PID and by a /proc scan of command lines and cgroups for the test's
# runs). The verdict words are checked against the throughput direction
# on values imported into a copy of the sheet (fabricated: a test never
# depends on this machine's speed), and on the quick run only as a
# mapping from the rule's verdict to its word.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
src=$(cd "$(dirname "$0")/../.." && pwd)
study="$src/studies/container-runtimes/protocols"
# This test installs nothing (sh scripts/deps.sh containerd does) and
# fails, not skips, where the containerd cannot start.
for b in /usr/bin/containerd /usr/bin/ctr /usr/bin/containerd-shim-runc-v2 \
  /usr/sbin/runc /usr/bin/runsc /usr/bin/sysbench /usr/bin/fio /usr/sbin/nginx \
  /usr/bin/wrk /usr/bin/iperf3 /bin/busybox; do
  [ -x "$b" ] || { bad "$b missing (sh scripts/deps.sh containerd)"; done_testing; }
done

T=$(mktemp -d "${TMPDIR:-/tmp}/pcr.XXXXXX")
E="$T/c"
# The experiment's id, unique to this test's run, so that the committed
# study, a rerun or another test never shares its containers or cgroups.
X="crt-$(basename "$T" | tr -dc 'a-zA-Z0-9' | tr 'A-Z' 'a-z')$$"
on_exit '[ ! -f "$E/started.pids" ] || sh "$src/scripts/containerd/stop.sh" "$E" >/dev/null 2>&1; for h in /sys/fs/cgroup/*/prereg/"$X"; do [ ! -d "$h" ] || find "$h" -depth -type d -exec rmdir {} + 2>/dev/null; done; grep -q " $T/" /proc/self/mountinfo || rm -rf "$T"'

expect 0 "the private containerd starts" sh "$src/scripts/containerd/start.sh" "$E" || done_testing
read -r _ cpid cstart < "$E/started.pids"
expect 0 "the offline image is built and imported" sh "$src/scripts/containerd/bench-image.sh" "$E" ||
  done_testing
digest=$(printf '%s\n' "$out" | tail -n 1)
check_grep "bench-image.sh prints the manifest digest" '^sha256:[0-9a-f]{64}$' "$digest"

# The sheets as committed, pointed at this containerd and under this id,
# and made cheaper where no check depends on it: sysbench, fio and iperf3
# run 1 s instead of 5 (fio on a 16 MiB file, not 256 MiB; wrk keeps its
# 5 s, in gVisor 1 s may serve no request at all), and the rule's
# confidence is 80%, at which --quick runs 3 rounds, not 5. What is
# checked is that every run of both arms is valid with its metrics read,
# at least 3 per cell, on the one image, and that nothing is left; not
# how long the tools ran or how many rounds past 3.
cheap=(-e 's/--time=5 /--time=1 /g' -e 's/--runtime=5 /--runtime=1 /'
  -e 's/--size=256M /--size=16M /' -e 's/ -t 5 -f g/ -t 1 -f g/'
  -e 's/confidence = 0\.95,/confidence = 0.80,/')
for f in "$study/../data/container-runtimes/versions/v0.lua" "$study/container-runtimes.lua"; do
  sed -e "s|/var/tmp/prereg-containerd|$E|g" -e "s|id = \"container-runtimes\"|id = \"$X\"|" \
    "${cheap[@]}" "$f" > "$T/$(basename "$f")"
done
check "the copies name this containerd and id" \
  sh -c "grep -q '$E/containerd.sock' '$T/v0.lua' && grep -q 'id = \"$X\"' '$T/container-runtimes.lua'"
for f in v0.lua container-runtimes.lua; do
  check "$f: sysbench, fio and iperf3 run 1 s, fio on 16 MiB, the rule at 80%" \
    test "$(grep -Ec -- '--time=1 |--runtime=1 |--size=16M | -t 1 -f g|confidence = 0\.80,' "$T/$f")" = 6
done
D="$T/data"
expect 0 "the first version registers" "$PREREG" register "$T/v0.lua" --data "$D"
expect 1 "its run is refused" "$PREREG" run "$T/v0.lua" --data "$D"
check_grep "by the CRI-O arm's requires, by name" "arm crio requires" "$out"
check_grep "with the reason" "CRI-O is not packaged for Debian 12" "$out"
check "nothing was run" test ! -e "$D/$X/batches/b0001.csv"
expect 0 "the amendment that drops the arm is recorded" \
  "$PREREG" amend "$T/container-runtimes.lua" --data "$D"
expect 0 "status" "$PREREG" status "$T/container-runtimes.lua" --data "$D"
check_grep "the sheet is v1" "matches v1" "$out"

t0=$(date +%s)
"$PREREG" run "$T/container-runtimes.lua" --data "$D" --quick > "$T/run.out" 2> "$T/run.err"
rc=$?
check "the quick run completes (exit $rc, $(($(date +%s) - t0)) s)" [ $rc -eq 0 ] ||
  tail -n 40 "$T/run.err" >&2

# Nothing of any run is left: no task or container in the containerd, no
# process but the containerd itself whose command line names its folder or
# a run of this experiment, none whose cgroup does, no shim (its working
# folder is its bundle), no cgroup folder of the experiment.
leftovers() { # one pass over /proc (a shell loop takes minutes on a busy machine)
  python3 - "$cpid" "$E" "$X" <<'PY'
import os, sys
cpid, e, x = sys.argv[1:4]
for p in os.listdir("/proc"):
    if not p.isdigit() or p == cpid:
        continue
    d = "/proc/" + p
    try:
        if open(d + "/stat").read().rsplit(")", 1)[1].split()[0] == "Z":
            continue
        cmd = open(d + "/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        continue
    if e + "/" in cmd or "prereg-%s-" % x in cmd:
        print(p, cmd)
        continue
    try:
        if os.readlink(d + "/cwd").startswith(e + "/"):
            print(p, "(cwd)", cmd)
            continue
    except OSError:
        pass
    try:
        if "/prereg/%s/" % x in open(d + "/cgroup").read():
            print(p, "(cgroup)", cmd)
    except OSError:
        pass
PY
}
nothing_left() {
  local left c="ctr -a $E/containerd.sock -n prereg"
  left=$(leftovers)
  [ -z "$left" ] || { echo "left: $left" >&2; return 1; }
  [ -z "$($c tasks ls -q)" ] || { echo "tasks: $($c tasks ls)" >&2; return 1; }
  [ -z "$($c containers ls -q)" ] || { echo "containers: $($c containers ls)" >&2; return 1; }
  ! ls -d /sys/fs/cgroup/*/prereg/"$X" 2>/dev/null | grep -q . ||
    { echo "cgroups left: $(ls -d /sys/fs/cgroup/*/prereg/"$X")" >&2; return 1; }
}
check "nothing of any run is left: no task, container, shim, runsc process or cgroup" nothing_left
check "the containerd is still the one started (pid $cpid)" \
  test "$(awk '{ print $22 }' "/proc/$cpid/stat" 2>/dev/null)" = "$cstart"

# Every run of both arms valid, each metric of its workload a number, on
# the one image whose digest bench-image.sh printed.
python3 - "$D/$X/batches/b0001.csv" "$digest" <<'PY' && ok || bad "the rows"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = {"cpu": ["events_per_s"], "memory": ["mib_per_s"],
        "io": ["read_iops", "write_iops"],
        "http": ["requests_per_s", "p99_ms"], "network": ["gbit_per_s"],
        "small-files": ["read_files_s"]}
errs = []
arms = {r["arm"] for r in rows}
if arms != {"containerd-runc", "containerd-gvisor"}:
    errs.append("arms %s" % sorted(arms))
for r in rows:
    if r["valid"] != "1":
        errs.append("%s %s %s invalid: %s" % (r["run_id"], r["workload"], r["arm"], r["reason"]))
    elif not float(r["value"]) > 0:
        errs.append("%s %s %s = %s" % (r["run_id"], r["workload"], r["metric"], r["value"]))
    if r["image_digest"] != sys.argv[2]:
        errs.append("%s: image %s" % (r["run_id"], r["image_digest"]))
for w, ms in want.items():
    for a in ("containerd-runc", "containerd-gvisor"):
        for m in ms:
            n = sum(1 for r in rows if (r["workload"], r["arm"], r["metric"]) == (w, a, m)
                    and r["valid"] == "1")
            if n < 3:
                errs.append("%s %s %s: %d valid runs" % (w, a, m, n))
for e in errs[:20]:
    print(e, file=sys.stderr)
sys.exit(1 if errs else 0)
PY

# The words of the quick run's verdicts follow from the rule: on a
# throughput (better higher) "higher" reads faster and "lower" slower, on
# a time (p99, the small files) the other way round. Which rule matched
# is the machine's business, not the test's.
"$PREREG" analyze "$T/container-runtimes.lua" --data "$D" --json > "$T/quick.json" 2> "$T/quick.err"
check "analyze --json of the quick run (exit $?)" test -s "$T/quick.json"
python3 - "$T/quick.json" <<'PY' && ok || bad "the quick run's verdict words"
import json, sys
res = json.load(open(sys.argv[1]))["results"]
word = {("higher", "higher"): "faster", ("lower", "higher"): "slower",
        ("higher", "lower"): "slower", ("lower", "lower"): "faster",
        ("tie", "higher"): "tie", ("tie", "lower"): "tie"}
errs = []
if len(res) != 8:
    errs.append("%d results, expected 8" % len(res))
for r in res:
    better = "lower" if r["metric"] in ("p99_ms", "read_files_s") else "higher"
    if r["better"] != better:
        errs.append("%s: better %s" % (r["metric"], r["better"]))
    rv = r["rule_verdict"]
    if rv in ("inconclusive", "insufficient data"):
        ok = r["verdict"] == rv
    else:
        ok = r["verdict"] == word.get((rv, better))
    if not ok:
        errs.append("%s %s: rule %s reads %s" % (r["workload"], r["metric"], rv, r["verdict"]))
for e in errs:
    print(e, file=sys.stderr)
sys.exit(1 if errs else 0)
PY

# Fabricated values in a copy of the sheet whose workloads are imported:
# gVisor clearly above runc on cpu's throughput and on p99, clearly below
# on the other throughputs and on the small files' time. A throughput
# above reads faster, below slower; a time above reads slower, below
# faster.
F="$T/fab"
mkdir -p "$F"
sed -e "s|id = \"$X\"|id = \"$X-fab\"|" \
  -e 's|return { name = name, runs = runs,|return { name = name, source = "import", runs = runs,|' \
  "$T/container-runtimes.lua" > "$F/fab.lua"
check "the copy imports its workloads" grep -q 'source = "import"' "$F/fab.lua"
python3 - > "$F/values.csv" <<'PY'
up = {("cpu", "events_per_s"), ("http", "p99_ms")}
cells = [("cpu", ["events_per_s"]), ("memory", ["mib_per_s"]),
         ("io", ["read_iops", "write_iops"]),
         ("http", ["requests_per_s", "p99_ms"]),
         ("network", ["gbit_per_s"]), ("small-files", ["read_files_s"])]
print("workload,arm,metric,value,run")
for w, ms in cells:
    for i in range(5):
        for arm in ("containerd-runc", "containerd-gvisor"):
            for m in ms:
                f = 1 if arm == "containerd-runc" else (2 if (w, m) in up else 0.5)
                print("%s,%s,%s,%.1f,%d" % (w, arm, m, (100.0 + i) * f, i + 1))
PY
expect 0 "the fabricated values import" "$PREREG" register "$F/fab.lua" --data "$F/data"
expect 0 "import" "$PREREG" import "$F/fab.lua" "$F/values.csv" --data "$F/data"
"$PREREG" analyze "$F/fab.lua" --data "$F/data" --json > "$F/a.json" 2> "$F/a.err"
check "analyze --json of the fabricated values (exit $?)" test -s "$F/a.json"
python3 - "$F/a.json" <<'PY' && ok || bad "the fabricated verdicts"
import json, sys
res = {(r["workload"], r["metric"]): r for r in json.load(open(sys.argv[1]))["results"]}
want = {("cpu", "events_per_s"): "faster", ("memory", "mib_per_s"): "slower",
        ("io", "read_iops"): "slower", ("io", "write_iops"): "slower",
        ("http", "requests_per_s"): "slower", ("http", "p99_ms"): "slower",
        ("network", "gbit_per_s"): "slower", ("small-files", "read_files_s"): "faster"}
errs = []
for k, v in want.items():
    got = res.get(k, {}).get("verdict")
    if got != v:
        errs.append("%s %s: %s, expected %s" % (k[0], k[1], got, v))
for e in errs:
    print(e, file=sys.stderr)
sys.exit(1 if errs else 0)
PY
expect 0 "the fabricated values report" "$PREREG" report "$F/fab.lua" --data "$F/data" --out "$F/report"
md=$(cat "$F/report/report.md" 2>/dev/null)
check_grep "the report reads memory's loss as slower" '^\| memory \| mib\\?_per\\?_s .*slower' "$md"
check_grep "and cpu's gain as faster" '^\| cpu \| events\\?_per\\?_s .*faster' "$md"

expect 0 "the containerd stops" sh "$src/scripts/containerd/stop.sh" "$E"
# Gone: no such process, another one under its PID, or a zombie (ended,
# holding nothing, waiting for the shell that started it to reap it).
check "the containerd is gone (pid $cpid)" \
  test "$(awk '$3 != "Z" { print $22 }' "/proc/$cpid/stat" 2>/dev/null)" != "$cstart"
check "and nothing of it is left" test -z "$(leftovers)"
check "no mount is left under the containerd's folder" \
  sh -c "! grep -q ' $E/' /proc/self/mountinfo"
done_testing 32
