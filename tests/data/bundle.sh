#!/usr/bin/env bash
# bundle.sh: bundles of a data folder laid out by hand (data/data.h):
# determinism, verification, every kind of tampering, safe extraction.
# Uses $BUNDLE_TOOL (tests/data/bundle_tool.c) and Python's tarfile.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${BUNDLE_TOOL:?}"
here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
tamper() { python3 "$here/tamper.py" "$@"; }

# expect_fail NAME CODE BUNDLE PATTERN: verify exits CODE and its message
# (stderr) or report (stdout) names PATTERN.
expect_fail() {
  local name=$1 code=$2 b=$3 pat=$4 out rc
  out=$("$BUNDLE_TOOL" verify "$b" 2>&1); rc=$?
  if [ "$rc" != "$code" ]; then bad "$name: exit $rc, wanted $code: $out"; return; fi
  if ! grep -qF -- "$pat" <<<"$out"; then bad "$name: no '$pat' in: $out"; return; fi
  ok
}

# A data folder by hand
make_folder() {
  local D=$1/demo
  mkdir -p "$D/versions" "$D/batches/b0001" "$D/batches/b0002" "$D/report/plots"
  printf 'protocol { id = "demo", title = "Demo" }\n' >"$D/versions/v0.lua"
  printf 'protocol { id = "demo", title = "Demo", amendments = { { why = "x" } } }\n' >"$D/versions/v1.lua"
  # The chain's diff is what diff -u says (the verifiers recompute it).
  diff -u --label versions/v0.lua --label versions/v1.lua \
    "$D/versions/v0.lua" "$D/versions/v1.lua" >"$D/versions/v1.diff"
  s0=$(sha256sum "$D/versions/v0.lua" | cut -c1-64)
  s1=$(sha256sum "$D/versions/v1.lua" | cut -c1-64)
  printf '{"version": 0, "sha256": "%s", "filed_at": "2026-10-01T10:00:00Z", "prereg_version": "0.1.0"}\n' "$s0" >"$D/versions/v0.json"
  printf '{"version": 1, "sha256": "%s", "filed_at": "2026-10-05T09:00:00Z", "why": "add an arm", "date": "2026-10-05"}\n' "$s1" >"$D/versions/v1.json"
  hdr="sheet_version,sheet_sha256,batch,source,workload,arm,round,seq,run_id,started_at,host,image_digest,cache_policy,cache_state,exit_code,valid,reason,metric,value,quick"
  {
    echo "$hdr"
    echo "0,$s0,b0001,run,startup,bare,1,1,r1,2026-10-02T08:00:00Z,h,,warm,,0,1,,wall_s,0.0012,0"
    echo "0,$s0,b0001,run,startup,bwrap,1,2,r2,2026-10-02T08:00:01Z,h,,warm,,0,1,,wall_s,0.0041,0"
    echo "0,$s0,b0001,run,startup,bwrap,2,3,r3,2026-10-02T08:00:02Z,h,,warm,,\"0;1\",0,\"exit, unexpected\",wall_s,0.0050,0"
  } >"$D/batches/b0001.csv"
  {
    echo "$hdr"
    echo "1,$s1,b0002,run,startup,bare,1,1,r4,2026-10-06T08:00:00Z,h,,warm,,0,1,,wall_s,0.0013,0"
    echo "1,$s1,b0002,import,startup,bare,0,2,,2025-01-01T00:00:00Z,h,,,,0,1,,wall_s,0.0013,0"
  } >"$D/batches/b0002.csv"
  echo '{"kind": "run", "started_at": "2026-10-02T07:59:00Z", "frozen_at": "2026-10-02T08:10:00Z", "sheet_versions_at_start": 1, "host": {"cpu": "x"}}' >"$D/batches/b0001.json"
  echo '{"kind": "run", "started_at": "2026-10-06T07:59:00Z", "frozen_at": "2026-10-06T08:10:00Z", "sheet_versions_at_start": 2}' >"$D/batches/b0002.json"
  printf 'pid 1 bwrap counted: descendant\n' >"$D/batches/b0001/r2.procs"
  : >"$D/batches/b0001/r1.stderr"
  printf 'out\n' >"$D/batches/b0002/r4.stdout"
  (cd "$D" && sha256sum versions/v0.lua versions/v0.json versions/v1.lua \
     versions/v1.diff versions/v1.json batches/b0001.csv batches/b0001.json \
     batches/b0001/r2.procs batches/b0001/r1.stderr batches/b0002.csv \
     batches/b0002.json batches/b0002/r4.stdout >MANIFEST)
  printf '# Report\n' >"$D/report/report.md"
  printf '<h1>Report</h1>\n' >"$D/report/report.html"
  printf 'PNG' >"$D/report/plots/startup.png"
  find "$D/versions" "$D/batches" -type f -exec chmod 0444 {} +
}

