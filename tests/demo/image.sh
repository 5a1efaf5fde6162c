#!/bin/bash
# image.sh: the sandbox-cost image and its four launchers, with real
# processes: the image builds deterministically; each sandbox really
# isolates (pid, network, host name, read-only root, the host's files out
# of sight) while the run's folder is shared read-write; a broken image
# fails loudly; the inner clock reports only successful commands; the
# workloads check their own results; and the committed replay log gives
# the same exit code, step by step, in every arm.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"

# A digest of a tree computed independently of prereg: relative names,
# types, modes, link targets and the contents of every file.
tree_digest() {
  (cd "$1" && find . -printf '%P|%y|%m|%l\n' | LC_ALL=C sort &&
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) |
    sha256sum | cut -d' ' -f1
}

img="$tmp/a/image"
check "rootfs.sh builds the image" build_image "$img"
check "a second build elsewhere" build_image "$tmp/b/other-name"
d1=$(tree_digest "$img")
d2=$(tree_digest "$tmp/b/other-name")
check "two builds have the same tree digest ($d1 / $d2)" test "$d1" = "$d2"
check "busybox is the root's /bin/sh" test "$(readlink "$img/rootfs/bin/sh")" = busybox
check "sc-time is a static binary (no program interpreter)" \
  sh -c "readelf -l '$img/rootfs/bin/sc-time' | grep -q LOAD && ! readelf -l '$img/rootfs/bin/sc-time' | grep -q INTERP"
check "every mtime is the epoch" test -z "$(find "$img" -newermt @1 -print -quit)"
check "rootfs.sh refuses no argument" sh -c "! sh '$SRC/scripts/rootfs.sh' 2>/dev/null"

work="$tmp/work"
mkdir -p "$work"
cd "$work" || exit 1
echo host-side > shared.txt
for arm in bare bwrap runc gvisor; do
  l="$img/launch-$arm"
  out=$("$l" sh -c 'cat shared.txt && echo "$arm-side" > back.txt && echo ok' 2>&1)
  check "$arm: the run's folder is shared read-write ($out)" \
    test "$out" = "$(printf 'host-side\nok')"
  rm -f back.txt
  m="$tmp/metrics-$arm"
  : > "$m"
  PREREG_METRICS=$m "$l" sc-time inner_s true
  check "$arm: sc-time writes inner_s to \$PREREG_METRICS" \
    grep -Eq '^inner_s=[0-9]+\.[0-9]{6}$' "$m"
  : > "$m"
  PREREG_METRICS=$m "$l" sc-time inner_s sh -c 'exit 3'
  rc=$?
  check "$arm: sc-time passes a failure on (exit $rc) and reports no time" \
    sh -c "[ $rc -eq 3 ] && [ ! -s '$m' ]"
  : > "$m"
  PREREG_METRICS=$m "$l" sc-time inner_s sc-files > "$tmp/files.out" 2>&1
  rc=$?
  check "$arm: sc-files succeeds (exit $rc) and times itself" \
    sh -c "[ $rc -eq 0 ] && grep -q '^inner_s=' '$m'"
  check "$arm: sc-files leaves nothing behind" \
    test "$(ls -A | tr '\n' ' ')" = "shared.txt "
done

for arm in bwrap runc gvisor; do
  l="$img/launch-$arm"
  # bwrap stays pid 1 of the namespace unless --as-pid-1; runc's and
  # gVisor's process is pid 1 itself.
  check "$arm: own pid namespace" test "$("$l" sh -c 'echo $$')" -le 2
  check "$arm: own host name" test "$("$l" hostname)" = sandbox
  check "$arm: no network but loopback" \
    test "$("$l" sh -c 'ls /sys/class/net 2>/dev/null || sed -n "3,\$p" /proc/net/dev | cut -d: -f1 | tr -d " "')" = lo
  check "$arm: the root is read-only" sh -c "! '$l' touch /etc/x 2>/dev/null"
  check "$arm: the host's files are out of sight" \
    sh -c "! '$l' ls '$SRC/scripts' >/dev/null 2>&1"
  check "$arm: the host's toolchain is there, read-only" \
    sh -c "'$l' gcc --version >/dev/null && ! '$l' touch /usr/x 2>/dev/null"
