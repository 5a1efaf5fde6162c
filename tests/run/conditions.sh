#!/usr/bin/env bash
# conditions.sh: the machine's conditions through the CLI, on fabricated
# hosts (PREREG_HOST_ROOT: /proc and /sys files in a folder of the test's,
# so nothing depends on this machine's real load or governor): every row
# carries the six facts, empty where the host has no source; a registered
# max_load waits on a busy host, then keeps its runs uncounted with the
# reason, and `run --resume` takes them again once it is quiet; cpus = "0"
# gives a command whose nproc is 1; check warns of arms with different CPU
# sets; `prereg host` prints the facts; a required fact the host does not
# meet refuses the batch before any run; an A/A arm's ratio in the report.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-cond-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"

# host ROOT LOAD: a fabricated host whose 1-minute load is LOAD, with
# cpufreq, throttle counters and vmstat for CPU 0.
host() {
  mkdir -p "$1/proc/sys/kernel" "$1/sys/devices/system/cpu/cpu0/cpufreq" \
    "$1/sys/devices/system/cpu/cpu0/thermal_throttle"
  echo "$2 1.00 0.50 3/200 4242" >"$1/proc/loadavg"
  printf 'pgpgin 1\npswpin 7\npswpout 0\n' >"$1/proc/vmstat"
  echo 2400000 >"$1/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"
  echo performance >"$1/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
  echo 5 >"$1/sys/devices/system/cpu/cpu0/thermal_throttle/core_throttle_count"
  echo 2 >"$1/proc/sys/kernel/randomize_va_space"
}
host busy 3.20
host quiet 0.10
mkdir bare
echo "0.10 0.10 0.10 1/100 42" >bare/loadavg
mkdir -p bare/proc && mv bare/loadavg bare/proc/

