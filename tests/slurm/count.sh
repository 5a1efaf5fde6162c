#!/usr/bin/env bash
# count.sh: the one counting rule across hosts, through the CLI on a
# private loopback Slurm cluster: a round is filled only by a run of its
# own host, the cap of runs holds per host, and a host short of its plan
# makes the experiment incomplete, naming it, alike in status, analyze,
# report and verify; run plans and runs exactly each host's missing
# rounds. The data that no run would give (one host's rows relabelled as
# another's, one host over its plan) are a collected folder with rows
# rewritten and the MANIFEST signed again, so that only the rule sees it.
# Fails, never skips, when the cluster cannot start.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
H=$(cd "$(dirname "$0")" && pwd)
cluster_up
export PREREG_SLURM_WAIT_S=30
cd "$T"
cp "$H/sheets/count.lua" .
E=count-hosts

# forge DIR SCRIPT: rewrites DIR/batches/b0001.csv with the Python code
# SCRIPT (rows: a list of dicts, in file order; it leaves the new list in
# rows) and signs the MANIFEST again.
forge() {
  python3 - "$1" "$2" << 'PY'
import csv, hashlib, io, os, stat, sys
d, code = sys.argv[1], sys.argv[2]
path = os.path.join(d, "batches", "b0001.csv")
with open(path, newline="") as f:
    text = f.read()
head = text.split("\n", 1)[0].split(",")
rows = list(csv.DictReader(io.StringIO(text)))
exec(code)
out = io.StringIO()
w = csv.DictWriter(out, fieldnames=head, lineterminator="\n")
w.writeheader()
w.writerows(rows)
os.chmod(path, 0o644)
with open(path, "w", newline="") as f:
    f.write(out.getvalue())
os.chmod(path, 0o444)
man = os.path.join(d, "MANIFEST")
lines = []
for line in open(man).read().splitlines():
    rel = line[66:]
    if rel == "batches/b0001.csv":
        line = hashlib.sha256(out.getvalue().encode()).hexdigest() + "  " + rel
    lines.append(line)
mode = stat.S_IMODE(os.stat(man).st_mode)
os.chmod(man, 0o644)
open(man, "w").write("\n".join(lines) + "\n")
os.chmod(man, mode)
PY
}

# 1. The whole plan on n1-n3: complete, each host its own 8 runs.
expect 0 "register" "$PREREG" register count.lua --data "$T/clean"
expect 0 "run across n1-n3" "$PREREG" run count.lua --data "$T/clean"
check_grep "24 runs: 4 rounds x 2 arms x 3 hosts" "batch b0001: 24 runs, 24 valid" "$out"
expect 0 "status" "$PREREG" status count.lua --data "$T/clean"
check_grep "every host's runs fill its own rounds: COMPLETE" "^status: COMPLETE$" "$out"
check_grep "planned is of every host together" "^  t  *bare  *12  *12  *0  *0  *0$" "$out"
for n in n1 n2 n3; do
  check_grep "$n: 8 of 8 runs, 4 of 4 rounds" "^  $n  *runs 8/8  rounds 4/4$" "$out"
done
expect 0 "analyze" "$PREREG" analyze count.lua --data "$T/clean"
check_grep "analyze: COMPLETE first" "^status: COMPLETE$" "$(printf '%s\n' "$out" | head -n 1)"
expect 0 "verify" "$PREREG" verify count.lua --data "$T/clean"
check_grep "verify: the same rule, COMPLETE" "status: COMPLETE \(runs: 24 counted, 0 invalid, 0 superseded, 0 beyond the plan\)" "$out"

# 2. n2's rows relabelled as n1's: they fill n1's rounds (again), never
# n2's. n1 is over its plan by 8 runs, n2 has none.
cp -a "$T/clean" "$T/a"
forge "$T/a/$E" 'for r in rows:
    if r["host"] == "n2": r["host"] = "n1"'
line="INCOMPLETE \\(16/24; n2 0/8\\) · BEYOND PLAN"
expect 0 "status of n2 relabelled as n1" "$PREREG" status count.lua --data "$T/a"
check_grep "status names n2 as short and n1 as beyond its plan" "^status: $line$" "$out"
check_grep "n1 has its 8 runs, no more" "^  n1  *runs 8/8  rounds 4/4$" "$out"
check_grep "n2 has none" "^  n2  *runs 0/8  rounds 0/4  incomplete$" "$out"
check_grep "beyond: 4 per arm, n1's second set" "^  t  *sh  *12  *8  *0  *0  *4$" "$out"
expect 0 "verify of the rewritten folder" "$PREREG" verify count.lua --data "$T/a"
check_grep "verify counts by the same rule" \
  "status: $line \(runs: 16 counted, 0 invalid, 0 superseded, 8 beyond the plan\)" "$out"
