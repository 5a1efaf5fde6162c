#!/bin/sh
# rootfs.sh DIR: builds the image of the sandbox-cost experiment into DIR,
# offline, from Debian packages installed on this machine. DIR (absolute,
# or made so) receives:
#   rootfs/            the root file system: busybox-static (/bin/busybox
#                      and one symlink per applet, /bin/sh among them),
#                      sc-time (the inner clock, the build's static
#                      executable: $SC_TIME, default build/sc-time), the
#                      workload scripts sc-files and sc-compile (from
#                      studies/sandbox-cost/protocols/sandbox-cost/), the
#                      code base the
#                      compile workload builds (/opt/sc/src), empty mount
#                      points (/usr for the host's toolchain, /work, /run/
#                      prereg/metrics) and a minimal /etc
#   launch-bare, launch-bwrap, launch-runc, launch-gvisor, runc-config.json
#                      how each arm starts a command
# Deterministic: the same package versions and sources give the same tree
# digest (every mtime is set to the epoch, modes are fixed, nothing
# depends on the time, the user or DIR). The old DIR is replaced only when
# the new one is complete.
# SPDX-License-Identifier: MIT
set -eu

if [ $# -ne 1 ]; then
  echo "usage: scripts/rootfs.sh DIR" >&2
  exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
assets="$src/studies/sandbox-cost/protocols/sandbox-cost"
sc_time=${SC_TIME:-$src/build/sc-time}
case "$1" in
  /*) dir=$1 ;;
  *) dir="$(pwd)/$1" ;;
esac

die() { echo "rootfs.sh: $*" >&2; exit 1; }
[ -x /bin/busybox ] || die "/bin/busybox missing: apt-get install busybox-static"
/bin/busybox --list > /dev/null 2>&1 ||
  die "/bin/busybox does not run (is it busybox-static?)"
[ -x "$sc_time" ] || die "$sc_time: no sc-time (make build; SC_TIME names another)"
[ -f "$assets/compile-src.tar.gz" ] ||
  die "$assets/compile-src.tar.gz: the compile code base is missing"

tmp="$dir.new.$$"
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
r="$tmp/rootfs"
mkdir -p "$r/bin" "$r/etc" "$r/opt/sc" "$r/dev" "$r/proc" "$r/sys" \
  "$r/tmp" "$r/usr" "$r/work" "$r/run/prereg" "$r/root"
# The host's /usr is bound over /usr; these make its dynamic binaries find
# their loader and libraries as on the host (usr-merged Debian).
ln -s usr/lib "$r/lib"
ln -s usr/lib64 "$r/lib64"
ln -s bin "$r/sbin"
: > "$r/run/prereg/metrics"

cp /bin/busybox "$r/bin/busybox"
for applet in $(/bin/busybox --list | LC_ALL=C sort); do
  [ "$applet" = busybox ] || ln -s busybox "$r/bin/$applet"
done

cp "$sc_time" "$r/bin/sc-time"
cp "$assets/sc-files" "$assets/sc-compile" "$r/bin/"
cp "$assets/compile.mk" "$r/opt/sc/compile.mk"
# A frozen snapshot of prereg's own C sources (a real code base of about
# 7,000 lines), kept as an archive so that the workload does not change
# when prereg's code does.
tar -xzf "$assets/compile-src.tar.gz" -C "$r/opt/sc" --no-same-owner

printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$r/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$r/etc/group"
printf '127.0.0.1 localhost sandbox\n' > "$r/etc/hosts"

for f in launch-bare launch-bwrap launch-runc launch-gvisor runc-config.json; do
  cp "$assets/$f" "$tmp/$f"
done

# Fixed modes and times: the digest must not depend on umask or clock.
find "$tmp" -type d -exec chmod 0755 {} +
find "$tmp" -type f -exec chmod 0644 {} +
chmod 0755 "$r/bin/busybox" "$r/bin/sc-time" "$r/bin/sc-files" \
  "$r/bin/sc-compile" "$tmp/launch-bare" "$tmp/launch-bwrap" \
  "$tmp/launch-runc" "$tmp/launch-gvisor"
chmod 1777 "$r/tmp"
find "$tmp" -exec touch -h -d @0 {} +

rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
mv "$tmp" "$dir"
trap - EXIT
files=$(find "$dir" | wc -l)
kib=$(du -sk "$dir" | cut -f1)
echo "rootfs.sh: image in $dir ($files entries, $kib KiB)"