make_folder "$T/a"
B=$T/demo.tar.gz

# Writing: deterministic, verifiable
sha1=$("$BUNDLE_TOOL" write "$T/a/demo" "$B") && ok || bad "write failed"
[ "$sha1" = "$(sha256sum "$B" | cut -c1-64)" ] && ok || bad "printed sha256 is not the file's"
# The same data in another folder, files with other times: same bytes.
sleep 1
make_folder "$T/b"
touch -d '2001-01-01' "$T/b/demo/report/report.md"
"$BUNDLE_TOOL" write "$T/b/demo" "$T/again.tar.gz" >/dev/null
check "two publications of the same data differ" cmp -s "$B" "$T/again.tar.gz"
"$BUNDLE_TOOL" write "$T/a/demo" "$T/again2.tar.gz" >/dev/null
check "publishing twice differs" cmp -s "$B" "$T/again2.tar.gz"
# A different report is a different bundle.
printf '# Report 2\n' >"$T/b/demo/report/report.md"
"$BUNDLE_TOOL" write "$T/b/demo" "$T/other.tar.gz" >/dev/null
cmp -s "$B" "$T/other.tar.gz" && bad "a changed report gave the same bundle" || ok

# The archive as another implementation (Python) sees it.
check "archive layout (see above)" python3 - "$B" <<'PY'
import gzip, sys, tarfile
raw = open(sys.argv[1], "rb").read()
assert raw[:2] == b"\x1f\x8b", "not gzip"
assert raw[4:8] == b"\0\0\0\0", "gzip header has a timestamp"
assert raw[3] & 0x08 == 0, "gzip header has a file name"
t = tarfile.open(sys.argv[1], "r:gz")
ms = t.getmembers()
names = [m.name for m in ms]
assert names[0] == "demo", names[:2]
assert names[1] == "demo/BUNDLE-MANIFEST", names[:2]
keys = [m.name + "/" if m.isdir() else m.name for m in ms[2:]]
assert keys == sorted(keys), keys
want = {"demo/MANIFEST", "demo/README.md", "demo/versions/v0.lua",
        "demo/versions/v1.diff", "demo/batches/b0001/r2.procs",
        "demo/batches/b0001/r1.stderr", "demo/report/report.html",
        "demo/report/plots/startup.png"}
assert want <= set(names), want - set(names)
for m in ms:
    assert m.uid == 0 and m.gid == 0 and m.uname == "" and m.gname == "", m.name
    assert m.mode == (0o555 if m.isdir() else 0o444), (m.name, oct(m.mode))
    assert m.isdir() or m.isfile(), m.name
    # mtime: the newest recorded time, 2026-10-06T08:10:00Z (b0002.json)
    assert m.mtime == 1791274200, (m.name, m.mtime)
readme = t.extractfile("demo/README.md").read().decode()
for w in ("prereg verify demo.tar.gz", "prereg analyze demo.tar.gz",
          "prereg report demo.tar.gz --out DIR", "versions/v1.diff",
          "add an arm", "report/report.html", "batches/b0001/"):
    assert w in readme, w
PY

# Verifying
out=$("$BUNDLE_TOOL" verify "$B" 2>&1); rc=$?
[ $rc = 0 ] && grep -q "ok: experiment demo, .* versions v0..v1, 2 batches (5 rows), report included" <<<"$out" && ok || bad "verify of a good bundle: $rc $out"
check "verify does not print the bundle's sha256: $out" grep -qF "sha256 $sha1" <<<"$out"

