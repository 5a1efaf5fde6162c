#!/bin/sh
# image.sh DIR [TAG]: builds the busybox-static image of the Docker arms
# offline and loads it into the private engine of DIR under TAG (default
# prereg/busybox:1); prints its ID, the same on every build.
# SPDX-License-Identifier: MIT
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: scripts/docker/image.sh DIR [TAG]" >&2
  exit 2
fi
case "$1" in
  /*) dir=$1 ;;
  *) dir="$(pwd)/$1" ;;
esac
dir=${dir%/}
tag=${2:-prereg/busybox:1}
DOCKER=${DOCKER:-/usr/bin/docker}

die() { echo "image.sh: $*" >&2; exit 1; }
[ -x /bin/busybox ] || die "/bin/busybox missing: apt-get install busybox-static"
/bin/busybox --list > /dev/null 2>&1 ||
  die "/bin/busybox does not run (is it busybox-static?)"
[ -S "$dir/docker.sock" ] || die "no engine at $dir (scripts/docker/start.sh $dir)"
case "$tag" in
  *[!a-z0-9._/:-]*) die "tag '$tag': lower-case letters, digits and ._/:- only" ;;
esac

out="$dir/image"
rm -rf "$out"
mkdir -p "$out/layer"
r="$out/rootfs"
mkdir -p "$r/bin" "$r/etc" "$r/dev" "$r/proc" "$r/sys" "$r/tmp" "$r/root"
ln -s bin "$r/sbin"
cp /bin/busybox "$r/bin/busybox"
for applet in $(/bin/busybox --list | LC_ALL=C sort); do
  [ "$applet" = busybox ] || ln -s busybox "$r/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$r/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$r/etc/group"
find "$r" -type d -exec chmod 0755 {} +
find "$r" -type f -exec chmod 0644 {} +
chmod 0755 "$r/bin/busybox"
chmod 1777 "$r/tmp"

# Deterministic: sorted names, owner 0, fixed modes, mtime 0, and an image
# config written here with a fixed creation time, loaded with docker load
# (docker import would stamp the current time into the config, and so give
# a new ID each time). The archive stays in DIR/image/.
LC_ALL=C tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
  --format=gnu -C "$r" -cf "$out/layer/layer.tar" .
diff_id=$(sha256sum "$out/layer/layer.tar" | cut -d' ' -f1)

# The image config, byte for byte: its SHA-256 is the image ID.
printf '%s' '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z",'\
'"config":{"Env":["PATH=/bin"],"Cmd":["/bin/sh"],"WorkingDir":"/"},'\
'"rootfs":{"type":"layers","diff_ids":["sha256:'"$diff_id"'"]},'\
'"history":[{"created":"1970-01-01T00:00:00Z","created_by":"scripts/docker/image.sh: busybox-static"}]}' \
  > "$out/config.json"
id=$(sha256sum "$out/config.json" | cut -d' ' -f1)
mv "$out/config.json" "$out/$id.json"
printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["layer/layer.tar"]}]' \
  "$id" "$tag" > "$out/manifest.json"
LC_ALL=C tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
  --format=gnu -C "$out" -cf "$out/image.tar" manifest.json "$id.json" layer
rm -rf "$r"

"$DOCKER" -H "unix://$dir/docker.sock" load -i "$out/image.tar" > "$out/load.log" 2>&1 ||
  die "docker load failed: $(cat "$out/load.log")"
got=$("$DOCKER" -H "unix://$dir/docker.sock" image inspect -f '{{.Id}}' "$tag") ||
  die "$tag not found after docker load"
[ "$got" = "sha256:$id" ] || die "loaded $tag as $got, expected sha256:$id"
echo "$got"
