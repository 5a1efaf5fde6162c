#!/usr/bin/env bash
# paths.sh: a data folder someone else prepared (a cloned repository):
# links, FIFOs and planted temporary names where prereg writes, freezes
# or recovers. Each must be refused by name and left as it is, and
# nothing outside the folder may change: not its content, not its mode.
# Also: a report is written all or none when the disk fills up.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"

sheet s.lua pt "{ name = \"w\", runs = 2, cmd = \"true\" }" \
  "{ name = \"imp\", metrics = { \"wall_s\" } }"
printf 'workload,arm,metric,value\nimp,a,wall_s,1.0\nimp,a,wall_s,1.1\nimp,a,wall_s,1.2\nimp,b,wall_s,2.0\nimp,b,wall_s,2.1\nimp,b,wall_s,2.2\n' >imp.csv
printf 'workload,arm,metric,value\nimp,a,wall_s,1.3\nimp,b,wall_s,2.3\n' >more.csv

# An experiment with one frozen batch: $D/pt is $E.
fresh() {
  D=$T/data-$1
  E=$D/pt
  "$PREREG" register s.lua --data "$D" >/dev/null || bad "$1: register"
  "$PREREG" run s.lua --data "$D" --only w >/dev/null 2>&1 || bad "$1: run"
}
# The outside: a file and a folder with a file, modes that prereg would
# change; their state is compared before and after.
outside() {
  O=$T/outside-$1
  mkdir -p "$O/dir"
  printf 'not yours\n' >"$O/file"
  printf 'not yours either\n' >"$O/dir/inner"
  chmod 0600 "$O/file" "$O/dir/inner"
  chmod 0700 "$O/dir"
  state "$O" >"$O.before"
}
state() { (cd "$1" && find . -printf '%p %m %s\n' | sort && find . -type f -exec sha256sum {} + | sort); }
untouched() { state "$O" | cmp -s - "$O.before"; }
in_manifest() { grep -q "$1" "$E/MANIFEST"; }

scenario "--resume: an unfinished batch whose csv is a link"
fresh 1
outside 1
# What a crash leaves, but pointing outside: the target is a valid
# batch start, so that only the link makes it wrong.
head -1 "$E/batches/b0001.csv" >"$O/file" && chmod 0600 "$O/file"
state "$O" >"$O.before"
ln -s "$O/file" "$E/batches/b0002.csv"
expect 1 "csv link: --resume refuses" "$PREREG" run s.lua --data "$D" --resume
check_grep "csv link: names it" "b0002.csv: is a symbolic link" "$out"
check "csv link: the target's content and mode unchanged" untouched
check "csv link: not in the MANIFEST" bash -c "! grep -q b0002 '$E/MANIFEST'"
check "csv link: the link is left" test -L "$E/batches/b0002.csv"

scenario "--resume: an unfinished batch whose folder is a link"
fresh 2
outside 2
head -1 "$E/batches/b0001.csv" >"$E/batches/b0002.csv"
ln -s "$O/dir" "$E/batches/b0002"
expect 1 "folder link: --resume refuses" "$PREREG" run s.lua --data "$D" --resume
check_grep "folder link: names it" "batches/b0002: is a symbolic link" "$out"
check "folder link: the outside folder's modes and files unchanged" untouched
check "folder link: nothing of it in the MANIFEST" bash -c "! grep -q 'b0002/' '$E/MANIFEST'"

scenario "--resume: the batches folder is a link"
fresh 11
outside 11
cp -a "$E/batches/." "$O/dir/" && head -1 "$E/batches/b0001.csv" >"$O/dir/b0002.csv"
chmod 0600 "$O/dir/b0002.csv"
state "$O" >"$O.before"
chmod -R u+w "$E/batches" && rm -rf "$E/batches" && ln -s "$O/dir" "$E/batches"
expect 1 "batches link: --resume refuses" "$PREREG" run s.lua --data "$D" --resume
check_grep "batches link: names it" "pt/batches: is a symbolic link" "$out"
check "batches link: nothing outside changed" untouched

