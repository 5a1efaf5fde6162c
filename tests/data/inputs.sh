#!/usr/bin/env bash
# inputs.sh: a sheet's `inputs` are locked with it, through the real
# binary. Its commands reach them through {sheet_dir} from wherever run
# starts (and in the run's own folder); each version records their
# SHA-256 and keeps a copy; each batch's facts hold the digests it ran
# with; an edited, added or removed input is refused before a batch until
# an amendment records the new digests; verify names what changed; the
# bundle carries the copies and verify BUNDLE checks them against the
# versions' records; check warns of a command's file the lock does not
# cover and refuses links; a size limit.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${SRC:?}"
T=$(mktemp -d /tmp/prereg-inputs.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
mkdir -p "$T/study/conf" "$T/elsewhere"
S=$T/study
D=$T/data
sha() { sha256sum "$1" | cut -d' ' -f1; }
field() { # field FILE PYTHON-EXPRESSION-ON-j
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

# The script checks where it runs: in the run's own folder under the
# batch, with {origin} and $PREREG_ORIGIN the folder run started from.
cat >"$S/work.sh" <<'SH'
case $(pwd) in */batches/b[0-9]*/*.work) ;; *) exit 8 ;; esac
[ "$1" = "$PREREG_ORIGIN" ] || exit 9
[ -r "$2/conf/a.cfg" ] || exit 7
exit 0
SH
echo "level = 1" >"$S/conf/a.cfg"
sheet() { # sheet AMENDMENTS
  cat >"$S/s.lua" <<LUA
protocol {
  id = "inp", title = "Inputs", question = "Is the procedure locked?",
  author = "t",
  inputs = { "work.sh", "conf/" },
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", runs = 3,
                  cmd = "sh {sheet_dir}/work.sh {origin} {sheet_dir}",
                  metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200,
           seed = 7, verdicts = { { "slower", ci_excludes = 1 } } },
  amendments = { $1 },
}
LUA
}
sheet ""
cd "$T/elsewhere" || exit 1

expect 0 "register" "$PREREG" register "$S/s.lua" --data "$D"
check_grep "v0 records work.sh's digest" "$(sha "$S/work.sh")" \
  "$(field "$D/inp/versions/v0.json" '[i["sha256"] for i in j["inputs"] if i["path"] == "work.sh"]')"
check "v0 records the folder's file" grep -q '"path": "conf/a.cfg"' "$D/inp/versions/v0.json"
check "the data folder keeps a copy" cmp "$S/work.sh" "$D/inp/inputs/v0/work.sh"
check "the MANIFEST lists the copy" grep -q "^$(sha "$S/work.sh")  inputs/v0/work.sh$" "$D/inp/MANIFEST"

expect 0 "run from another folder" "$PREREG" run "$S/s.lua" --data "$D"
check_grep "every run valid: {sheet_dir}, {origin}, the run folder" \
  "batch b0001: 6 runs, 6 valid, 0 invalid" "$out"
check_grep "the batch's facts hold the digest it ran with" "^$(sha "$S/work.sh")$" \
  "$(field "$D/inp/batches/b0001.json" 'j["inputs"]["work.sh"]')"

# --- an input edited between batches --------------------------------------
old=$(sha "$S/work.sh")
echo "# a tweak" >>"$S/work.sh"
expect 1 "run refuses an edited input" "$PREREG" run "$S/s.lua" --data "$D"
check_grep "the refusal names the input and both digests" \
  "changed work.sh \(sha256 $(sha "$S/work.sh" | cut -c1-12), recorded ${old:0:12}\)" "$out"
check_grep "the refusal says how to go on" "prereg amend" "$out"
check "no batch was started" [ ! -e "$D/inp/batches/b0002.csv" ]
expect 0 "verify (the data are sound)" "$PREREG" verify "$S/s.lua" --data "$D"
check_grep "verify names the changed input" "note: .*its inputs differ.*changed work.sh" "$(echo $out)"
expect 0 "status" "$PREREG" status "$S/s.lua" --data "$D"
check_grep "status names the changed input" "changed work.sh" "$out"
echo "level = 2" >"$S/conf/b.cfg"
mv "$S/conf/a.cfg" "$S/a.cfg.away"
expect 1 "run refuses an added and a missing input" "$PREREG" run "$S/s.lua" --data "$D"
check_grep "an added input is named" "added conf/b.cfg" "$out"
check_grep "a missing input is named" "missing conf/a.cfg" "$out"
mv "$S/a.cfg.away" "$S/conf/a.cfg"
rm "$S/conf/b.cfg"
expect 1 "analyze refuses too" "$PREREG" analyze "$S/s.lua" --data "$D"

# --- amended: the new digests recorded, and the next batch runs -----------
sheet '{ date = "2026-12-01", why = "A comment in work.sh.", supersedes = { "w" } }'
expect 0 "amend" "$PREREG" amend "$S/s.lua" --data "$D"
check_grep "amend says which input changed" "changed work.sh" "$out"
check_grep "v1 records the new digest" "$(sha "$S/work.sh")" \
  "$(field "$D/inp/versions/v1.json" '[i["sha256"] for i in j["inputs"] if i["path"] == "work.sh"]')"
check "v1's copy" cmp "$S/work.sh" "$D/inp/inputs/v1/work.sh"
check_grep "v0's copy kept as registered" "^$old$" "$(sha "$D/inp/inputs/v0/work.sh")"
expect 0 "run after the amendment" "$PREREG" run "$S/s.lua" --data "$D"
check_grep "the amendment's batch facts carry the new digest" "^$(sha "$S/work.sh")$" \
  "$(field "$D/inp/batches/b0002.json" 'j["inputs"]["work.sh"]')"
expect 0 "verify after the amendment" "$PREREG" verify "$S/s.lua" --data "$D"
check "verify: nothing differs" bash -c '! grep -q "differ" <<<"$1"' _ "$out"

# --- the bundle carries the inputs, and verify checks them ----------------
expect 0 "publish" "$PREREG" publish "$S/s.lua" --data "$D" --out "$T/b.tar.gz"
members=$(python3 "$SRC/tests/data/tamper.py" list "$T/b.tar.gz")
check_grep "the bundle holds v0's inputs" "inp/inputs/v0/work.sh" "$members"
check_grep "the bundle holds v1's inputs" "inp/inputs/v1/conf/a.cfg" "$members"
expect 0 "verify BUNDLE" "$PREREG" verify "$T/b.tar.gz"
# A reader analyses and reports the bundle: its sheet is a frozen version,
# whose inputs are the copies the bundle carries, not files beside it.
expect 0 "analyze BUNDLE of a sheet with inputs" "$PREREG" analyze "$T/b.tar.gz"
check_grep "analyze BUNDLE gives the status line" "^status: " "$out"
expect 0 "report BUNDLE of a sheet with inputs" \
  "$PREREG" report "$T/b.tar.gz" --out "$T/bundle-report"
check "report BUNDLE writes report.md" test -s "$T/bundle-report/report.md"
python3 "$SRC/tests/data/tamper.py" edit "$T/b.tar.gz" "$T/e.tar.gz" \
  inp/inputs/v0/work.sh "exit 8" "exit 0"
expect 1 "verify BUNDLE: an input edited and the manifests signed anew" \
  "$PREREG" verify "$T/e.tar.gz"
check_grep "it names the input against its version's record" \
  "inputs/v0/work.sh: sha256 [0-9a-f]{12}, but versions/v0.json records ${old:0:12}" "$out"
python3 "$SRC/tests/data/tamper.py" remove "$T/b.tar.gz" "$T/r.tar.gz" inp/inputs/v1/work.sh
expect 1 "verify BUNDLE: an input removed" "$PREREG" verify "$T/r.tar.gz"
check_grep "it names the missing input" "inputs/v1/work.sh: missing" "$out"

# --- check: a command's file the lock does not cover; links; the limit ----
sed -e 's/"work.sh", "conf\/"/"conf\/"/' -e 's/id = "inp"/id = "inq"/' "$S/s.lua" >"$S/u.lua"
expect 0 "check warns, never fails" "$PREREG" check "$S/u.lua"
check_grep "the warning names the file" 'warning: .* runs work.sh, a file of the sheet.s folder that `inputs` does not list' "$out"
expect 0 "check of the sheet that lists it" "$PREREG" check "$S/s.lua"
check "no warning of the inputs then" bash -c '! grep -q "^warning: .*inputs" <<<"$1"' _ "$out"
ln -s /etc/hostname "$S/conf/link"
expect 2 "check refuses a link in an input folder" "$PREREG" check "$S/s.lua"
check_grep "it names the link" "inputs: conf/link is a symbolic link" "$out"
expect 2 "register refuses it too" "$PREREG" register "$S/u.lua" --data "$D"
rm "$S/conf/link"
sed -e 's/"work.sh", "conf\/"/"..\/elsewhere"/' -e 's/id = "inp"/id = "inr"/' "$S/s.lua" >"$S/v.lua"
expect 2 "an input outside the sheet's folder" "$PREREG" check "$S/v.lua"
check_grep "it says why" "leaves the sheet's folder" "$out"
truncate -s 17G "$S/conf/big.bin"
expect 2 "inputs over the size limit" "$PREREG" register "$S/u.lua" --data "$D"
check_grep "the limit is named" "inputs: more than 16 GiB together \(at conf/big.bin" "$out"
check "nothing registered" [ ! -e "$D/inq" ]
rm "$S/conf/big.bin"

# --- a sheet without inputs: nothing of the above in its files ------------
sed -e '/inputs = /d' -e 's/id = "inp"/id = "plain"/' -e 's/{sheet_dir}\/work.sh/work.sh/' \
  "$S/s.lua" >"$S/p.lua"
expect 0 "register a sheet without inputs" "$PREREG" register "$S/p.lua" --data "$D"
check "its version has no inputs key" bash -c '! grep -q "\"inputs\"" "$1"' _ "$D/plain/versions/v0.json"
check "and no inputs folder" [ ! -e "$D/plain/inputs" ]

done_testing 54
