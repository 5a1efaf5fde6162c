#!/bin/sh
# agent-image.sh DIR [TAG]: builds the image of the replication of the
# published Docker study (studies/agent-sandbox-replication) from
# Debian 12 packages and loads it into the private engine of DIR under TAG
# (default prereg/agent-sandbox:bookworm); prints its ID.
#   - a debootstrap --variant=minbase of bookworm with git, gcc, libc6-dev,
#     make, python3 and python3-venv (Debian's pip and setuptools wheels);
#   - /src/lua-5.4.4: Lua's sources from Debian's lua5.4 source package
#     (Lua 5.4.7, the study's, is not in Debian 12), fetched with apt-get
#     source and checked against its signed index;
#   - /usr/local/bin/inner-time (the build's static sc-time: $SC_TIME,
#     default build/sc-time) and /usr/local/bin/files-workload;
#   - /usr/local/bin/ls: busybox's, first on PATH. Debian 12's gVisor
#     (runsc 20221219) fails statx with AT_NO_AUTOMOUNT, which GNU ls 9.1
#     calls, with EINVAL: under it every GNU `ls` exits 2;
#   - /work, the run's folder, and /run/prereg/metrics, its metrics file.
# The Debian tree is built once and kept in AGENT_IMAGE_CACHE (default
# /var/tmp/prereg-agent-image); a build from the same tree gives the same
# image ID (sorted names, mtime 0, a config written here, docker load). The
# network is needed only for that first build (deb.debian.org, or
# DEBIAN_MIRROR).
# SPDX-License-Identifier: MIT
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: scripts/docker/agent-image.sh DIR [TAG]" >&2
  exit 2
fi
case "$1" in
  /*) dir=$1 ;;
  *) dir="$(pwd)/$1" ;;
esac
dir=${dir%/}
tag=${2:-prereg/agent-sandbox:bookworm}
src=$(cd "$(dirname "$0")/../.." && pwd)
DOCKER=${DOCKER:-/usr/bin/docker}
cache=${AGENT_IMAGE_CACHE:-/var/tmp/prereg-agent-image}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
packages=git,gcc,libc6-dev,make,python3,python3-venv,busybox-static
sc_time=${SC_TIME:-$src/build/sc-time}

die() { echo "agent-image.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap)"
command -v debootstrap > /dev/null || die "debootstrap missing: sh scripts/deps.sh docker"
[ -x "$sc_time" ] || die "$sc_time: no sc-time (make build; SC_TIME names another)"
[ -S "$dir/docker.sock" ] || die "no engine at $dir (scripts/docker/start.sh $dir)"
case "$tag" in
  *[!a-z0-9._/:-]*) die "tag '$tag': lower-case letters, digits and ._/:- only" ;;
esac

# The Debian tree, once: debootstrap, then what differs from one
# bootstrap to the next and is no part of the system removed (package
# caches and lists, logs, the machine ID, device nodes: Docker makes
# /dev).
tree="$cache/tree-$suite"
if [ ! -f "$tree/.complete" ] || [ "$(cat "$tree/.complete")" != "$packages" ]; then
  rm -rf "$tree" "$tree.new"
  mkdir -p "$cache"
  echo "agent-image.sh: debootstrap $suite ($packages) from $mirror" >&2
  debootstrap --variant=minbase --include="$packages" "$suite" "$tree.new" "$mirror" \
    > "$cache/debootstrap.log" 2>&1 ||
    die "debootstrap failed: $(tail -n 5 "$cache/debootstrap.log")"
  rm -rf "$tree.new"/var/cache/apt/archives/*.deb "$tree.new"/var/lib/apt/lists/* \
    "$tree.new"/var/cache/ldconfig/aux-cache "$tree.new"/dev/*
  find "$tree.new/var/log" -type f -exec truncate -s 0 {} +
  : > "$tree.new/etc/machine-id"
  printf '%s' "$packages" > "$tree.new/.complete"
  mv "$tree.new" "$tree"
fi

# Lua's sources, from the Debian archive through apt's own checks (the
# Sources index is signed; apt-get source verifies the files against it).
lua="$cache/lua5.4"
if [ ! -f "$lua/.complete" ]; then
  rm -rf "$lua"
  mkdir -p "$lua/lists/partial" "$lua/cache" "$lua/dl"
  echo "deb-src $mirror $suite main" > "$lua/sources.list"
  apt_o="-o Dir::Etc::SourceList=$lua/sources.list -o Dir::Etc::SourceParts=/dev/null
    -o Dir::State::Lists=$lua/lists -o Dir::Cache=$lua/cache"
  # shellcheck disable=SC2086 # the options, one word each
  apt-get $apt_o update -qq > "$lua/apt.log" 2>&1 &&
    (cd "$lua/dl" && apt-get $apt_o source --download-only lua5.4) >> "$lua/apt.log" 2>&1 ||
    die "apt-get source lua5.4 failed: $(tail -n 5 "$lua/apt.log")"
  : > "$lua/.complete"
fi
orig=$(ls "$lua"/dl/lua5.4_*.orig.tar.gz 2> /dev/null | head -n 1)
[ -n "$orig" ] || die "no lua5.4 orig tarball in $lua/dl"

out="$dir/agent-image"
rm -rf "$out"
mkdir -p "$out/layer"
r="$out/rootfs"
cp -a "$tree" "$r"
rm -f "$r/.complete"
mkdir -p "$r/src" "$r/work" "$r/run/prereg" "$r/usr/local/bin"
tar -xzf "$orig" -C "$r/src" --no-same-owner
sha256sum "$orig" | sed "s|  .*/|  |" > "$r/src/$(basename "$orig").sha256"
: > "$r/run/prereg/metrics"
cp "$sc_time" "$r/usr/local/bin/inner-time"
cp "$src/studies/agent-sandbox-replication/protocols/agent-sandbox-replication/files-workload" "$r/usr/local/bin/files-workload"
chmod 0755 "$r/usr/local/bin/inner-time" "$r/usr/local/bin/files-workload"
[ -x "$r/bin/busybox" ] || die "busybox-static is not in the tree"
ln -s /bin/busybox "$r/usr/local/bin/ls"

