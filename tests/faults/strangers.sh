#!/usr/bin/env bash
# strangers.sh: a stranger's experiment (a sheet, its folder, a bundle, a
# foreign results file) can neither run code on the reader nor draw on
# their terminal. Each attack beside a control that shows it reaches its
# target: control characters in every text field of a sheet (refused at
# check, naming the field) and a command hidden by CR and ESC [2K; a whole
# life cycle in folders whose names hold ESC, OSC 8 and a shell command,
# with commands that print control bytes, none of which reaches stdout or
# stderr raw; a bundle member named to clear the screen; dot-files and
# links among the inputs and in a bundle; {sheet_dir} in a folder named
# "st;touch X;x"; a bundle's name that would end the replication sheet's
# header comment, and a published ratio the original's data do not give;
# import's suggested --arm-from for a name holding a quote.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"
: "${SRC:?}"
export COLUMNS=200
TAMPER=$SRC/tests/data/tamper.py
ESC=$'\033'

# raw_free FILE...: no control byte but newline and tab (C0, DEL, C1 in
# UTF-8) in any of the files.
raw_free() {
  python3 - "$@" <<'PY'
import re, sys
bad = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")
for f in sys.argv[1:]:
    m = bad.search(open(f, "rb").read())
    if m:
        sys.exit("%s: raw control byte %r at %d" % (f, m.group(), m.start()))
PY
}
# cmd LOG EXPECTED-EXIT NAME ARGS...: runs prereg, checking its exit
# status; its stdout and stderr, byte for byte, appended to LOG.
cmd() {
  local log=$1 want=$2 name=$3
  shift 3
  expect "$want" "$name" "$PREREG" "$@"
  printf '%s\n' "$out" >>"$log"
}

base_sheet() { # base_sheet ID TITLE RUN-OF-B: a clean sheet
  cat <<LUA
protocol {
  id = "$1", title = "$2", question = "Is b slower?", author = "t",
  inputs = { "work.sh" },
  vars = { flag = "-x" },
  arms = { { name = "a", reference = true, run = "sh {sheet_dir}/work.sh a && {cmd}" },
           { name = "b", run = "$3" } },
  workloads = { { name = "w", runs = 3, cmd = "true" } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 3,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1 } } },
  hypotheses = { { id = "H1", says = "b is slower", workload = "w",
                   metric = "wall_s", arms = { "b" },
                   claim = verdict_is("slower") } },
  threats = { "the host is shared" },
  amendments = {},
}
LUA
}

