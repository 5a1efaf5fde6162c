#!/usr/bin/env bash
# hosts.sh: one registered experiment across the three nodes of a private
# loopback Slurm cluster: the crossed plan and its arm orders (re-derived
# by orders.py), one allocation and a step per (host, workload, round),
# every (host, arm, round) collected once, the node facts, the threat that
# the three nodes are one machine, a node with another image refused
# before any data, the per-host and cross-host analysis and report, and
# verify. Fails, never skips, when the cluster cannot start.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
H=$(cd "$(dirname "$0")" && pwd)
cluster_up
export PREREG_SLURM_WAIT_S=30
cd "$T"
cp "$H/sheets/shell.lua" .
D="--data $T/data"

# 1. The crossed plan: every host runs the whole plan, orders of its own.
expect 0 "check shows the hosts" "$PREREG" check shell.lua
check_grep "check names the hosts and the cross-host rule" \
  "slurm: n1, n2, n3.*carries over when every counted host gives the same verdict" \
  "$(printf '%s' "$out" | tr '\n' ' ')"
expect 0 "register" "$PREREG" register shell.lua $D
expect 0 "dry run" "$PREREG" run shell.lua --dry-run $D
plan=$out
check_grep "the dry run names each host" "host n1:.*host n2:.*host n3:" "$(printf '%s' "$plan" | tr '\n' ' ')"
check_grep "72 runs: 12 rounds x 2 arms x 3 hosts" "^72 runs to do" "$plan"
printf '%s\n' "$plan" | awk '/^host /{ h = $2; sub(":", "", h) }
  /bNEXT-.* round [0-9]+ / { a = $4; sub(":", "", a); k = h " " $3
    if (k in seen) o[k] = o[k] "," a; else { seen[k] = 1; o[k] = a; keys[++n] = k } }
  END { for (i = 1; i <= n; i++) print keys[i], o[keys[i]] }' > dry.orders
python3 "$H/orders.py" 11 start 12 bare sh -- n1 n2 n3 > want.orders
check "each (host, round) has the arm order re-derived from the seed and the host's name" \
  cmp -s dry.orders want.orders
check "the orders differ between hosts (the host is mixed into the seed)" \
  test "$(awk '$1 == "n1" { print $3 }' want.orders)" != "$(awk '$1 == "n2" { print $3 }' want.orders)"

# 2. The batch: one allocation, a step per (host, workload, round).
expect 0 "run across n1-n3" "$PREREG" run shell.lua $D
check_grep "the batch ran 72 runs" "batch b0001: 72 runs, 72 valid" "$out"
check_grep "the one-machine threat is told" "hosts n1, n2, n3 are one machine" "$out"
B=$T/data/shell-hosts/batches
python3 - "$B/b0001.csv" want.orders > rows.check << 'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
seen = collections.Counter((r["host"], r["arm"], r["round"]) for r in rows)
want = {}
for line in open(sys.argv[2]):
    h, rnd, arms = line.split()
    want[(h, rnd)] = arms.split(",")
ok = len(seen) == 72 and set(seen.values()) == {1}
# The order of each host's runs (seq) is the plan's, round by round.
for h in ("n1", "n2", "n3"):
    mine = sorted((int(r["seq"]), r["round"], r["arm"]) for r in rows if r["host"] == h)
    got = collections.defaultdict(list)
    for _, rnd, arm in mine:
        got[rnd].append(arm)
    ok &= all(got[rnd] == want[(h, rnd)] for (hh, rnd) in want if hh == h)
    ok &= all(r["run_id"].startswith("b0001-" + h + "-") for r in rows if r["host"] == h)
print("ok" if ok else "bad %d %s" % (len(seen), sorted(set(seen.values()))))
PY
check "every (host, arm, round) once, each host's runs in its own plan order" grep -qx ok rows.check
for n in n1 n2 n3; do
  check "$n's journal holds its 12 end markers" \
    test "$(grep -c '^end start [0-9]* 2$' "$B/b0001/$n.lines")" -eq 12
