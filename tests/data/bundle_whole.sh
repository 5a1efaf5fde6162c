#!/usr/bin/env bash
# bundle_whole.sh: verify of a bundle covers everything a reader reads, in
# work bounded by the bundle's own size. Each attack on a bundle prereg
# published, and its control: the report edited (Markdown, HTML, a file
# added) and re-signed; the report padded past the extraction cap; a sparse
# member declared huge, or small; folders deeper than any bundle has;
# names longer than any prereg writes; a second archive inside the gzip
# stream after the first one's end (zeros there are padding, and pass).
# Nothing is left in $TMPDIR.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
mkdir tmp
export TMPDIR=$T/tmp PREREG_NOW=1792540800 # 2026-10-21T00:00:00Z
tamper() { python3 "$here/tamper.py" "$@"; }

cat >w.lua <<'LUA'
protocol {
  id = "w", title = "Whole", question = "q", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 2000,
           seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
python3 -c '
print("workload,arm,metric,value")
for i in range(20): print("w,a,wall_s,%.4f" % (1 + i / 100)); print("w,b,wall_s,%.4f" % (11 + i / 100))' >rows.csv
"$PREREG" register w.lua >/dev/null || bad "register"
"$PREREG" import w.lua rows.csv >/dev/null || bad "import"
"$PREREG" publish w.lua --out w.tar.gz >/dev/null || bad "publish"

# refused NAME BUNDLE PATTERN: verify exits 1 naming PATTERN, and leaves
# nothing behind.
refused() {
  local out rc
  out=$("$PREREG" verify "$2" 2>&1); rc=$?
  if [ "$rc" != 1 ]; then bad "$1: exit $rc, wanted 1: $out"; return; fi
  if ! grep -qF -- "$3" <<<"$out"; then bad "$1: no '$3' in: $out"; return; fi
  ok
}
verified() {
  local out
  out=$("$PREREG" verify "$2" 2>&1) && grep -q "every file of it is what its data give" <<<"$out" &&
    ok || bad "$1: $out"
}

verified "control: the bundle as published" w.tar.gz

# The report says what the data do not, re-signed.
tamper edit w.tar.gz md.tar.gz w/report/report.md '**slower**' '**faster**'
refused "report.md edited" md.tar.gz "w/report/report.md: differs from what its data give"
tamper edit w.tar.gz html.tar.gz w/report/report.html '</body>' '<script>alert(1)</script></body>'
refused "report.html edited" html.tar.gz "w/report/report.html: differs"
tamper edit w.tar.gz prov.tar.gz w/report/provenance.md 'w' 'W'
refused "provenance.md edited" prov.tar.gz "w/report/provenance.md: differs"
tamper addsigned w.tar.gz added.tar.gz w/report/extra.html
refused "a file added to the report" added.tar.gz "w/report/extra.html: not part of what its data give"
tamper remove w.tar.gz gone.tar.gz w/report/report.xlsx
python3 "$here/tamper.py" edit gone.tar.gz gone2.tar.gz w/report/report.md '**slower**' '**slower**'
refused "a report file removed" gone2.tar.gz "w/report/report.xlsx: missing"

# A report of another edition (its FORMAT changed or gone) is not compared
# byte for byte, and the status line says so before anything else.
unverified() {
  local out
  out=$("$PREREG" verify "$2" 2>&1)
  grep -q "^$2: status: REPORT NOT VERIFIED" <<<"$out" && ok || bad "$1: $out"
}
tamper edit w.tar.gz f1.tar.gz w/report/FORMAT 'report format ' 'report format 0.'
tamper edit f1.tar.gz f2.tar.gz w/report/report.md '**slower**' '**faster**'
unverified "FORMAT edited, report.md edited" f2.tar.gz
tamper remove md.tar.gz f3.tar.gz w/report/FORMAT
tamper edit f3.tar.gz f4.tar.gz w/report/report.md '**faster**' '**faster**'
unverified "FORMAT removed, report.md edited" f4.tar.gz
check "control: the bundle as published says nothing of it" \
  sh -c '! "$1" verify w.tar.gz | grep -q "NOT VERIFIED"' - "$PREREG"

# A report past the extraction cap is checked all the same.
tamper pad md.tar.gz big.tar.gz w/report/report.md 17000000
refused "report.md edited and padded past 16 MiB" big.tar.gz "w/report/report.md: differs"
tamper pad w.tar.gz bigj.tar.gz w/report/analysis.json 17000000
refused "analysis.json padded past 16 MiB" bigj.tar.gz "w/report/analysis.json: differs"

# Sparse members: their holes are never hashed.
tamper sparse w.tar.gz sp.tar.gz w/batches/b0001/big.stdout 1099511627776
refused "a 1 TiB sparse member, declared" sp.tar.gz "more than the whole archive holds"
tamper sparse w.tar.gz sp2.tar.gz w/batches/b0001/big.stdout 8192
refused "a small sparse member" sp2.tar.gz "a sparse file"

# Folders and names.
tamper deep w.tar.gz deep.tar.gz 20000
refused "20,000 folders deep" deep.tar.gz "more folders deep than any prereg writes"
expect 1 "analyze of it is refused" "$PREREG" analyze deep.tar.gz
tamper addsigned w.tar.gz long.tar.gz "w/batches/$(printf 'n%.0s' $(seq 1100))"
refused "a name of 1,100 bytes" long.tar.gz "name longer than any prereg writes"

# After the archive's end, inside the gzip stream.
tamper append w.tar.gz tail.tar.gz tar
refused "a second archive after the end" tail.tar.gz "bytes follow the end of the archive"
tamper append w.tar.gz zeros.tar.gz zeros
verified "control: zeros after the end (tar padding)" zeros.tar.gz

check "analyze of the published bundle" quiet "$PREREG" analyze w.tar.gz
check "nothing left in TMPDIR: $(ls tmp | head -3)" [ -z "$(ls -A tmp)" ]
done_testing 20