scenario "control characters in each of the nine text fields"
mkdir -p "$T/fields" && cd "$T/fields" || exit 1
echo 'exit 0' >work.sh
base_sheet f "Fields" "sh {sheet_dir}/work.sh b && {cmd}" >clean.lua
expect 0 "control: the clean sheet passes check" "$PREREG" check clean.lua
# field: the Lua pattern (in clean.lua) the payload is appended to, and
# the field's path in the message.
fields=(
  'title = "Fields|title'
  'question = "Is b slower?|question'
  'author = "t|author'
  'flag = "-x|vars.flag'
  'run = "sh {sheet_dir}/work.sh b|arms\[2\]\.run'
  'cmd = "true|workloads\[1\]\.cmd'
  'says = "b is slower|hypotheses\[1\]\.says'
  '"the host is shared|threats\[1\]'
)
payloads=('\27[2K' '\r' '\7' '\27]8;;http://evil/\27\\x\27]8;;\27\\')
names=(ESC CR BEL OSC8)
for f in "${fields[@]}"; do
  pat=${f%%|*} field=${f#*|}
  for i in 0 1 2 3; do
    python3 - "$pat" "${payloads[$i]}" clean.lua >bad.lua <<'PY'
import sys
pat, payload = sys.argv[1], sys.argv[2]
text = open(sys.argv[3]).read()
assert pat in text, pat
sys.stdout.write(text.replace(pat, pat + payload, 1))
PY
    expect 2 "$field ${names[$i]}: check refuses" "$PREREG" check bad.lua
    check_grep "$field ${names[$i]}: names the file, line and field" \
      "bad\.lua:[0-9]+: $field: holds a control character" "$out"
  done
done
# The ninth field: an amendment's why, in a sheet registered clean.
expect 0 "register the clean sheet" "$PREREG" register clean.lua --data d
python3 - clean.lua >amended.lua <<'PY'
import sys
sys.stdout.write(open(sys.argv[1]).read().replace("amendments = {}", """amendments = {
    { date = "2026-12-01", why = "more runs\\27[1A\\27[2Kapproved" } }""")
  .replace("runs = 3", "runs = 4"))
PY
expect 2 "amendment why ESC: amend refuses" "$PREREG" amend amended.lua --data d
check_grep "amendment why: names the field" \
  "amended\.lua:[0-9]+: amendments\[1\]\.why: holds a control character" "$out"
sed 's/\\27\[1A\\27\[2K/ and /' amended.lua >amended-ok.lua
expect 0 "control: the same amendment without ESC is recorded" "$PREREG" amend amended-ok.lua --data d

scenario "a command hidden by CR and ESC [2K"
hidden='touch X; nice -n 10 {cmd} #\r\27[2K  arm nice   nice -n 10 {cmd}'
base_sheet h "Hidden" "$hidden" >hidden.lua
expect 2 "check refuses the hidden command" "$PREREG" check hidden.lua
check_grep "naming the arm's run" "hidden\.lua:[0-9]+: arms\[2\]\.run: holds a control character \(byte [0-9]+ of the string, 0x0D\)" "$out"
base_sheet h "Hidden" "touch X; nice -n 10 {cmd} #  arm nice   nice -n 10 {cmd}" >shown.lua
expect 0 "control: without CR and ESC it passes" "$PREREG" check shown.lua
check_grep "and the listing shows all of it" "touch X; nice -n 10" "$out"

scenario "a whole life cycle in hostile folders prints no raw control byte"
SD="$T/st${ESC}[2J;touch X;x My Studies"
DD="$T/data${ESC}]8;;http://evil/${ESC}\\"
mkdir -p "$SD" "$T/cwd" && cd "$SD" || exit 1
printf 'printf "out\\033[2J\\r\\a\\n"; printf "err\\033]8;;http://x\\033\\\\\\n" >&2\n[ "$1" = b ] && [ -e %s/fail ] && exit 3\nexit 0\n' "$T" >work.sh
base_sheet life "Life" "sh {sheet_dir}/work.sh b && {cmd}" >s.lua
L=$T/life.log
: >"$L"
cmd "$L" 0 "check" check s.lua
cmd "$L" 0 "register" register s.lua --data "$DD"
cmd "$L" 0 "run --dry-run" run s.lua --data "$DD" --dry-run
check_grep "{sheet_dir} is shown quoted, ESC escaped" "sh '$T/st\\\\033\[2J;touch X;x My Studies'/work.sh b" "$out"
touch "$T/fail"
expect 1 "run: b's runs fail, printing control bytes" "$PREREG" run s.lua --data "$DD"
printf '%s\n' "$out" >>"$L"
rm "$T/fail"
check "no file X from the folder's name" test ! -e X -a ! -e "$T/cwd/X"
cmd "$L" 0 "run --resume" run s.lua --data "$DD" --resume
python3 - s.lua >s2.lua <<'PY'
import sys
sys.stdout.write(open(sys.argv[1]).read().replace("amendments = {}", """amendments = {
    { date = "2026-12-01", why = "one more run" } }""").replace("runs = 3", "runs = 4"))
PY
mv s2.lua s.lua
cmd "$L" 0 "amend" amend s.lua --data "$DD"
cmd "$L" 0 "run after the amendment" run s.lua --data "$DD" --resume
cmd "$L" 0 "status" status s.lua --data "$DD"
cmd "$L" 0 "analyze" analyze s.lua --data "$DD"
cmd "$L" 0 "report" report s.lua --data "$DD" --out "$T/rep${ESC}[H"
cmd "$L" 0 "export" export s.lua --data "$DD"
cmd "$L" 0 "publish" publish s.lua --data "$DD" --out "$T/life${ESC}[2J.tar.gz"
cmd "$L" 0 "verify the folder" verify s.lua --data "$DD"
cmd "$L" 0 "verify the bundle" verify "$T/life${ESC}[2J.tar.gz"
cd "$T/cwd" || exit 1
cmd "$L" 0 "replicate" replicate "$T/life${ESC}[2J.tar.gz" --data "$DD"
check_grep "replicate lists the commands" "arm b run +sh \{sheet_dir\}/work.sh b" "$out"
cmd "$L" 2 "a hostile sheet: check" check "$T/fields/hidden.lua"
cmd "$L" 2 "a hostile sheet: register" register "$T/fields/hidden.lua" --data "$DD"
cmd "$L" 2 "a hostile sheet: run --dry-run" run "$T/fields/hidden.lua" --dry-run --data "$DD"
check "stdout and stderr of every command: no raw control byte" raw_free "$L"
check_grep "control: the names were printed, escaped" 'data\\033\]8;;http://evil/\\033\\' "$(cat "$L")"
check "control: the commands did print control bytes (into the run's log)" \
  grep -rqa "$ESC\[2J" "$DD/life/batches"
unzip -p "$T/rep${ESC}[H/report.xlsx" docProps/core.xml >core.xml
check_grep "report.xlsx: the title is in core.xml" "<dc:title>Life</dc:title>" "$(cat core.xml)"
check "report.xlsx: core.xml holds no control byte" raw_free core.xml

scenario "a bundle member named to clear the screen"
cd "$T" || exit 1
B="$T/life${ESC}[2J.tar.gz"
python3 "$TAMPER" add "$B" screen.tar.gz "life/${ESC}[H${ESC}[2Jok: experiment life verified" || bad "tamper"
expect 1 "verify fails" "$PREREG" verify screen.tar.gz
printf '%s' "$out" >screen.log
check "no raw ESC in its output" raw_free screen.log
check_grep "the name shown escaped" 'life/\\033\[H\\033\[2Jok' "$out"

scenario "dot-files and links among the inputs"
mkdir -p "$T/in/real/.vscode" "$T/in/.git" && cd "$T/in" || exit 1
echo key >real/id_rsa
echo x >real/.vscode/tasks.json
ln -s real cfg
for spec in '.git|".git" has a name starting with' '.envrc|".envrc" has a name starting with' \
  './work.sh|"./work.sh" has a name starting with' \
  'real/|real/\.vscode: a name starting with' \
  'cfg/id_rsa|cfg/id_rsa: cfg is a symbolic link'; do
  input=${spec%%|*} msg=${spec#*|}
  sed "s|\"work.sh\"|\"$input\"|" "$T/fields/clean.lua" >in.lua
  expect 2 "input $input: check refuses" "$PREREG" check in.lua
  check_grep "input $input: says why" "$msg" "$out"
done
rm -r real/.vscode
sed 's|"work.sh"|"real/id_rsa"|' "$T/fields/clean.lua" >in.lua
expect 0 "control: real/id_rsa, no link on its way, passes" "$PREREG" check in.lua
sed 's|"work.sh"|"real/"|' "$T/fields/clean.lua" >in.lua
expect 0 "control: the folder without its dot-folder passes" "$PREREG" check in.lua

scenario "a bundle carrying a .git folder among the inputs"
mkdir -p "$T/dot/conf" && cd "$T/dot" || exit 1
echo 'exit 0' >conf/hooks
sed -e 's|"work.sh"|"conf/"|' -e 's|id = "f"|id = "dot"|' "$T/fields/clean.lua" >s.lua
expect 0 "register" "$PREREG" register s.lua --data d
expect 0 "publish" "$PREREG" publish s.lua --data d --out dot.tar.gz
# rename MEMBER-TAIL NEW-TAIL OUT: the member and every mention of it
# (MANIFEST, the version's record), signed again.
rename() {
  python3 - dot.tar.gz "$3" "$1" "$2" <<'PY'
import hashlib, io, sys, tarfile
src, out, old, new = sys.argv[1:]
ms = []
with tarfile.open(src, "r:gz") as t:
    for m in t.getmembers():
        ms.append((m, t.extractfile(m).read() if m.isfile() else None))
for m, d in ms:
    if m.name.endswith(old):
        m.name = m.name[: -len(old)] + new
ms = [(m, d.replace(old.encode(), new.encode()) if d is not None and m.name.endswith((".json", "MANIFEST")) else d) for m, d in ms]
top = ms[0][0].name.split("/")[0]
files = {m.name[len(top) + 1:]: d for m, d in ms if d is not None}
lines = []
for line in files["MANIFEST"].decode().splitlines():
    rel = line[66:]
    lines.append(hashlib.sha256(files[rel]).hexdigest() + "  " + rel if rel in files else line)
files["MANIFEST"] = ("\n".join(lines) + "\n").encode()
bm = ["# prereg bundle 1"] + ["%s %d %s" % (hashlib.sha256(files[r]).hexdigest(), len(files[r]), r)
                              for r in sorted(files) if r != "BUNDLE-MANIFEST"]
files["BUNDLE-MANIFEST"] = ("\n".join(bm) + "\n").encode()
with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as t:
    for m, d in ms:
        if d is None:
            t.addfile(m)
        else:
            d = files[m.name[len(top) + 1:]]
            m.size = len(d)
            t.addfile(m, io.BytesIO(d))
PY
}
rename conf/hooks conf/xgit/config plain.tar.gz
rename conf/hooks conf/.git/config git.tar.gz
mkdir r1 r2
(cd r1 && expect 0 "control: a bundle with conf/xgit/config replicates" "$PREREG" replicate ../plain.tar.gz --data d)
check "control: its file is beside the sheet" test -f r1/protocols/conf/xgit/config
(cd r2 && expect 2 "replicate refuses conf/.git/config" "$PREREG" replicate ../git.tar.gz --data d
 check_grep "naming the member and why" "inputs/v0/conf/\.git/config.*a name starting with '\.'" "$out")
check "nothing of it written" test ! -e r2/protocols/conf/.git

scenario "{sheet_dir} in a folder named 'st;touch X;x'"
mkdir -p "$T/st;touch X;x" && cd "$T/st;touch X;x" || exit 1
echo 'exit 0' >work.sh
base_sheet sd "Dir" "sh {sheet_dir}/work.sh b && {cmd}" >s.lua
expect 0 "register" "$PREREG" register s.lua --data "$T/sd-data"
expect 0 "run" "$PREREG" run s.lua --data "$T/sd-data"
check_grep "every run valid" "6 valid" "$out"
check "touch X ran nowhere" test ! -e X -a ! -e "$T/X"
mkdir -p "$T/plain" && cp work.sh s.lua "$T/plain/" && cd "$T/plain" || exit 1
expect 0 "control: register" "$PREREG" register s.lua --data "$T/sd-data2"
expect 0 "control: the same sheet in a plain folder" "$PREREG" run s.lua --data "$T/sd-data2"
check_grep "control: every run valid" "6 valid" "$out"

scenario "a bundle's name that would end the header comment; a published ratio the data do not give"
mkdir -p "$T/pub" && cd "$T/pub" || exit 1
cat >s.lua <<'LUA'
protocol {
  id = "po", title = "Pub", question = "Is b slower?", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", runs = 6, source = "import", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 3,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.1 } } },
}
LUA
{ echo workload,arm,metric,value
  for i in 0 1 2 3 4 5; do echo "w,a,wall_s,1.0$i"; echo "w,b,wall_s,2.0$i"; done; } >v.csv
expect 0 "register" "$PREREG" register s.lua --data d
expect 0 "import" "$PREREG" import s.lua v.csv --data d
evil=$'x\nlocal p0 = protocol\nfunction protocol(t) t.published[1].ratio = 42 return p0(t) end\n--.tar.gz'
expect 0 "publish" "$PREREG" publish s.lua --data d --out "$evil"
mkdir rep rep2 && cd rep || exit 1
expect 0 "replicate the bundle with a newline in its name" "$PREREG" replicate "../$evil" --data d2
S=protocols/po-replication.lua
check_grep "its name is quoted in the comment" '^-- prereg replicate from \.\./x\\nlocal p0' "$(cat "$S")"
check "no line of it is code" test -z "$(grep -n '^function protocol' "$S")"
check_grep "control: its published ratio is the original's" '^      ratio = 1\.97' "$(cat "$S")"
expect 0 "register the replication" "$PREREG" register "$S" --data d2
expect 0 "import its values" "$PREREG" import "$S" ../v.csv --data d2
expect 0 "control: analyze --json" "$PREREG" analyze "$S" --data d2 --json
check_grep "control: replicated" '"outcome": "replicated"' "$out"
cd ../rep2 || exit 1
expect 0 "replicate again" "$PREREG" replicate "../$evil" --data d3
python3 - "$S" <<'PY'
import re, sys
p = sys.argv[1]
t = open(p).read()
open(p, "w").write(re.sub(r"\n      ratio = [0-9.e+-]+", "\n      ratio = 42", t, count=1))
PY
check_grep "the published ratio edited" '^      ratio = 42' "$(cat "$S")"
expect 0 "register the edited replication" "$PREREG" register "$S" --data d3
expect 0 "import its values" "$PREREG" import "$S" ../v.csv --data d3
expect 0 "an edited published ratio: analyze --json" "$PREREG" analyze "$S" --data d3 --json
check_grep "said: not the original's" '"outcome": "not replicated".*published ratio 42 is not the 1\.97[0-9]* the original.s data give' "$(tr -d '\n' <<<"$out")"

scenario "import's suggested --arm-from for a name holding a quote"
mkdir -p "$T/imp" && cd "$T/imp" || exit 1
cat >s.lua <<'LUA'
protocol {
  id = "im", title = "Imp", question = "Q?", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", source = "import", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 3,
           verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
expect 0 "register" "$PREREG" register s.lua --data d
python3 - <<'PY'
import json
def r(name):
    return {"command": name, "mean": 0.1, "stddev": 0.01, "median": 0.1,
            "user": 0.05, "system": 0.01, "min": 0.09, "max": 0.11,
            "times": [0.1, 0.11, 0.09], "exit_codes": [0, 0, 0]}
json.dump({"results": [r("x'; touch PWNED; echo '")]}, open("hf.json", "w"))
json.dump({"results": [r("plain name")]}, open("ok.json", "w"))
PY
expect 2 "an unmapped name is refused" "$PREREG" import s.lua hf.json --data d
hint=$(sed -n "s/.*map it with --arm-from \(.*\), or name each command.*/\1/p" <<<"$out")
check "a hint is given" test -n "$hint"
sh -c "printf '%s' $hint" >word.txt
check "pasted, it is one word: the name and =ARM" test "$(cat word.txt)" = "x'; touch PWNED; echo '=ARM"
check "and runs nothing" test ! -e PWNED
expect 2 "control: a plain name gets a hint too" "$PREREG" import s.lua ok.json --data d
check_grep "control: quoted the same way" "--arm-from 'plain name=ARM'" "$out"

echo "strangers.sh: $scenarios scenarios"
done_testing 152
