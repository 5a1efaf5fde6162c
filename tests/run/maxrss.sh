#!/usr/bin/env bash
# maxrss.sh: maxrss_kib is the command's own peak, without the spawn
# helper's size as a floor: `dash -c true` and /bin/true through prereg
# run, against GNU time's %M for the same commands in the same minute
# (medians; within 10%). A command that is not found is still refused as
# before, and a command killed by a signal still reads so.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
[ -x /usr/bin/time ] || { bad "GNU time (/usr/bin/time) is not installed: scripts/deps.sh test"; done_testing 1; }
T=$(mktemp -d /tmp/prereg-maxrss.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
cat >m.lua <<'LUA'
protocol {
  id = "m", title = "maxrss", question = "Is maxrss the command's own?", author = "t",
  arms = { { name = "dash", reference = true, run = "dash -c true" },
           { name = "true", run = "/bin/true" } },
  workloads = { { name = "start", runs = 9, metrics = { "maxrss_kib" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 7,
           verdicts = { { "tie", ci_within = { 0.9, 1.1 } } } },
}
LUA
# Three passes, each a batch of prereg's and as many runs under GNU time,
# so that neither side gets a quieter stretch; resident sizes vary by a
# page or two from run to run, so medians of 27 runs each are compared.
: >gt.dash
: >gt.true
for pass in 1 2 3; do
  rm -rf "d$pass"
  "$PREREG" register m.lua --data "d$pass" >/dev/null || bad "register"
  expect 0 "run, pass $pass" "$PREREG" run m.lua --data "d$pass"
  for _ in $(seq 9); do
    /usr/bin/time -f %M dash -c true 2>>gt.dash
    /usr/bin/time -f %M /bin/true 2>>gt.true
  done
done
for arm in dash true; do
  check "$arm: maxrss_kib within 10% of GNU time's %M" python3 - d "$arm" <<'PY'
import csv, glob, statistics, sys
d, arm = sys.argv[1], sys.argv[2]
ours = [float(r["value"]) for f in glob.glob(d + "*/m/batches/*.csv")
        for r in csv.DictReader(open(f))
        if r["arm"] == arm and r["metric"] == "maxrss_kib" and r["valid"] == "1"]
theirs = [float(x) for x in open("gt." + arm) if x.strip()]
a, b = statistics.median(ours), statistics.median(theirs)
print("%s: prereg %.0f KiB, GNU time %.0f KiB, ratio %.3f" % (arm, a, b, a / b),
      file=sys.stderr)
assert len(ours) == 27 and 0.9 <= a / b <= 1.1, (ours, theirs)
PY
done

# What did not change through prereg-exec: an exit code, a signal and a
# command not found each read as before (here in the setup failure each
# makes of its arm's warm-up).
echo 'kill -USR2 $$' >"$T/selfkill.sh"
for arm in "code|sh -c 'exit 3'|exit code 3, expected 0" \
           "sig|/bin/sh $T/selfkill.sh|killed by signal 12" \
           "gone|no-such-command-here|cannot execute 'no-such-command-here': No such file or directory"; do
  IFS='|' read -r name cmd want <<<"$arm"
  cat >"$name.lua" <<LUA
protocol {
  id = "$name", title = "failures", question = "q", author = "t",
  arms = { { name = "ok", reference = true, run = "true" },
           { name = "$name", run = "$cmd" } },
  workloads = { { name = "w", runs = 1, warmup = 1, metrics = { "wall_s", "maxrss_kib" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 7,
           verdicts = { { "tie", ci_within = { 0.9, 1.1 } } } },
}
LUA
  "$PREREG" register "$name.lua" --data d >/dev/null || bad "register $name"
  expect 1 "$name: run stops at the failed warm-up" "$PREREG" run "$name.lua" --data d
  check_grep "$name: the reason reads as before" "w $name warm-up 1: $want" "$out"
done

done_testing 11
