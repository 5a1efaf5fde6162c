#!/usr/bin/env bash
# lines.sh: node lines are untrusted input, on a private loopback Slurm
# cluster. n1's node runner is made hostile (PREREG_NODE_PROGRAM: the
# real runner with its row lines rewritten on their way): values prereg
# never writes (nan, -5), another host's run ids, and a 400 MiB line
# without a newline. Each round it spoils is lost with the reason, none
# of its rows is frozen as valid, the collection is not COMPLETE, and
# the coordinator's memory stays far below the line. Fails, never
# skips, when the cluster cannot start.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
H=$(cd "$(dirname "$0")" && pwd)
cluster_up
export PREREG_SLURM_WAIT_S=30
cd "$T"
cp "$H/sheets/count.lua" .
E=count-hosts

# The hostile runner: on HOSTILE_HOST, past the preflight, its rows are
# rewritten (HOSTILE_MODE nan, negative, runid) or a 400 MiB line with
# no newline comes first (long). srun passes the environment on.
cat >rewrite.py <<'PY'
import csv, io, json, os, sys
mode, host = os.environ["HOSTILE_MODE"], os.environ["HOSTILE_HOST"]
VALUE = 18  # the value column of a row (data.h, DATA_ROW_HEADER)
def with_value(rec, v):
    f = next(csv.reader([rec]))
    f[VALUE] = v
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(f)
    return out.getvalue() + rec[len(rec.rstrip("\r\n")):]
for line in sys.stdin:
    if line.startswith("row "):
        rec = json.loads(line[4:])
        if mode == "nan":
            rec = with_value(rec, "nan")
        elif mode == "negative":
            rec = with_value(rec, "-5")
        elif mode == "runid":
            rec = rec.replace("-%s-" % host, "-n2-", 1)
        line = "row " + json.dumps(rec) + "\n"
    sys.stdout.write(line)
    sys.stdout.flush()
PY
cat >hostile.sh <<EOF2
#!/bin/sh
case " \$* " in *" --preflight "*) exec "$PREREG" "\$@" ;; esac
case " \$* " in *" --host \$HOSTILE_HOST "*) ;; *) exec "$PREREG" "\$@" ;; esac
if [ "\$HOSTILE_MODE" = long ]; then
  printf 'row "'
  head -c 419430400 /dev/zero | tr '\\0' x
  exec "$PREREG" "\$@"
fi
"$PREREG" "\$@" | python3 -u "$T/rewrite.py"
EOF2
chmod +x hostile.sh

# hostile MODE: a fresh experiment run with n1's runner in MODE; the
# coordinator's peak memory (KiB) in $T/MODE.rss.
hostile() {
  expect 0 "$1: register" "$PREREG" register count.lua --data "$T/$1"
  expect 1 "$1: run ends naming the lost round" env HOSTILE_MODE="$1" \
    HOSTILE_HOST=n1 PREREG_NODE_PROGRAM="$T/hostile.sh" \
    /usr/bin/time -o "$T/$1.rss" -f %M "$PREREG" run count.lua --data "$T/$1"
  B=$T/$1/$E/batches/b0001.csv
}
# none_valid_from PATTERN: no valid row of the batch matches PATTERN.
none_valid_from() { ! grep -E "$1" "$B" | grep -q ',1,,wall_s,'; }

hostile nan
check_grep "nan: the reason names the value" "n1 was lost .*value 'nan' \\(wall_s\\): not a number" "$out"
check "nan: no nan frozen" bash -c "! grep -q ',nan,' '$B'"
expect 0 "nan: the batch verifies" "$PREREG" verify count.lua --data "$T/nan"
check_grep "nan: not COMPLETE (n1 short)" "status: INCOMPLETE \\([0-9]+/24; n1 [0-9]/8\\)" "$out"

hostile negative
check_grep "negative: the reason names the value" "n1 was lost .*value '-5' \\(wall_s\\): a time or an amount of memory cannot be negative" "$out"
check "negative: no -5 frozen" bash -c "! grep -q ',-5,' '$B'"
expect 0 "negative: status" "$PREREG" status count.lua --data "$T/negative"
check_grep "negative: not COMPLETE" "^status: INCOMPLETE" "$out"

hostile runid
check_grep "runid: the reason names the run id" "n1 was lost .*a run id that is not its own \\(b0001-n2-" "$out"
check "runid: no valid row of n1 under n2's run ids" none_valid_from ',b0001-n2-[0-9]+,[^,]*,n1,'
expect 0 "runid: status" "$PREREG" status count.lua --data "$T/runid"
check_grep "runid: not COMPLETE" "^status: INCOMPLETE" "$out"

hostile long
check_grep "long: the reason names the line" "n1 was lost .*a line longer than 1048576 bytes" "$out"
rss=$(tail -n 1 "$T/long.rss")
check "long: the coordinator stayed under 200 MiB ($rss KiB) for a 400 MiB line" \
  [ "$rss" -lt 204800 ]
check "long: the journal holds no such line" \
  [ "$(wc -c <"$T/long/$E/batches/b0001/n1.lines")" -lt 2097152 ]

done_testing 22