expect 0 "analyze" "$PREREG" analyze count.lua --data "$T/a"
check_grep "analyze's first line is the same status, verdicts provisional" \
  "^status: $line \(verdicts are provisional\)$" "$(printf '%s\n' "$out" | head -n 1)"
expect 0 "analyze --json" "$PREREG" analyze count.lua --json --data "$T/a"
printf '%s\n' "$out" > a.json
python3 - a.json > a.check << 'PY'
import json, sys
a = json.load(open(sys.argv[1]))
bad = []
if a["status"]["line"] != "INCOMPLETE (16/24; n2 0/8) · BEYOND PLAN":
    bad.append("status " + a["status"]["line"])
per = {r["host"]: r for r in a["results"] if r["host"]}
if sorted(per) != ["n1", "n3"] or any(r["n"] != 4 or r["n_reference"] != 4 for r in per.values()):
    bad.append("per host %s" % [(h, r["n"], r["n_reference"]) for h, r in per.items()])
if per.get("n1", {}).get("provisional") is not False or per.get("n3", {}).get("provisional") is not False:
    bad.append("n1 and n3 complete their plans: not provisional")
cross = [r for r in a["results"] if r["host"] is None]
if len(cross) != 1 or cross[0]["provisional"] is not True or cross[0]["n"] != 8:
    bad.append("cross %s" % [(r["n"], r["provisional"]) for r in cross])
hosts = [(h["host"], h["rounds_completed"], h["rounds_planned"], h["counted"])
         for h in a["across"]["hosts"]]
if hosts != [("n1", 4, 4, True), ("n2", 0, 4, False), ("n3", 4, 4, True)]:
    bad.append("hosts %s" % hosts)
st = [(h["host"], h["status"], h["provisional"]) for h in a["across"]["hosts"]]
if st != [("n1", "BEYOND PLAN", False), ("n2", "INCOMPLETE (0/8)", True), ("n3", "COMPLETE", False)]:
    bad.append("host status %s" % st)
beyond = [e for e in a["exclusions"] if e["reason"].startswith("beyond the plan")]
if sorted((e["arm"], e["runs"]) for e in beyond) != [("bare", 4), ("sh", 4)]:
    bad.append("beyond %s" % beyond)
cells = {c["arm"]: c for c in a["cells"]}
if any(c["valid"] != 8 or c["beyond"] != 4 or c["planned"] != 12 for c in cells.values()):
    bad.append("cells %s" % [(c["valid"], c["beyond"], c["planned"]) for c in cells.values()])
print("ok" if not bad else "bad " + "; ".join(bad))
PY
check "per host: n1 capped at its 4 runs an arm, n2 empty and not counted: $(cat a.check)" grep -qx ok a.check
expect 0 "dry run" "$PREREG" run count.lua --dry-run --data "$T/a"
check_grep "8 of 24 runs to do, all on n2" "^8 of the 24 planned runs to do \(16 collected\)" "$out"
check_grep "bare's rounds on n2" "^  n2: t / bare: rounds 1, 2, 3, 4 \(4 runs\)$" "$out"
check_grep "sh's rounds on n2" "^  n2: t / sh: rounds 1, 2, 3, 4 \(4 runs\)$" "$out"
check "nothing on n1 or n3" test -z "$(printf '%s\n' "$out" | grep -E '^  n[13]: ')"
expect 1 "run without --resume is refused, naming n2's rounds" "$PREREG" run count.lua --data "$T/a"
check_grep "the refusal lists n2's rounds" "n2: t / sh: rounds 1, 2, 3, 4" "$out"
expect 0 "run --resume does n2's rounds" "$PREREG" run count.lua --resume --data "$T/a"
check_grep "8 runs" "batch b0002: 8 runs, 8 valid" "$out"
python3 - "$T/a/$E/batches/b0002.csv" > a2.check << 'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
got = sorted((r["host"], r["arm"], r["round"]) for r in rows)
want = sorted(("n2", a, str(r)) for a in ("bare", "sh") for r in range(1, 5))
print("ok" if got == want else "bad %s" % got)
PY
check "the new batch holds exactly n2's 8 runs: $(cat a2.check)" grep -qx ok a2.check
expect 0 "status after" "$PREREG" status count.lua --data "$T/a"
check_grep "every host complete; n1's extra runs stay beyond the plan" "^status: BEYOND PLAN$" "$out"
expect 0 "nothing is left" "$PREREG" run count.lua --dry-run --data "$T/a"
check_grep "nothing to do" "^nothing to do: all 24 planned runs are collected" "$out"

# 3. One host over its plan: n3's round 1 twice (runs of their own ids,
# first in the file), n1 short of its round 2. Only n3 goes beyond, by 2
# runs; n1 is the host the plan waits for.
cp -a "$T/clean" "$T/b"
forge "$T/b/$E" 'extra = [dict(r, run_id=r["run_id"] + "x") for r in rows
         if r["host"] == "n3" and r["round"] == "1"]