LC_ALL=C tar --sort=name --mtime=@0 --numeric-owner --format=gnu \
  -C "$r" -cf "$out/layer/layer.tar" .
diff_id=$(sha256sum "$out/layer/layer.tar" | cut -d' ' -f1)
printf '%s' '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z",'\
'"config":{"Env":["PATH=/usr/local/bin:/usr/bin:/bin","LC_ALL=C.UTF-8","TZ=UTC"],'\
'"Cmd":["/bin/sh"],"WorkingDir":"/"},'\
'"rootfs":{"type":"layers","diff_ids":["sha256:'"$diff_id"'"]},'\
'"history":[{"created":"1970-01-01T00:00:00Z","created_by":"scripts/docker/agent-image.sh: debootstrap '"$suite"' '"$packages"'"}]}' \
  > "$out/config.json"
id=$(sha256sum "$out/config.json" | cut -d' ' -f1)
mv "$out/config.json" "$out/$id.json"
printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["layer/layer.tar"]}]' \
  "$id" "$tag" > "$out/manifest.json"
LC_ALL=C tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
  --format=gnu -C "$out" -cf "$out/image.tar" manifest.json "$id.json" layer
rm -rf "$r" "$out/layer"

"$DOCKER" -H "unix://$dir/docker.sock" load -i "$out/image.tar" > "$out/load.log" 2>&1 ||
  die "docker load failed: $(cat "$out/load.log")"
rm -f "$out/image.tar"
got=$("$DOCKER" -H "unix://$dir/docker.sock" image inspect -f '{{.Id}}' "$tag") ||
  die "$tag not found after docker load"
[ "$got" = "sha256:$id" ] || die "loaded $tag as $got, expected sha256:$id"
echo "$got"
