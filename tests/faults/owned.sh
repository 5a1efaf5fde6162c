#!/usr/bin/env bash
# owned.sh: prereg, run as root, changes the mode, size or content of no
# file but its own. A stale staging folder swapped for a link to a victim
# while report removes it (renameat2 RENAME_EXCHANGE, in a loop of
# tries); hard links where prereg writes in place (the lock) or recovers
# (an unfinished batch); a FIFO given as a bundle. Each outside file must
# keep its mode and bytes, each refusal name the file.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"

sheet s.lua ow "{ name = \"w\", runs = 2, cmd = \"true\" }" \
  "{ name = \"imp\", metrics = { \"wall_s\" } }"
printf 'workload,arm,metric,value\nimp,a,wall_s,1.0\nimp,a,wall_s,1.1\nimp,a,wall_s,1.2\nimp,b,wall_s,2.0\nimp,b,wall_s,2.1\nimp,b,wall_s,2.2\n' >imp.csv

# The victims: what a chmod or a truncate through a link would reach.
victims() {
  V=$T/victims-$1
  mkdir -p "$V"
  printf 'secret\n' >"$V/plain" && chmod 0600 "$V/plain"
  cp /bin/true "$V/setuid" && chmod 04755 "$V/setuid"
  vstate >"$V.before"
}
vstate() { (cd "$V" && stat -c '%n %a %s %h' plain setuid && sha256sum plain setuid); }
vkept() { vstate | cmp -s - "$V.before"; }

# A pid that is gone: the stale folder's writer.
dead_pid() { sh -c 'exit 0' & wait $!; echo $!; }

# swapper DIR A1 B1 ...: a background loop exchanging each pair of names
# in DIR (renameat2 with RENAME_EXCHANGE) until killed; SWAP holds its
# pid. A small C program: it starts at once and dies by its own pid.
cat >swap.c <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
/* swap DIR A1 B1 A2 B2 ...: exchanges each pair in turn, forever.
 * Relative names from inside DIR: each swap is quick. */
int main(int argc, char **argv) {
  if (argc < 4 || chdir(argv[1]) != 0)
    return 1;
  for (;;)
    for (int i = 2; i + 1 < argc; i += 2)
      renameat2(AT_FDCWD, argv[i], AT_FDCWD, argv[i + 1], RENAME_EXCHANGE);
}
C
cc -O2 -o swap swap.c || bad "swap.c: cannot build"
swapper() {
  ./swap "$@" &
  SWAP=$!
}

scenario "report: the stale staging folder swapped for a link while it is removed"
# The data folder deep down a long path: each path lookup walks 1200
# folders, which widens the gap between a look by name and a change by
# name far past a swap, whatever the machine's load.
deep=$T/$(printf 'a/%.0s' $(seq 1 1200))
mkdir -p "$deep"
D=${deep}data E=${deep}data/ow
"$PREREG" register s.lua --data "$D" >/dev/null || bad "race: register"
"$PREREG" import s.lua imp.csv --data "$D" >/dev/null || bad "race: import"
victims race
tries=0 changed=0
# Each try: eight stale folders (mode 04077, as a chmod would copy onto
# the victim), each exchanged with a link to a victim, the setuid one or
# the other in turn.
for i in $(seq 1 40); do
  rm -rf "$E"/.report.tmp.* "$E"/swap.*
  pairs=()
  for k in 1 2 3 4 5 6 7 8; do
    target=$V/plain
    [ $((k % 2)) = 0 ] && target=$V/setuid
    stale=.report.tmp.$(dead_pid)
    mkdir "$E/$stale" && mkdir "$E/$stale/inner" && chmod 04077 "$E/$stale"
    ln -s "$target" "$E/swap.$k"
    pairs+=("$stale" "swap.$k")
  done
  swapper "$E" "${pairs[@]}"
  "$PREREG" report s.lua --data "$D" >/dev/null 2>&1
  kill "$SWAP" && wait "$SWAP" 2>/dev/null
  tries=$i
  if ! vkept; then changed=1; break; fi
done
rm -rf "$E"/.report.tmp.* "$E"/swap.*
echo "race: $tries tries"
check "race: no victim's mode or bytes changed in $tries tries:
$(vstate)" [ "$changed" = 0 ]
check "race: all 40 tries ran" [ "$tries" = 40 ]
expect 0 "race: report works once the swapping stops" "$PREREG" report s.lua --data "$D"

