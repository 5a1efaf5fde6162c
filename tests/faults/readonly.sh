#!/usr/bin/env bash
# readonly.sh: a data folder prereg may not write. Two real ways: a
# non-root user (setpriv) on a folder only root may write, and a read-only
# bind mount (root gets EROFS). Each command that writes must fail with a
# clear error naming the folder (exit 1, no crash), write nothing, and
# leave the data as it was; the commands that only read must still work.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"

D=$T/data
sheet s.lua ro "{ name = \"w\", runs = 2, cmd = \"true\" }" "{ name = \"imp\" }"
sheet s2.lua ro2 "{ name = \"w\", runs = 2, cmd = \"true\" }"
printf 'workload,arm,metric,value\nimp,a,wall_s,0.5\nimp,b,wall_s,0.6\n' > imp.csv
"$PREREG" register s.lua --data "$D" >/dev/null || bad "register"
"$PREREG" run s.lua --data "$D" --only w >/dev/null 2>&1 || bad "first run"
snapshot() { (cd "$D" && find . -printf '%p %s %m\n' | sort; find . -type f -exec sha256sum {} + | sort); }
snapshot > before.txt

# Commands that must refuse: name, then arguments.
writers=("register s2.lua" "run s.lua --resume" "import s.lua imp.csv" "report s.lua --out $D/ro/report")

try_as() { # try_as WAY PREFIX...: each writer through PREFIX
  local way=$1 w rc; shift
  for w in "${writers[@]}"; do
    scenario "$way: prereg ${w%% *}"
    "$@" "$PREREG" $w --data "$D" >out.txt 2>err.txt; rc=$?
    check "$way ${w%% *}: exit 1 (rc=$rc)" [ $rc -eq 1 ]
    check "$way ${w%% *}: says why" grep -Eqi "permission denied|read-only file system" err.txt
    check "$way ${w%% *}: names the data folder" grep -q "$D" err.txt
    check "$way ${w%% *}: no crash report" bash -c "! grep -Eq 'Sanitizer|Segmentation|core dumped' err.txt"
    sed -n '1p' err.txt | sed 's/^/  message: /'
    check "$way ${w%% *}: nothing written" cmp -s before.txt <(snapshot)
  done
  scenario "$way: reading commands still work"
  check "$way: verify passes" "$@" "$PREREG" verify s.lua --data "$D" >/dev/null 2>&1
  check "$way: status works" "$@" "$PREREG" status s.lua --data "$D" >/dev/null 2>&1
  check "$way: analyze works" "$@" "$PREREG" analyze s.lua --data "$D" --json >/dev/null 2>&1
}

# 1. Another user: everything readable, nothing writable for it.
chmod -R a+rX "$T"
chmod 0755 "$T" "$D"
if command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
  try_as "non-root user" setpriv --reuid=65534 --regid=65534 --clear-groups
else
  echo "readonly.sh: setpriv to uid 65534 not possible here: skipping the non-root user case"
  bad "setpriv unavailable"
fi

# 2. A read-only bind mount: even root cannot write.
if mount --bind "$D" "$D" 2>/dev/null; then
  MOUNTS+=("$D")
  if mount -o remount,bind,ro "$D" 2>/dev/null; then
    try_as "read-only mount" env
  else
    echo "readonly.sh: read-only remount not permitted here"
  fi
  umount "$D"
else
  echo "readonly.sh: bind mounts not permitted here: skipping the read-only mount case"
fi

scenario "writable again: run resumes"
"$PREREG" run s.lua --data "$D" --resume >/dev/null 2>err.txt
check "resume after read-only: exit 0" [ $? -eq 0 ]
check "verify after" "$PREREG" verify s.lua --data "$D" >/dev/null
report_scenarios
done_testing 25
