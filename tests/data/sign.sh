#!/usr/bin/env bash
# sign.sh: SSH signatures through the CLI (ssh-keygen -Y, namespace
# prereg): register and amend --sign sign each version's record, publish
# --sign the bundle's MANIFEST, and verify --allowed-signers names the
# principal and fails a row changed with the MANIFEST made anew, a key
# the file does not allow, a bundle without manifest.sig, a signature of
# another namespace and a file that is no signature.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${SRC:?}"
T=$(mktemp -d /tmp/prereg-sign.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
TAMPER=$SRC/tests/data/tamper.py

ssh-keygen -q -t ed25519 -N '' -C alice -f alice || bad "alice's key"
ssh-keygen -q -t ed25519 -N '' -C mallory -f mallory || bad "mallory's key"
echo "alice@example.org $(cut -d' ' -f1,2 alice.pub)" >allowed
FP=$(ssh-keygen -l -f alice.pub | cut -d' ' -f2)
FPRE=$(printf '%s' "$FP" | sed 's/[+.]/\\&/g') # as a regular expression

write_sheet() { # write_sheet AMENDMENT...
  {
    cat <<'LUA'
protocol {
  id = "sg", title = "Signed", question = "q", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 1,
           verdicts = { { "slower", ci_excludes = 1 } } },
  amendments = {
LUA
    for a in "$@"; do echo "    $a,"; done
    printf '  },\n}\n'
  } >sg.lua
}
resign() { # resign REL: its MANIFEST line made anew
  local sum
  sum=$(sha256sum "data/sg/$1" | cut -c1-64)
  chmod u+w data/sg/MANIFEST
  sed -i "s|^[0-9a-f]*  $1\$|$sum  $1|" data/sg/MANIFEST
}

write_sheet
expect 2 "a key file that is not there" "$PREREG" register sg.lua --sign nokey
check "nothing registered" test ! -e data/sg/versions
expect 0 "register --sign" "$PREREG" register sg.lua --sign alice
check_grep "says it signed" "signed  v0 with alice" "$out"
check "the signature is frozen" test -f data/sg/signatures/v0.sig
check_grep "in the MANIFEST" "  signatures/v0.sig$" "$(cat data/sg/MANIFEST)"
check "ssh-keygen agrees" quiet ssh-keygen -Y verify -f allowed -I alice@example.org \
  -n prereg -s data/sg/signatures/v0.sig <data/sg/versions/v0.json
printf 'workload,arm,metric,value\nw,a,wall_s,1.0\nw,b,wall_s,2.0\n' >rows.csv
expect 0 "import" "$PREREG" import sg.lua rows.csv
write_sheet '{ date = "2026-12-01", why = "More." }'
expect 0 "amend, signed by another key" "$PREREG" amend sg.lua --sign mallory
expect 0 "verify without allowed signers" "$PREREG" verify sg.lua
check_grep "v0 signed by its fingerprint" "^v0: signed by $FPRE$" "$out"
check_grep "v1 signed too" "^v1: signed by SHA256:" "$out"
expect 1 "verify --allowed-signers" "$PREREG" verify sg.lua --allowed-signers allowed
check_grep "v0 names the principal" "^v0: signed by $FPRE \(alice@example.org\)$" "$out"
check_grep "v1's key is not allowed" "data/sg/signatures/v1.sig: signed by SHA256:[^ ]+, a key allowed does not allow" "$out"

expect 0 "analyze --json" "$PREREG" analyze sg.lua --json
check "registration: the key of each version's signature" python3 -c '
import json, sys
reg = json.loads(sys.argv[1])["registration"]
assert reg[0]["signature"] == {"key": sys.argv[2]}, reg
assert reg[1]["signature"]["key"].startswith("SHA256:") and reg[1]["signature"]["key"] != sys.argv[2], reg
assert reg[0]["stamp"] is None, reg
' "$out" "$FP"

expect 0 "report" "$PREREG" report sg.lua
has data/sg/report/provenance.md "provenance.md names each version's key" \
  "- v0: not stamped; signed by \`$FP\`."
has data/sg/report/report.md "report.md's header names each version's key" \
  "· v0 not stamped, signed by \`$FP\`; v1 not stamped, signed by \`SHA256:"

# A record changed with the MANIFEST made anew: its signature says so.
cp -a data data.keep
chmod u+w data/sg/versions data/sg/versions/v0.json
sed -i 's/"filed_at": "[^"]*"/"filed_at": "2020-01-01T00:00:00Z"/' data/sg/versions/v0.json
resign versions/v0.json
expect 1 "a record edited and re-signed in the MANIFEST" "$PREREG" verify sg.lua
check_grep "the signature names it" "data/sg/signatures/v0.sig: the signature does not verify .*: what it signs was changed" "$out"
rm -rf data && cp -a data.keep data
chmod u+w data/sg/signatures data/sg/signatures/v0.sig
printf 'not a signature\n' >data/sg/signatures/v0.sig
resign signatures/v0.sig
expect 1 "a file that is no signature" "$PREREG" verify sg.lua
check_grep "named" "data/sg/signatures/v0.sig: not an SSH signature" "$out"
echo hi | ssh-keygen -Y sign -n other -f alice >data/sg/signatures/v0.sig 2>/dev/null
resign signatures/v0.sig
expect 1 "a signature of another namespace" "$PREREG" verify sg.lua
check_grep "named" "data/sg/signatures/v0.sig: signed in namespace 'other', not 'prereg'" "$out"
rm -rf data && cp -a data.keep data

# The bundle: its MANIFEST signed; a row changed, the digests made anew.
expect 0 "publish --sign" "$PREREG" publish sg.lua --sign alice --out sg.tar.gz
check_grep "says so" "signed  its MANIFEST, with alice \(manifest.sig\)" "$out"
check_grep "the bundle holds manifest.sig" "^sg/manifest.sig$" "$(tar -tzf sg.tar.gz)"
expect 1 "the bundle: v1's key is not allowed" "$PREREG" verify sg.tar.gz --allowed-signers allowed
check_grep "the MANIFEST's signature holds" "^MANIFEST: signed by $FPRE \(alice@example.org\)$" "$out"
check_grep "named by the bundle" "sg.tar.gz: sg/signatures/v1.sig: signed by SHA256:[^ ]+, a key allowed does not allow" "$out"
python3 "$TAMPER" edit sg.tar.gz edited.tar.gz sg/batches/b0001.csv ',wall_s,2,' ',wall_s,1.5,' ||
  bad "tamper"
expect 1 "a row edited with the digests made anew" "$PREREG" verify edited.tar.gz --allowed-signers allowed
check_grep "the MANIFEST's signature names it" "edited.tar.gz: sg/manifest.sig: the signature does not verify .*what it signs was changed" "$out"
expect 0 "publish without --sign" "$PREREG" publish sg.lua --out unsigned.tar.gz
expect 1 "a bundle not signed, against allowed signers" "$PREREG" verify unsigned.tar.gz --allowed-signers allowed
check_grep "says it is not signed" "^MANIFEST: not signed$" "$out"
check_grep "and fails" "unsigned.tar.gz: sg/manifest.sig: missing: the bundle's MANIFEST is not signed by a key allowed allows" "$out"
# Republished by another key, rows edited: the key is not the author's.
chmod u+w data/sg/batches data/sg/batches/b0001.csv
sed -i 's/,wall_s,2,/,wall_s,1.5,/' data/sg/batches/b0001.csv
resign batches/b0001.csv
expect 0 "the edited folder republished with mallory's key" "$PREREG" publish sg.lua --sign mallory --out mallory.tar.gz
expect 1 "fails against the author's allowed signers" "$PREREG" verify mallory.tar.gz --allowed-signers allowed
check_grep "the MANIFEST's key is not allowed" "mallory.tar.gz: sg/manifest.sig: signed by SHA256:[^ ]+, a key allowed does not allow" "$out"
echo "mallory@example.org $(cut -d' ' -f1,2 mallory.pub)" >>allowed
expect 0 "once allowed, it verifies" "$PREREG" verify mallory.tar.gz --allowed-signers allowed
check_grep "named" "^MANIFEST: signed by SHA256:[^ ]+ \(mallory@example.org\)$" "$out"
rm -rf data && cp -a data.keep data
expect 2 "allowed signers that are not there" "$PREREG" verify sg.lua --allowed-signers nofile
done_testing 44
