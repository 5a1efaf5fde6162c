#!/usr/bin/env bash
# import_tools.sh: prereg import of other tools' files, written by the real
# tools: a tiny Google Benchmark program (--benchmark_format=json with
# --benchmark_repetitions) and a tiny `go test -bench` package (offline),
# their mapping to arms and workloads, and refusals as strict as the CSV
# importer's (names without a mapping, aggregates, units, malformed lines
# at FILE:LINE, negative and non-finite values), each writing nothing.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
TOOLS=$(cd "$(dirname "$0")/tools" && pwd)

T=$(mktemp -d /tmp/prereg-import-tools-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"
cat > s.lua <<'LUA'
protocol {
  id = "copy", title = "Other tools' data", author = "t",
  arms = { { name = "fast", reference = true }, { name = "slow", run = "env {cmd}" } },
  workloads = {
    { name = "gb", metrics = { "wall_s", "cpu_s" } },
    { name = "gbc", metrics = { "wall_s", "bytes_per_second" } },
    { name = "go", metrics = { "wall_s", "bytes_per_op", "allocs_per_op" } },
    { name = "goterms", metrics = { "wall_s", "terms_per_op" } },
    { name = "gocpu", metrics = { "wall_s", "cpu_s" } },
  },
  rule = { seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
"$PREREG" register s.lua >/dev/null || bad "register"
snap() { find data -exec stat -c '%n %s %Y' {} + | sort; }
# refuse NAME PATTERN ARGS...: import exits 2 matching PATTERN, writing nothing.
refuse() {
  local what=$1 pat=$2 before
  shift 2
  before=$(snap)
  expect 2 "$what: exit 2" "$PREREG" import s.lua "$@" &&
    check_grep "$what: message" "$pat" "$out" &&
    check "$what: nothing written" [ "$before" = "$(snap)" ]
}
# rows FILE: the imported rows of the newest batch, as workload arm round
# metric value valid reason.
rows() {
  python3 -c '
import csv, glob, sys
f = sorted(glob.glob("data/copy/batches/b*.csv"))[-1]
for r in csv.DictReader(open(f)):
    print(r["workload"], r["arm"], r["round"], r["metric"], r["value"], r["valid"], r["reason"])'
}

# Google Benchmark
command -v g++ >/dev/null && test -f /usr/include/benchmark/benchmark.h ||
  bad "g++ or libbenchmark-dev missing (scripts/deps.sh test)"
g++ -O2 -o bm "$TOOLS/bm.cc" -lbenchmark -lpthread 2>gxx.err || bad "build bm.cc: $(cat gxx.err)"
./bm --benchmark_filter='BM_(memcpy|loop)' --benchmark_min_time=0.001 \
  --benchmark_repetitions=3 --benchmark_format=json > gb.json 2>/dev/null
./bm --benchmark_filter='BM_(memcpy|loop)' --benchmark_min_time=0.001 \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_format=json > agg.json 2>/dev/null
./bm --benchmark_filter=BM_fails --benchmark_repetitions=2 \
  --benchmark_format=json > fails.json 2>/dev/null
check "Google Benchmark wrote repetitions and aggregates" \
  grep -q '"run_type": "aggregate"' gb.json
MAP=BM_memcpy=fast,BM_loop=slow

refuse "gbench: names without a mapping" \
  "gb.json: benchmarks\[0\]: 'BM_memcpy' is not an arm of s.lua \(arms: fast, slow\); map it with --arm-from BM_memcpy=ARM" \
  gb.json --only gb
refuse "gbench: a mapping to no arm" "arm 'quick' is not declared" \
  gb.json --only gb --arm-from BM_memcpy=quick,BM_loop=slow
refuse "gbench: no workload named" "Google Benchmark results name no workload.*--only WORKLOAD" \
  gb.json --arm-from $MAP
refuse "gbench: aggregates only" \
  "agg.json: holds only aggregates \(8: mean, median, stddev, ...\), not the repetitions they summarise; run the benchmark with --benchmark_repetitions=N and without --benchmark_report_aggregates_only" \
  agg.json --only gb --arm-from $MAP
refuse "gbench: a counter one benchmark lacks" \
  "benchmarks\[[0-9]+\] \(BM_loop\): no bytes_per_second for the metric bytes_per_second" \
  gb.json --only gbc --arm-from $MAP
python3 - gb.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
def write(name, f):
    k = json.loads(json.dumps(j)); f(k["benchmarks"]); json.dump(k, open(name, "w"), indent=1)
write("unit.json", lambda b: b[1].update(time_unit="fortnights"))
write("nounit.json", lambda b: b[1].pop("time_unit"))
write("negative.json", lambda b: b[2].update(real_time=-1.5))
write("iters.json", lambda b: b[0].update(iterations=0))
write("type.json", lambda b: b[0].update(run_type="warmup"))
PY
refuse "gbench: an unknown time unit" "benchmarks\[1\] \(BM_memcpy\): time_unit 'fortnights' is not one of ns, us, ms, s" \
  unit.json --only gb --arm-from $MAP
refuse "gbench: no time unit" "benchmarks\[1\] \(BM_memcpy\): no time_unit" nounit.json --only gb --arm-from $MAP
refuse "gbench: a negative time" "benchmarks\[2\] \(BM_memcpy\): real_time is not a number >= 0" \
  negative.json --only gb --arm-from $MAP
refuse "gbench: zero iterations" "benchmarks\[0\] \(BM_memcpy\): iterations is not a positive integer" \
  iters.json --only gb --arm-from $MAP
refuse "gbench: an unknown run_type" "run_type is neither \"iteration\" nor \"aggregate\"" \
  type.json --only gb --arm-from $MAP
head -c 300 gb.json > torn.json
refuse "gbench: torn JSON" "torn.json:[0-9]+: not valid JSON" torn.json --only gb --arm-from $MAP

expect 0 "gbench: import the repetitions" "$PREREG" import s.lua gb.json --only gb --arm-from $MAP
check_grep "gbench: 12 rows" "imported 12 rows from gb.json" "$out"
got=$(rows)
check "gbench: rounds 1-3 of each arm and metric, no aggregate" [ "$(awk '{print $2, $3, $4}' <<<"$got" | sort | tr '\n' ' ')" = \
  "fast 1 cpu_s fast 1 wall_s fast 2 cpu_s fast 2 wall_s fast 3 cpu_s fast 3 wall_s slow 1 cpu_s slow 1 wall_s slow 2 cpu_s slow 2 wall_s slow 3 cpu_s slow 3 wall_s " ]
python3 - gb.json <<PY && ok || bad "gbench: real_time in seconds (ns and us)"
import json, sys
b = [x for x in json.load(open(sys.argv[1]))["benchmarks"] if x["run_type"] == "iteration"]
f = {"ns": 1e-9, "us": 1e-6}
want = sorted("%s %d %.9g" % ({"BM_memcpy": "fast", "BM_loop": "slow"}[x["run_name"]],
              x["repetition_index"] + 1, x["real_time"] * f[x["time_unit"]]) for x in b)
got = sorted("%s %s %.9g" % (l.split()[1], l.split()[2], float(l.split()[4]))
             for l in """$got""".splitlines() if l.split()[3] == "wall_s")
sys.exit(0 if want == got and "us" in [x["time_unit"] for x in b] else 1)
PY
check "gbench: the batch says its format" grep -q '"format": "gbench"' "$(ls data/copy/batches/b*.json | tail -1)"
expect 0 "gbench: a failed benchmark comes in invalid" "$PREREG" import s.lua fails.json --only gb --arm-from BM_fails=slow
check_grep "gbench: its reason" "^gb slow 1 wall_s +0 Google Benchmark: no input file$" "$(rows)"
expect 0 "analyze the imported benchmarks" "$PREREG" analyze s.lua --json
python3 -c '
import json, sys
r = [x for x in json.loads(sys.argv[1])["results"] if x["workload"] == "gb"]
sys.exit(0 if sorted((x["metric"], x["arm"], x["reference"], x["n"], x["n_reference"]) for x in r)
         == [("cpu_s", "slow", "fast", 3, 3), ("wall_s", "slow", "fast", 3, 3)] else 1)' "$out" &&
  ok || bad "analyze: slow against fast on gb, 3 runs each: $out"

# go test -bench
command -v go >/dev/null || bad "go missing: apt-get install golang-go (scripts/deps.sh test)"
cp -r "$TOOLS" gopkg && rm gopkg/bm.cc
(cd gopkg && env GOPATH="$T/gopath" GOCACHE="$T/gocache" GOMODCACHE="$T/gopath/mod" \
   GOFLAGS= GOPROXY=off GOENV=off GO111MODULE=on GOTOOLCHAIN=local \
   go test -run '^$' -bench . -benchtime 200x -count 3 -benchmem > ../go.txt 2>../go.err) ||
  bad "go test -bench: $(cat go.err go.txt | head -20)"
check "go test -bench wrote Benchmark lines" grep -q '^BenchmarkFibRec-[0-9]* .* ns/op' go.txt
GOMAP=FibRec=fast,FibLoop=slow
grep -v '^BenchmarkSizes' go.txt > fib.txt
first=$(grep -n '^BenchmarkFibRec' fib.txt | head -1 | cut -d: -f1)
refuse "go: names without a mapping" \
  "fib.txt:$first: 'FibRec' is not an arm of s.lua \(arms: fast, slow\); map it with --arm-from FibRec=ARM" \
  fib.txt --only go
refuse "go: a metric no line reports" "fib.txt:$first: BenchmarkFibRec reports no value for the metric cpu_s" \
  fib.txt --only gocpu --arm-from $GOMAP
refuse "go: a custom unit one benchmark lacks" "BenchmarkFibRec reports no value for the metric terms_per_op" \
  fib.txt --only goterms --arm-from $GOMAP
# One bad line in an otherwise real file: refused at its line.
bad_line() { # NAME LINE-TEXT: fib.txt with LINE-TEXT after the config
  { head -n 4 fib.txt; printf '%s\n' "$2"; tail -n +5 fib.txt; } > "$1"
}
bad_line iters.txt $'BenchmarkFibRec-2 \t abc \t 12 ns/op'
refuse "go: a bad iteration count" "iters.txt:5: BenchmarkFibRec-2: 'abc' is not an iteration count" iters.txt --only go --arm-from $GOMAP
bad_line nounit.txt $'BenchmarkFibRec-2 \t 100 \t 12 ns/op \t 7'
refuse "go: a value without its unit" "nounit.txt:5: '7' has no unit" nounit.txt --only go --arm-from $GOMAP
bad_line novalue.txt $'BenchmarkFibRec-2 \t 100'
refuse "go: no values" "novalue.txt:5: no value after the iteration count" novalue.txt --only go --arm-from $GOMAP
bad_line nan.txt $'BenchmarkFibRec-2 \t 100 \t NaN ns/op \t 0 B/op \t 0 allocs/op'
refuse "go: NaN" "nan.txt:5: 'NaN ns/op': 'NaN' is not a finite number" nan.txt --only go --arm-from $GOMAP
bad_line inf.txt $'BenchmarkFibRec-2 \t 100 \t +Inf ns/op \t 0 B/op \t 0 allocs/op'
refuse "go: +Inf" "inf.txt:5: '\+Inf ns/op': '\+Inf' is not a finite number" inf.txt --only go --arm-from $GOMAP
bad_line neg.txt $'BenchmarkFibRec-2 \t 100 \t -3 ns/op \t 0 B/op \t 0 allocs/op'
refuse "go: a negative time" "neg.txt:5: '-3 ns/op' is negative" neg.txt --only go --arm-from $GOMAP
bad_line two.txt $'BenchmarkFibRec-2 \t 100 \t 3 ns/op \t 0.000003 sec/op'
refuse "go: two times" "two.txt:5: two values for wall_s \(ns/op and sec/op\)" two.txt --only go --arm-from $GOMAP
bad_line failed.txt $'--- FAIL: BenchmarkFibRec-2'
refuse "go: a failed benchmark" "failed.txt:5: a benchmark failed \(--- FAIL: BenchmarkFibRec-2\); its numbers are not measurements" failed.txt --only go --arm-from $GOMAP
printf 'goos: linux\nPASS\nok  \texample.com/fib\t0.1s\n' > empty.txt
refuse "go: no Benchmark lines" "empty.txt: no Benchmark lines" empty.txt --only go --arm-from $GOMAP

expect 0 "go: import" "$PREREG" import s.lua fib.txt --only go --arm-from $GOMAP
check_grep "go: 18 rows" "imported 18 rows from fib.txt" "$out"
got=$(rows)
python3 - fib.txt <<PY && ok || bad "go: ns/op in seconds, B/op and allocs/op, rounds in file order"
import sys
want, n = [], {}
for l in open(sys.argv[1]):
    f = l.split()
    if not f or not f[0].startswith("Benchmark"):
        continue
    arm = {"BenchmarkFibRec": "fast", "BenchmarkFibLoop": "slow"}[f[0].rsplit("-", 1)[0]]
    n[arm] = n.get(arm, 0) + 1
    u = {f[i + 1]: float(f[i]) for i in range(2, len(f), 2)}
    want += ["%s %d wall_s %.9g" % (arm, n[arm], u["ns/op"] * 1e-9),
             "%s %d bytes_per_op %.9g" % (arm, n[arm], u["B/op"]),
             "%s %d allocs_per_op %.9g" % (arm, n[arm], u["allocs/op"])]
got = ["%s %s %s %.9g" % (l.split()[1], l.split()[2], l.split()[3], float(l.split()[4]))
       for l in """$got""".splitlines()]
sys.exit(0 if sorted(want) == sorted(got) and len(got) == 18 else 1)
PY
check "go: the batch says its format" grep -q '"format": "go"' "$(ls data/copy/batches/b*.json | tail -1)"
grep -v '^BenchmarkFibRec' fib.txt > loop.txt
expect 0 "go: a custom unit (terms/op)" "$PREREG" import s.lua loop.txt --only goterms --arm-from FibLoop=slow
check_grep "go: terms_per_op imported" "^goterms slow 3 terms_per_op 15 1 $" "$(rows)"
grep '^BenchmarkSizes' go.txt > sizes.txt
expect 0 "go: sub-benchmarks, mapped (the last = splits)" "$PREREG" import s.lua sizes.txt --only go --arm-from Sizes/n=5=fast,Sizes/n=20=slow
check_grep "go: sizes: 18 rows" "imported 18 rows from sizes.txt" "$out"
done_testing 60
