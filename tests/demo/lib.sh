# lib.sh: what the demo tests share: tests/lib.sh's checks, a scratch
# folder removed on exit, and the image built once per test into it.
# SPDX-License-Identifier: MIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
: "${SRC:?SRC must name the source tree}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/prereg-demo-test.XXXXXX")
on_exit 'rm -rf "$tmp"'
# build_image DIR: the experiment's image, as make demo builds it.
build_image() {
  SC_TIME="${BUILD:?}/sc-time" sh "$SRC/scripts/rootfs.sh" "$1" > "$tmp/rootfs.log" 2>&1 ||
    { cat "$tmp/rootfs.log" >&2; return 1; }
}
