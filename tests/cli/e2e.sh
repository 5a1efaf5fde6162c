#!/usr/bin/env bash
# e2e.sh: the whole pipeline through the real CLI: sheet -> register ->
# import -> amend -> import -> report -> publish; then the bundle alone is
# verified, re-analysed and re-rendered, and tampering is caught.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${SRC:?}" "${BUNDLE_TOOL:?}"
TOOL=$BUNDLE_TOOL
here=$SRC/tests/data   # tamper.py, shared with data/'s bundle test
T=$(mktemp -d)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
# Bundles are extracted under $TMPDIR: this test's own, so that the check
# for copies left behind sees no other test's.
mkdir "$T/tmp" && export TMPDIR=$T/tmp
# quiet CMD...: CMD with its stdout dropped and its stderr kept in
# $T/err, shown when a check on it fails.
quiet() { "$@" >/dev/null 2>"$T/err" || { cat "$T/err" >&2; return 1; }; }
# refuses NAME CODE PATTERN CMD...: CMD exits CODE and says PATTERN.
refuses() {
  local n=$1 code=$2 pat=$3; shift 3
  expect "$code" "$n" "$@" || return 1
  if grep -qF -- "$pat" <<<"$out"; then ok; else bad "$n: no '$pat' in: $out"; fi
}

cat >demo.lua <<'LUA'
protocol {
  id = "pubdemo",
  title = "A published demo",
  question = "Does b cost more than a?",
  author = "T. Ester",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", metrics = { "wall_s" } },
                { name = "v", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 2000, seed = 17,
    verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.10 } } },
  hypotheses = { { id = "H1", says = "b is slower", workload = "w",
                   metric = "wall_s", arms = { "b" }, claim = at_least(1.2) } },
  threats = { "Made-up numbers." },
}
LUA
python3 - <<'PY'
import random
random.seed(3)
for name, wl in (("m1.csv", "w"), ("m2.csv", "v")):
    with open(name, "w") as f:
        f.write("workload,arm,metric,value\n")
        for i in range(15):
            f.write("%s,a,wall_s,%.6f\n" % (wl, random.uniform(1.0, 1.1)))
            f.write("%s,b,wall_s,%.6f\n" % (wl, random.uniform(1.3, 1.5)))
PY

# Not registered yet: nothing to publish.
refuses "publish before register" 1 "not registered" "$PREREG" publish demo.lua
check "something was written for an unregistered sheet" [ ! -e data/pubdemo/publish ]

export PREREG_NOW=1790000000
check "register" quiet "$PREREG" register demo.lua
check "import 1" quiet "$PREREG" import demo.lua m1.csv
# A report of the first batch only: stale once more data come.
check "report of the first batch" quiet "$PREREG" report demo.lua
cp -a data/pubdemo/report stale-report
# An amendment, then more data under it: the chain has two versions.
sed -i 's/^  threats = { "Made-up numbers." },$/  threats = { "Made-up numbers." },\n  amendments = { { date = "2026-09-20", why = "Count v as well." } },/' demo.lua
export PREREG_NOW=1790100000
check "amend" quiet "$PREREG" amend demo.lua
check "import 2" quiet "$PREREG" import demo.lua m2.csv
unset PREREG_NOW

# publish bundles the report its data give, never a stale one
# data/pubdemo/report/ was rendered from the first batch: publish renders
# the report again from the data it bundles.
out=$("$PREREG" publish demo.lua --out "$T/fresh.tar.gz" 2>&1)
check "publish over a stale report: $out" grep -q "report  rendered from the data it bundles" <<<"$out"
"$PREREG" analyze demo.lua --json >"$T/now.json"
check "the bundled analysis is the data's, not the stale report's" \
  cmp -s "$T/now.json" <(tar -xzOf "$T/fresh.tar.gz" pubdemo/report/analysis.json)
tar -xzOf "$T/fresh.tar.gz" pubdemo/report/report.md >"$T/fresh.md"
check "the bundled report.md records that analysis' digest" \
  grep -qF "SHA-256 \`$(sha256sum "$T/now.json" | cut -c1-64)\`" "$T/fresh.md"
