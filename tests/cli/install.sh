#!/usr/bin/env bash
# install.sh: `make install` with DESTDIR and PREFIX puts the binary and the
# docs where the README says, and the installed binary (alone on PATH, not
# the build tree's) runs every command of the README's "Using it" block, in
# order, on the starter sheet of `prereg new`.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${SRC:?}" "${BUILD:?}"

T=$(mktemp -d /tmp/prereg-install-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
# The tree ctest runs from, rebuilt (a no-op) with the type it has.
type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt")

expect 0 "make install DESTDIR" make -s -C "$SRC" install BUILD="$BUILD" \
  BUILD_TYPE="$type" DESTDIR="$T/stage"
BIN=$T/stage/usr/local/bin/prereg
check "binary in DESTDIR/usr/local/bin" test -x "$BIN"
check "README in share/doc/prereg" test -s "$T/stage/usr/local/share/doc/prereg/README.md"
check "interface in share/doc/prereg" test -s "$T/stage/usr/local/share/doc/prereg/interface.md"
check "the installed binary is the built one" cmp -s "$BIN" "$PREREG"
check "nothing outside DESTDIR's prefix" \
  [ "$(cd "$T/stage" && find . -type f | sort | tr '\n' ' ')" = \
    "./usr/local/bin/prereg ./usr/local/bin/prereg-exec ./usr/local/share/doc/prereg/README.md ./usr/local/share/doc/prereg/interface.md " ]
expect 0 "make install PREFIX DESTDIR" make -s -C "$SRC" install BUILD="$BUILD" \
  BUILD_TYPE="$type" PREFIX=/opt/prereg DESTDIR="$T/opt"
check "PREFIX honoured" test -x "$T/opt/opt/prereg/bin/prereg"

# The README's commands, as written, with the installed binary.
cmds=$(awk '/^## Using it/ { u = 1 } u && /^```sh/ { b = 1; next }
            b && /^```/ { exit } b && /^prereg / { sub(/ *#.*/, ""); print }' \
       "$SRC/README.md")
check "README: the commands found" [ "$(wc -l <<<"$cmds")" -ge 9 ]
mkdir "$T/project"
cd "$T/project"
export PATH="$T/stage/usr/local/bin:/usr/bin:/bin"
check "prereg on PATH is the installed one" [ "$(command -v prereg)" = "$BIN" ]
while IFS= read -r line; do
  # shellcheck disable=SC2086  # the README's words, split as a shell would
  expect 0 "README: $line" $line || printf '%s\n' "$out" | head -20 >&2
done <<<"$cmds"
check "report written" test -s data/my-exp/report/report.md
check "report: the tool versions of the starter's arms" grep -qF \
  '` → nice \(GNU coreutils\)' data/my-exp/report/report.md
check "bundle published" test -n "$(find . -name 'my-exp*.tar.gz')"
expect 0 "the bundle verifies" prereg verify "$(find . -name 'my-exp*.tar.gz' | head -1)"
done_testing 20