scenario "report: planted probe and workbook temporary names"
fresh 3
outside 3
"$PREREG" import s.lua imp.csv --data "$D" >/dev/null || bad "import"
mkdir -p "$E/report"
ln -s "$O/file" "$E/report/.prereg-write-probe"
ln -s "$O/dir/inner" "$E/report/.report.xlsx.tmp"
expect 0 "planted names: report still works" "$PREREG" report s.lua --data "$D"
check "planted names: the targets unchanged" untouched
check "planted names: report.xlsx is a file of its own" bash -c "[ -f '$E/report/report.xlsx' ] && [ ! -L '$E/report/report.xlsx' ]"
check "planted names: no staging folder left" bash -c "! ls -a '$E' '$D' | grep -q 'tmp\.'"

scenario "report: the staging folder a killed report left"
mkdir -p "$E/.report.tmp.999999999/deep" && touch "$E/.report.tmp.999999999/deep/report.md"
expect 0 "stale staging: report works" "$PREREG" report s.lua --data "$D"
check "stale staging: removed (its writer is gone)" test ! -e "$E/.report.tmp.999999999"

scenario "report: a link where a report file goes"
rm -f "$E/report/report.html"
ln -s "$O/file" "$E/report/report.html"
md_before=$(sha256sum "$E/report/report.md")
expect 1 "link as report.html: refused" "$PREREG" report s.lua --data "$D"
check_grep "link as report.html: names it" "report.html: is a symbolic link" "$out"
check "link as report.html: the target unchanged" untouched
check "link as report.html: nothing else replaced" bash -c "[ \"\$(sha256sum '$E/report/report.md')\" = '$md_before' ]"
rm -f "$E/report/report.html"
"$PREREG" report s.lua --data "$D" >/dev/null || bad "report again"
# The analysis and the provenance are report files too: a link there is
# refused as well (a rename would have replaced it without a word).
for f in analysis.json provenance.md; do
  rm -f "$E/report/$f"
  ln -s "$O/file" "$E/report/$f"
  md_before=$(sha256sum "$E/report/report.md")
  expect 1 "link as $f: refused" "$PREREG" report s.lua --data "$D"
  check_grep "link as $f: names it" "$f: is a symbolic link" "$out"
  check "link as $f: still the link" test -L "$E/report/$f"
  check "link as $f: the target unchanged" untouched
  check "link as $f: nothing else replaced" bash -c "[ \"\$(sha256sum '$E/report/report.md')\" = '$md_before' ]"
  rm -f "$E/report/$f"
done

scenario "report --out: the folder itself is a link"
ln -s "$O/dir" "$T/out-link"
expect 1 "--out link: refused" "$PREREG" report s.lua --data "$D" --out "$T/out-link"
check_grep "--out link: names it" "out-link: is a symbolic link" "$out"
check "--out link: nothing written into the target" untouched

scenario "atomic write: a planted MANIFEST.tmp.PID link"
fresh 4
outside 4
# exec keeps the shell's pid, so the planted name is the one prereg uses.
expect 1 "MANIFEST temp link: import refuses" bash -c \
  "ln -s '$O/file' '$E/MANIFEST.tmp.'\$\$ && exec '$PREREG' import s.lua imp.csv --data '$D'"
check_grep "MANIFEST temp link: names it" "MANIFEST\.tmp\.[0-9]+: is a symbolic link" "$out"
check "MANIFEST temp link: the target unchanged" untouched
check "MANIFEST temp link: MANIFEST is still a file" bash -c "[ -f '$E/MANIFEST' ] && [ ! -L '$E/MANIFEST' ]"
rm -f "$E"/MANIFEST.tmp.*

scenario "the MANIFEST replaced by a FIFO"
fresh 5
chmod u+w "$E"
rm -f "$E/MANIFEST"
mkfifo "$E/MANIFEST"
expect 1 "FIFO MANIFEST: import refuses at once" timeout 20 "$PREREG" import s.lua imp.csv --data "$D"
check_grep "FIFO MANIFEST: names it" "MANIFEST: is a FIFO" "$out"
check "FIFO MANIFEST: left as it is" test -p "$E/MANIFEST"