done
steps=$(grep -ho '^prereg-node 1 n[1-3] [0-9]*\.[0-9]*' "$B"/b0001/*.lines | awk '{ print $4 }' | sort -u | wc -l)
check "one step per (host, round), plus the warm-ups and the preflight: 42 steps of one job" test "$steps" -eq 42
check "all steps are of one allocation" \
  test "$(grep -ho '^prereg-node 1 n[1-3] [0-9]*' "$B"/b0001/*.lines | awk '{ print $4 }' | sort -u | wc -l)" -eq 1

# 3. Host facts per node, and the threats they show.
python3 - "$B/b0001.json" > facts.check << 'PY'
import json, sys
f = json.load(open(sys.argv[1]))
bad = []
if f.get("backend") != "slurm" or not f.get("job"):
    bad.append("backend/job")
for n in ("n1", "n2", "n3"):
    d = f["nodes"].get(n, {})
    for k in ("machine_id", "boot_id", "smt", "cpus_allowed", "threads_per_core"):
        if d.get(k) in (None, ""):
            bad.append(n + "." + k)
    h = d.get("host", {})
    for k in ("kernel", "cores", "load_avg_start"):
        if h.get(k) in (None, ""):
            bad.append(n + ".host." + k)
    if "cpu_governor" not in h:
        bad.append(n + ".host.cpu_governor")
    if "NodeName=" + n not in (d.get("scheduler") or ""):
        bad.append(n + ".scheduler")
    if d.get("rounds_done") != 12 or d.get("rounds_lost") != 0:
        bad.append(n + ".rounds")
if not any("one machine" in t for t in f.get("host_threats", [])):
    bad.append("threat")
print("ok" if not bad else "bad " + " ".join(bad))
PY
check "facts per node: names, machine-id, boot_id, kernel, CPUs, SMT, load, the scheduler's view: $(cat facts.check)" \
  grep -qx ok facts.check
expect 0 "verify" "$PREREG" verify shell.lua $D
expect 0 "a complete plan has nothing left" "$PREREG" run shell.lua --resume $D
check_grep "nothing to do" "nothing to do" "$out"
check "no job of ours is left in the queue" test -z "$(squeue -h)"

# 4. The analysis: the sheet's rule on each host, the estimate and the
# verdict across hosts, hypotheses held only when held on every host.
expect 0 "analyze --json" "$PREREG" analyze shell.lua --json $D
printf '%s\n' "$out" > analysis.json
python3 - analysis.json > analysis.check << 'PY'
import json, math, sys
a = json.load(open(sys.argv[1]))
bad = []
res = a["results"]
per = {r["host"]: r for r in res if r["host"] is not None}
cross = [r for r in res if r["host"] is None]
if sorted(per) != ["n1", "n2", "n3"] or len(cross) != 1:
    bad.append("entries %s %d" % (sorted(per), len(cross)))
else:
    x = cross[0]
    for k in ("workload", "metric", "arm", "reference", "n", "n_reference", "median",
              "median_reference", "ratio", "ci_low", "ci_high", "verdict", "seed"):
        if k not in x or any(k not in r for r in per.values()):
            bad.append("field " + k)
    # The verdicts come from measured runs: each is checked against the
    # rule for the figures found, never for a given outcome (a loaded
    # machine may make any of them).
    for r in per.values():
        lo, hi = r["ci_low"], r["ci_high"]
        want = "slower" if lo > 1 and r["ratio"] > 1.10 else \
            "faster" if hi < 1 and r["ratio"] < 1 / 1.10 else "inconclusive"
        if r["verdict"] != want or r["n"] != 12:
            bad.append("per host %s %s %s" % (r["host"], r["verdict"], r["n"]))
    g = math.exp(sum(math.log(r["ratio"]) for r in per.values()) / 3)
    if abs(x["ratio"] - g) > 1e-12 * g or x["hosts_counted"] != 3 or x["n"] != 36:
        bad.append("estimate %s %s" % (x["ratio"], g))
    if not (x["ci_low"] < x["ratio"] < x["ci_high"]):
        bad.append("ci")
    ratios = [r["ratio"] for r in per.values()]
    vs = [per[n]["verdict"] for n in ("n1", "n2", "n3")]
    decided = {v for v in vs if v != "inconclusive"}
    want = "host-dependent" if len(decided) > 1 or \
        max(ratios) / min(ratios) > 1.5 else \
        "inconclusive" if "inconclusive" in vs else "carries over"
    if x["verdict"] != want:
        bad.append("verdict %s, the rule gives %s: %s" % (x["verdict"], want, x.get("why", "")))
    with open("verdicts", "w") as f:
        f.write(" ".join([x["verdict"].replace(" ", "_")] + vs) + "\n")
    if abs(x["host_spread"] - max(ratios) / min(ratios)) > 1e-12:
        bad.append("spread")
hs = {(h["id"], h["host"]): h["verdict"] for h in a["hypotheses"]}
every = all(hs.get(("H1", n)) == "held" for n in ("n1", "n2", "n3"))
if any(("H1", n) not in hs for n in ("n1", "n2", "n3")) or \
        (hs.get(("H1", None)) == "held") != every:
    bad.append("hypotheses %s" % hs)
ac = a.get("across", {})
if [(h["host"], h["rounds_completed"], h["rounds_planned"], h["counted"]) for h in ac.get("hosts", [])] != \
        [(n, 12, 12, True) for n in ("n1", "n2", "n3")] or ac.get("min_hosts") != 3:
    bad.append("across %s" % ac)
print("ok" if not bad else "bad " + "; ".join(bad))
PY
check "per-host entries with host, one cross-host entry with host null, its estimate and verdict: $(cat analysis.check)" \
  grep -qx ok analysis.check
expect 0 "analyze (the table)" "$PREREG" analyze shell.lua $D
[ -s verdicts ] || echo "no-verdicts no-verdicts no-verdicts no-verdicts" > verdicts
read -r xv v1 v2 v3 < verdicts
xv=${xv//_/ }
check_grep "the table shows each host and the verdict across hosts" \
  "sh across hosts: .*$xv.*n1 .*$v1.*n2 .*$v2.*n3 .*$v3" "$(printf '%s' "$out" | tr '\n' ' ')"
expect 0 "report" "$PREREG" report shell.lua --out "$T/report" $D
check_grep "the report shows per-host and cross-host verdicts" \
  "## Across hosts.*\| n1 \| 12 \|.*$v1.*across hosts.*$xv" "$(tr '\n' ' ' < "$T/report/report.md")"
check_grep "the report names the one-machine threat" "are one machine" "$(cat "$T/report/report.md")"
check "the plot of host ratios is written" grep -q "across hosts" "$T/report/hosts-1-start-wall_s-sh.svg"

# 5. A node whose image differs is refused before the first run.
mkdir img
for n in n1 n2 n3; do echo same > "img/$n"; done
echo other > img/n2
sed -e 's/id = "shell-hosts"/id = "image-hosts"/' \
  -e "s#  workloads = {#  image = { digest = \"cat $T/img/\$SLURMD_NODENAME\" },\n  workloads = {#" \
  shell.lua > image.lua
expect 0 "register the sheet with an image" "$PREREG" register image.lua $D
expect 1 "a node with another image digest is refused" "$PREREG" run image.lua $D
check_grep "the refusal names the node and both digests" "node n2 has the image of arm bare with digest 'other', not 'same'" "$out"
check "nothing was written" test ! -e "$T/data/image-hosts/batches"

# 6. Hosts by count: the first allocation names them, and the plan keeps
# those names from then on.
sed -e 's/id = "shell-hosts"/id = "count-hosts"/' -e 's/runs = 12/runs = 3/' \
  -e 's/nodes = { "n1", "n2", "n3" }/count = 2, partition = "loop", min_hosts = 2/' \
  shell.lua > count.lua
expect 0 "register hosts by count" "$PREREG" register count.lua $D
expect 0 "dry run before any allocation" "$PREREG" run count.lua --dry-run $D
check_grep "the plan waits for the allocation to name the hosts" \
  "6 runs to do on each of the 2 hosts the allocation names \\(12 in all\\)" "$out"
expect 0 "run on two nodes the scheduler picks" "$PREREG" run count.lua $D
check_grep "12 runs" "batch b0001: 12 runs, 12 valid" "$out"
expect 0 "the plan now names the hosts" "$PREREG" run count.lua --dry-run $D
check_grep "the hosts are the allocation's, every run collected" \
  "hosts \(slurm\): n[1-3], n[1-3].*nothing to do: all 12 planned runs" "$(printf '%s' "$out" | tr '\n' ' ')"

# 7. A blocked workload is one step per host (each arm's rounds in a row),
# and reference parity is decided on the node, round by round.
cp "$H/sheets/blocked.lua" .
expect 0 "register the blocked sheet" "$PREREG" register blocked.lua $D
expect 0 "run it on n1 and n2" "$PREREG" run blocked.lua $D
python3 - "$T/data/blocked-hosts/batches/b0001.csv" > blocked.check << 'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = []
for h in ("n1", "n2"):
    blk = [r["arm"] for r in sorted((r for r in rows if r["host"] == h and r["workload"] == "block"),
                                   key=lambda r: int(r["seq"]))]
    if blk != ["bare"] * 3 + ["sh"] * 3:
        bad.append(h + " block " + ",".join(blk))
    par = [r for r in rows if r["host"] == h and r["workload"] == "parity"]
    if len(par) != 6 or any(r["valid"] != ("1" if r["arm"] == "bare" else "0") for r in par) or \
            any(r["arm"] == "sh" and "step 2: exit 1, reference arm exit 0" not in r["reason"] for r in par):
        bad.append(h + " parity")
print("ok" if not bad else "bad " + "; ".join(bad))
PY
check "blocked order per host, parity per round: $(cat blocked.check)" grep -qx ok blocked.check
check "one end marker per round of the blocked step" \
  test "$(grep -c '^end block [1-3] 6$' "$T/data/blocked-hosts/batches/b0001/n1.lines")" -eq 3

done_testing 36