# One byte changed in each member in turn, and each member removed in
# turn: the bundles written by one tamper.py, then verified one by one.
members=$(tamper list "$B")
check "the bundle has members to tamper with" test -n "$members"
i=0
for m in $members; do
  i=$((i + 1))
  printf 'byte\t%s\t%s\t%s\n' "$B" "$T/byte-$i.tar.gz" "$m"
  printf 'remove\t%s\t%s\t%s\n' "$B" "$T/remove-$i.tar.gz" "$m"
done | tamper many || bad "tamper many"
i=0
for m in $members; do
  i=$((i + 1))
  expect_fail "byte in $m" 1 "$T/byte-$i.tar.gz" "$m"
done
# (BUNDLE-MANIFEST removed: then it is no bundle.)
i=0
for m in $members; do
  i=$((i + 1))
  case $m in
    */BUNDLE-MANIFEST) expect_fail "remove $m" 2 "$T/remove-$i.tar.gz" "BUNDLE-MANIFEST" ;;
    *) expect_fail "remove $m" 1 "$T/remove-$i.tar.gz" "$m: listed in demo/BUNDLE-MANIFEST but missing" ;;
  esac
done
rm -f "$T"/byte-*.tar.gz "$T"/remove-*.tar.gz
tamper add "$B" "$T/t.tar.gz" demo/batches/b0003.csv
expect_fail "member added" 1 "$T/t.tar.gz" "demo/batches/b0003.csv: not listed in demo/BUNDLE-MANIFEST"
tamper add "$B" "$T/t.tar.gz" demo/report/extra.html
expect_fail "report member added" 1 "$T/t.tar.gz" "demo/report/extra.html: not listed"
tamper grow "$B" "$T/t.tar.gz" demo/batches/b0001.csv
expect_fail "member larger" 1 "$T/t.tar.gz" "demo/batches/b0001.csv: larger than demo/BUNDLE-MANIFEST says"
tamper dup "$B" "$T/t.tar.gz" demo/versions/v0.lua
expect_fail "duplicate" 1 "$T/t.tar.gz" "demo/versions/v0.lua: appears"
tamper add "$B" "$T/t.tar.gz" ../x
expect_fail "../x" 1 "$T/t.tar.gz" "../x: path escapes"
tamper add "$B" "$T/t.tar.gz" demo/../../x
expect_fail "demo/../../x" 1 "$T/t.tar.gz" "demo/../../x: path escapes"
tamper rename "$B" "$T/t.tar.gz" demo/README.md /tmp/README.md
expect_fail "absolute" 1 "$T/t.tar.gz" "/tmp/README.md: absolute path"
tamper symlink "$B" "$T/t.tar.gz" demo/report/link /etc/passwd
expect_fail "symlink out" 1 "$T/t.tar.gz" "demo/report/link: a symbolic link to /etc/passwd"
tamper hardlink "$B" "$T/t.tar.gz" demo/report/hl /etc/passwd
expect_fail "hardlink out" 1 "$T/t.tar.gz" "demo/report/hl: a hard link"
tamper add "$B" "$T/t.tar.gz" other/x
expect_fail "outside the folder" 1 "$T/t.tar.gz" "other/x: outside the bundle's folder demo/"

# Truncated at many places, compressed stream and tar stream alike.
size=$(stat -c %s "$B")
for cut in 10 100 $((size / 3)) $((size / 2)) $((size - 30)) $((size - 1)); do
  head -c "$cut" "$B" >"$T/cut.tar.gz"
  expect_fail "truncated at $cut" 1 "$T/cut.tar.gz" "$T/cut.tar.gz: "
  out=$("$BUNDLE_TOOL" verify "$T/cut.tar.gz" 2>&1)
  grep -qiE "truncated|damaged|missing" <<<"$out" && ok || bad "truncated at $cut: $out"
done
python3 -c "import sys; d=bytearray(open(sys.argv[1],'rb').read()); d[-6]^=1; open(sys.argv[2],'wb').write(d)" "$B" "$T/crc.tar.gz"
expect_fail "gzip CRC changed" 1 "$T/crc.tar.gz" "gzip trailer"
cat "$B" "$B" >"$T/twice.tar.gz"
expect_fail "bytes appended" 1 "$T/twice.tar.gz" "gzip trailer"
gzip -dc "$B" >"$T/plain.tar"
head -c 3000 "$T/plain.tar" | gzip -n >"$T/cut2.tar.gz"
expect_fail "tar cut inside a member" 1 "$T/cut2.tar.gz" "truncated"