cat >cond.lua <<'LUA'
protocol {
  id = "cond", title = "conditions",
  cpus = "0",
  conditions = { max_load = 1.0, wait_s = 1, max_swap_in = 0 },
  arms = { { name = "a", reference = true }, { name = "b" },
           { name = "aa", null = true } },
  workloads = { { name = "w", runs = 3,
                  cmd = "nproc >> {origin}/nproc.txt" } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 7,
           verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
expect 0 "the sheet checks" "$PREREG" check cond.lua
"$PREREG" register cond.lua >/dev/null || bad "register"

# Busy: the wait is told, then every run is kept but not counted.
PREREG_HOST_ROOT=$T/busy "$PREREG" run cond.lua >busy.out 2>busy.err
check "a busy host: run ends (exit 0)" [ $? -eq 0 ]
check_grep "it waits, saying why" \
  "waiting up to 1 s: load 3.2 above the registered 1.0" "$(cat busy.err)"
B1=data/cond/batches/b0001.csv
field() { # field FILE COLUMN: the values of a column, one per row
  python3 -c 'import csv,sys
for r in csv.DictReader(open(sys.argv[1])): print(r[sys.argv[2]])' "$1" "$2"
}
check "9 runs recorded" [ "$(field $B1 valid | wc -l)" -eq 9 ]
check "none of them valid" [ "$(field $B1 valid | sort -u)" = "0" ]
check "each says why, in the registered words" [ "$(field $B1 reason | sort -u)" \
  = "outside the registered conditions: load 3.2 above the registered 1.0" ]
check "load1 recorded" [ "$(field $B1 load1 | sort -u)" = "3.2" ]
check "runnable recorded" [ "$(field $B1 runnable | sort -u)" = "3" ]
check "cpu_mhz recorded" [ "$(field $B1 cpu_mhz | sort -u)" = "2400" ]
check "throttle recorded: no event during the run" [ "$(field $B1 throttle | sort -u)" = "0" ]
check "swap_in recorded: no page" [ "$(field $B1 swap_in | sort -u)" = "0" ]
check "ctxsw_invol recorded, a count" \
  [ -z "$(field $B1 ctxsw_invol | grep -v '^[0-9][0-9]*$')" ]
check "cpus recorded" [ "$(field $B1 cpus | sort -u)" = "0" ]
expect 0 "status" "$PREREG" status cond.lua
check_grep "the busy runs fill no round" "INCOMPLETE \(0/9\)" "$out"
check "cpus = \"0\": the command's nproc is 1" [ "$(sort -u nproc.txt)" = "1" ]

# Quiet: resume takes them again, and they count.
PREREG_HOST_ROOT=$T/quiet "$PREREG" run cond.lua --resume >quiet.out 2>quiet.err
check "a quiet host: run --resume (exit 0)" [ $? -eq 0 ]
check "no wait on a quiet host" test -z "$(grep waiting quiet.err)"
B2=data/cond/batches/b0002.csv
check "resume ran the 9 runs again" [ "$(field $B2 valid | wc -l)" -eq 9 ]
check "all valid now" [ "$(field $B2 valid | sort -u)" = "1" ]
expect 0 "status after resume" "$PREREG" status cond.lua
check_grep "complete" "COMPLETE" "$out"
expect 0 "verify of both formats of facts" "$PREREG" verify cond.lua

# A host without the sources: those facts are empty, never 0.
"$PREREG" register cond.lua --data bare-data >/dev/null || bad "register bare"
PREREG_HOST_ROOT=$T/bare "$PREREG" run cond.lua --data bare-data >/dev/null 2>&1
B3=bare-data/cond/batches/b0001.csv
check "bare host: load1 still recorded" [ "$(field $B3 load1 | sort -u)" = "0.1" ]
for f in cpu_mhz throttle swap_in; do
  check "bare host: $f empty, not 0" [ -z "$(field $B3 $f | sort -u)" ]
done

# The report: the Conditions section, the excluded runs, the noise floor.
expect 0 "report" "$PREREG" report cond.lua
md=data/cond/report/report.md
check "the report has a Conditions section" grep -q '^## Conditions$' "$md"
check_grep "the bound and the runs it excluded" \
  "1-minute load average at most 1 before each run .*: 9 runs excluded" "$(cat "$md")"
check_grep "the spread of each fact per arm" \
  '^\| a \| 0.1–3.2 \(6\) \|' "$(cat "$md")"
check_grep "the A/A arm's ratio is the noise floor" \
  "Noise floor: A/A arm aa \(the reference's command again\), w · wall_s: [0-9.]+×" \
  "$(cat "$md")"
check_grep "the host's facts per batch" \
  "governor performance" "$(cat "$md")"

# No hypothesis may name the A/A arm.
sed 's/^}$/  hypotheses = { { id = "H1", says = "x", workload = "w", metric = "wall_s", arms = { "aa" }, claim = below(2) } },\n}/' \
  cond.lua >named.lua
expect 2 "a hypothesis naming the A/A arm is refused" "$PREREG" check named.lua
check_grep "and says why" "is an A/A arm" "$out"

# check warns of arms pinned differently.
sed 's/{ name = "b" }/{ name = "b", cpus = "0-1" }/' cond.lua >pinned.lua
expect 0 "check of arms pinned differently" "$PREREG" check pinned.lua
check_grep "warns of their different CPU sets" \
  "warning: arms a and b have different CPU sets \(0 and 0-1\)" "$out"

# prereg host prints the facts, changing nothing.
PREREG_HOST_ROOT=$T/quiet "$PREREG" host >host.out 2>&1
check "prereg host (exit 0)" [ $? -eq 0 ]
for w in governor boost smt isolated nohz_full aslr swap power clocksource load; do
  check "prereg host names $w" grep -q "^  $w " host.out
done
check_grep "the governor read" "governor +performance" "$(cat host.out)"
check_grep "the load read" "load +0.1 \(1-minute load average\), 3 running" "$(cat host.out)"
check_grep "how to change it" "to change: cpupower frequency-set" "$(cat host.out)"

# A required fact the host does not meet: refused before any run.
sed 's/max_swap_in = 0 }/max_swap_in = 0, governor = "powersave" }/' cond.lua >gov.lua
"$PREREG" register gov.lua --data gov-data >/dev/null || bad "register gov"
PREREG_HOST_ROOT=$T/quiet "$PREREG" run gov.lua --data gov-data >gov.out 2>&1
check "a host that does not meet a required fact: exit 1" [ $? -eq 1 ]
check_grep "names the fact and its value" \
  "governor is performance, the sheet requires governor = \"powersave\"" "$(cat gov.out)"
check "nothing was run" [ ! -e gov-data/cond/batches ]

# Each command runs on its arm's CPUs, or on all that prereg may use: the
# helper that starts them staying on one CPU must not pin them there.
LAST=$(($(nproc) - 1))
cat >mask.lua <<LUA
protocol {
  id = "mask", title = "CPU sets",
  arms = { { name = "free", reference = true }, { name = "one", cpus = "$LAST" } },
  workloads = { { name = "w", runs = 3, warmup = 0,
                  cmd = "grep Cpus_allowed_list /proc/self/status >> {origin}/mask-{arm}.txt" } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 7,
           verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
"$PREREG" register mask.lua --data mask-data >/dev/null || bad "register mask"
PREREG_HOST_ROOT=$T/quiet "$PREREG" run mask.lua --data mask-data >mask.out 2>&1
check "the CPU sets run (exit 0)" [ $? -eq 0 ]
ALL=$(grep Cpus_allowed_list /proc/self/status)
check "an arm without cpus: every command on all of prereg's CPUs" \
  [ "$(sort -u mask-free.txt)" = "$ALL" ]
check "3 commands of it" [ "$(wc -l <mask-free.txt)" -eq 3 ]
check "an arm with cpus: every command on its CPU alone" \
  [ "$(sort -u mask-one.txt)" = "Cpus_allowed_list:	$LAST" ]
check "3 commands of it" [ "$(wc -l <mask-one.txt)" -eq 3 ]
done_testing 59
