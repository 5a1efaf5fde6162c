#!/usr/bin/env bash
# inputs_large.sh: an input of any size is locked, through the real
# binary. A 20 MB input is past the copy limit: its version records its
# digest with "copied": false, the data folder and the bundle hold no copy
# of it (the small script beside it is copied), verify passes without it,
# a change to it stops `run` naming the file and the digest to put back,
# and `replicate` tells a replicator to supply it with its digest. Control:
# the same file put back runs again. Past the hashing limit (a sparse
# file) is refused, naming the limit. A file read by absolute path is
# named by check, recorded as unlocked and listed so by the report.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
T=$(mktemp -d /tmp/prereg-inputs-large.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
mkdir -p "$T/study" "$T/rep"
S=$T/study
D=$T/data
field() { # field FILE PYTHON-EXPRESSION-ON-j
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}
python3 -c "
import random; r = random.Random(5)
open('$S/big.bin', 'wb').write(bytes(r.getrandbits(8) for _ in range(1 << 16)) * 320)"
big=$(sha256sum "$S/big.bin" | cut -c1-64)
echo 'sha256sum "$1/big.bin" >/dev/null' >"$S/work.sh"
echo "outside" >"$T/outside.dat"
cat >"$S/s.lua" <<LUA
protocol {
  id = "lg", title = "Large input", question = "Is it locked?", author = "t",
  inputs = { "work.sh", "big.bin" },
  vars = { ext = "$T/outside.dat" },
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", runs = 2, cmd = "sh {sheet_dir}/work.sh {sheet_dir} {ext}",
                  metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200,
           seed = 7, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
cd "$S" || exit 1
expect 0 "check" "$PREREG" check s.lua
check_grep "check names the absolute path read outside the inputs" \
  "warning: \"vars.ext\" reads $T/outside.dat, a file outside the sheet's inputs" "$out"
check "and not the large input, which the inputs lock" \
  bash -c '! grep -q "big.bin" <<<"$1"' _ "$out"
expect 0 "register a sheet with a 20 MB input" "$PREREG" register s.lua --data "$D"
check_grep "v0 records the absolute path as unlocked" "$T/outside.dat" \
  "$(field "$D/lg/versions/v0.json" 'j["unlocked"]')"
check_grep "v0 records the large input's digest" "$big" \
  "$(field "$D/lg/versions/v0.json" '[i["sha256"] for i in j["inputs"] if i["path"] == "big.bin"]')"
check_grep "v0 marks it as not copied" "False" \
  "$(field "$D/lg/versions/v0.json" '[i.get("copied") for i in j["inputs"] if i["path"] == "big.bin"]')"
check "the data folder holds no copy of it" [ ! -e "$D/lg/inputs/v0/big.bin" ]
check "the small script is copied" cmp work.sh "$D/lg/inputs/v0/work.sh"
check "the MANIFEST does not list it" bash -c '! grep -q "big.bin" "$1"' _ "$D/lg/MANIFEST"
expect 0 "run" "$PREREG" run s.lua --data "$D"
check_grep "the batch's facts hold its digest" "$big" \
  "$(field "$D/lg/batches/b0001.json" 'j["inputs"]["big.bin"]')"
expect 0 "verify passes without its copy" "$PREREG" verify s.lua --data "$D"

# --- attack: one byte of the large input changed --------------------------
cp big.bin "$T/big.orig"
printf 'X' | dd of=big.bin bs=1 seek=12345678 conv=notrunc 2>/dev/null
expect 1 "run refuses the changed large input" "$PREREG" run s.lua --data "$D"
check_grep "the refusal names the file" "changed big.bin" "$out"
check_grep "and says what to do" \
  "big.bin is locked by its digest only .*put the file whose sha256 is $big there" "$(echo $out)"
check "no batch was started" [ ! -e "$D/lg/batches/b0002.csv" ]
# control: the file put back runs again
cp "$T/big.orig" big.bin
expect 0 "the file as registered runs again" "$PREREG" run s.lua --data "$D"

# --- the bundle and a replication -----------------------------------------
expect 0 "publish" "$PREREG" publish s.lua --data "$D" --out "$T/b.tar.gz"
check "the bundle holds no copy of it" \
  bash -c '! tar -tzf "$1" | grep -q big.bin' _ "$T/b.tar.gz"
expect 0 "verify BUNDLE" "$PREREG" verify "$T/b.tar.gz"
expect 0 "report" "$PREREG" report s.lua --data "$D" --out "$T/rep1"
check_grep "the report lists it as locked by its digest only" \
  "Inputs locked by their digest only .*big.bin \(sha256 $big, 20971520 bytes\)" \
  "$(cat "$T/rep1/report.md")"
check_grep "the report lists the absolute path as not locked" \
  "Files the commands read by absolute path, not locked .*: $T/outside.dat\." \
  "$(cat "$T/rep1/report.md")"
cd "$T/rep" || exit 1
expect 0 "replicate" "$PREREG" replicate "$T/b.tar.gz" --data "$T/d2"
check_grep "replicate says to supply it, with its digest" \
  "supply protocols/big.bin: sha256 $big, 20971520 bytes; locked by its digest only, not in the bundle \(not there yet\)" "$out"
check "the script is beside the sheet" cmp "$S/work.sh" protocols/work.sh

# --- past what is hashed: refused before anything is read -----------------
cd "$S" || exit 1
truncate -s 17G huge.bin
sed -e 's/"big.bin"/"huge.bin"/' -e 's/id = "lg"/id = "hg"/' s.lua >h.lua
expect 2 "an input past the hashing limit" "$PREREG" register h.lua --data "$D"
check_grep "the limit is named" "inputs: more than 16 GiB together \(at huge.bin" "$out"
check "nothing registered" [ ! -e "$D/hg" ]
rm -f huge.bin

done_testing 30