scenario "report: a stale staging folder prereg's user does not own"
stale=$E/.report.tmp.$(dead_pid)
mkdir -p "$stale/inner" && touch "$stale/inner/f" && chown -R 65534 "$stale" && chmod 04077 "$stale"
expect 1 "not ours: report refuses" "$PREREG" report s.lua --data "$D"
check_grep "not ours: names it and its owner" "\.report\.tmp\.[0-9]+: .*owned by uid 65534, not by prereg's user" "$out"
check "not ours: left as it was (mode 4077, its file kept)" \
  bash -c "[ \"\$(stat -c %a '$stale')\" = 4077 ] && [ -f '$stale/inner/f' ]"
rm -rf "$stale"
expect 0 "not ours: report works once it is gone" "$PREREG" report s.lua --data "$D"

# An outside file a hard link reaches, and its state.
outside() {
  O=$T/outside-$1
  mkdir -p "$O"
  printf '%s' "${2:-not yours\n}" >"$O/file"
  chmod 0600 "$O/file"
  ostate >"$O.before"
}
ostate() { stat -c '%a %s' "$O/file" && sha256sum <"$O/file"; }
okept() { ostate | cmp -s - "$O.before"; }

scenario "the lock file hard-linked to an outside file: register, import, amend, run"
D=$T/data-lock E=$T/data-lock/ow
mkdir -p "$E"
outside lock
ln "$O/file" "$E/.lock"
expect 1 "lock link: register refuses" "$PREREG" register s.lua --data "$D"
check_grep "lock link: names it and why" "ow/\.lock: has 2 hard links" "$out"
check "lock link: the outside file kept its bytes and mode" okept
rm -f "$E/.lock"
"$PREREG" register s.lua --data "$D" >/dev/null || bad "lock: register"
for cmd in "import s.lua imp.csv" "run s.lua --only w" "amend s.lua"; do
  rm -f "$E/.lock" && ln "$O/file" "$E/.lock"
  expect 1 "lock link: $cmd refuses" "$PREREG" $cmd --data "$D"
  check_grep "lock link: $cmd names it" "ow/\.lock: has 2 hard links" "$out"
  check "lock link: $cmd left the outside file as it was" okept
done
check "lock link: nothing was imported or run" test ! -e "$E/batches/b0001.csv"

scenario "--resume: an unfinished batch hard-linked to an outside file"
rm -f "$E/.lock"
"$PREREG" run s.lua --data "$D" --only w >/dev/null 2>&1 || bad "resume: run"
outside batch "$(head -1 "$E/batches/b0001.csv")
"
ln "$O/file" "$E/batches/b0002.csv"
expect 1 "batch link: --resume refuses" "$PREREG" run s.lua --data "$D" --resume
check_grep "batch link: names it" "batches/b0002\.csv: has 2 hard links" "$out"
check "batch link: the outside file is still 0600, its bytes kept" okept
check "batch link: not frozen" bash -c "! grep -q b0002 '$E/MANIFEST'"
rm -f "$E/batches/b0002.csv"
# A torn tail: recovery would cut it, and with it the outside copy.
outside torn "$(head -2 "$E/batches/b0001.csv" | sed 's/b0001/b0002/g')
0,torn"
ln "$O/file" "$E/batches/b0002.csv"
expect 1 "torn link: --resume refuses" "$PREREG" run s.lua --data "$D" --resume
check "torn link: the outside copy is not cut" okept
rm -f "$E/batches/b0002.csv"

scenario "a FIFO nobody writes to, given as a bundle"
mkfifo "$T/fifo.tar.gz"
mkdir -p "$T/fifo-out"
for cmd in "verify" "analyze" "report --out $T/fifo-out"; do
  set -- $cmd
  expect 2 "fifo bundle: $1 refuses at once" timeout 20 "$PREREG" "$1" "$T/fifo.tar.gz" "${@:2}"
  check_grep "fifo bundle: $1 names it" "fifo\.tar\.gz: is a FIFO, not a regular file" "$out"
done
check "fifo bundle: nothing written in the --out folder" bash -c "[ -z \"\$(ls -A '$T/fifo-out')\" ]"

report_scenarios
done_testing 33