check "the stale report is not what was bundled" bash -c "! cmp -s '$T/fresh.md' stale-report/report.md"
out=$("$PREREG" verify "$T/fresh.tar.gz" 2>&1)
check "verify BUNDLE renders the report afresh: $out" grep -q "report: every file of it is what its data give" <<<"$out"
# A bundle whose report is stale, manifests and all consistent (what
# publish used to write): verify re-derives the analysis and fails,
# naming the file and the numbers.
rm -rf "$T/stale-folder" && mkdir "$T/stale-folder" && cp -a data/pubdemo "$T/stale-folder/" &&
  chmod -R u+w "$T/stale-folder" && rm -rf "$T/stale-folder/pubdemo/report" &&
  cp -a stale-report "$T/stale-folder/pubdemo/report"
"$TOOL" write "$T/stale-folder/pubdemo" "$T/stale.tar.gz" >/dev/null || bad "bundle_tool write"
refuses "a bundle with a stale report" 1 "pubdemo/report/analysis.json" "$PREREG" verify "$T/stale.tar.gz"
check_grep "the stale report's missing comparison is named" \
  "pubdemo/report/analysis.json: v/wall_s/b: re-derived, but not in the bundled analysis" "$out"
check_grep "and its other sheet and status" \
  'pubdemo/report/analysis.json: the analysis: status "IMPORTED" bundled, "IMPORTED · AMENDED AFTER DATA" re-derived' "$out"
# One number of the bundled analysis changed (manifests re-signed): named.
python3 "$here/tamper.py" edit "$T/fresh.tar.gz" "$T/n.tar.gz" pubdemo/report/analysis.json '"n": 15,' '"n": 14,'
refuses "a changed number in the bundled analysis" 1 \
  "pubdemo/report/analysis.json: w/wall_s/b: n 14 bundled, 15 re-derived from the bundled data" \
  "$PREREG" verify "$T/n.tar.gz"
# A report.md whose recorded digest is not its analysis' is caught too.
h=$(sha256sum "$T/now.json" | cut -c1-64)
python3 "$here/tamper.py" edit "$T/fresh.tar.gz" "$T/md.tar.gz" pubdemo/report/report.md "$h" "$(tr 0-9a-f 1-9a-f0 <<<"$h")"
refuses "report.md records another digest" 1 "pubdemo/report/report.md: records the analysis SHA-256" "$PREREG" verify "$T/md.tar.gz"

check "report" quiet "$PREREG" report demo.lua
out=$("$PREREG" publish demo.lua); rc=$?
B=data/pubdemo/publish/pubdemo.tar.gz
[ $rc = 0 ] && [ -f "$B" ] && grep -qF "sha256  $(sha256sum "$B" | cut -c1-64)" <<<"$out" && ok || bad "publish: $rc $out"
cp "$B" first.tar.gz
sleep 1
check "publish again" quiet "$PREREG" publish demo.lua
check "publishing the same data twice gave different bytes" cmp -s first.tar.gz "$B"
check "publish --out" quiet "$PREREG" publish demo.lua --out "$T/elsewhere/pubdemo.tar.gz"
check "--out gave different bytes" cmp -s first.tar.gz "$T/elsewhere/pubdemo.tar.gz"
refuses "--out without .tar.gz" 2 "must end in .tar.gz" "$PREREG" publish demo.lua --out x.zip
check "x.zip written" [ ! -e x.zip ]

# What is inside: every version, diff, batch and its facts, the report.
members=$(tar -tzf "$B")
for m in pubdemo/BUNDLE-MANIFEST pubdemo/MANIFEST pubdemo/README.md \
         pubdemo/versions/v0.lua pubdemo/versions/v0.json pubdemo/versions/v1.lua \
         pubdemo/versions/v1.diff pubdemo/versions/v1.json \
         pubdemo/batches/b0001.csv pubdemo/batches/b0001.json \
         pubdemo/batches/b0002.csv pubdemo/batches/b0002.json \
         pubdemo/report/report.md pubdemo/report/report.html pubdemo/report/report.xlsx; do
  check "bundle lacks $m" grep -qx "$m" <<<"$members"
done
# Every file of the data folder's MANIFEST, byte for byte.
(cd data/pubdemo && while read -r sha rel; do
   [ "$(tar -xzOf "$T/$B" "pubdemo/$rel" | sha256sum | cut -c1-64)" = "$sha" ] || echo "$rel"
 done <MANIFEST) >"$T/differ"
