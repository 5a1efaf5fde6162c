#!/bin/bash
# golden.sh: sheets through the real CLI. Each bad/NAME.lua must exit 2
# with exactly bad/NAME.expected on stderr, in under a second (a bound on
# hangs, not a benchmark), writing nothing: the sheets run from a copy in
# an empty temporary folder, with --data inside it, and the folder's
# listing must not change. register must refuse them the same way. Each
# good/NAME.lua must pass check with exactly good/NAME.expected on stdout.
set -u
pass=0
fail=0
ok() {
  if [ "$1" = 0 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: $2"; fi
}
here="$SRC/tests/protocols"
tmp=$(mktemp -d)
scratch=$(mktemp -d) # outside $tmp, whose listing must not change
trap 'rm -rf "$tmp" "$scratch"' EXIT
mkdir "$tmp/sheets"
cp -r "$here/good" "$here/bad" "$tmp/sheets/"
listing() { (cd "$tmp" && find . -printf '%p %s %T@\n' | sort); }
before=$(listing)
ms_now() { date +%s%N | cut -c1-13; }
# CPU time (user + sys, ms) of all the children this shell has waited
# for: a shared, loaded machine stretches wall time but not CPU time, so
# the "under a second" bound is checked on CPU time, and wall time only
# guards against a hang (10 s).
child_cpu_ms() {
  # `times` must run in this shell (not a $(...) subshell) to see them.
  times >"$scratch/times"
  tail -1 "$scratch/times" | awk '{ t = 0
    for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2])
      t += p[1] * 60000 + p[2] * 1000 }
    printf "%d\n", t }' >"$scratch/cpu_ms"
  read -r "$1" <"$scratch/cpu_ms"
}

commands="check register"
nbad=0
for sheet in "$here"/bad/*.lua; do
  name=$(basename "$sheet" .lua)
  want="$here/bad/$name.expected"
  nbad=$((nbad + 1))
  if [ ! -f "$want" ]; then ok 1 "$name: no bad/$name.expected"; continue; fi
  for cmd in $commands; do
    t0=$(ms_now)
    child_cpu_ms c0
    got=$(cd "$tmp/sheets" && "$PREREG" "$cmd" "bad/$name.lua" \
          --data "$tmp/data" 2>&1 >/dev/null)
    rc=$?
    child_cpu_ms c1
    t1=$(ms_now)
    ok $([ $rc = 2 ]; echo $?) "$cmd $name: exit $rc, want 2"
    ok $([ "$got" = "$(cat "$want")" ]; echo $?) \
      "$cmd $name: stderr differs:
  got:  $got
  want: $(cat "$want")"
    ok $([ $((c1 - c0)) -lt 1000 ]; echo $?) \
      "$cmd $name: took $((c1 - c0)) ms of CPU (bound: 1000)"
    ok $([ $((t1 - t0)) -lt 10000 ]; echo $?) \
      "$cmd $name: took $((t1 - t0)) ms of wall time (hang bound: 10000)"
    now=$(listing)
    ok $([ "$now" = "$before" ]; echo $?) "$cmd $name: wrote a file:
$(diff <(echo "$before") <(echo "$now"))"
    before=$now
  done
done
ok $([ $nbad -ge 30 ]; echo $?) "only $nbad bad sheets (want >= 30)"

for sheet in "$here"/good/*.lua; do
  name=$(basename "$sheet" .lua)
  got=$(cd "$tmp/sheets" && "$PREREG" check "good/$name.lua" 2>&1)
  rc=$?
  ok $rc "check good/$name: exit $rc: $got"
  ok $([ "$got" = "$(cat "$here/good/$name.expected")" ]; echo $?) \
    "check good/$name: stdout differs from good/$name.expected:
$(diff <(echo "$got") "$here/good/$name.expected")"
done
ok $([ "$(listing)" = "$before" ]; echo $?) "check of good sheets wrote a file"

# A sheet that cannot be read is bad input too.
got=$(cd "$tmp/sheets" && "$PREREG" check missing.lua 2>&1)
ok $([ $? = 2 ]; echo $?) "check missing.lua: want exit 2"
ok $([ "$got" = "prereg: missing.lua: cannot open: No such file or directory" ]
     echo $?) "check missing.lua: $got"

# prereg new: writes protocols/ID.lua under the current folder, a sheet
# that passes check; never overwrites; refuses a bad ID writing nothing.
work="$tmp/new"
mkdir "$work"
out=$(cd "$work" && "$PREREG" new my-test 2>&1)
ok $? "new my-test: $out"
ok $([ -f "$work/protocols/my-test.lua" ]; echo $?) "new: no protocols/my-test.lua"
got=$(cd "$work" && "$PREREG" check protocols/my-test.lua 2>&1)
ok $? "check of the starter sheet: $got"
ok $(echo "$got" | grep -q '^ID         my-test$'; echo $?) "starter: id"
echo "-- edited" >> "$work/protocols/my-test.lua"
sum=$(sha256sum "$work/protocols/my-test.lua")
got=$(cd "$work" && "$PREREG" new my-test 2>&1)
ok $([ $? = 2 ]; echo $?) "new over an existing sheet: want exit 2"
ok $([ "$got" = "prereg: protocols/my-test.lua already exists; prereg new never overwrites a sheet (choose another ID or --out FILE)" ]
     echo $?) "new over an existing sheet: $got"
ok $([ "$(sha256sum "$work/protocols/my-test.lua")" = "$sum" ]; echo $?) \
  "new changed an existing sheet"
for id in Bad_ID -x "a b" ""; do
  got=$(cd "$work" && "$PREREG" new "$id" 2>&1)
  ok $([ $? = 2 ]; echo $?) "new '$id': want exit 2 ($got)"
done
ok $([ "$(cd "$work" && find . | sort | tr '\n' ' ')" = ". ./protocols ./protocols/my-test.lua " ]
     echo $?) "new with a bad ID wrote a file"
got=$(cd "$work" && "$PREREG" new other --out elsewhere.lua 2>&1)
ok $? "new --out: $got"
ok $([ -f "$work/elsewhere.lua" ]; echo $?) "new --out: no elsewhere.lua"
got=$(cd "$work" && "$PREREG" new piped --out - 2>&1)
ok $(echo "$got" | grep -q 'id       = "piped"'; echo $?) "new --out -: $got"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