done
check "bwrap: a user namespace" \
  sh -c "'$img/launch-bwrap' cat /proc/self/uid_map | grep -Eq '^ *0 +0 +1\$'"

# A missing image fails loudly in every sandboxed arm.
cp -R "$img" "$tmp/broken"
rm -rf "$tmp/broken/rootfs"
for arm in bwrap runc gvisor; do
  "$tmp/broken/launch-$arm" true > "$tmp/broken.out" 2>&1
  rc=$?
  check "$arm: a missing image fails (exit $rc) with a message" \
    sh -c "[ $rc -ne 0 ] && [ -s '$tmp/broken.out' ]"
done

# The replay log: same exit code per step in all arms, and the five
# failures it has on purpose.
for arm in bare bwrap runc gvisor; do
  mkdir -p "$tmp/replay-$arm"
  (cd "$tmp/replay-$arm" &&
    while IFS= read -r step; do
      sh -c "'$img/launch-$arm' $step" < /dev/null > /dev/null 2>&1
      printf '%s;' $?
    done < "$SRC/studies/sandbox-cost/protocols/sandbox-cost/replay.txt") > "$tmp/codes-$arm"
done
check "replay: at least 40 steps" \
  test "$(wc -l < "$SRC/studies/sandbox-cost/protocols/sandbox-cost/replay.txt")" -ge 40
check "replay: bwrap's exit codes equal bare's" cmp -s "$tmp/codes-bare" "$tmp/codes-bwrap"
check "replay: runc's exit codes equal bare's" cmp -s "$tmp/codes-bare" "$tmp/codes-runc"
check "replay: gvisor's exit codes equal bare's" cmp -s "$tmp/codes-bare" "$tmp/codes-gvisor"
check "replay: two commits made inside gVisor" \
  test "$(git -C "$tmp/replay-gvisor" rev-list --count HEAD)" = 2
check "replay: five steps fail on purpose, the rest succeed" \
  test "$(tr ';' '\n' < "$tmp/codes-bare" | grep -vc '^0$')" = 5
check "replay: two commits made inside the sandbox" \
  test "$(git -C "$tmp/replay-runc" rev-list --count HEAD)" = 2

# The compile workload compiles every file of the code base.
m="$tmp/metrics-compile"
: > "$m"
(cd "$work" && PREREG_METRICS=$m "$img/launch-bwrap" sc-time inner_s sc-compile)
check "compile: succeeds in bwrap and times itself" grep -q '^inner_s=' "$m"
: > "$m"
(cd "$work" && PREREG_METRICS=$m "$img/launch-gvisor" sc-time inner_s sc-compile)
check "compile: succeeds in gVisor and times itself" grep -q '^inner_s=' "$m"
check "gvisor: the sandbox is gVisor's kernel" sh -c "'$img/launch-gvisor' dmesg | grep -q gVisor"
n_c=$(find "$img/rootfs/opt/sc/src" -name '*.c' | wc -l)
n_lines=$(find "$img/rootfs/opt/sc/src" -name '*.[ch]' -print0 | xargs -0 cat | wc -l)
check "compile: the code base has several thousand lines ($n_lines)" test "$n_lines" -ge 3000
mkdir -p "$tmp/src-broken"
cp -R "$img" "$tmp/img2"
# The broken file sorts first, so that make stops at once rather than after
# compiling the whole code base; its failure must fail the run either way.
echo 'this is not C' > "$tmp/img2/rootfs/opt/sc/src/00_broken.c"
(cd "$work" && "$tmp/img2/launch-bare" sc-compile > /dev/null 2>&1)
rc=$?
check "compile: a file that does not compile fails the run (exit $rc, $n_c files)" test "$rc" -ne 0

done_testing 61
