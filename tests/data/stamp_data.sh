#!/usr/bin/env bash
# stamp_data.sh: data stamps through the CLI, against a TSA of the test's
# own on loopback: run --tsa stamps the MANIFEST as the batch left it,
# stamp --data-manifest does the same later; verify (folder and bundle)
# checks the token and that every file the stamped text names still has
# its digest, so rows changed with every digest made anew are refused;
# rows stamped before the plan was (the plan stamped afterwards) are
# said as DATA STAMPED BEFORE PLAN on the status line.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tsa_lib.sh"
: "${PREREG:?}" "${SRC:?}"
T=$(mktemp -d /tmp/prereg-stamp-data.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1

check "a CA and its TSA" make_tsa "$T/good" Good
check "the TSA answers on loopback" start_tsa "$T/good"
GOOD=$TSA_URL
CA=$T/good/ca.pem

write_sheet() { # write_sheet ID
  cat >"$1.lua" <<LUA
protocol {
  id = "$1", title = "Stamped data", question = "q", author = "t",
  arms = { { name = "a", reference = true, run = "sh -c true" },
           { name = "b", run = "sh -c true" } },
  workloads = { { name = "w", runs = 3, source = "both" } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 1,
           verdicts = { { "slower", ci_excludes = 1 } } },
  amendments = {},
}
LUA
}
# resign ID REL: the MANIFEST line of REL made anew, as a tamperer would.
resign() {
  local m=data/$1/MANIFEST sum
  sum=$(sha256sum "data/$1/$2" | cut -c1-64)
  chmod u+w "$m"
  sed -i "s|^[0-9a-f]*  $2\$|$sum  $2|" "$m"
}

# Registered and stamped, run with --tsa: the batch's MANIFEST stamped.
write_sheet ok
expect 0 "register --tsa" "$PREREG" register ok.lua --tsa "$GOOD" --tsa-ca "$CA"
expect 2 "--data-manifest needs --tsa" "$PREREG" stamp ok.lua --data-manifest
expect 1 "no batch yet: nothing to stamp" "$PREREG" stamp ok.lua --data-manifest --tsa "$GOOD"
check_grep "says so" "no batch is frozen yet" "$out"
expect 2 "run --tsa-ca without --tsa" "$PREREG" run ok.lua --tsa-ca "$CA"
check "and nothing ran" test ! -e data/ok/batches
expect 0 "run --tsa" "$PREREG" run ok.lua --tsa "$GOOD" --tsa-ca "$CA"
check_grep "the stamp is shown" "stamped the MANIFEST after b0001 [0-9T:-]+Z by CN=Good TSA$" "$out"
check "the stamped text is frozen" test -f data/ok/stamps/manifest-b0001.txt
check "beside its token" test -f data/ok/stamps/manifest-b0001.tsr
check_grep "both in the MANIFEST" "  stamps/manifest-b0001.tsr" "$(cat data/ok/MANIFEST)"
check_grep "the text lists the batch" "  batches/b0001.csv$" "$(cat data/ok/stamps/manifest-b0001.txt)"
check "openssl ts -verify agrees" quiet openssl ts -verify \
  -in data/ok/stamps/manifest-b0001.tsr -data data/ok/stamps/manifest-b0001.txt -CAfile "$CA"
expect 0 "stamp --data-manifest again" "$PREREG" stamp ok.lua --data-manifest --tsa "$GOOD"
check_grep "stamped already" "the MANIFEST after batch b0001 is stamped already" "$out"
expect 0 "verify --tsa-ca" "$PREREG" verify ok.lua --tsa-ca "$CA"
check_grep "the data stamp holds" "^b0001: data stamped [0-9T:-]+Z by CN=Good TSA, [0-9]+ files as they were$" "$out"
case "$out" in
*"BEFORE PLAN"*) bad "the plan came first, yet: $out" ;;
*) ok ;;
esac

# A second batch, stamped later by hand.
printf 'workload,arm,metric,value\nw,a,wall_s,1.0\n' >rows.csv
expect 0 "a second batch" "$PREREG" import ok.lua rows.csv
expect 0 "stamp --data-manifest" "$PREREG" stamp ok.lua --data-manifest --tsa "$GOOD" --tsa-ca "$CA"
check_grep "after b0002" "stamped the MANIFEST after b0002 .* by CN=Good TSA$" "$out"
expect 0 "verify both" "$PREREG" verify ok.lua --tsa-ca "$CA"
check_grep "b0002 holds" "^b0002: data stamped .* files as they were$" "$out"

