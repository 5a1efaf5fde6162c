#!/usr/bin/env bash
# import_shapes.sh: prereg import of the files people actually have, each
# written by the real tool here (go 1.19, Google Benchmark 1.7.1,
# hyperfine 1.15) and, where this version of the tool cannot write a
# shape, a copy of a real file with that one field changed (said so at
# the case). Every accepted import is checked against n and the median
# this script computes from the file itself (python3): `go test ./...`
# over two packages with the same benchmark name (refused, --where, names
# qualified by configuration), a package without tests first, -v, -json,
# -count, -cpu, five benchmarks of which two are mapped
# (--ignore-unmapped), template names with commas (--arm-from, --arm-map),
# the schema before run_type, skipped rows, hyperfine's memory_usage_byte,
# a null and a non-zero exit code (a cell left with fewer valid runs
# than min_n says TOO FEW VALID); and durations under 1 us in ns.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
TOOLS=$(cd "$(dirname "$0")/tools/shapes" && pwd)

T=$(mktemp -d /tmp/prereg-import-shapes-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
cat > s.lua <<'LUA'
protocol {
  id = "shapes", title = "Files people have", author = "t",
  arms = { { name = "fast", reference = true }, { name = "slow", run = "env {cmd}" } },
  workloads = {
    { name = "go", metrics = { "wall_s" } },
    { name = "gb", metrics = { "wall_s", "cpu_s" } },
    { name = "hf", metrics = { "wall_s", "maxrss_kib" } },
  },
  rule = { seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
K=0
# fresh: a new data folder with the sheet registered; its path in $D.
fresh() {
  K=$((K + 1))
  D=$T/d$K
  "$PREREG" register s.lua --data "$D" >/dev/null || bad "register $D"
}
snap() { find "$D" -exec stat -c '%n %s %Y' {} + | sort; }
# refuse WHAT PATTERN ARGS...: import into $D exits 2 matching PATTERN,
# writing nothing.
refuse() {
  local what=$1 pat=$2 before
  shift 2
  before=$(snap)
  expect 2 "$what: exit 2" "$PREREG" import s.lua "$@" --data "$D" &&
    check_grep "$what: message" "$pat" "$out" &&
    check "$what: nothing written" [ "$before" = "$(snap)" ]
}
# cell WHAT WORKLOAD METRIC ARM WANT: analyze --json of $D gives the cell
# WANT ("N MEDIAN", computed from the file), the median to 9 digits.
cell() {
  local got
  got=$("$PREREG" analyze s.lua --json --data "$D" 2>&1 | python3 -c '
import json, sys
w, m, a = sys.argv[1:4]
c = [c for c in json.load(sys.stdin)["cells"]
     if (c["workload"], c["metric"], c["arm"]) == (w, m, a)]
print("%d %.9g" % (c[0]["valid"], c[0]["median"]) if c else "none")' "$2" "$3" "$4")
  check "$1: n and median $5 (got $got)" [ "$got" = "$5" ]
}
# The n and median of values given one a line, as "N MEDIAN".
stats() {
  python3 -c '
import statistics, sys
v = [float(x) for x in sys.stdin.read().split()]
print("%d %.9g" % (len(v), statistics.median(v)) if v else "0 none")'
}

# few WHAT CELLS: status and analyze --json say TOO FEW VALID, naming
# CELLS (as the status line does), and never COMPLETE.
few() {
  local line
  expect 0 "$1: status" "$PREREG" status s.lua --data "$D" || return 1
  check_grep "$1: status: TOO FEW VALID ($2)" \
    "^status: (.* · )?TOO FEW VALID \($2\)( · .*)?$" "$out"
  check "$1: status: never COMPLETE" [ "$(printf '%s\n' "$out" | grep -c COMPLETE)" = 0 ]
  line=$("$PREREG" analyze s.lua --json --data "$D" 2>&1 | python3 -c '
import json, sys
s = json.load(sys.stdin)["status"]
print(s["complete"], "TOO FEW VALID" in s["flags"],
      "TOO FEW VALID (%s)" % sys.argv[1] in s["line"], s["line"])' "$2")
  check "$1: analyze --json: flagged, not complete ($line)" \
    [ "$(echo "$line" | cut -d" " -f1-3)" = "False True True" ]
}

# go test -bench: what benchfmt reads, written by go itself.
command -v go >/dev/null || bad "go missing: apt-get install golang-go (scripts/deps.sh test)"
cp -r "$TOOLS/multi" multi
gorun() {
  (cd multi && env GOPATH="$T/gopath" GOCACHE="$T/gocache" GOMODCACHE="$T/gopath/mod" \
    GOFLAGS=-mod=mod GOPROXY=off GOENV=off GO111MODULE=on GOTOOLCHAIN=local \
    go test "$@")
}
gorun -run '^$' -bench . -benchtime 100x -count 3 ./... > all.txt 2> go.err ||
  bad "go test ./...: $(head -c 600 go.err)"
gorun -v -run TestAdd -bench 'Sum|Copy' -benchtime 100x -count 3 ./aaa > v.txt 2> go.err ||
  bad "go test -v: $(head -c 600 go.err)"
gorun -json -run '^$' -bench . -benchtime 100x -count 3 ./... > j.txt 2> go.err ||
  bad "go test -json: $(head -c 600 go.err)"
gorun -run '^$' -bench Sum -benchtime 100x -count 3 -cpu 1,2 ./bbb > cpu.txt 2> go.err ||
  bad "go test -cpu: $(head -c 600 go.err)"
check_grep "go: ./... starts with the package without tests" '^\?.*example.com/multi/aa.*no test files' "$(head -1 all.txt)"
check_grep "go: -v prints the bare name and the logs" '^BenchmarkCopy$' "$(cat v.txt)"
check_grep "go: -v prints RUN lines" '^=== RUN +TestAdd' "$(cat v.txt)"
check_grep "go: -json writes events" '^\{"Time":.*"Action":"output","Package":"example.com/multi/bbb","Output":"pkg: ' "$(cat j.txt)"
# govals FILE PKG NAME [json]: the ns/op of BenchmarkNAME under pkg PKG
# (any -P suffix; "-P" in NAME: only that one), one a line, in seconds.
govals() {
  python3 - "$@" <<'PY'
import json, re, sys
f, pkg, name = sys.argv[1:4]
text = open(f).read()
if len(sys.argv) > 4:  # go test -json: each package's Output, in order
    out = {}
    for l in text.splitlines():
        e = json.loads(l)
        if "Output" in e:
            out.setdefault(e.get("Package", ""), []).append(e["Output"])
    text = "".join("".join(v) for v in out.values())
cur = None
for l in text.splitlines():
    if l.startswith("pkg: "):
        cur = l[5:]
    f = l.split()
    if cur == pkg and len(f) >= 4 and re.fullmatch("Benchmark" + re.escape(name) + ("" if "-" in name else r"(-\d+)?"), f[0]):
        print(float(f[f.index("ns/op") - 1]) * 1e-9)
PY
}
A=example.com/multi/aaa
B=example.com/multi/bbb

fresh
refuse "go: one name under two packages" \
  "all.txt:[0-9]+: Sum is measured under two configurations that differ in pkg \('$A' at line [0-9]+, '$B' at line [0-9]+\), and both map to arm 'fast'.*--where pkg=$A.*--arm-from '\{pkg=$A\}Sum=ARM'; nothing was imported" \
  all.txt --only go --arm-from Sum=fast --ignore-unmapped
refuse "go: five benchmarks, not all mapped" \
  "all.txt:[0-9]+: 'Copy' is not an arm of s.lua \(arms: fast, slow\); map it with --arm-from Copy=ARM; or import only the mapped names with --ignore-unmapped" \
  all.txt --only go --where pkg=$A --arm-from Sum=fast
refuse "go: --where that selects nothing" "all.txt: no result under --where pkg=example.com/nope" \
  all.txt --only go --where pkg=example.com/nope --arm-from Sum=fast
refuse "go: --ignore-unmapped with a misspelt name" "all.txt: --arm-from 'Summ=slow' names no result of the file" \
  all.txt --only go --where pkg=$A --arm-from Sum=fast --arm-from Summ=slow --ignore-unmapped
expect 0 "go: two of five mapped, one package selected" "$PREREG" import s.lua all.txt --only go \
  --where pkg=$A --arm-from Sum=fast --arm-from Copy=slow --ignore-unmapped --data "$D"
check_grep "go: the three others listed" "left out \(--ignore-unmapped: no arm maps them\): 3" "$out"
check "go: Fill, Scan and Alloc left out" [ "$(printf '%s\n' "$out" | sed -n 's/^  //p' | sort | tr '\n' ' ')" = "Alloc Fill Scan " ]
cell "go: aaa's Sum" go wall_s fast "$(govals all.txt $A Sum | stats)"
cell "go: aaa's Copy" go wall_s slow "$(govals all.txt $A Copy | stats)"
batch=$(ls "$D"/shapes/batches/b*.json | tail -1)
python3 - "$batch" <<'PY' && ok || bad "go: the batch records each run's configuration and what was left out"
import json, sys
b = json.load(open(sys.argv[1]))
c = b["configurations"]
sys.exit(0 if len(c) == 1 and c[0]["configuration"]["pkg"] == "example.com/multi/aaa"
         and c[0]["configuration"]["goos"] == "linux"
         and sum(b - a + 1 for a, b in c[0]["lines"]) >= 6
         and sorted(b["left_out"]) == ["Alloc", "Fill", "Scan"] else 1)
PY

fresh
expect 0 "go: the same name in two packages, each its arm" "$PREREG" import s.lua all.txt --only go \
  --arm-from "{pkg=$A}Sum=fast" --arm-from "{pkg=$B}Sum=slow" --ignore-unmapped --data "$D"
cell "go: qualified: aaa's Sum" go wall_s fast "$(govals all.txt $A Sum | stats)"
cell "go: qualified: bbb's Sum" go wall_s slow "$(govals all.txt $B Sum | stats)"

fresh
printf '{pkg=%s}Sum\tslow\n\n{pkg=%s}Sum\tfast\r\n' "$B" "$A" > go.map
expect 0 "go: qualified names in --arm-map (CRLF, a blank line)" "$PREREG" import s.lua all.txt --only go \
  --arm-map go.map --ignore-unmapped --data "$D"
cell "go: --arm-map: aaa's Sum" go wall_s fast "$(govals all.txt $A Sum | stats)"
cell "go: --arm-map: bbb's Sum" go wall_s slow "$(govals all.txt $B Sum | stats)"

fresh
expect 0 "go: -v output (bare names, RUN and BENCH lines skipped)" "$PREREG" import s.lua v.txt --only go \
  --arm-from Sum=fast --arm-from Copy=slow --data "$D"
cell "go: -v: Sum" go wall_s fast "$(govals v.txt $A Sum | stats)"
cell "go: -v: Copy" go wall_s slow "$(govals v.txt $A Copy | stats)"

fresh
refuse "go -json: the same refusal" "j.txt:[0-9]+: Sum is measured under two configurations that differ in pkg" \
  j.txt --only go --arm-from Sum=fast --arm-from Copy=slow --ignore-unmapped
expect 0 "go -json: read through its Output" "$PREREG" import s.lua j.txt --only go \
  --where pkg=$B --arm-from Sum=slow --data "$D"
cell "go -json: bbb's Sum" go wall_s slow "$(govals j.txt $B Sum json | stats)"
check "go -json: the batch says go" grep -q '"format": "go"' "$(ls "$D"/shapes/batches/b*.json | tail -1)"

fresh
refuse "go: two -cpu values are two results" "cpu.txt:[0-9]+: Sum is measured under two configurations that differ in gomaxprocs" \
  cpu.txt --only go --arm-from Sum=fast
expect 0 "go: --where gomaxprocs=2" "$PREREG" import s.lua cpu.txt --only go --where gomaxprocs=2 \
  --arm-from Sum=fast --data "$D"
cell "go: -cpu 1,2: the -2 runs" go wall_s fast "$(govals cpu.txt $B Sum-2 | stats)"

# benchfmt's note groups, in the shape of golang/perf's benchstat test
# file issue19565.txt (written here, with values of our own): A before
# and after, B only before, C only after.
{
  printf 'note: before\n\n'
  for v in 101 99 103 98 100 102; do printf 'BenchmarkA 10 %s ns/op\n' $v; done
  for v in 9000 9100 9050; do printf 'BenchmarkB 10 %s ns/op\n' $v; done
  printf '\nnote: after\n\n'
  for v in 120 119 125 121 118 122; do printf 'BenchmarkA 10 %s ns/op\n' $v; done
  for v in 7000 7100; do printf 'BenchmarkC 10 %s ns/op\n' $v; done
} > notes.txt
notevals() { # NOTE NAME: the ns/op of BenchmarkNAME under note NOTE, in s
  awk -v n="$1" -v b="Benchmark$2" '/^note: /{cur=$2} $1==b && cur==n {print $3 * 1e-9}' notes.txt
}
fresh
refuse "go: note groups are not pooled" \
  "notes.txt:15: A is measured under two configurations that differ in note \('before' at line 3, 'after' at line 15\)" \
  notes.txt --only go --arm-from A=fast --ignore-unmapped
expect 0 "go: each note group its arm" "$PREREG" import s.lua notes.txt --only go \
  --arm-from '{note=before}A=fast' --arm-from '{note=after}A=slow' --ignore-unmapped --data "$D"
check "go: notes: B and C left out" [ "$(printf '%s\n' "$out" | sed -n 's/^  //p' | sort | tr '\n' ' ')" = "B C " ]
cell "go: notes: A before" go wall_s fast "$(notevals before A | stats)"
cell "go: notes: A after" go wall_s slow "$(notevals after A | stats)"

# Google Benchmark: names with commas; the schema before run_type and
# skipped rows (1.7.1 writes neither: copies of its file, changed).
command -v g++ >/dev/null && test -f /usr/include/benchmark/benchmark.h ||
  bad "g++ or libbenchmark-dev missing (scripts/deps.sh test)"
g++ -O2 -o bms "$TOOLS/bm_shapes.cc" -lbenchmark -lpthread 2>gxx.err || bad "build bm_shapes.cc: $(cat gxx.err)"
./bms --benchmark_min_time=0.001 --benchmark_repetitions=3 --benchmark_format=json > gb.json 2>/dev/null
check_grep "gbench: a template name with a comma" '"name": "BM_Pair<int, float>"' "$(cat gb.json)"
# gbvals FILE NAME METRIC: the repetitions' real_time or cpu_time of NAME
# (by name, whatever the schema), in seconds.
gbvals() {
  python3 - "$@" <<'PY'
import json, sys
f, name, key = sys.argv[1:4]
unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}
for b in json.load(open(f))["benchmarks"]:
    if b["name"] == name and not b.get("skipped") and not b.get("error_occurred"):
        print(b[key] * unit[b["time_unit"]])
PY
}
PF='BM_Pair<int, float>' PI='BM_Pair<int, int>'
fresh
refuse "gbench: split at commas, the name does not exist" "'BM_Pair<int' lacks '='" \
  gb.json --only gb --arm-from "$PF=fast,$PI=slow" --ignore-unmapped
expect 0 "gbench: names with commas, one flag each" "$PREREG" import s.lua gb.json --only gb \
  --arm-from "$PF=fast" --arm-from "$PI=slow" --ignore-unmapped --data "$D"
check_grep "gbench: BM_plain left out" "^  BM_plain$" "$out"
cell "gbench: $PF wall" gb wall_s fast "$(gbvals gb.json "$PF" real_time | stats)"
cell "gbench: $PI cpu" gb cpu_s slow "$(gbvals gb.json "$PI" cpu_time | stats)"
printf '%s\tslow\n%s\tfast\nBM_plain\tslow\n' "$PF" "$PI" > map.tsv
python3 -c 'import json,sys; j=json.load(open("gb.json")); json.dump(j, open("gb2.json","w"), indent=2)'
fresh
printf '%s\tslow\nno tab here\n' "$PF" > bad.tsv
refuse "gbench: --arm-map: a line without a TAB" "bad.tsv:2: write NAME, a TAB and ARM" gb2.json --only gb --arm-map bad.tsv
expect 0 "gbench: --arm-map" "$PREREG" import s.lua gb2.json --only gb --arm-map map.tsv --data "$D"
cell "gbench: --arm-map: slow pools $PF and BM_plain" gb wall_s slow \
  "$( (gbvals gb2.json "$PF" real_time; gbvals gb2.json BM_plain real_time) | stats)"
cell "gbench: --arm-map: $PI" gb wall_s fast "$(gbvals gb2.json "$PI" real_time | stats)"

python3 - gb.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
old = json.loads(json.dumps(j))
for b in old["benchmarks"]:  # as Google Benchmark wrote them before 2019
    for k in ("run_name", "run_type", "aggregate_name", "repetitions", "repetition_index", "threads"):
        b.pop(k, None)
json.dump(old, open("old.json", "w"), indent=2)
sk = json.loads(json.dumps(j))  # SkipWithMessage, as 1.8 writes it
for b in sk["benchmarks"]:
    if b["name"] == "BM_plain" and b.get("repetition_index") == 1:
        b.update(skipped=True, skip_message="no GPU here", real_time=0, cpu_time=0, iterations=0)
json.dump(sk, open("skip.json", "w"), indent=2)
PY
fresh
expect 0 "gbench: the schema before run_type (a copy without it)" "$PREREG" import s.lua old.json --only gb \
  --arm-from "$PF=fast" --arm-from "$PI=slow" --ignore-unmapped --data "$D"
check_grep "gbench: old schema: 6 runs x 2 metrics, aggregates left aside" "imported 12 rows" "$out"
check_grep "gbench: old schema: BM_plain left out, not BM_plain_mean" "^  BM_plain$" "$out"
cell "gbench: old schema: $PF" gb wall_s fast "$(gbvals old.json "$PF" real_time | stats)"
fresh
expect 0 "gbench: a skipped row (a copy with skipped: true)" "$PREREG" import s.lua skip.json --only gb \
  --arm-from "$PF=fast" --arm-from BM_plain=slow --ignore-unmapped --data "$D"
cell "gbench: skipped: n 2, the others' median" gb wall_s slow "$(gbvals skip.json BM_plain real_time | stats)"
check "gbench: skipped: its reason" grep -q ',Google Benchmark: skipped: no GPU here,wall_s,' \
  "$(ls "$D"/shapes/batches/b*.csv | tail -1)"
few "gbench: skipped: 2 valid runs of min_n 3" "gb/slow 2 of 3"
python3 - gb.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["benchmarks"][0]["name"] = j["benchmarks"][0]["run_name"] = "BM_" + "x" * 5000
json.dump(j, open("long.json", "w"))
PY
refuse "gbench: a 5000-byte name keeps the hint" \
  "'BM_x{290,}\.\.\.' is not an arm of s.lua \(arms: fast, slow\); map it with --arm-from BM_x+\.\.\.=ARM \(the name is too long to quote here: write it in --arm-map FILE, as a line NAME<TAB>ARM\); or import only the mapped names with --ignore-unmapped$" \
  long.json --only gb

printf 'workload,arm,metric,value\ngo,%s,wall_s,1\n' "$(printf 'a%.0s' $(seq 5000))" > longarm.csv
refuse "csv: a 5000-byte arm keeps the list of arms" \
  "longarm.csv:2: arm 'a{300}\.\.\.' is not declared in s.lua \(declared: fast, slow\)$" longarm.csv

# hyperfine 1.15: exit codes (real), memory_usage_byte and null (a copy
# with the field hyperfine 1.20 writes, and with a null exit code).
command -v hyperfine >/dev/null || bad "hyperfine missing (scripts/deps.sh test)"
hyperfine -N --runs 5 -n fast 'true' -n slow 'sleep 0.01' --export-json hf.json >/dev/null 2>&1 ||
  hyperfine --runs 5 -n fast 'true' -n slow 'sleep 0.01' --export-json hf.json >/dev/null 2>&1 || bad "hyperfine"
hyperfine -i --runs 4 -n slow "sh -c 'exit 3'" --export-json bad.json >/dev/null 2>&1 || bad "hyperfine -i"
python3 - hf.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for r in j["results"]:
    r["memory_usage_byte"] = [3145728 + 4096 * i * (2 if r["command"] == "slow" else 1)
                              for i in range(len(r["times"]))]
json.dump(j, open("mem.json", "w"), indent=2)
n = json.loads(json.dumps(j))
n["results"][1]["exit_codes"][2] = None
json.dump(n, open("null.json", "w"), indent=2)
PY
# hfvals FILE ARM KEY [DIV]: KEY's per-run values of the result of ARM
# whose exit code is 0, divided by DIV.
hfvals() {
  python3 - "$@" <<'PY'
import json, sys
f, arm, key = sys.argv[1:4]
div = float(sys.argv[4]) if len(sys.argv) > 4 else 1
for r in json.load(open(f))["results"]:
    if r["command"] == arm:
        for v, c in zip(r[key], r["exit_codes"]):
            if c == 0:
                print(v / div)
PY
}
fresh
expect 0 "hyperfine: memory_usage_byte fills maxrss_kib" "$PREREG" import s.lua mem.json --only hf --data "$D"
cell "hyperfine: maxrss_kib in KiB" hf maxrss_kib slow "$(hfvals mem.json slow memory_usage_byte 1024 | stats)"
cell "hyperfine: wall_s" hf wall_s fast "$(hfvals mem.json fast times | stats)"
fresh
expect 0 "hyperfine: a null exit code" "$PREREG" import s.lua null.json --only hf --data "$D"
cell "hyperfine: null: that run invalid" hf wall_s slow "$(hfvals null.json slow times | stats)"
check "hyperfine: null: its reason" grep -q 'hyperfine recorded no exit code (ended by a signal),wall_s' \
  "$(ls "$D"/shapes/batches/b*.csv | tail -1)"
fresh
expect 0 "hyperfine -i: non-zero exit codes" "$PREREG" import s.lua bad.json --only hf --data "$D"
check "hyperfine -i: every run invalid, exit 3 the reason" \
  [ "$(grep -c ',3,0,"exit code 3, expected 0",wall_s,' "$(ls "$D"/shapes/batches/b*.csv | tail -1)")" = 4 ]
few "hyperfine -i: no valid run" "hf/slow 0 of 3"

# Durations under 1 us read in ns: a CSV of such values.
fresh
printf 'workload,arm,metric,value\n' > ns.csv
for v in 2.81e-8 2.83e-8 2.9e-8; do printf 'go,fast,wall_s,%s\ngo,slow,wall_s,%s\n' $v $v; done >> ns.csv
expect 0 "ns: import" "$PREREG" import s.lua ns.csv --data "$D"
expect 0 "ns: analyze" "$PREREG" analyze s.lua --data "$D"
check_grep "ns: 28.3 ns, its IQR in ns too" "28\.3 ns \(IQR [0-9]\.[0-9]+\)" "$out"
done_testing 95