scenario "--resume: a link named like a temporary file of a dead prereg"
fresh 6
outside 6
ln -s "$O/file" "$E/MANIFEST.tmp.999999999"
expect 1 "temp-named link: --resume refuses" "$PREREG" run s.lua --data "$D" --resume
check_grep "temp-named link: names it" "MANIFEST.tmp.999999999: is named like a temporary file" "$out"
check "temp-named link: left as it is" test -L "$E/MANIFEST.tmp.999999999"
check "temp-named link: the target unchanged" untouched

scenario "the lock file is a link"
fresh 7
outside 7
rm -f "$E/.lock"
ln -s "$O/new-file" "$E/.lock"
expect 1 "lock link: run refuses" "$PREREG" run s.lua --data "$D" --resume
check_grep "lock link: names it" "\.lock: is a symbolic link" "$out"
check "lock link: nothing created through it" test ! -e "$O/new-file"
check "lock link: the outside unchanged" untouched

scenario "a frozen batch replaced by a FIFO"
fresh 8
chmod u+w "$E/batches"
mv "$E/batches/b0001.csv" "$T/b0001.csv.saved"
mkfifo "$E/batches/b0001.csv"
expect 1 "FIFO batch: analyze refuses at once" timeout 20 "$PREREG" analyze s.lua --data "$D"
check_grep "FIFO batch: names it" "b0001.csv: is a FIFO" "$out"
expect 1 "FIFO batch: verify refuses at once" timeout 20 "$PREREG" verify s.lua --data "$D"

scenario "--resume: a FIFO and a link a cut-short run left in its folder"
fresh 9
outside 9
head -1 "$E/batches/b0001.csv" >"$E/batches/b0002.csv"
mkdir -p "$E/batches/b0002/b0002-0001.work"
mkfifo "$E/batches/b0002/b0002-0001.metrics"
ln -s "$O/file" "$E/batches/b0002/b0002-0001.work/out"
expect 0 "leftovers: --resume goes on" timeout 60 "$PREREG" run s.lua --data "$D" --resume
check_grep "leftovers: says what it removed" "b0002-0001.metrics: not a regular file.*removed" "$out"
check "leftovers: the link's target unchanged" untouched
check "leftovers: verify passes" "$PREREG" verify s.lua --data "$D"

scenario "a measured command leaves a link where prereg lists its processes"
outside 11
D=$T/data-11
E=$D/pl
# The run's prepare links the batch's process lists (NAME.procs.tsv,
# written when pss is sampled) to a file outside: before the command
# starts, so before the sample (0.3 s into a command of 3 s) on any
# machine.
sheet pl.lua pl "{ name = \"p\", runs = 1, metrics = { \"wall_s\", \"pss_mib\" }, sample_after_s = 0.3, prepare = \"sh -c 'for r in 1 2 3; do ln -s $O/file $E/batches/b0001/b0001-000\$r.procs.tsv 2>/dev/null; done; true'\", cmd = \"sleep 3\" }"
"$PREREG" register pl.lua --data "$D" >/dev/null || bad "process list: register"
expect 1 "process list link: the run cannot freeze it" timeout 60 "$PREREG" run pl.lua --data "$D"
check_grep "process list link: named, not written" "b0001-0001.procs.tsv: is a symbolic link, not a regular file" "$out"
check "process list link: the outside unchanged" untouched

