#!/usr/bin/env bash
# messages.sh: the small messages a newcomer meets, through the real binary:
# a misspelt claim (did you mean), verify on an unpacked bundle's folder,
# amend with no new amendment (exit 2, what to append), and hyperfine's
# command names (-n) in import, with and without --arm-from.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-messages-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"
cat > s.lua <<'LUA'
protocol {
  id = "s", title = "Small messages", author = "t",
  arms = {
    { name = "sh", reference = true, run = "sh -c true" },
    { name = "perl", run = "perl -e 1" },
  },
  -- prereg runs it, and hyperfine's runs of the same commands are
  -- imported into it below: the sheet says so.
  workloads = { { name = "start", runs = 3, source = "both" } },
  rule = { seed = 2, verdicts = { { "slower", ci_excludes = 1 } } },
  hypotheses = {
    { id = "H1", says = "perl is slower", workload = "start",
      metric = "wall_s", arms = { "perl" }, claim = at_least(1) },
  },
  amendments = {},
}
LUA

# --- a misspelt claim -------------------------------------------------------
sed 's/claim = at_least(1)/claim = atleast(1)/' s.lua > typo.lua
expect 2 "atleast(1): bad input" "$PREREG" check typo.lua
check_grep "atleast: FILE:LINE and did you mean" \
  "^prereg: typo\.lua:13: unknown name 'atleast'; did you mean at_least\?$" "$out"

# --- amend with nothing new -------------------------------------------------
expect 0 "register" "$PREREG" register s.lua
snap() { find data -exec stat -c '%n %s %Y' {} + | sort; }
before=$(snap)
expect 2 "amend an unchanged sheet: exit 2" "$PREREG" amend s.lua
check_grep "unchanged: nothing to amend" "identical to version v0; nothing to amend" "$out"
check_grep "unchanged: what to append" 'append to `amendments` an entry \{ date = "[0-9]{4}-[0-9]{2}-[0-9]{2}", why = "what changed and why" \}' "$out"
cp s.lua s.lua.orig && sed -i 's/runs = 3/runs = 4/' s.lua
expect 2 "amend an edit without an amendment: exit 2" "$PREREG" amend s.lua
check_grep "edit: the diff" '\+  workloads = \{ \{ name = "start", runs = 4, source = "both" \} \},' "$out"
check_grep "edit: what to append" 'append to `amendments` an entry saying why, \{ date = "' "$out"
check "amend refusals wrote nothing" [ "$before" = "$(snap)" ]
mv s.lua.orig s.lua

# --- verify on a folder -----------------------------------------------------
expect 0 "run" "$PREREG" run s.lua
expect 0 "publish" "$PREREG" publish s.lua --out s.tar.gz
mkdir un && tar xzf s.tar.gz -C un
expect 2 "verify un/s/: exit 2" "$PREREG" verify un/s/
check_grep "unpacked bundle: says what it is" "un/s/: a folder, not a sheet or a bundle: un/s is an unpacked prereg bundle of the experiment s" "$out"
check_grep "unpacked bundle: what to run" "Verify the \.tar\.gz it came from \(prereg verify s\.tar\.gz\), or this copy through its newest frozen sheet: prereg verify un/s/versions/v0\.lua --data un$" "$out"
check "no 'Is a directory'" [ -z "$(grep -i 'is a directory' <<<"$out")" ]
expect 0 "the suggested command verifies the copy" "$PREREG" verify un/s/versions/v0.lua --data un
expect 0 "the bundle itself verifies" "$PREREG" verify s.tar.gz
expect 2 "verify un (holding the bundle)" "$PREREG" verify un
check_grep "parent folder: names the bundle in it" "un/s is an unpacked prereg bundle" "$out"
expect 2 "verify data/s (a data folder)" "$PREREG" verify data/s
check_grep "data folder: what to run" "data/s is the data folder of the experiment s\. Give its sheet with --data data \(prereg verify SHEET --data data\)" "$out"
expect 2 "analyze un/s/" "$PREREG" analyze un/s/
check_grep "analyze: the same explanation" "prereg analyze un/s/versions/v0\.lua --data un" "$out"

# --- hyperfine's command names -----------------------------------------------
command -v hyperfine >/dev/null || bad "hyperfine is not installed (scripts/deps.sh test)"
hf() { hyperfine -N --runs 3 --export-json "$@" >/dev/null 2>&1; }
hf named.json -n sh 'sh -c true' -n perl 'perl -e 1'
hf other.json -n bare 'sh -c true' -n p5 'perl -e 1'
hf plain.json 'sh -c true' 'perl -e 1'
expect 0 "import: -n names that are the arms" "$PREREG" import s.lua named.json --only start
check_grep "named: 6 rows" "imported 6 rows from named.json" "$out"
expect 2 "import: other -n names without --arm-from" "$PREREG" import s.lua other.json --only start
check_grep "unmapped: says how to map or name" \
  "'bare' is not an arm; map it with --arm-from bare=ARM, or name each command after its arm when running hyperfine \(-n ARM\)" "$out"
expect 0 "import: --arm-from with the -n names" "$PREREG" import s.lua other.json --only start --arm-from bare=sh,p5=perl
check_grep "mapped: 6 rows" "imported 6 rows from other.json" "$out"
expect 0 "import: commands that are the arms' whole commands" "$PREREG" import s.lua plain.json --only start
check_grep "by command: 6 rows" "imported 6 rows from plain.json" "$out"
python3 - data/s/batches <<'PY' && ok || bad "imported rows: arms by name, by map and by command"
import csv, glob, sys
rows = []
for f in sorted(glob.glob(sys.argv[1] + "/b*.csv")):
    rows += [r for r in csv.DictReader(open(f)) if r["source"] == "import"]
by = {}
for r in rows:
    by[r["arm"]] = by.get(r["arm"], 0) + 1
sys.exit(0 if by == {"sh": 9, "perl": 9} else 1)
PY
done_testing 33
