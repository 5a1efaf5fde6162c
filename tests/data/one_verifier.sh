#!/usr/bin/env bash
# one_verifier.sh: a data folder and its bundle go through one verifier.
# A real experiment (register, import, amend, import) is damaged in one
# way at a time, with its MANIFEST re-signed so that only the deeper
# checks can see it; the folder (prereg verify SHEET) and a bundle of the
# damaged folder (bundle_tool write, then prereg verify BUNDLE) must give
# the same verdict and the same problem lines, file names aside.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${BUNDLE_TOOL:?}"
T=$(mktemp -d /tmp/prereg-one-verifier.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
export PREREG_NOW=1792540800 # 2026-10-21T00:00:00Z

write_sheet() { # write_sheet AMENDMENT...
  {
    cat <<'LUA'
protocol {
  id = "ov", title = "One verifier", question = "q", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 1,
           verdicts = { { "slower", ci_excludes = 1 } } },
  amendments = {
LUA
    for a in "$@"; do echo "    $a,"; done
    printf '  },\n}\n'
  } >ov.lua
}
write_sheet
"$PREREG" register ov.lua >/dev/null || bad "register"
printf 'workload,arm,metric,value\nw,a,wall_s,1.0\nw,b,wall_s,2.0\n' >one.csv
"$PREREG" import ov.lua one.csv >/dev/null || bad "import one"
write_sheet '{ date = "2026-10-22", why = "More data." }'
PREREG_NOW=1792627200 "$PREREG" amend ov.lua >/dev/null || bad "amend"
printf 'workload,arm,metric,value\nw,a,wall_s,1.1\nw,b,wall_s,2.1\n' >two.csv
PREREG_NOW=1792713600 "$PREREG" import ov.lua two.csv >/dev/null || bad "import two"
check "the experiment verifies" "$PREREG" verify ov.lua >/dev/null
cp -a data pristine

# resign DIR REL: the MANIFEST line of REL made to match its new bytes.
resign() {
  local d=$1 rel=$2
  chmod u+w "$d/MANIFEST"
  sed -i "s|^[0-9a-f]*  $rel\$|$(sha256sum "$d/$rel" | cut -c1-64)  $rel|" "$d/MANIFEST"
}
# edit REL SED: change REL in a fresh copy of the data, re-signed.
edit() {
  rm -rf data && cp -a pristine data
  chmod u+w "data/ov/$1"
  sed -i "$2" "data/ov/$1"
  resign data/ov "$1"
}
# same_verdict CASE PATTERN: the folder and its bundle both fail (exit 1),
# both name PATTERN, with the same problem lines once the prefixes that
# name the folder ("data/ov/") or the bundle ("B: ov/") are taken off.
same_verdict() {
  local name=$1 pat=$2 rf rb
  "$PREREG" verify ov.lua >folder.txt 2>&1
  rf=$?
  "$BUNDLE_TOOL" write data/ov ov.tar.gz >/dev/null || bad "$name: write"
  "$PREREG" verify ov.tar.gz >bundle.txt 2>&1
  rb=$?
  check "$name: the folder fails (exit $rf)" [ "$rf" = 1 ]
  check "$name: the bundle fails (exit $rb)" [ "$rb" = 1 ]
  check_grep "$name: the folder says so" "$pat" "$(cat folder.txt)"
  check_grep "$name: the bundle says so" "$pat" "$(cat bundle.txt)"
  grep '^data/ov/' folder.txt | sed 's|^data/ov/||' | sort >f.lines
  grep '^ov.tar.gz: ov/' bundle.txt | sed 's|^ov.tar.gz: ov/||' | sort >b.lines
  check "$name: the same problems, in the same words:
$(diff f.lines b.lines)" cmp -s f.lines b.lines
  check "$name: problems were compared" test -s f.lines
  check "$name: the same status line" test "$(grep '^status: ' folder.txt)" = \
    "$(sed -n 's|^ov.tar.gz: status: |status: |p' bundle.txt)"
}

# the chain
edit versions/v1.diff 's/^+.*More data.*$/+    { date = "2026-10-22", why = "Other data." },/'
same_verdict "a diff rewritten" \
  "versions/v1.diff: does not match the difference between versions/v0.lua and versions/v1.lua"
edit versions/v1.lua 's/More data/Less data/'
same_verdict "an amended version rewritten" "versions/v1.lua: sha256 .* differs from versions/v1.json"
edit versions/v1.json 's/"filed_at": "[^"]*"/"filed_at": "yesterday"/'
same_verdict "a version without a filing time" "versions/v1.json: has no UTC filed_at time"

# rows against the chain
edit batches/b0002.csv '2s/^1,[0-9a-f]*,/1,0000000000000000000000000000000000000000000000000000000000000000,/'
same_verdict "a row under another sheet" \
  "batches/b0002.csv:2: sheet_sha256 is not the SHA-256 of versions/v1.lua"
edit batches/b0001.csv '2s/^0,/1,/'
same_verdict "a row from a later version" \
  "batches/b0001.csv:2: sheet_version 1 did not exist when the batch started"
edit batches/b0001.csv '2s/^0,/5,/'
same_verdict "a row of a version not in the chain" \
  "batches/b0001.csv:2: sheet_version 5 is not a version in the chain"
# Whatever verify rejects, every status line says so.
expect 0 "a version not in the chain: analyze" "$PREREG" analyze ov.lua
check_grep "a version not in the chain: analyze says UNVERIFIED first" \
  "^UNVERIFIED: the data did not verify \(data/ov/batches/b0001.csv:2: sheet_version 5" "$(printf '%s\n' "$out" | head -1)"
check_grep "a version not in the chain: analyze's status line" "^status: .*UNVERIFIED" "$out"
expect 0 "a version not in the chain: analyze --json" "$PREREG" analyze ov.lua --json
check_grep "a version not in the chain: the JSON status" '"line": ".*UNVERIFIED[^"]*"' "$out"
expect 0 "a version not in the chain: status" "$PREREG" status ov.lua
check_grep "a version not in the chain: status's status line" "^status: .*UNVERIFIED" "$out"
edit batches/b0002.csv '3s/,b0002,/,b0009,/'
same_verdict "a row of another batch" "batches/b0002.csv:3: batch 'b0009' in a row of b0002"
edit batches/b0001.csv '2s/,import,w,a,0,1,/,run,w,a,0,1,/; 2s/,line-2,,/,line-2,2020-01-01T00:00:00Z,/'
same_verdict "a run older than the registration" \
  "batches/b0001.csv:2: started at 2020-01-01T00:00:00Z, before version 0 was filed .*: older than the registration"

# values prereg never writes, read under the import's rule, and a second
# value of one run and metric (twenty more of one run, and a batch's last
# row twice): verify names the file, the line and the field; analyze of the
# folder refuses (exit 2, as for bad UTF-8) and of the bundle fails its
# verification, rather than compute with them
refuses_analysis() { # refuses_analysis CASE PATTERN
  expect 2 "$1: analyze refuses" "$PREREG" analyze ov.lua
  check_grep "$1: analyze names it" "$2" "$out"
  # A bundle is verified before anything is computed: it fails that.
  expect 1 "$1: analyze BUNDLE refuses" "$PREREG" analyze ov.tar.gz
  check_grep "$1: analyze BUNDLE names it" "$2" "$out"
}
value() { # value CASE VALUE PATTERN: row 2 of b0001 given VALUE
  edit batches/b0001.csv "2s/,wall_s,[^,]*,\([01]\)\(,\|\$\)/,wall_s,$2,\1\2/"
  same_verdict "$1" "batches/b0001.csv:2: value '$3' \\(wall_s\\): $4"
  refuses_analysis "$1" "b0001.csv:2: value '$3'"
}
value "a negative time" -0.001 -0.001 "a time or an amount of memory cannot be negative"
value "a hexadecimal value" 0x1p-3 0x1p-3 "a hexadecimal number"
value "a subnormal value" 1e-320 1e-320 "too small"
value "nan" nan nan "not a number"
edit batches/b0001.csv "2{$(printf 'p;%.0s' $(seq 1 20))}"
same_verdict "twenty more values of one run" \
  "batches/b0001.csv:3: value: a second wall_s of run line-2 \\(workload w, arm a\\), the first on line 2"
refuses_analysis "twenty more values of one run" "b0001.csv:3: value: a second wall_s of run line-2"
edit batches/b0002.csv "\$p"
same_verdict "a batch's last row twice" \
  "batches/b0002.csv:4: value: a second wall_s of run line-3 \\(workload w, arm b\\), the first on line 3"

# what both see alike, and pass alike
rm -rf data && cp -a pristine data
"$PREREG" verify ov.lua >folder.txt 2>&1 || bad "pristine folder"
"$BUNDLE_TOOL" write data/ov ov.tar.gz >/dev/null
"$PREREG" verify ov.tar.gz >bundle.txt 2>&1 || bad "pristine bundle"
check "the same status line from both" \
  test "$(grep '^status: ' folder.txt)" = "$(sed -n 's|^ov.tar.gz: status: |status: |p' bundle.txt)"
check_grep "the status line" '^status: IMPORTED · AMENDED AFTER DATA · TOO FEW VALID \(w/a 2 of 3, w/b 2 of 3\) \(runs: 4 counted' "$(cat folder.txt)"

done_testing 128