scenario "report BUNDLE --out DIR: planted names in and beside DIR"
fresh 12
outside 12
"$PREREG" import s.lua imp.csv --data "$D" >/dev/null || bad "bundle out: import"
"$PREREG" publish s.lua --data "$D" --out "$T/pt12.tar.gz" >/dev/null || bad "bundle out: publish"
R=$T/rep12
mkdir -p "$R" "$T/tmp12"
export TMPDIR=$T/tmp12 # where the bundle is extracted; checked empty at the end
# Names earlier versions wrote through, and a link for each file the
# report writes: the report must not write through any of them.
ln -s "$O/file" "$R/.prereg-write-probe"
ln -s "$O/dir/inner" "$R/.report.xlsx.tmp"
expect 0 "bundle out, old temporary names: report works" "$PREREG" report "$T/pt12.tar.gz" --out "$R"
check "bundle out, old temporary names: the targets unchanged" untouched
check "bundle out, old temporary names: report.xlsx is a file of its own" bash -c "[ -f '$R/report.xlsx' ] && [ ! -L '$R/report.xlsx' ]"
check "bundle out, old temporary names: the links left as they were" bash -c "[ \"\$(readlink '$R/.prereg-write-probe')\" = '$O/file' ] && [ \"\$(readlink '$R/.report.xlsx.tmp')\" = '$O/dir/inner' ]"
for f in report.xlsx report.html; do
  rm -f "$R/$f"
  ln -s "$O/file" "$R/$f"
  md_before=$(sha256sum "$R/report.md")
  expect 1 "bundle out, link as $f: refused" "$PREREG" report "$T/pt12.tar.gz" --out "$R"
  check_grep "bundle out, link as $f: names it" "$f: is a symbolic link" "$out"
  check "bundle out, link as $f: still the link" test -L "$R/$f"
  check "bundle out, link as $f: the target unchanged" untouched
  check "bundle out, link as $f: nothing else replaced" bash -c "[ \"\$(sha256sum '$R/report.md')\" = '$md_before' ]"
  rm -f "$R/$f"
done
# The staging folder beside DIR is named after prereg's pid: exec keeps
# the shell's, so the planted link is at the very name prereg uses.
before=$(cd "$R" && sha256sum -- * | sort)
expect 1 "bundle out, link as the staging folder: refused" bash -c \
  "ln -s '$O/dir' '$T/.rep12.tmp.'\$\$ && exec '$PREREG' report '$T/pt12.tar.gz' --out '$R'"
check_grep "bundle out, link as the staging folder: names it" "\.rep12\.tmp\.[0-9]+: cannot create the report's staging folder" "$out"
check "bundle out, link as the staging folder: the target unchanged" untouched
check "bundle out, link as the staging folder: the link left" bash -c "ls -d '$T'/.rep12.tmp.* | grep -q . && [ -L \"\$(ls -d '$T'/.rep12.tmp.* | head -1)\" ]"
check "bundle out, link as the staging folder: the report folder unchanged" bash -c "[ \"\$(cd '$R' && sha256sum -- * | sort)\" = '$before' ]"
check "bundle out: no extracted copy left ($(ls -A "$TMPDIR"))" test -z "$(ls -A "$TMPDIR")"
unset TMPDIR
rm -f "$T"/.rep12.tmp.*

scenario "report: the disk fills up half-way"
fresh 10
"$PREREG" import s.lua imp.csv --data "$D" >/dev/null || bad "import"
R=$T/rep10
"$PREREG" report s.lua --data "$D" --out "$R" >/dev/null || bad "first report"
(cd "$R" && sha256sum * | sort) >rep.before
ls -a "$R" >rep.names
"$PREREG" import s.lua more.csv --data "$D" >/dev/null || bad "second import"
# 8 KiB per file: report.md (about 5 KiB) fits, report.html does not, so
# the new report fails in the middle. RLIMIT_FSIZE fails a write past it
# as a full disk does, exactly where wanted on any file system.
expect 1 "disk full: report fails" bash -c "trap '' XFSZ; ulimit -f 8; exec '$PREREG' report s.lua --data '$D' --out '$R'"
check_grep "disk full: says why" "File too large|No space" "$out"
check "disk full: the old report is whole, byte for byte" bash -c "cd '$R' && sha256sum * | sort | cmp -s - '$T/rep.before'"
check "disk full: no new file in the report folder" bash -c "ls -a '$R' | cmp -s - '$T/rep.names'"
check "disk full: no staging folder left" bash -c "! ls -a '$T' | grep -q '^\.rep10\.tmp'"
expect 0 "disk full: with room, the report is written" "$PREREG" report s.lua --data "$D" --out "$R"
check "with room: the new report replaced the old" bash -c "cd '$R' && ! sha256sum * | sort | cmp -s - '$T/rep.before'"

report_scenarios
done_testing 40
