#!/usr/bin/env bash
# data_dir.sh: which data folder. From above a project (exp/protocols/x.lua,
# registered in exp/data), every command that takes SHEET says that ./data
# does not hold the experiment and names the --data to use, writing
# nothing; register refuses a second copy unless --data is explicit.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-datadir-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
mkdir -p "$T/exp/protocols" "$T/side"
cat > "$T/exp/protocols/x.lua" <<'LUA'
protocol {
  id = "x", title = "Where the data are", author = "t",
  arms = { { name = "a", reference = true }, { name = "b", run = "env {cmd}" } },
  workloads = { { name = "w", runs = 2, cmd = "/bin/true" },
                { name = "imp", metrics = { "wall_s" } } },
  rule = { seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
printf 'workload,arm,metric,value\nimp,a,wall_s,1\nimp,b,wall_s,2\n' > "$T/m.csv"
cd "$T/exp"
expect 0 "register inside the project" "$PREREG" register protocols/x.lua
expect 0 "run inside the project" "$PREREG" run protocols/x.lua
cd "$T"
snap() { find "$T" -path "$T/exp/data" -prune -o -print | sort; (cd "$T/exp/data" && find . -type f -exec sha256sum {} + | sort); }
before=$(snap)

# --- every command from the folder above ------------------------------------
for cmd in status "run" "run --dry-run" "run --resume" analyze report verify \
           publish amend "import @m.csv"; do
  set -- $cmd
  name=$1; shift
  extra=("$@")
  [ "${extra[0]:-}" = "@m.csv" ] && extra=(m.csv)
  expect 2 "$cmd from above: exit 2" "$PREREG" "$name" exp/protocols/x.lua "${extra[@]}"
  check_grep "$cmd: says ./data does not hold it" \
    "x is not registered in data \(the default, in the current folder\), but exp/data/x holds it" "$out"
  check_grep "$cmd: names the --data to use" "add --data exp/data \(prereg $name exp/protocols/x.lua( m.csv)? --data exp/data\)" "$out"
  check "$cmd: no invitation to register again" [ -z "$(grep 'prereg register' <<<"$out")" ]
done
expect 2 "register from above: refused" "$PREREG" register exp/protocols/x.lua
check_grep "register: names the project's data folder" \
  "x is already registered in exp/data/x, the data folder of the sheet's project; use it with --data exp/data" "$out"
check_grep "register: how to make a second copy" "give --data data explicitly to register a second, separate copy" "$out"
check "nothing written by any refusal" [ "$before" = "$(snap)" ]
check "no ./data made" [ ! -e "$T/data" ]

# --- the named --data works; an explicit --data registers a second copy -----
expect 0 "status with --data exp/data" "$PREREG" status exp/protocols/x.lua --data exp/data
check_grep "status: the runs" "w +b +2 +2" "$out"
expect 0 "run --data exp/data: nothing to do" "$PREREG" run exp/protocols/x.lua --data exp/data
expect 0 "register --data data: a second, separate copy" "$PREREG" register exp/protocols/x.lua --data data
check "second copy in ./data" test -f data/x/versions/v0.json
expect 0 "then ./data is the default again" "$PREREG" status exp/protocols/x.lua
check_grep "status of ./data: no runs" "w +b +2 +0 " "$out"

# --- a sheet beside its data folder (side/x.lua, side/data) -----------------
rm -rf data
cp exp/protocols/x.lua side/x.lua
(cd side && "$PREREG" register x.lua >/dev/null) || bad "register in side"
expect 2 "side: analyze from above" "$PREREG" analyze side/x.lua
check_grep "side: names side/data" "but side/data/x holds it.*add --data side/data" "$out"

# --- inside protocols/: the project is the folder above -------------------
cd exp/protocols
expect 2 "inside protocols/: verify x.lua" "$PREREG" verify x.lua
check_grep "inside protocols/: names ../data" "but \.\./data/x holds it.*add --data \.\./data" "$out"
cd "$T"

# --- nothing registered anywhere: the old answer ----------------------------
sed 's/id = "x"/id = "fresh"/' exp/protocols/x.lua > exp/protocols/fresh.lua
expect 0 "unregistered: status" "$PREREG" status exp/protocols/fresh.lua
check_grep "unregistered: says how to register" "not registered \(data/fresh\); run prereg register" "$out"
done_testing 50
