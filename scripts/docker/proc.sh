# proc.sh: /proc helpers of scripts/docker (sourced, POSIX sh). A process
# is named by its PID and start time, so a reused PID never matches.
# SPDX-License-Identifier: MIT

# proc_start PID: prints the start time of PID; fails when PID is gone or
# a zombie. The command name may hold blanks and parentheses: the fields
# are read after its last ')'.
proc_start() {
  local_line=
  { read -r local_line < "/proc/$1/stat"; } 2> /dev/null || return 1
  set -- ${local_line##*) }
  [ "$1" != Z ] && [ "$1" != X ] || return 1
  shift 19
  echo "$1"
}

# proc_snapshot FILE: one line "PID PPID START" per live process.
proc_snapshot() {
  : > "$1"
  for d in /proc/[0-9]*; do
    local_line=
    { read -r local_line < "$d/stat"; } 2> /dev/null || continue
    proc_fields "${d#/proc/}" ${local_line##*) } >> "$1"
  done
}
proc_fields() {
  [ "$2" != Z ] && [ "$2" != X ] || return 0
  local_pid=$1
  local_ppid=$3
  shift 20
  echo "$local_pid $local_ppid $1"
}

# proc_family SNAPSHOT ROOTS: prints "PID START" for every root of ROOTS
# (lines "PID START", START "-" for any) alive in SNAPSHOT and all their
# descendants in it.
proc_family() {
  awk 'NR == FNR { root[$1] = $2; next }
    { st[$1] = $3; kids[$2] = kids[$2] " " $1 }
    END {
      n = 0
      for (r in root)
        if ((r in st) && (root[r] == "-" || root[r] == st[r])) q[++n] = r
      for (i = 1; i <= n; i++) {
        p = q[i]
        if (p in seen) continue
        seen[p] = 1
        print p, st[p]
        m = split(kids[p], c, " ")
        for (j = 1; j <= m; j++) q[++n] = c[j]
      }
    }' "$2" "$1"
}

# proc_ancestors SNAPSHOT PID: prints PID and its ancestors, one a line.
proc_ancestors() {
  awk -v p="$2" '{ pp[$1] = $2 }
    END { while (p != "" && p != 0 && !(p in seen)) { seen[p] = 1; print p; p = pp[p] } }' "$1"
}
