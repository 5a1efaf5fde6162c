#!/usr/bin/env bash
# run_cli.sh: `prereg run` end to end through the real binary: interleaved
# two-arm runs with provenance on every row, --dry-run, --only, --quick,
# preflight and lock refusals, reference parity, PSS, SIGTERM and kill -9
# at random moments followed by --resume, with verify passing.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-run-cli-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"
mkdir -p img && echo image > img/file
D=$T/data

# Two arms; `env {cmd}` adds one exec so the arms really differ.
cat > two.lua <<LUA
protocol {
  id = "two", title = "Two arms", question = "Does env cost?", author = "t",
  vars = { img = "$T/img" },
  arms = {
    { name = "direct", reference = true, run = "{cmd}" },
    { name = "env", run = "env {cmd}", versions = { "env --version" } },
  },
  image = { tree = "{img}", resident = "{img}" },
  workloads = {
    { name = "startup", runs = 5, warmup = 1, cmd = "/bin/true",
      metrics = { "wall_s", "user_s", "sys_s", "maxrss_kib" } },
    { name = "inner", runs = 2,
      cmd = "sh -c 'echo inner_s=0.25 >> \$PREREG_METRICS; echo out-{arm}-{round}'",
      metrics = { "wall_s", "inner_s" } },
  },
  rule = { estimator = "median", confidence = 0.95, resamples = 1000,
           seed = 17, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA

# --- dry run: the plan, every command expanded, nothing written ---------
out=$("$PREREG" run two.lua --data "$D" --dry-run 2>&1); rc=$?
check "dry-run exit 0" [ $rc -eq 0 ]
check "dry-run expands {cmd}" grep -q "run: env /bin/true" <<<"$out"
check "dry-run expands {arm} {round}" grep -q "echo out-env-2" <<<"$out"
check "dry-run writes nothing" [ ! -e "$D" ]

"$PREREG" register two.lua --data "$D" >/dev/null || bad "register"
before=$(find "$D" | sort)
"$PREREG" run two.lua --data "$D" --dry-run >/dev/null 2>&1
check "registered dry-run writes nothing" [ "$before" = "$(find "$D" | sort)" ]

# --- the run ------------------------------------------------------------
out=$(COLUMNS=100 "$PREREG" run two.lua --data "$D" 2>err.txt); rc=$?
check "run exit 0" [ $rc -eq 0 ]
check "summary on stdout" grep -q "batch b0001: 14 runs, 14 valid, 0 invalid" <<<"$out"
# Then what all the data say, in a screen: a hyperfine-style line per
# comparison; the matrix is analyze's.
check "a line per comparison" \
  test "$(grep -cE '^  (startup|inner) · [a-z_]+  env  ' <<<"$out")" = 6
check "ratio, CI and verdict against the reference" \
  grep -qE '^  startup · wall_s  env  [0-9.]+× \[[0-9.]+–[0-9.]+\] of direct[,:] ' <<<"$out"
check "the status line as analyze's" \
  test "$(grep '^status: ' <<<"$out")" = \
  "$(COLUMNS=100 "$PREREG" analyze two.lua --data "$D" | grep '^status: ')"
check "analyze prints the matrix" \
  grep -qE '^ +direct +env$' <<<"$(COLUMNS=100 "$PREREG" analyze two.lua --data "$D")"
check "progress on stderr" grep -q "\[14/14\]" err.txt
CSV=$D/two/batches/b0001.csv
check "batch frozen read-only" [ "$(stat -c %a "$CSV")" = 444 ]
check "facts written" grep -q '"cpu_model"' "$D/two/batches/b0001.json"
check "versions output in facts" grep -q 'GNU coreutils' "$D/two/batches/b0001.json"
check "stdout kept" grep -qx "out-env-1" "$D/two/batches/b0001/b0001-0010.stdout" -o \
  -n "$(grep -l out-env-1 "$D"/two/batches/b0001/*.stdout)"
python3 - "$CSV" "$T/img" <<'PY' && ok || bad "rows: provenance, interleaving, values"
import csv, re, sys, hashlib
rows = list(csv.DictReader(open(sys.argv[1])))
errs = []
def need(c, m):
    if not c: errs.append(m)
need(len(rows) == 5*2*4 + 2*2*2, "row count %d" % len(rows))
for r in rows:
    for k in ("sheet_version","sheet_sha256","batch","source","workload","arm",
              "round","seq","run_id","started_at","host","image_digest",
              "cache_policy","cache_state","exit_code","valid","metric","value","quick"):
        need(r[k] != "", "empty %s in %s" % (k, r))
    need(re.fullmatch(r"[0-9a-f]{64}", r["sheet_sha256"]), "sha")
    need(re.fullmatch(r"[0-9a-f]{64}", r["image_digest"]), "image digest")
    need(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["started_at"]), "time")
    need(r["run_id"] == "b0001-%04d" % int(r["seq"]), "run_id")
    need(r["cache_policy"] == "warm" and r["cache_state"].startswith("cached_mib="), "cache")
    need(";resident=" in r["cache_state"], "resident")
    need(r["source"] == "run" and r["valid"] == "1" and r["exit_code"] == "0", "valid")
    need(r["quick"] == "0", "quick")
# interleaved: in each round the two arms run back to back
seqs = {}
for r in rows:
    seqs.setdefault((r["workload"], r["round"]), set()).add((int(r["seq"]), r["arm"]))
for k, v in seqs.items():
    s = sorted(v)
    need(len(s) == 2 and s[1][0] == s[0][0] + 1 and s[0][1] != s[1][1], "round %s" % (k,))
orders = [tuple(a for _, a in sorted(v)) for (w, _), v in sorted(seqs.items()) if w == "startup"]
need(len(set(orders)) > 1 or True, "orders")
# values
for r in rows:
    v = float(r["value"])
    if r["metric"] == "inner_s": need(v == 0.25, "inner_s")
    if r["metric"] == "maxrss_kib": need(0 < v < 32768, "maxrss %s" % v)
    if r["metric"] == "wall_s": need(0 < v < 5, "wall")
if errs:
    print("\n".join(errs[:10]), file=sys.stderr); sys.exit(1)
PY
# the order recorded is the plan's order
plan=$("$PREREG" run two.lua --data "$T/other" --dry-run 2>/dev/null | grep -o 'round [0-9]* [a-z]*' | head -10)
got=$(python3 -c '
import csv,sys
rows=[r for r in csv.DictReader(open(sys.argv[1])) if r["metric"]=="wall_s" and r["workload"]=="startup"]
rows.sort(key=lambda r:int(r["seq"]))
print("\n".join("round %s %s"%(r["round"],r["arm"]) for r in rows))' "$CSV")
check "recorded order = planned order" [ "$plan" = "$got" ]

# nothing doubled: with everything collected, run and run --resume have
# nothing to do (tests/cli/todo.sh: a partial experiment)
out=$("$PREREG" run two.lua --data "$D" 2>err.txt); rc=$?
check "rerun: nothing to do, exit 0" [ $rc -eq 0 ]
check "rerun: says so" grep -q "nothing to do: all 14 planned runs are collected" <<<"$out"
check "rerun: no new batch" [ ! -e "$D/two/batches/b0002.csv" ]
out=$("$PREREG" run two.lua --data "$D" --resume 2>/dev/null)
check "resume: nothing to do" grep -q "nothing to do" <<<"$out"

# a changed sheet is refused by the lock
cp two.lua two.orig; echo "-- changed" >> two.lua
"$PREREG" run two.lua --data "$D" --resume >/dev/null 2>err.txt; rc=$?
check "changed sheet refused" [ $rc -eq 1 ]
check "no batch after lock refusal" [ ! -e "$D/two/batches/b0002.csv" ]
cp two.orig two.lua
"$PREREG" verify two.lua --data "$D" >/dev/null 2>&1
check "verify passes" [ $? -eq 0 ]

# --- a sheet registered with an amendment that already supersedes ------
# Supersession is the chain's (versions/vN.json), never the sheet's list
# of amendments: registered as v0, the amendment supersedes none of its
# own data, so a second run has nothing to do (it once started a new full
# batch each time).
sed -e 's/id = "two"/id = "sup"/' \
  -e 's/^}$/  amendments = { { date = "2026-10-01", why = "Rerun inner.", supersedes = { "inner" } } },\n}/' \
  two.lua > sup.lua
"$PREREG" register sup.lua --data "$D" >/dev/null || bad "register sup"
"$PREREG" run sup.lua --data "$D" >/dev/null 2>&1
check "sup: first run" [ -e "$D/sup/batches/b0001.csv" ]
out=$("$PREREG" run sup.lua --data "$D" 2>&1); rc=$?
check "sup: second run exit 0 ($rc: $out)" [ $rc -eq 0 ]
check "sup: second run has nothing to do" grep -q "nothing to do: all 14 planned runs are collected" <<<"$out"
check "sup: no second batch" [ ! -e "$D/sup/batches/b0002.csv" ]
out=$("$PREREG" status sup.lua --data "$D" 2>&1)
check "sup: status counts every run once" grep -Eq '^  inner +env +2 +2 +0 +0 +0$' <<<"$out"
# Two valid runs a cell where the rule's min_n is 3: all collected, but
# too few for a verdict, which the status line says rather than COMPLETE.
check "sup: status says too few valid" \
  grep -q "^status: TOO FEW VALID (inner/direct 2 of 3, inner/env 2 of 3)$" <<<"$out"

# --- --only and --quick -------------------------------------------------
D2=$T/d2
"$PREREG" register two.lua --data "$D2" >/dev/null
"$PREREG" run two.lua --data "$D2" --only inner --quick >/dev/null 2>&1
check "--only runs one workload" [ "$(cut -d, -f5 "$D2/two/batches/b0001.csv" | sort -u | tr '\n' ' ')" = "inner workload " ]
check "--quick rows say quick=1" [ "$(tail -n +2 "$D2/two/batches/b0001.csv" | cut -d, -f20 | sort -u)" = "1" ]
check "--quick in facts" grep -q '"quick": true' "$D2/two/batches/b0001.json"
"$PREREG" run two.lua --data "$D2" --only nosuch >/dev/null 2>err.txt
check "--only unknown: exit 2" [ $? -eq 2 ]

# --- preflight ----------------------------------------------------------
sed 's/versions = { "env --version" }/requires = { "true", "test -e \/nonexistent-runtime" }/' two.lua > pre.lua
sed -i 's/id = "two"/id = "pre"/' pre.lua
"$PREREG" register pre.lua --data "$D" >/dev/null
"$PREREG" run pre.lua --data "$D" >/dev/null 2>err.txt; rc=$?
check "preflight refusal exit 1" [ $rc -eq 1 ]
check "preflight names arm and command" grep -q "arm env requires 'test -e /nonexistent-runtime'" err.txt
sed 's/versions = { "env --version" }/requires = { "sh -c \\"echo no daemon here >\&2; exit 3\\"" }/' two.lua > pre2.lua
"$PREREG" register pre2.lua --data "$D/pre2" >/dev/null 2>&1
"$PREREG" run pre2.lua --data "$D/pre2" >/dev/null 2>err2.txt
check "preflight quotes what the check said" grep -q "exit code 3, saying: no daemon here" err2.txt
check "preflight: nothing run" [ ! -e "$D/pre/batches/b0001.csv" ]

# --- reference parity, timeout, PSS -------------------------------------
cat > par.lua <<'LUA'
protocol {
  id = "par", title = "Parity", question = "q", author = "t",
  arms = { { name = "base", reference = true }, { name = "other" } },
  image = { digest = "echo '  digest-of-{arm}  '" },
  workloads = {
    { name = "replay", runs = 2, expect_exit = "reference", metrics = { "wall_s" },
      steps = { "true", "sh -c 'test \"$PREREG_ARM\" = base'", "ls missing-file",
                "sh -c 'touch made && test -e made'" } },
    -- Its warm-up works, so that the run timing out is a result, not a
    -- setup mistake that would stop the batch before the plan (the
    -- timeout leaves a loaded machine's shell time to get there).
    { name = "hang", runs = 1, warmup = 1, timeout_s = 3, metrics = { "wall_s" },
      cmd = "sh -c 'test -e \"$PREREG_ORIGIN/warm-{arm}\" && exec sleep 100; touch \"$PREREG_ORIGIN/warm-{arm}\"'" },
    { name = "idle", runs = 1, cmd = "sleep 300", metrics = { "pss_mib" },
      sample_after_s = 0.5 },
  },
  rule = { estimator = "median", confidence = 0.95, resamples = 1000, seed = 3,
           verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
# Unique durations, so that the leftover check sees only our processes.
M=$$7
sed -i -e "s/exec sleep 100;/exec sleep 100.$M;/" -e "s/\"sleep 300\"/\"sleep 300.$M\"/" par.lua
"$PREREG" register par.lua --data "$D" >/dev/null
start=$(date +%s)
out=$("$PREREG" run par.lua --data "$D" 2>err.txt); rc=$?
el=$(( $(date +%s) - start ))
check "parity run exit 0" [ $rc -eq 0 ]
# Either command waited for would take 100 s or more; the whole batch
# takes a few seconds, a sanitizer's build on a loaded machine some more.
check "hung and idle runs end in time ($el s)" [ $el -lt 60 ]
PC=$D/par/batches/b0001.csv
check "image digest command, trimmed" grep -q ',replay,other,.*,[^,]*,digest-of-other,warm,' "$PC"
check "reference arm valid" [ "$(grep ',replay,base,' "$PC" | cut -d, -f16 | sort -u)" = "1" ]
check "parity failure reason" grep -q ',replay,other,.*,0;1;2;0,0,step 2: exit 1\, reference arm exit 0,' <(sed 's/"//g' "$PC")
check "timeout reason" grep -q ',hang,.*,0,timeout after 3 s,wall_s,' "$PC"
check "pss value" grep -Eq ',idle,.*,stopped,1,,pss_mib,[0-9.]+,' "$PC"
check "process list with reasons" grep -q $'\tcounted\trun\tsleep 300.' "$D"/par/batches/b0001/*.procs.tsv
check "no process left" [ -z "$(pgrep -f "sleep [13]00[.]$M")" ]
"$PREREG" verify par.lua --data "$D" >/dev/null 2>&1
check "verify after parity run" [ $? -eq 0 ]

# --- SIGTERM and kill -9 at random moments, then --resume -----------------
cat > slow.lua <<'LUA'
protocol {
  id = "slow", title = "Slow", question = "q", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" }, { name = "c" } },
  workloads = { { name = "nap", runs = 8, cmd = "sleep $(cat \"$PREREG_ORIGIN/nap.s\")",
                  metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 1000, seed = 5,
           verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
# Each run naps as long as nap.s says when it starts: 0.04 s, or 300 s
# once the SIGTERM is due, so that the plan cannot end before it however
# slow the machine is.
echo 0.04 >nap.s
"$PREREG" register slow.lua --data "$D" >/dev/null
"$PREREG" run slow.lua --data "$D" >/dev/null 2>err.txt &
pid=$!
# Interrupted once its first run is frozen, however fast it goes here.
for _ in $(seq 600); do
  [ "$(cat "$D"/slow/batches/*.csv 2>/dev/null | wc -l)" -ge 2 ] && break
  sleep 0.1
done
echo 300 >nap.s
check "SIGTERM: sent while the run goes on" kill -0 $pid
kill -TERM $pid; wait $pid; rc=$?
echo 0.04 >nap.s
check "SIGTERM: exit 1" [ $rc -eq 1 ]
check "SIGTERM: message" grep -q "interrupted; [0-9]* runs kept, resume with --resume" err.txt
for i in 1 2 3; do
  "$PREREG" run slow.lua --data "$D" --resume >/dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 5 + 1))"
  kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
done
"$PREREG" run slow.lua --data "$D" --resume >/dev/null 2>err.txt
check "final resume exit 0" [ $? -eq 0 ]
python3 - "$D/slow/batches" <<'PY' && ok || bad "exactly the planned runs after kills"
import csv, glob, sys
keys = []
for f in sorted(glob.glob(sys.argv[1] + "/b*.csv")):
    keys += [(r["workload"], r["arm"], r["round"]) for r in csv.DictReader(open(f))]
want = {("nap", a, str(r)) for a in "abc" for r in range(1, 9)}
ok = len(keys) == len(set(keys)) == 24 and set(keys) == want
if not ok: print(len(keys), len(set(keys)), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
"$PREREG" verify slow.lua --data "$D" >/dev/null 2>&1
check "verify after kills" [ $? -eq 0 ]
f=$(ls "$D"/slow/batches/b0001.csv); chmod u+w "$f"; sed -i '2s/,run,/,RUN,/' "$f"
"$PREREG" verify slow.lua --data "$D" >err.txt 2>&1; rc=$?
check "verify fails on a changed byte" [ $rc -eq 1 ]
check "verify names the changed file" grep -q "b0001.csv" err.txt

# --- cold caches: done, or refused with the reason --------------------------
sed -e 's/id = "par"/id = "cold"/' -e 's/runs = 2, expect_exit/runs = 1, cache = "cold", expect_exit/' par.lua > cold.lua
"$PREREG" register cold.lua --data "$D" >/dev/null
if [ -w /proc/sys/vm/drop_caches ] && echo 3 2>/dev/null > /proc/sys/vm/drop_caches; then
  "$PREREG" run cold.lua --data "$D" --only replay >/dev/null 2>&1
  check "cold run recorded" grep -q ',cold,' "$D/cold/batches/b0001.csv"
else
  "$PREREG" run cold.lua --data "$D" --only replay >/dev/null 2>err.txt; rc=$?
  check "cold refused (exit 1)" [ $rc -eq 1 ]
  check "cold refusal says why" grep -q "drop_caches" err.txt
  check "cold: nothing run" [ ! -e "$D/cold/batches/b0001.csv" ]
fi

# --- per-run cgroups: used where the kernel allows, else refused -----------
sed -e 's/id = "slow"/id = "cg"/' -e 's/runs = 8/runs = 1/' \
  -e 's/metrics = { "wall_s" } }/metrics = { "wall_s", "cg_mem_peak_mib", "cg_cpu_s" }, cgroup = true }/' \
  slow.lua > cg.lua
"$PREREG" register cg.lua --data "$D" >/dev/null
"$PREREG" run cg.lua --data "$D" >/dev/null 2>err.txt; rc=$?
if grep -qs -w memory /sys/fs/cgroup/cgroup.controllers /sys/fs/cgroup/unified/cgroup.controllers &&
   [ $rc -eq 0 ]; then
  check "cgroup metrics recorded" grep -Eq ',cg_mem_peak_mib,[0-9.]+,' "$D/cg/batches/b0001.csv"
else
  check "cgroup refused (exit 1)" [ $rc -eq 1 ]
  check "cgroup refusal says why" grep -q "cgroup = true needs" err.txt
  check "cgroup: nothing run" [ ! -e "$D/cg/batches/b0001.csv" ]
fi

done_testing 61
