#!/usr/bin/env bash
# unlocked.sh: check names each absolute path in a command (or in a var
# the commands use) that is an existing file and not a program: a file
# the commands read that the lock does not record. Programs, missing paths
# and the sheet's inputs get no warning.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-unlocked-XXXXXX)
on_exit 'rm -rf "$T"'
cd "$T"
head -c 4096 /dev/zero > "$T/big.bin"
mkdir -p exe && printf '#!/bin/sh\n' > exe/tool && chmod +x exe/tool

cat > s.lua <<LUA
protocol {
  id = "s", title = "S", question = "q", author = "t",
  vars = { big = "$T/big.bin" },
  arms = { { name = "bare", reference = true, run = "{cmd}" },
           { name = "x", run = "$T/exe/tool {cmd}" } },
  workloads = {
    { name = "sum", runs = 3, cmd = "sha256sum {big}", metrics = { "wall_s" } },
    { name = "direct", runs = 3, cmd = "cat $T/big.bin $T/missing.bin",
      metrics = { "wall_s" } },
  },
  rule = { seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
expect 0 "check a sheet whose commands read files by absolute path" "$PREREG" check s.lua
check_grep "the var's file is named" \
  "^warning: \"vars\\.big\" reads $T/big\\.bin, a file outside the sheet's inputs: the lock does not record it" "$out"
check_grep "the command's file is named" \
  "^warning: \"cat $T/big\\.bin $T/missing\\.bin\" reads $T/big\\.bin, a file outside" "$out"
check "a missing path is not named" test "$(grep -c 'missing\.bin,' <<<"$out")" -eq 0
check "a program is not named" test "$(grep -c 'exe/tool,' <<<"$out")" -eq 0
done_testing 5
