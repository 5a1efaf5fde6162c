#!/usr/bin/env bash
# stamp.sh: trusted time-stamps (RFC 3161) through the CLI, against a TSA
# of the test's own on loopback (openssl ts -reply behind a small HTTP
# server): register with --tsa, verify folder and bundle with --tsa-ca,
# the offline --request/--attach path, and every way a stamp must fail: a
# token altered by one byte, a token for another digest, a TSA outside
# --tsa-ca, an unreachable, refusing or rejecting TSA (nothing
# registered). Committed bundles from before stamps still verify.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tsa_lib.sh"
: "${PREREG:?}" "${SRC:?}"
T=$(mktemp -d /tmp/prereg-stamp.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1

check "a CA and its TSA" make_tsa "$T/good" Good
check "a CA and a TSA nobody trusts" make_tsa "$T/rogue" Rogue
check "the TSA answers on loopback" start_tsa "$T/good"
GOOD=$TSA_URL
check "the other TSA answers too" start_tsa "$T/rogue"
ROGUE=$TSA_URL
CA=$T/good/ca.pem

write_sheet() { # write_sheet ID AMENDMENT...
  local id=$1
  shift
  {
    cat <<LUA
protocol {
  id = "$id", title = "Stamped", question = "q", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 1,
           verdicts = { { "slower", ci_excludes = 1 } } },
  amendments = {
LUA
    for a in "$@"; do echo "    $a,"; done
    printf '  },\n}\n'
  } >"$id.lua"
}
# resign ID REL: the MANIFEST line of REL made anew, as a tamperer would.
resign() {
  local m=data/$1/MANIFEST sum
  sum=$(sha256sum "data/$1/$2" | cut -c1-64)
  chmod u+w "$m"
  sed -i "s|^[0-9a-f]*  $2\$|$sum  $2|" "$m"
}
# flip ID REL [FROM_END]: one byte of REL changed, in the middle or that
# many bytes before its end (the signature's).
flip() {
  local f=data/$1/$2
  chmod u+w "$f"
  python3 -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read())
i = len(b) - int(sys.argv[2]) if sys.argv[2] != "0" else len(b) // 2
b[i] ^= 0x01; open(p, "wb").write(b)' "$f" "${3:-0}"
}

# Registered and stamped in one step, then data, then verified.
write_sheet ok
expect 0 "register --tsa" "$PREREG" register ok.lua --tsa "$GOOD" --tsa-ca "$CA"
check_grep "the stamp is shown" "stamped v0 [0-9T:-]+Z by CN=Good TSA$" "$out"
check "the token is frozen" test -f data/ok/stamps/v0.tsr
check_grep "and listed in the MANIFEST" "  stamps/v0.tsr" "$(cat data/ok/MANIFEST)"
check "openssl ts -verify agrees" quiet openssl ts -verify -in data/ok/stamps/v0.tsr \
  -data data/ok/versions/v0.json -CAfile "$CA"
printf 'workload,arm,metric,value\nw,a,wall_s,1.0\nw,b,wall_s,2.0\n' >rows.csv
expect 0 "import" "$PREREG" import ok.lua rows.csv
expect 0 "verify --tsa-ca" "$PREREG" verify ok.lua --tsa-ca "$CA"
check_grep "verify names time and TSA" "^v0: stamped [0-9T:-]+Z by CN=Good TSA$" "$out"
expect 0 "verify without --tsa-ca" "$PREREG" verify ok.lua
check_grep "says the chain was not checked" \
  "v0: stamped .* by CN=Good TSA \(chain not checked: no --tsa-ca\)" "$out"
expect 1 "verify against another CA fails" "$PREREG" verify ok.lua \
  --tsa-ca "$T/rogue/ca.pem"
check_grep "naming the token" "data/ok/stamps/v0.tsr: the signature does not verify against --tsa-ca" "$out"

# The offline path: an amendment, a request, a reply brought back.
write_sheet ok '{ date = "2026-12-01", why = "More." }'
expect 0 "amend" "$PREREG" amend ok.lua
expect 0 "stamp --request" "$PREREG" stamp ok.lua --request
check_grep "the request and the curl command" "v1: request written to data/ok/stamps/v1.tsq" "$out"
check_grep "the curl command" "curl --fail -H 'Content-Type: application/timestamp-query' --data-binary @data/ok/stamps/v1.tsq -o v1.tsr URL" "$out"
expect 0 "verify notes the pending request" "$PREREG" verify ok.lua
check_grep "a note, no failure" "note: .*stamps/v1.tsq: a time-stamp request not yet answered" "$out"
check_grep "v1 not stamped" "^v1: not stamped$" "$out"
curl -sS --fail -H 'Content-Type: application/timestamp-query' \
  --data-binary @data/ok/stamps/v1.tsq -o v1.tsr "$GOOD" || bad "curl"
cp v1.tsr v1-again.tsr
expect 0 "stamp --attach" "$PREREG" stamp ok.lua --attach v1.tsr --tsa-ca "$CA"
check_grep "attached to v1" "stamped v1 .* by CN=Good TSA$" "$out"
check "the request is gone" test ! -e data/ok/stamps/v1.tsq
expect 2 "the same reply again is refused" "$PREREG" stamp ok.lua --attach v1-again.tsr
check_grep "no unstamped version" "the record of no version of ok that is not stamped yet" "$out"
expect 0 "stamp with nothing to do" "$PREREG" stamp ok.lua --tsa "$GOOD"
check_grep "says so" "every version is stamped already" "$out"
expect 0 "verify both versions" "$PREREG" verify ok.lua --tsa-ca "$CA"
check_grep "v1 stamped" "^v1: stamped .* by CN=Good TSA$" "$out"

expect 0 "analyze --json" "$PREREG" analyze ok.lua --json
check "registration: each version's stamp" python3 -c '
import json, sys
reg = json.loads(sys.argv[1])["registration"]
assert [r["version"] for r in reg] == [0, 1], reg
for r in reg:
    assert r["stamp"]["tsa"] == "CN=Good TSA", r
    assert r["stamp"]["time"].endswith("Z") and r["signature"] is None, r
' "$out"

# The bundle carries the tokens; a reader checks them.
expect 0 "publish" "$PREREG" publish ok.lua --out ok.tar.gz
check_grep "the bundle holds the tokens" "stamps/v1.tsr" "$(tar -tzf ok.tar.gz)"
expect 0 "verify the bundle --tsa-ca" "$PREREG" verify ok.tar.gz --tsa-ca "$CA"
check_grep "bundle: v0 stamped" "^v0: stamped .* by CN=Good TSA$" "$out"
check_grep "bundle: v1 stamped" "^v1: stamped .* by CN=Good TSA$" "$out"
expect 1 "the bundle against another CA fails" "$PREREG" verify ok.tar.gz \
  --tsa-ca "$T/rogue/ca.pem"
check_grep "naming the token" "stamps/v0.tsr: the signature does not verify" "$out"

# Tampering, with the MANIFEST made anew so that only the token check sees.
cp -a data data.keep
flip ok stamps/v0.tsr
resign ok stamps/v0.tsr
expect 1 "a token altered by one byte" "$PREREG" verify ok.lua
check_grep "named" "data/ok/stamps/v0.tsr: not a time-stamp reply" "$out"
rm -rf data && cp -a data.keep data
flip ok stamps/v0.tsr 8
resign ok stamps/v0.tsr
expect 1 "a byte of the signature altered" "$PREREG" verify ok.lua
check_grep "the signature fails" "data/ok/stamps/v0.tsr: the signature does not verify" "$out"
rm -rf data && cp -a data.keep data
chmod u+w data/ok/stamps data/ok/stamps/v0.tsr
cp -f data/ok/stamps/v1.tsr data/ok/stamps/v0.tsr
resign ok stamps/v0.tsr
expect 1 "a token for another digest" "$PREREG" verify ok.lua --tsa-ca "$CA"
check_grep "says whose it is not" \
  "data/ok/stamps/v0.tsr: the token covers sha256 [0-9a-f]{12}\.\.\., not [0-9a-f]{12}\.\.\.: it is another file's" "$out"
rm -rf data && cp -a data.keep data
chmod u+w data/ok/versions data/ok/versions/v0.json
sed -i 's/"filed_at": "[^"]*"/"filed_at": "2020-01-01T00:00:00Z"/' data/ok/versions/v0.json
resign ok versions/v0.json
expect 1 "a record filed earlier than it was" "$PREREG" verify ok.lua --tsa-ca "$CA"
check_grep "the stamp no longer covers it" "stamps/v0.tsr: the token covers" "$out"
rm -rf data && cp -a data.keep data

# A TSA that fails: nothing registered, exit 1 naming the URL.
write_sheet two
expect 1 "a TSA outside --tsa-ca" "$PREREG" register two.lua --tsa "$ROGUE" --tsa-ca "$CA"
check_grep "names the URL and the reason" \
  "nothing registered: the TSA $ROGUE: the reply for v0: the signature does not verify against --tsa-ca" "$out"
check "nothing registered" test ! -e data/two/versions
echo refuse >"$T/good/mode"
expect 1 "a refusing TSA" "$PREREG" register two.lua --tsa "$GOOD"
check_grep "names URL and answer" "nothing registered: the TSA $GOOD did not answer: .*500" "$out"
echo reject >"$T/good/mode"
expect 1 "a TSA that rejects the request" "$PREREG" register two.lua --tsa "$GOOD"
check_grep "names the status" "nothing registered: the TSA $GOOD: the reply for v0: the TSA refused the request \(status 2" "$out"
echo "other:$(printf x | sha256sum | cut -c1-64)" >"$T/good/mode"
expect 1 "a TSA that stamps another digest" "$PREREG" register two.lua --tsa "$GOOD"
check_grep "another digest" "the token covers sha256 2d711642b726\.\.\., not" "$out"
rm -f "$T/good/mode"
FREE=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
expect 1 "an unreachable TSA" "$PREREG" register two.lua --tsa "http://127.0.0.1:$FREE/tsr"
check_grep "names it" "nothing registered: the TSA http://127.0.0.1:$FREE/tsr did not answer: " "$out"
check "still nothing registered" test ! -e data/two/versions
check "no MANIFEST either" test ! -e data/two/MANIFEST
expect 2 "not an http URL" "$PREREG" register two.lua --tsa "file:///etc/passwd"
expect 0 "a plain register works offline" "$PREREG" register two.lua
expect 0 "and a later stamp" "$PREREG" stamp two.lua --tsa "$GOOD" --tsa-ca "$CA"
check_grep "stamped" "stamped v0 .* by CN=Good TSA$" "$out"
expect 2 "--attach of a file that is no reply" "$PREREG" stamp two.lua --attach rows.csv
check_grep "named" "rows.csv: not a time-stamp reply" "$out"
expect 2 "stamp needs one mode" "$PREREG" stamp two.lua

# A bundle published before stamps existed: its files, chain and proofs
# verify, each version "not stamped". (Its report, of another edition,
# gives verdicts from 3 values per arm, where this prereg gives no 95%
# interval: those verdicts are named as not what its data give.)
expect 1 "an older bundle" "$PREREG" verify "$SRC/tests/fuzz/corpus/bundle/published.tar.gz"
check_grep "its files verify" "published.tar.gz: ok: experiment fz," "$out"
check_grep "not stamped, not failed" "^v0: not stamped$" "$out"
check_grep "the report named as another edition's" "status: REPORT NOT VERIFIED" "$out"
check "only its report's verdicts differ" sh -c '! printf "%s\n" "$1" | grep -E "stamps/|signatures/|MANIFEST:.*(differ|missing)"' - "$out"
check_grep "the difference: no interval at 3 values per arm" \
  'verdict "slower" bundled, "insufficient data" re-derived' "$out"
done_testing 72