# The bundle carries them; a reader checks them.
expect 0 "publish" "$PREREG" publish ok.lua --out ok.tar.gz
check_grep "the bundle holds the text" "stamps/manifest-b0001.txt" "$(tar -tzf ok.tar.gz)"
expect 0 "verify the bundle --tsa-ca" "$PREREG" verify ok.tar.gz --tsa-ca "$CA"
check_grep "bundle: b0001's stamp holds" "^b0001: data stamped .* by CN=Good TSA, [0-9]+ files as they were$" "$out"

# A value changed with every digest made anew: only the data stamp sees.
cp -a data data.keep
chmod -R u+w data/ok/batches
sed -i '2s/,true,/,true,/; 2s/\(,wall_s,\)[0-9.e-]*/\10.5/' data/ok/batches/b0001.csv
python3 - data/ok/batches/b0001.json "$(sha256sum data/ok/batches/b0001.csv | cut -c1-64)" <<'PY'
import json, sys
p = sys.argv[1]; f = json.load(open(p)); f["csv_sha256"] = sys.argv[2]
open(p, "w").write(json.dumps(f, indent=2))
PY
resign ok batches/b0001.csv
resign ok batches/b0001.json
expect 1 "rows changed after their stamp" "$PREREG" verify ok.lua --tsa-ca "$CA"
check_grep "names the file and the stamp" \
  "data/ok/stamps/manifest-b0001.txt:[0-9]+: batches/b0001.csv had sha256 [0-9a-f]{12}\.\.\. when stamped; it was changed since" "$out"
check_grep "and counts it" "manifest-b0001.txt: 2 files changed since the MANIFEST was stamped" "$out"
rm -rf data && cp -a data.keep data
# The stamped text edited to match, and made anew in the MANIFEST.
chmod -R u+w data/ok/stamps
sed -i 's/^[0-9a-f]\{4\}/0000/' data/ok/stamps/manifest-b0001.txt
resign ok stamps/manifest-b0001.txt
expect 1 "the stamped text edited" "$PREREG" verify ok.lua --tsa-ca "$CA"
check_grep "the token no longer covers it" "data/ok/stamps/manifest-b0001.tsr: the token covers" "$out"
rm -rf data && cp -a data.keep data
rm -f data/ok/stamps/manifest-b0002.txt
expect 1 "a token without its text" "$PREREG" verify ok.lua
check_grep "named" "data/ok/stamps/manifest-b0002.txt" "$out"
rm -rf data && cp -a data.keep data

# Rows stamped before the plan: registered without a stamp, data
# collected and stamped, the plan stamped only afterwards.
write_sheet late
expect 0 "register, no stamp" "$PREREG" register late.lua
expect 0 "run --tsa" "$PREREG" run late.lua --tsa "$GOOD" --tsa-ca "$CA"
# The TSA's clock gives seconds: the plan's stamp comes a second later.
sleep 1.1
expect 0 "the plan stamped after its data" "$PREREG" stamp late.lua --tsa "$GOOD" --tsa-ca "$CA"
expect 0 "verify: not a failure" "$PREREG" verify late.lua --tsa-ca "$CA"
check_grep "on the status line" "^status: DATA STAMPED BEFORE PLAN \(runs: 6 counted" "$out"
check_grep "the times" "^b0001: DATA STAMPED BEFORE PLAN: its rows were stamped .*, v0 \(which they were collected under\) " "$out"
expect 0 "publish" "$PREREG" publish late.lua --out late.tar.gz
expect 0 "verify the bundle" "$PREREG" verify late.tar.gz --tsa-ca "$CA"
check_grep "on the bundle's status line" "late.tar.gz: status: DATA STAMPED BEFORE PLAN \(runs: " "$out"

