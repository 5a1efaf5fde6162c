#!/usr/bin/env bash
# diskfull.sh: the data folder runs out of room in the middle of `run`.
# A small tmpfs is mounted as the data folder (root needed); where mounting
# is not permitted the script says so and uses RLIMIT_FSIZE instead (a
# write past the limit fails with EFBIG, as a full disk fails with
# ENOSPC). Checks: a clear error naming the file, frozen files intact
# (verify), `run --resume` completes the plan once there is room.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"

D=$T/data
mkdir -p "$D"
MODE=tmpfs
if mount -t tmpfs -o size=2m,mode=0755 prereg-faults "$D" 2>mount.txt; then
  MOUNTS+=("$D")
else
  MODE=fsize
  echo "diskfull.sh: cannot mount a tmpfs ($(cat mount.txt)); falling back to RLIMIT_FSIZE"
fi
echo "diskfull.sh: mode $MODE"

# "quiet" fills little; "loud" writes 600 KiB of stdout per run, which the
# run keeps (bounded at 1 MiB per stream) in the batch folder.
sheet s.lua df \
  "{ name = \"quiet\", runs = 3, cmd = \"true\" }" \
  "{ name = \"loud\", runs = 6, cmd = \"head -c 614400 /dev/zero\" }"
PLAN=(quiet:3:wall_s loud:6:wall_s)
"$PREREG" register s.lua --data "$D" >/dev/null || bad "register"
"$PREREG" run s.lua --data "$D" --only quiet >/dev/null 2>&1 || bad "first batch"
(cd "$D/df" && sha256sum versions/* batches/b0001.csv batches/b0001.json MANIFEST) > frozen.sha

# Every file frozen before, byte for byte; the MANIFEST may only have
# grown, so its old text must be its beginning.
frozen_intact() {
  (cd "$D/df" && grep -v ' MANIFEST$' "$T/frozen.sha" | sha256sum -c --quiet) || return 1
  local old; old=$(grep -c . "$T/MANIFEST.before")
  cmp -s "$T/MANIFEST.before" <(head -n "$old" "$D/df/MANIFEST")
}
cp "$D/df/MANIFEST" "$T/MANIFEST.before"
scenario "disk full during run ($MODE)"
if [ "$MODE" = tmpfs ]; then
  # Leave about 1 MiB: one or two loud runs fit, the rest do not.
  avail=$(df -k --output=avail "$D" | tail -1)
  dd if=/dev/zero of="$D/filler" bs=1k count=$((avail - 1024)) 2>/dev/null
  "$PREREG" run s.lua --data "$D" --resume >out.txt 2>err.txt; rc=$?
else
  # 1 MiB per file: the loud runs' output files pass it.
  (trap '' XFSZ; ulimit -f 1024; exec "$PREREG" run s.lua --data "$D" --resume) >out.txt 2>err.txt; rc=$?
fi
check "disk full: exit 1, not a crash (rc=$rc)" [ $rc -eq 1 ]
check "disk full: message says why" grep -Eq "No space left on device|File too large" err.txt
check "disk full: message names a file of the data folder" grep -q "$D/df" err.txt
grep -E "No space|too large" err.txt | head -2 | sed 's/^/  message: /'
# The MANIFEST only grows: its first lines are the old one.
check "disk full: frozen files intact" frozen_intact
check "disk full: nothing doubled" env ALLOW_MISSING=1 bash -c "$(declare -f plan_check); plan_check '$D/df' ${PLAN[*]}"
check "no command left" gone_within "head -c 614400"
# A run's kept output that could not be written in full must say so (a
# reason on the row, or a line in its kept stderr), not pass silently.
check "disk full: no run's output silently cut short" python3 - "$D/df" <<'PY'
import csv, glob, os, sys
exp = sys.argv[1]
bad = []
for f in sorted(glob.glob(exp + "/batches/b*.csv")):
    for r in csv.DictReader(open(f, newline="")):
        if r["workload"] != "loud":
            continue
        out = os.path.join(exp, "batches", r["batch"], r["run_id"] + ".stdout")
        size = os.path.getsize(out) if os.path.exists(out) else -1
        err = os.path.join(exp, "batches", r["batch"], r["run_id"] + ".stderr")
        noted = r["reason"] or (os.path.exists(err) and
                                "No space" in open(err, errors="replace").read())
        if size != 614400 and not noted:
            bad.append("%s: %d of 614400 bytes kept, valid=%s, no note" %
                       (out[len(exp) + 1:], size, r["valid"]))
for b in bad[:5]:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

scenario "verify while the disk is still full"
"$PREREG" verify s.lua --data "$D" >verify.txt 2>&1; rc=$?
check "verify while full: no crash (rc=$rc)" [ $rc -le 1 ]

scenario "resume while the disk is still full"
if [ "$MODE" = tmpfs ]; then
  "$PREREG" run s.lua --data "$D" --resume >/dev/null 2>err2.txt; rc=$?
else
  (trap '' XFSZ; ulimit -f 1024; exec "$PREREG" run s.lua --data "$D" --resume) >/dev/null 2>err2.txt; rc=$?
fi
check "resume while full: exit 1 with a reason (rc=$rc)" [ $rc -eq 1 ]
check "resume while full: nothing doubled" env ALLOW_MISSING=1 bash -c "$(declare -f plan_check); plan_check '$D/df' ${PLAN[*]}"

scenario "resume once there is room"
rm -f "$D/filler"
if [ "$MODE" = tmpfs ]; then mount -o remount,size=64m "$D"; fi
"$PREREG" run s.lua --data "$D" --resume >out3.txt 2>err3.txt; rc=$?
check "resume with room: exit 0 (rc=$rc)" [ $rc -eq 0 ] || tail -3 err3.txt >&2
check "resume with room: plan complete, nothing lost or doubled" plan_check "$D/df" "${PLAN[@]}"
if "$PREREG" verify s.lua --data "$D" >verify.txt 2>&1; then ok; else
  bad "verify after resume:"; grep -v '^ok\|^note' verify.txt | head -5 >&2; fi
check "frozen files of before still intact" frozen_intact
report_scenarios
done_testing 14