# Not a bundle at all: exit 2.
echo "hello" >"$T/text.tar.gz"
expect_fail "text" 2 "$T/text.tar.gz" "not a prereg bundle"
: >"$T/empty.tar.gz"
expect_fail "empty" 2 "$T/empty.tar.gz" "not a prereg bundle"
tar -C "$T/a" -czf "$T/plain-tar.tar.gz" demo
expect_fail "a tar.gz without BUNDLE-MANIFEST" 2 "$T/plain-tar.tar.gz" "not a prereg bundle"
"$BUNDLE_TOOL" verify "$T/nonexistent.tar.gz" >/dev/null 2>&1; [ $? = 1 ] && ok || bad "missing file"

# The chain, with MANIFEST and BUNDLE-MANIFEST re-signed so that only the
# chain checks can notice.
tamper edit "$B" "$T/t.tar.gz" demo/batches/b0001.csv 2026-10-02T08:00:01Z 2026-09-30T08:00:01Z
expect_fail "run older than registration" 1 "$T/t.tar.gz" "demo/batches/b0001.csv:3: started at 2026-09-30T08:00:01Z, before version 0 was filed (2026-10-01T10:00:00Z): older than the registration"
tamper edit "$B" "$T/t.tar.gz" demo/batches/b0002.csv 2026-10-06T08:00:00Z 2026-10-04T08:00:00Z
expect_fail "run before its version" 1 "$T/t.tar.gz" "demo/batches/b0002.csv:2: started at 2026-10-04T08:00:00Z, before version 1 was filed"
tamper edit "$B" "$T/t.tar.gz" demo/batches/b0002.csv "1,$s1,b0002,run" "2,$s1,b0002,run"
expect_fail "unknown version" 1 "$T/t.tar.gz" "demo/batches/b0002.csv:2: sheet_version 2 is not a version in the chain"
tamper edit "$B" "$T/t.tar.gz" demo/batches/b0002.csv "1,$s1,b0002,run" "1,$s0,b0002,run"
expect_fail "wrong sheet digest" 1 "$T/t.tar.gz" "demo/batches/b0002.csv:2: sheet_sha256 is not the SHA-256 of versions/v1.lua"
tamper edit "$B" "$T/t.tar.gz" demo/batches/b0001.csv "0,$s0,b0001,run,startup,bare" "1,$s1,b0001,run,startup,bare"
expect_fail "row under a version newer than its batch" 1 "$T/t.tar.gz" "demo/batches/b0001.csv:2: sheet_version 1 did not exist when the batch started (1 version then)"
tamper edit "$B" "$T/t.tar.gz" demo/batches/b0001.json 2026-10-02T07:59:00Z 2026-09-02T07:59:00Z
expect_fail "batch older than registration" 1 "$T/t.tar.gz" "demo/batches/b0001.json: batch started at 2026-09-02T07:59:00Z, before the registration"
tamper edit "$B" "$T/t.tar.gz" demo/versions/v1.lua 'why = "x"' 'why = "y"'
expect_fail "sheet edited in place" 1 "$T/t.tar.gz" "demo/versions/v1.lua: sha256"
expect_fail "sheet edited in place: the digest named" 1 "$T/t.tar.gz" "differs from versions/v1.json"
expect_fail "sheet edited in place: the diff recomputed" 1 "$T/t.tar.gz" "demo/versions/v1.diff: does not match the difference between versions/v0.lua and versions/v1.lua"
tamper edit "$B" "$T/t.tar.gz" demo/versions/v1.json 2026-10-05T09:00:00Z 2026-09-05T09:00:00Z
# A version filed before the one it amends: a clock stepped back can do
# that, so it is a note (the rows are still checked against each version's
# filing time), as for a data folder.
expect_fail "amendment filed before the registration: a note" 0 "$T/t.tar.gz" "note: $T/t.tar.gz: demo/versions/v1.json: filed at 2026-09-05T09:00:00Z, before v0 (2026-10-01T10:00:00Z)"
tamper edit "$B" "$T/t.tar.gz" demo/README.md "this file" "that file"
# Re-signing both manifests is possible (a bundle cannot vouch for itself;
# its own sha256, printed by verify, is what a reader compares).
expect_fail "re-signed README passes, with another bundle sha256" 0 "$T/t.tar.gz" "ok:"
"$BUNDLE_TOOL" verify "$T/t.tar.gz" | grep -qF "$sha1" && bad "re-signed bundle shows the original sha256" || ok
tamper edit "$B" "$T/t.tar.gz" demo/MANIFEST "versions/v1.diff" "versions/v9.diff"
expect_fail "MANIFEST lists a missing file" 1 "$T/t.tar.gz" "demo/versions/v9.diff: missing (listed in MANIFEST line 4)"

