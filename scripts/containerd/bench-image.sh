#!/bin/sh
# bench-image.sh DIR [REF]: builds the image of the container-runtimes
# study offline from the binaries Debian installed on this host and
# imports it into the private containerd of DIR (scripts/containerd/
# start.sh) under REF (default prereg/container-bench:1); prints the
# digest of its manifest, the same on every build from the same packages.
#   - sysbench, fio, nginx, wrk and iperf3, each with every library ldd
#     names and the dynamic loader, at their paths on the host;
#   - busybox-static's /bin/busybox as /bin/sh and the other applets;
#   - /usr/local/bin/read-files (studies/container-runtimes/protocols/
#     container-runtimes/read-files.c, static) and /data/files: 3,000
#     files of 1 KiB in 30 folders of 100, the small-files workload's;
#   - /etc/nginx/nginx.conf: one worker per core, 127.0.0.1:8080, a 612-byte
#     page, no log; /etc/passwd and /etc/group with root and nobody.
# The layer is a GNU tar with sorted names, mtime 0 and owner 0; the
# config, manifest and index are written here (created 1970-01-01), so
# the digest changes only with the packages' files.
# The image's archive is kept in BENCH_IMAGE_CACHE (default
# /var/tmp/prereg-image-cache), named by the SHA-256 of its inputs (this
# script, read-files.c, gcc's version, busybox's applets, and the path and
# contents of every file copied in): built once per machine and set of
# packages, imported into each new containerd; BENCH_IMAGE_CACHE= (empty)
# builds afresh. The imported digest is checked against the built one
# either way.
# SPDX-License-Identifier: MIT
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: scripts/containerd/bench-image.sh DIR [REF]" >&2
  exit 2
