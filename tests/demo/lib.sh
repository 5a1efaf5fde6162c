# lib.sh: what the demo tests share: a counter of checks, a scratch folder
# removed on exit, and the image built once per test into it.
# SPDX-License-Identifier: MIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
check() { # check DESCRIPTION CMD...: passes when CMD exits 0
  local what=$1
  shift
  if "$@"; then ok; else bad "$what"; fi
}
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
  exit $?
}
: "${SRC:?SRC must name the source tree}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/prereg-demo-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# build_image DIR: the experiment's image, as make demo builds it.
build_image() {
  sh "$SRC/scripts/rootfs.sh" "$1" > "$tmp/rootfs.log" 2>&1 ||
    { cat "$tmp/rootfs.log" >&2; return 1; }
}