# Writing refuses bad folders
make_folder "$T/c"
chmod u+w "$T/c/demo/batches/b0001.csv"; echo "x" >>"$T/c/demo/batches/b0001.csv"
out=$("$BUNDLE_TOOL" write "$T/c/demo" "$T/c.tar.gz" 2>&1); rc=$?
[ $rc = 1 ] && grep -qF "demo/batches/b0001.csv: its SHA-256 differs from the MANIFEST's" <<<"$out" && [ ! -e "$T/c.tar.gz" ] && ok || bad "write of a changed file: $rc $out"
make_folder "$T/d"
ln -s /etc/passwd "$T/d/demo/report/passwd"
out=$("$BUNDLE_TOOL" write "$T/d/demo" "$T/d.tar.gz" 2>&1); rc=$?
[ $rc = 2 ] && grep -qF "report/passwd: not a regular file" <<<"$out" && ok || bad "write with a link in report: $rc $out"
make_folder "$T/e"
rm -rf "$T/e/demo/report"
check "write without report" "$BUNDLE_TOOL" write "$T/e/demo" "$T/e.tar.gz" >/dev/null
tar -xzOf "$T/e.tar.gz" demo/README.md | grep -q "No report was rendered" && ok || bad "README does not say the report is absent"
"$BUNDLE_TOOL" verify "$T/e.tar.gz" | grep -q "no report" && ok || bad "verify without report"

# Extracting
out=$(cd "$T" && "$BUNDLE_TOOL" extract "$B"); rc=$?
check "extract: $rc $out" [ $rc = 0 ]
check "newest sheet: $(head -1 <<<"$out")" [ "$(head -1 <<<"$out")" = "sheet demo/versions/v1.lua" ]
# Every file extracted with the publisher's bytes, read-only: the data,
# and of the report only what commands read from a bundle (its analysis
# and Markdown); the rest of report/ is never written to disk.
(cd "$T/a" && find demo -type f | sort | grep -v -e '^demo/report/' -e '^$' |
   while read -r f; do echo "$(sha256sum "$f" | cut -c1-64)  $f 444"; done
 echo "$(sha256sum demo/report/report.md | cut -c1-64)  demo/report/report.md 444") |
  sort -k2 >"$T/want"
tail -n +2 <<<"$out" | grep -v -e BUNDLE-MANIFEST -e README.md | sort -k2 >"$T/got"
check "extracted files differ: $(diff "$T/want" "$T/got")" diff "$T/want" "$T/got" >/dev/null
# The temporary copy is gone after the process exits.
left=$(TMPDIR=$T/tmp; mkdir -p "$TMPDIR"; export TMPDIR; "$BUNDLE_TOOL" extract "$B" >/dev/null; ls "$TMPDIR")
check "temporary copy left behind: $left" [ -z "$left" ]
# Nothing is extracted from a bad bundle, and nothing escapes.
tamper add "$B" "$T/t.tar.gz" ../escaped
mkdir -p "$T/tmp2"
(cd "$T/tmp2" && TMPDIR=$T/tmp2 "$BUNDLE_TOOL" extract "$T/t.tar.gz" >/dev/null 2>&1); rc=$?
[ $rc = 1 ] && [ ! -e "$T/escaped" ] && [ -z "$(ls "$T/tmp2")" ] && ok || bad "extract of a bad bundle: $rc"

done_testing 91