fi
case "$1" in
  /*) dir=$1 ;;
  *) dir="$(pwd)/$1" ;;
esac
dir=${dir%/}
ref=${2:-prereg/container-bench:1}
src=$(cd "$(dirname "$0")/../.." && pwd)
CTR=${CTR:-/usr/bin/ctr}
assets="$src/studies/container-runtimes/protocols/container-runtimes"

die() { echo "bench-image.sh: $*" >&2; exit 1; }
[ -S "$dir/containerd.sock" ] || die "no containerd at $dir (scripts/containerd/start.sh $dir)"
case "$ref" in
  *[!a-z0-9._/:-]*) die "ref '$ref': lower-case letters, digits and ._/:- only" ;;
esac
bins="/usr/bin/sysbench /usr/bin/fio /usr/sbin/nginx /usr/bin/wrk /usr/bin/iperf3"
for b in $bins /bin/busybox; do
  [ -x "$b" ] || die "$b missing (sh scripts/deps.sh containerd)"
done

out="$dir/bench-image"
rm -rf "$out"
mkdir -p "$out"
c="$CTR -a $dir/containerd.sock -n prereg"
# import_image TAR DIGEST: TAR into this containerd as $ref, checked to be DIGEST.
import_image() {
  $c images rm "$ref" > /dev/null 2>&1 || true
  $c images import "$1" > "$out/import.log" 2>&1 ||
    die "ctr images import failed: $(cat "$out/import.log")"
  got=$($c images ls | awk -v r="$ref" '$1 == r { print $3 }')
  [ "$got" = "$2" ] || die "imported $ref as '$got', expected $2"
  echo "$2"
}

# The inputs: the binaries and every library ldd names, dereferenced.
files="$bins $(ldd $bins | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
    $1 ~ /^\// && NF > 1 { print $1 }' | LC_ALL=C sort -u)"
cache=${BENCH_IMAGE_CACHE-/var/tmp/prereg-image-cache}
key=
if [ -n "$cache" ]; then
  key=$({ sha256sum "$0" "$assets/read-files.c" /bin/busybox $files
    gcc --version | head -n 1; /bin/busybox --list | LC_ALL=C sort
    echo "$ref"; } | sha256sum | cut -d' ' -f1)
  if [ -s "$cache/$key.tar" ] && [ -s "$cache/$key.digest" ]; then
    import_image "$cache/$key.tar" "$(cat "$cache/$key.digest")"
    exit 0
  fi
fi

r="$out/rootfs"
mkdir -p "$r/bin" "$r/etc/nginx" "$r/dev" "$r/proc" "$r/sys" "$r/tmp" \
  "$r/root" "$r/run" "$r/var/lib/nginx" "$r/srv/www" "$r/usr/local/bin" \
  "$r/data/files" "$out/blobs/sha256"

# The binaries and their libraries, dereferenced, at the host's paths.
for f in $files; do
  mkdir -p "$r$(dirname "$f")"
  cp -L "$f" "$r$f"
done
cp /bin/busybox "$r/bin/busybox"
for applet in $(/bin/busybox --list | LC_ALL=C sort); do
  [ "$applet" = busybox ] || [ -e "$r/bin/$applet" ] || ln -s busybox "$r/bin/$applet"
done
gcc -std=c11 -O2 -Wall -Wextra -Werror -static -o "$r/usr/local/bin/read-files" \
  "$assets/read-files.c" || die "cannot build read-files statically (libc6-dev?)"

# Each file is its own name (dD/fF) repeated, cut at 1,024 bytes.
python3 - "$r/data/files" << 'PY' || die "cannot write the small files"
import os, sys
for d in range(30):
    os.mkdir("%s/d%d" % (sys.argv[1], d))
    for f in range(100):
        name = "d%d/f%d" % (d, f)
        with open("%s/%s" % (sys.argv[1], name), "w") as out:
            out.write(((name + "\n") * 1024)[:1024])
PY

printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$r/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$r/etc/group"
printf 'hosts: files\n' > "$r/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n' > "$r/etc/hosts"
head -c 612 /dev/zero | tr '\0' x > "$r/srv/www/index.html"
cat > "$r/etc/nginx/nginx.conf" << 'EOT'
user nobody nogroup;
worker_processes auto;
worker_rlimit_nofile 4096;
pid /run/nginx.pid;
error_log /dev/null crit;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  keepalive_requests 1000000;
  client_body_temp_path /tmp/nginx-body;
  proxy_temp_path /tmp/nginx-proxy;
  fastcgi_temp_path /tmp/nginx-fastcgi;
  uwsgi_temp_path /tmp/nginx-uwsgi;
  scgi_temp_path /tmp/nginx-scgi;
  server {
    listen 127.0.0.1:8080;
    root /srv/www;
  }
}
EOT
chmod 1777 "$r/tmp"

# One layer, then the config, manifest and index of an OCI layout.
LC_ALL=C tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
  --format=gnu -C "$r" -cf "$out/layer.tar" .
rm -rf "$r"
blob() { # FILE MEDIATYPE: moves FILE into blobs/, prints its descriptor
  h=$(sha256sum "$1" | cut -d' ' -f1)
  n=$(wc -c < "$1" | tr -d ' ')
  mv "$1" "$out/blobs/sha256/$h"
  printf '{"mediaType":"%s","digest":"sha256:%s","size":%s}' "$2" "$h" "$n"
}
diff_id=$(sha256sum "$out/layer.tar" | cut -d' ' -f1)
layer=$(blob "$out/layer.tar" application/vnd.oci.image.layer.v1.tar)
printf '%s' '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z",'\
'"config":{"Env":["PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LC_ALL=C"],'\
'"Cmd":["/bin/sh"],"WorkingDir":"/"},'\
'"rootfs":{"type":"layers","diff_ids":["sha256:'"$diff_id"'"]},'\
'"history":[{"created":"1970-01-01T00:00:00Z","created_by":"scripts/containerd/bench-image.sh"}]}' \
  > "$out/config.json"
config=$(blob "$out/config.json" application/vnd.oci.image.config.v1+json)
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":%s,"layers":[%s]}' \
  "$config" "$layer" > "$out/manifest.json"
manifest=$(blob "$out/manifest.json" application/vnd.oci.image.manifest.v1+json)
digest=$(printf '%s' "$manifest" | sed 's/.*"digest":"\([^"]*\)".*/\1/')
printf '{"schemaVersion":2,"manifests":[%s]}' \
  "$(printf '%s' "$manifest" | sed 's|}$|,"annotations":{"io.containerd.image.name":"'"$ref"'","org.opencontainers.image.ref.name":"'"${ref##*:}"'"}}|')" \
  > "$out/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' > "$out/oci-layout"
LC_ALL=C tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
  --format=gnu -C "$out" -cf "$out/image.tar" oci-layout index.json blobs
rm -rf "$out/blobs"

import_image "$out/image.tar" "$digest"
# Kept for the next containerd: written aside, then renamed into place,
# so that a build alongside never reads half an archive.
if [ -n "$key" ] && mkdir -p "$cache" 2> /dev/null &&
  cp "$out/image.tar" "$cache/$key.tar.$$" 2> /dev/null; then
  echo "$digest" > "$cache/$key.digest.$$"
  mv -f "$cache/$key.digest.$$" "$cache/$key.digest"
  mv -f "$cache/$key.tar.$$" "$cache/$key.tar"
fi
[ -z "$key" ] || rm -f "$cache/$key.tar.$$" "$cache/$key.digest.$$"
rm -f "$out/image.tar"
