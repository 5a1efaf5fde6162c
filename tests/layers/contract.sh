#!/bin/bash
# contract.sh: scripts/check-layers.sh fails a public header that declares
# a function nothing outside its folder uses, naming it and where it
# belongs, and passes it again once another floor or a test uses it. On
# a copy of the checkout's sources.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${SRC:?}"
T=$(mktemp -d)
on_exit 'rm -rf "$T"'
mkdir "$T/src"
(cd "$SRC" && git ls-files -z '*.c' '*.h' scripts/check-layers.sh |
  tar --null -T - -cf -) | tar -xf - -C "$T/src"
expect 0 "the copy passes" sh "$T/src/scripts/check-layers.sh"
check_grep "counting the public functions" "the [0-9]+ functions of the public headers" "$out"

printf '/** Planted. */\nint run_planted_only_here(void);\n' >> "$T/src/run/run.h"
printf 'int run_planted_only_here(void) { return 1; }\n' >> "$T/src/run/exec.c"
expect 1 "a public function only its folder uses fails" sh "$T/src/scripts/check-layers.sh"
check_grep "named, with where it belongs" \
  "run/run.h declares run_planted_only_here, which nothing outside run/ uses: move it to run/run_internal.h" "$out"
printf '/* run_planted_only_here() in a comment is no use */\n' >> "$T/src/tests/run/test_exec.c"
expect 1 "a mention in a comment is not a use" sh "$T/src/scripts/check-layers.sh"
printf 'int planted_use(void) { return run_planted_only_here(); }\n' >> "$T/src/tests/run/test_exec.c"
expect 0 "a test that uses it is enough" sh "$T/src/scripts/check-layers.sh"
done_testing 6
