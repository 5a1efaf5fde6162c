#!/usr/bin/env bash
# bundle_limits.sh: a small bundle may declare members far larger than
# itself. Through the real binary: verify streams a 256 MiB batch and a
# 1 GiB report member (and refuses it, no part of the report its data
# give) with memory that does not grow with them; analyze of
# such a bundle never writes the report member to disk, refuses data past
# PREREG_BUNDLE_MAX_MIB, and its temporary copy (analyze's, report's) is
# removed also when it is killed by SIGINT, SIGTERM or SIGHUP.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${BUNDLE_TOOL:?}"
T=$(mktemp -d /tmp/prereg-bundle-limits.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
mkdir tmp
export PREREG_NOW=1792540800 # 2026-10-21T00:00:00Z

cat >big.lua <<'LUA'
protocol {
  id = "big", title = "Big members", question = "q", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 10000000,
           seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
"$PREREG" register big.lua >/dev/null || bad "register"
python3 - <<'PY' >rows.csv
print("workload,arm,metric,value")
# Enough values that the bootstrap takes a few seconds: time to kill it.
for i in range(3000):
    print("w,a,wall_s,%.4f" % (1 + i / 10000))
    print("w,b,wall_s,%.4f" % (2 + i / 10000))
PY
"$PREREG" import big.lua rows.csv >/dev/null || bad "import"
"$BUNDLE_TOOL" write data/big small.tar.gz >/dev/null || bad "bundle_tool write"
# The same rows under 1,000 resamples: the bundles grown with big members
# below are verified and analysed in seconds, not minutes; only the kills
# at the end need an analysis that takes long enough to be killed in.
sed -e 's/id = "big"/id = "lean"/' -e 's/resamples = 10000000,/resamples = 1000,/' big.lua >lean.lua
check "lean.lua is big.lua at 1,000 resamples" grep -q 'resamples = 1000,' lean.lua
"$PREREG" register lean.lua >/dev/null || bad "register lean"
"$PREREG" import lean.lua rows.csv >/dev/null || bad "import lean"
"$BUNDLE_TOOL" write data/lean lean.tar.gz >/dev/null || bad "bundle_tool write lean"

# grow.py IN OUT MEMBER SOURCE: the bundle IN with MEMBER's bytes taken
# from SOURCE ("zeros:N" for N zero bytes, or a file), streamed, with
# BUNDLE-MANIFEST (and MANIFEST, for a data member) signed anew.
cat >grow.py <<'PY'
import hashlib, io, sys, tarfile
src, dst, member, source = sys.argv[1:5]
def chunks():
    if source.startswith("zeros:"):
        left, z = int(source[6:]), bytes(1 << 20)
        while left:
            n = min(left, len(z)); left -= n; yield z[:n]
    else:
        with open(source, "rb") as f:
            while True:
                b = f.read(1 << 20)
                if not b: return
                yield b
h, size = hashlib.sha256(), 0
for c in chunks():
    h.update(c); size += len(c)
sha = h.hexdigest()
class Stream(io.RawIOBase):
    def __init__(self): self.it, self.buf = chunks(), b""
    def readable(self): return True
    def readinto(self, b):
        while not self.buf:
            try: self.buf = next(self.it)
            except StopIteration: return 0
        n = min(len(b), len(self.buf)); b[:n] = self.buf[:n]; self.buf = self.buf[n:]
        return n
with tarfile.open(src, "r:gz") as t:
    ms = [(m, t.extractfile(m).read() if m.isfile() else None) for m in t.getmembers()]
top = ms[0][0].name
rel = member[len(top) + 1:]
files = {m.name[len(top) + 1:]: d for m, d in ms if d is not None}
man = files["MANIFEST"].decode().splitlines()
if not rel.startswith("report/"):
    man = [l for l in man if l[66:] != rel] + [sha + "  " + rel]
    files["MANIFEST"] = ("\n".join(man) + "\n").encode()
lines = ["# prereg bundle 1"]
sizes = {k: len(v) for k, v in files.items()}
sizes[rel] = size
for k in sorted(set(sizes) - {"BUNDLE-MANIFEST"}):
    s = sha if k == rel else hashlib.sha256(files[k]).hexdigest()
    lines.append("%s %d %s" % (s, sizes[k], k))
files["BUNDLE-MANIFEST"] = ("\n".join(lines) + "\n").encode()
names = [m.name for m, _ in ms]
if member not in names:
    ms.append((tarfile.TarInfo(member), None)); names.append(member)
order = [top, top + "/BUNDLE-MANIFEST"] + sorted(
    (n for n in names if n not in (top, top + "/BUNDLE-MANIFEST")),
    key=lambda n: n + ("/" if [m for m, _ in ms if m.name == n][0].isdir() else ""))
by = {m.name: m for m, _ in ms}
with tarfile.open(dst, "w:gz", compresslevel=1, format=tarfile.PAX_FORMAT) as t:
    for n in order:
        m = by[n]
        if n == member:
            m.type, m.mode, m.size = tarfile.REGTYPE, 0o444, size
            t.addfile(m, io.BufferedReader(Stream(), 1 << 20))
        elif m.isfile():
            d = files[n[len(top) + 1:]]
            m.size = len(d)
            t.addfile(m, io.BytesIO(d))
        else:
            t.addfile(m)
PY
# maxrss CMD...: runs CMD, prints its exit code and peak RSS in MiB. Under
# AddressSanitizer freed blocks wait in a quarantine (256 MiB by default)
# that would count as resident: it is made small, so that what is measured
# is what the program holds.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4
maxrss() {
  python3 -c '
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL,
                     stderr=open("cmd.err", "w"))
_, status, ru = os.wait4(p.pid, 0)
print(os.waitstatus_to_exitcode(status), ru.ru_maxrss // 1024)' "$@"
}

# a 256 MiB batch: streamed, not held
sha0=$(sha256sum data/lean/versions/v0.lua | cut -c1-64)
python3 - "$sha0" >huge.csv <<'PY'
import sys
sha = sys.argv[1]
w = sys.stdout.write
w("sheet_version,sheet_sha256,batch,source,workload,arm,round,seq,run_id,"
  "started_at,host,image_digest,cache_policy,cache_state,exit_code,valid,"
  "reason,metric,value,quick\n")
# In blocks of 100,000 lines (one write each), the last cut at the first
# line that reaches 256 MiB.
fmt = "0," + sha + ",b0001,import,w,%s,0,%d,line-%d,,,,,,,1,,wall_s,1.%d,0\n"
seq, size = 0, 0
while size < 256 << 20:
    block = [fmt % ("ab"[i % 2], i, i, i % 97) for i in range(seq + 1, seq + 100001)]
    take = 0
    for line in block:
        take += 1; size += len(line)
        if size >= 256 << 20:
            break
    w("".join(block[:take])); seq += take
PY
python3 grow.py lean.tar.gz huge.tar.gz lean/batches/b0001.csv huge.csv || bad "grow.py huge"
read -r rc mib < <(maxrss "$PREREG" verify huge.tar.gz)
check "verify of a 256 MiB batch passes (exit $rc: $(head -c 300 cmd.err))" [ "$rc" = 0 ]
check "verify of a 256 MiB batch: $mib MiB resident, under 64" [ "$mib" -lt 64 ]
rm -f huge.csv

# a 1 GiB report member: hashed, never extracted
python3 grow.py lean.tar.gz report.tar.gz lean/report/huge.bin zeros:1073741824 || bad "grow.py report"
check "the bundle is small ($(stat -c %s report.tar.gz) bytes)" [ "$(stat -c %s report.tar.gz)" -lt 8000000 ]
read -r rc mib < <(maxrss "$PREREG" verify report.tar.gz)
# Hashed whole, then refused: no such file is part of the report its data
# give.
check "verify of a 1 GiB report member refuses it (exit $rc: $(head -c 300 cmd.err))" \
  [ "$rc" = 1 ]
check "and says why" grep -q "the report does not show what its data give" cmd.err
# (Rendering the report afresh to compare it takes what a report takes;
# the bound is a quarter of the member's size, which holding the member
# would exceed.)
check "verify of a 1 GiB report member: $mib MiB resident, under 256" [ "$mib" -lt 256 ]
# analyze, watched: what it writes to TMPDIR at most.
TMPDIR=$T/tmp PREREG_THREADS=1 "$PREREG" analyze report.tar.gz --json >a.json 2>a.err &
pid=$!
most=0
while kill -0 $pid 2>/dev/null; do
  n=$(du -sk tmp 2>/dev/null | cut -f1)
  [ "${n:-0}" -gt "$most" ] && most=$n
  sleep 0.05
done
wait $pid
check "analyze of that bundle works (exit $?: $(head -c 300 a.err))" grep -q '"protocol": "lean"' a.json
check "analyze wrote at most $most KiB to TMPDIR (the report member never)" [ "$most" -lt 10240 ]
check "and left nothing there: $(ls tmp)" [ -z "$(ls tmp)" ]

# data past PREREG_BUNDLE_MAX_MIB: refused, nothing written
head -c 3000000 /dev/urandom | base64 -w 76 >blob.txt
python3 grow.py lean.tar.gz blob.tar.gz lean/batches/b0001/blob.stdout blob.txt || bad "grow.py blob"
TMPDIR=$T/tmp PREREG_BUNDLE_MAX_MIB=2 expect 1 "extraction past the cap" \
  "$PREREG" analyze blob.tar.gz --json
check_grep "the cap is named" "its data would take [0-9]+ MiB once extracted, more than the 2 MiB allowed; set PREREG_BUNDLE_MAX_MIB" "$out"
check "nothing extracted past the cap: $(ls tmp)" [ -z "$(ls tmp)" ]
TMPDIR=$T/tmp PREREG_BUNDLE_MAX_MIB=8 expect 0 "under a larger cap" \
  "$PREREG" analyze blob.tar.gz --json

# killed while it holds the copy: the copy goes too
# analyze, and report (which holds the copy while it analyses and renders;
# its report folder is outside the copy, so it survives it).
for cmd in analyze report; do
for sig in INT TERM HUP; do
  check "$cmd killed by SIG$sig leaves no copy" python3 - "$PREREG" "$cmd" "$sig" "$T/tmp" "$T/rep-$sig" <<'PY'
import glob, os, signal, subprocess, sys, time
prereg, cmd, sig, tmp, rep = sys.argv[1:6]
env = dict(os.environ, TMPDIR=tmp, PREREG_THREADS="1")
args = ["--json"] if cmd == "analyze" else ["--out", rep]
p = subprocess.Popen([prereg, cmd, "small.tar.gz"] + args, env=env,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
t0 = time.time()
while not glob.glob(tmp + "/prereg-bundle-*/big/versions/v0.lua"):
    if p.poll() is not None or time.time() - t0 > 120:
        sys.exit("the copy never appeared while %s ran" % cmd)
    time.sleep(0.01)
time.sleep(0.1)  # the analysis has begun; it takes seconds
p.send_signal(getattr(signal, "SIG" + sig))
rc = p.wait(120)
left = os.listdir(tmp)
assert rc == -getattr(signal, "SIG" + sig), "exit %s" % rc
assert not left, left
PY
done
done
check "a killed report wrote no report ($(ls -d rep-* 2>/dev/null))" \
  bash -c '! ls rep-*/report.md >/dev/null 2>&1'

done_testing 21