check "bundle members differ from the MANIFEST: $(cat "$T/differ")" [ ! -s "$T/differ" ]

# The bundle alone
mkdir reader && cp "$B" reader/ && cd reader || exit 1
out=$("$PREREG" verify pubdemo.tar.gz 2>&1); rc=$?
[ $rc = 0 ] && grep -q "ok: experiment pubdemo" <<<"$out" && ok || bad "prereg verify BUNDLE: $rc $out"
"$PREREG" analyze pubdemo.tar.gz --json >"$T/a-bundle.json" 2>"$T/err"; rc=$?
(cd "$T" && "$PREREG" analyze demo.lua --json >"$T/a-sheet.json")
[ $rc = 0 ] && cmp -s "$T/a-sheet.json" "$T/a-bundle.json" && ok || bad "prereg analyze BUNDLE --json differs from the sheet's ($rc): $(cat "$T/err")"
"$PREREG" report pubdemo.tar.gz --out "$T/rep-bundle" >/dev/null 2>"$T/err"; rc=$?
[ $rc = 0 ] && diff -r "$T/data/pubdemo/report" "$T/rep-bundle" >"$T/rdiff" && ok || bad "prereg report BUNDLE differs from the original report ($rc): $(cat "$T/err") $(head -20 "$T/rdiff")"
refuses "report BUNDLE without --out" 2 "needs --out" "$PREREG" report pubdemo.tar.gz
# The same through the library call those commands use (bundle_tool run
# hands the command exactly what cmd_resolve_input would).
"$TOOL" run pubdemo.tar.gz "$PREREG" analyze @SHEET --data @DATA --json >"$T/a-tool.json"
check "analysis from the extracted bundle differs" cmp -s "$T/a-sheet.json" "$T/a-tool.json"
"$TOOL" run pubdemo.tar.gz "$PREREG" report @SHEET --data @DATA --out "$T/rep-tool" >/dev/null
for f in report.xlsx $(cd "$T/data/pubdemo/report" && ls *.svg); do
  check "report file $f from the bundle differs" cmp -s "$T/data/pubdemo/report/$f" "$T/rep-tool/$f"
done
left=$(find "$T/tmp" -mindepth 1 -maxdepth 1 -name 'prereg-bundle-*')
check "no temporary copy of a bundle left in \$TMPDIR ($left)" [ -z "$left" ]
cd "$T" || exit 1

# Tampering, through prereg verify
for m in $(python3 "$here/tamper.py" list "$B"); do
  python3 "$here/tamper.py" byte "$B" t.tar.gz "$m"
  refuses "one byte in $m" 1 "$m" "$PREREG" verify t.tar.gz
done
python3 "$here/tamper.py" add "$B" t.tar.gz pubdemo/batches/b0003.csv
refuses "file added" 1 "pubdemo/batches/b0003.csv: not listed" "$PREREG" verify t.tar.gz
python3 "$here/tamper.py" remove "$B" t.tar.gz pubdemo/batches/b0002.json
refuses "file removed" 1 "pubdemo/batches/b0002.json: listed in pubdemo/BUNDLE-MANIFEST but missing" "$PREREG" verify t.tar.gz
refuses "analyze of a tampered bundle" 1 "pubdemo/batches/b0002.json" "$PREREG" analyze t.tar.gz --json
head -c 2000 "$B" >cut.tar.gz
refuses "truncated" 1 "truncated" "$PREREG" verify cut.tar.gz
echo "not a bundle" >no.tar.gz
refuses "not a bundle" 2 "not a prereg bundle" "$PREREG" verify no.tar.gz

# Publish refuses data that do not verify, or an edited sheet
echo "-- edited" >>demo.lua
refuses "edited sheet" 1 "" "$PREREG" publish demo.lua --out "$T/edited.tar.gz"
check "a bundle of an edited sheet was written" [ ! -e "$T/edited.tar.gz" ]
sed -i '$d' demo.lua
chmod u+w data/pubdemo/batches/b0001.csv
sed -i 's/,w,b,/,w,a,/' data/pubdemo/batches/b0001.csv
refuses "tampered data" 1 "batches/b0001.csv" "$PREREG" publish demo.lua --out "$T/tampered.tar.gz"
check "a bundle of tampered data was written" [ ! -e "$T/tampered.tar.gz" ]

done_testing 90