# The round orders of a stamped version come from its token: recomputed
# here from the token alone (splitmix64, Fisher-Yates, as the facts say).
cat >ord.lua <<'LUA'
protocol {
  id = "ord", title = "Order", question = "q", author = "t",
  arms = { { name = "a", reference = true, run = "sh -c true" },
           { name = "b", run = "sh -c true" }, { name = "c", run = "sh -c true" },
           { name = "d", run = "sh -c true" } },
  workloads = { { name = "w", runs = 6 } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 1,
           verdicts = { { "slower", ci_excludes = 1 } } },
  amendments = {},
}
LUA
expect 0 "register --tsa" "$PREREG" register ord.lua --tsa "$GOOD" --tsa-ca "$CA"
expect 0 "run" "$PREREG" run ord.lua
check_grep "the facts name the token" '"order_stamp": "stamps/v0.tsr"' "$(cat data/ord/batches/b0001.json)"
order_of() { # order_of SEEDHEX: each round's arms, as the token dictates
  python3 - "$1" <<'PY'
import sys
M = (1 << 64) - 1
def fnv(s):
    h = 0xCBF29CE484222325
    for c in s.encode():
        h = ((h ^ c) * 0x100000001B3) & M
    return h
seed = int(sys.argv[1][:16], 16)
for r in range(1, 7):
    s = (seed * 0x9E3779B97F4A7C15 & M) ^ fnv("w") ^ r
    o = list(range(4))
    for i in range(4, 1, -1):
        s = (s + 0x9E3779B97F4A7C15) & M
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        z ^= z >> 31
        j = z % i
        o[i - 1], o[j] = o[j], o[i - 1]
    print(r, "".join("abcd"[k] for k in o))
PY
}
rows_order() { # each round's arms as the rows hold them
  awk -F, 'NR > 1 && $7 > 0 { if (!seen[$9]++) a[$7] = a[$7] $6 }
    END { for (r = 1; r <= 6; r++) print r, a[r] }' data/ord/batches/b0001.csv
}
want=$(order_of "$(sha256sum data/ord/stamps/v0.tsr | cut -c1-64)")
check "the rows follow the token's orders" test "$want" = "$(rows_order)"
check "not the sheet's seed alone" test "$want" != "$(order_of 0000000000000001)"
expect 0 "verify" "$PREREG" verify ord.lua --tsa-ca "$CA"
check_grep "says so" "^b0001: rows collected in the order the stamp dictates \(stamps/v0.tsr\)$" "$out"
expect 0 "report" "$PREREG" report ord.lua --out rep
check_grep "provenance.md says so" \
  '^- b0001: rows collected in the order the stamp dictates \(`stamps/v0.tsr`\)\.$' "$(cat rep/provenance.md)"
check_grep "report.md's header gives the stamp's time and TSA" \
  ' · v0 stamped [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z by [^;]+, not signed\.$' "$(cat rep/report.md)"
expect 0 "publish" "$PREREG" publish ord.lua --out ord.tar.gz
expect 0 "verify the bundle" "$PREREG" verify ord.tar.gz --tsa-ca "$CA"
check_grep "the bundle says so" "^b0001: rows collected in the order the stamp dictates" "$out"
# Two runs of round 1 swapped by hand, every digest made anew.
chmod -R u+w data/ord/batches
python3 - data/ord/batches/b0001.csv <<'PY'
import csv, io, sys
p = sys.argv[1]
rows = list(csv.reader(open(p, newline="")))
h = rows[0]; A, R, S = h.index("arm"), h.index("round"), h.index("seq")
first = [r for r in rows[1:] if r[R] == "1"]
x, y = first[0][A], first[1][A]
for r in rows[1:]:
    if r[R] == "1" and r[A] in (x, y):
        r[A] = y if r[A] == x else x
out = io.StringIO(); csv.writer(out, lineterminator="\n").writerows(rows)
open(p, "w").write(out.getvalue())
PY
python3 - data/ord/batches/b0001.json "$(sha256sum data/ord/batches/b0001.csv | cut -c1-64)" <<'PY'
import json, sys
p = sys.argv[1]; f = json.load(open(p)); f["csv_sha256"] = sys.argv[2]
open(p, "w").write(json.dumps(f, indent=2))
PY
resign ord batches/b0001.csv
resign ord batches/b0001.json
expect 1 "rows reordered by hand" "$PREREG" verify ord.lua
check_grep "named, with the order" \
  "data/ord/batches/b0001.csv: workload w round 1: arm [a-d] ran after arm [a-d], not in the order stamps/v0.tsr dictates \([a-d], [a-d], [a-d], [a-d]\)" "$out"
check_grep "and counted" "1 run not in the order its stamp dictates" "$out"

# A TSA that fails at the end of a run: the batch is kept, exit 1.
write_sheet off
expect 0 "register" "$PREREG" register off.lua
echo refuse >"$T/good/mode"
expect 1 "run --tsa, the TSA refusing" "$PREREG" run off.lua --tsa "$GOOD"
check_grep "the batch kept, how to stamp later" \
  "the batch is frozen, its data not stamped \(stamp them later: prereg stamp off.lua --data-manifest --tsa URL\): the TSA $GOOD did not answer" "$out"
check_grep "the batch is frozen" "batches/b0001.csv" "$(cat data/off/MANIFEST)"
rm -f "$T/good/mode"
expect 0 "stamped later" "$PREREG" stamp off.lua --data-manifest --tsa "$GOOD"
expect 0 "verify" "$PREREG" verify off.lua
check_grep "the chain not checked" "^b0001: data stamped .* \(chain not checked: no --tsa-ca\)$" "$out"
done_testing 68
