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
BASHC=$T/stage/usr/local/share/bash-completion/completions/prereg
ZSHC=$T/stage/usr/local/share/zsh/site-functions/_prereg
check "bash completion installed" cmp -s "$BASHC" "$SRC/completions/prereg.bash"
check "zsh completion installed" cmp -s "$ZSHC" "$SRC/completions/_prereg"
check "zsh completion is a #compdef file" grep -qx '#compdef prereg' "$ZSHC"
check "nothing outside DESTDIR's prefix" \
  [ "$(cd "$T/stage" && find . -type f | sort | tr '\n' ' ')" = \
    "./usr/local/bin/prereg ./usr/local/bin/prereg-exec ./usr/local/share/bash-completion/completions/prereg ./usr/local/share/doc/prereg/README.md ./usr/local/share/doc/prereg/interface.md ./usr/local/share/zsh/site-functions/_prereg " ]
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
# The installed bash completion, with the installed binary: commands,
# a command's options, sheet files, the sheet's workloads after --only.
complete_words() {
  # shellcheck disable=SC1090
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    _prereg; printf "%s\n" "${COMPREPLY[@]}"' _ "$BASHC" "$@"
}
check "completion: the commands" \
  [ "$(complete_words prereg an)" = analyze ]
check_grep "completion: every command" '^publish$' "$(complete_words prereg '')"
check "completion: a command's options" \
  [ "$(complete_words prereg run data/x.lua --dr)" = --dry-run ]
sheet=$(find . -name '*.lua' -path '*protocols*' | head -1)
check_grep "completion: sheet files" "^${sheet#./}\$" \
  "$(complete_words prereg check "$(dirname "${sheet#./}")/")"
wl=$(prereg check "$sheet" | awk '/^Workloads \(/ { w = 1; next }
  w && /^  [^ ]/ { print $1; exit }')
check "completion: the sheet's workloads after --only ($wl)" \
  [ -n "$wl" ] && [ "$(complete_words prereg run "$sheet" --only '')" = "$wl" ]
check "report written" test -s data/my-exp/report/report.md
check "report: the tool versions of the starter's arms" grep -qF \
  '` → nice (GNU coreutils)' data/my-exp/report/report.md
check "bundle published" test -n "$(find . -name 'my-exp*.tar.gz')"
expect 0 "the bundle verifies" prereg verify "$(find . -name 'my-exp*.tar.gz' | head -1)"
done_testing 28