rows = extra + [r for r in rows if not (r["host"] == "n1" and r["round"] == "2")]'
line="INCOMPLETE \\(22/24; n1 6/8\\) · BEYOND PLAN"
expect 0 "status with n3 over its plan" "$PREREG" status count.lua --data "$T/b"
check_grep "status names n1" "^status: $line$" "$out"
check_grep "n3 has 8 runs counted of 8" "^  n3  *runs 8/8  rounds 4/4$" "$out"
check_grep "n1 short of round 2" "^  n1  *runs 6/8  rounds 3/4  incomplete$" "$out"
expect 0 "verify" "$PREREG" verify count.lua --data "$T/b"
check_grep "verify: the same line" "status: $line \(runs: 22 counted, 0 invalid, 0 superseded, 2 beyond the plan\)" "$out"
expect 0 "analyze --json" "$PREREG" analyze count.lua --json --data "$T/b"
printf '%s\n' "$out" > b.json
python3 - b.json > b.check << 'PY'
import json, sys
a = json.load(open(sys.argv[1]))
bad = []
per = {r["host"]: r for r in a["results"] if r["host"]}
if {h: (r["n"], r["n_reference"]) for h, r in per.items()} != {"n1": (3, 3), "n2": (4, 4), "n3": (4, 4)}:
    bad.append("per host %s" % [(h, r["n"], r["n_reference"]) for h, r in per.items()])
if [h for h, r in sorted(per.items()) if r["provisional"]] != ["n1"]:
    bad.append("provisional %s" % [(h, r["provisional"]) for h, r in per.items()])
beyond = [e for e in a["exclusions"] if e["reason"].startswith("beyond the plan")]
if sorted((e["arm"], e["runs"]) for e in beyond) != [("bare", 1), ("sh", 1)]:
    bad.append("beyond %s" % beyond)
hosts = [(h["host"], h["rounds_completed"], h["counted"]) for h in a["across"]["hosts"]]
if hosts != [("n1", 3, False), ("n2", 4, True), ("n3", 4, True)]:
    bad.append("hosts %s" % hosts)
print("ok" if not bad else "bad " + "; ".join(bad))
PY
check "n3 capped at 4 runs an arm (its first 4, the extra round 1 first), n1 3 and provisional: $(cat b.check)" \
  grep -qx ok b.check
expect 0 "analyze (the table)" "$PREREG" analyze count.lua --data "$T/b"
check_grep "the table's hosts: n1 incomplete, not counted" \
  "^  n1  *3/4 rounds  not counted  incomplete: 6 of 8 runs$" "$out"
check_grep "the table marks n1's verdict provisional, not n2's" \
  "  n1 .*\(provisional\)  n=3/3 .*  n2 [^\(]*  n=4/4" "$(printf '%s' "$out" | tr '\n' ' ')"
expect 0 "report" "$PREREG" report count.lua --out "$T/b-report" --data "$T/b"
check_grep "the report's status line names n1" "$line" "$(head -n 5 "$T/b-report/report.md")"
check_grep "the report says which host has not run its plan" \
  "1 of the 3 hosts has not \(runs collected of planned: n1 6/8\)" "$(cat "$T/b-report/report.md")"
check_grep "the report marks n1's verdict provisional" "^\| n1 \| 3 \| .*\(provisional\) \|$" "$(cat "$T/b-report/report.md")"
check_grep "and n2's not" "^\| n2 \| 4 \| [^(]*\|$" "$(cat "$T/b-report/report.md")"
check_grep "the hosts table says n1 is incomplete" "^\| n1 \| 3 of 4 \(incomplete\) \| \*\*no\*\* \|" "$(cat "$T/b-report/report.md")"
expect 0 "dry run" "$PREREG" run count.lua --dry-run --data "$T/b"
check_grep "2 runs to do, n1's round 2" "^2 of the 24 planned runs to do \(22 collected\)" "$out"
check_grep "n1's bare round 2" "^  n1: t / bare: rounds 2 \(1 run\)$" "$out"
check_grep "n1's sh round 2" "^  n1: t / sh: rounds 2 \(1 run\)$" "$out"
expect 0 "run --resume" "$PREREG" run count.lua --resume --data "$T/b"
check_grep "2 runs" "batch b0002: 2 runs, 2 valid" "$out"
python3 - "$T/b/$E/batches/b0002.csv" > b2.check << 'PY'
import csv, sys
got = sorted((r["host"], r["arm"], r["round"]) for r in csv.DictReader(open(sys.argv[1])))
print("ok" if got == [("n1", "bare", "2"), ("n1", "sh", "2")] else "bad %s" % got)
PY
check "they are n1's round 2: $(cat b2.check)" grep -qx ok b2.check
expect 0 "status after" "$PREREG" status count.lua --data "$T/b"
check_grep "complete but for n3's extra round" "^status: BEYOND PLAN$" "$out"

done_testing
