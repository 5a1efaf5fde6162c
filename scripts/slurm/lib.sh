# lib.sh: what start.sh, stop.sh and node.sh share: the layout of a private
# loopback Slurm cluster's folder, and processes known by PID and start time,
# so that only what start.sh launched (and the step daemons its slurmd
# forked) is ever signalled. Sourced, POSIX sh; the caller sets $prog.
# SPDX-License-Identifier: MIT

die() {
  echo "$prog: $*" >&2
  exit 1
}

# cluster_dir DIR: sets D (absolute), CONF, SOCK and PIDS. The path goes into
# slurm.conf and munged's options unquoted, so only plain characters pass.
cluster_dir() {
  case "$1" in
    /*) D=$1 ;;
    *) D=$(pwd)/$1 ;;
  esac
  while [ "${D%/}" != "$D" ]; do D=${D%/}; done
  [ -n "$D" ] || die "DIR may not be /"
  case "$D" in
    *[!A-Za-z0-9._/+-]*) die "$D: DIR may hold only letters, digits and ._+-/" ;;
  esac
  CONF=$D/etc/slurm.conf
  SOCK=$D/munge/munge.socket.2
  PIDS=$D/pid
}

# proc_start PID: the start time of PID in clock ticks since boot (field 22 of
# /proc/PID/stat); fails for a process that is gone or a zombie. PID and start
# time together name one process for the life of the machine: a PID the
# kernel has given to someone else since is never taken for ours.
proc_start() {
  local s
  read -r s 2> /dev/null < "/proc/$1/stat" || return 1
  s=${s##*) } # past the command name, which may hold spaces and parentheses
  set -f
  set -- $s
  set +f
  [ $# -ge 20 ] && [ "$1" != Z ] && [ "$1" != X ] || return 1
  shift 19
  echo "$1"
}

# record NAME PID: remember PID (with its start time) as NAME.
record() {
  local t
  t=$(proc_start "$2") || return 1
  echo "$2 $t" > "$PIDS/$1"
}

# recorded NAME: prints the PID recorded as NAME if that very process runs.
recorded() {
  local pid t
  [ -f "$PIDS/$1" ] || return 1
  read -r pid t < "$PIDS/$1" || return 1
  [ -n "$t" ] && [ "$(proc_start "$pid")" = "$t" ] || return 1
  echo "$pid"
}

# alive PID START: the process PID started at START still runs.
alive() { [ "$(proc_start "$1")" = "$2" ]; }

# launch NAME CMD...: CMD (a daemon in its foreground mode) in a session of
# its own, so that signals meant for the caller's terminal or process group
# never reach it, with a clean environment (none of the caller's SLURM_*
# variables), output to log/NAME.out and no other descriptor of the caller's
# (a pipe held open by a daemon would keep a reader of the caller's output
# waiting). Without job control a background job is no group leader, so
# setsid and env exec in place: $! is the daemon. Fails if it ended at once.
launch() {
  local name=$1
  shift
  setsid env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@" < /dev/null > "$D/log/$name.out" 2>&1 \
    3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
  record "$name" $! || {
    echo "$prog: $name (pid $!) ended at once: $(tail -n 5 "$D/log/$name.out")" >&2
    return 1
  }
}

# stepds [NODE]: the slurmstepd processes of this cluster (of NODE only), one
# "PID START" a line. A step daemon overwrites its environment with its
# title and is adopted by init, so it is known by what it holds open: the
# node's log file, or its listening socket under the node's spool folder.
stepds() {
  local node=${1:-} logs socks p t f l comm
  logs=$D/log/slurmd-${node:-*}.log # a pattern: DIR holds no * ? [
  socks=$(awk -v pre="$D/spool/${node:+$node/}" \
    'index($NF, pre) == 1 { printf " socket:[%s] ", $(NF - 1) }' /proc/net/unix 2> /dev/null)
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    read -r comm 2> /dev/null < "/proc/$p/comm" || continue
    [ "$comm" = slurmstepd ] || continue
    for f in /proc/"$p"/fd/*; do
      l=$(readlink "$f" 2> /dev/null) || continue
      case "$l" in
        $logs) ;;
        socket:*) case "$socks" in *" $l "*) ;; *) continue ;; esac ;;
        *) continue ;;
      esac
      t=$(proc_start "$p") && echo "$p $t"
      break
    done
  done
}

# descendants PID...: every live descendant of the PIDs, one "PID START" a line.
descendants() {
  local roots="$*" f s p
  for f in /proc/[0-9]*/stat; do
    read -r s 2> /dev/null < "$f" || continue
    p=${s%% *}
    s=${s##*) }
    set -f
    set -- $s
    set +f
    [ $# -ge 20 ] && [ "$1" != Z ] || continue
    echo "$p $2 ${20}"
  done | awk -v roots="$roots" '
    BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) in_tree[r[i]] = 1 }
    { parent[$1] = $2; start[$1] = $3 }
    END {
      do {
        grew = 0
        for (p in parent)
          if (!(p in in_tree) && (parent[p] in in_tree)) {
            in_tree[p] = 1; grew = 1; print p, start[p]
          }
      } while (grew)
    }'
}

# Process lists below are newline-separated "PID START" lines.

# crash LIST: SIGKILL the processes and all their descendants, as a machine
# that loses power would. They are stopped first and the tree is read again
# until it stops growing, so no child forked meanwhile escapes (it would be
# adopted by init and no longer be known as ours). Waits up to 5 s; prints
# the PIDs still alive then and fails.
crash() {
  local procs=$1 old=""
  while [ "$procs" != "$old" ]; do
    old=$procs
    signal STOP "$procs"
    procs=$({
      echo "$old"
      descendants $(echo "$old" | cut -d' ' -f1)
    } | awk 'NF == 2' | sort -u)
  done
  signal KILL "$procs"
  wait_gone 5 "$procs"
}

# signal SIG LIST: send SIG to each process of LIST that is still the one
# recorded.
signal() {
  echo "$2" | while read -r p t; do
    if [ -n "$p" ] && alive "$p" "$t"; then kill "-$1" "$p" 2> /dev/null; fi
  done
}

# wait_gone SECONDS LIST: waits until no process of LIST runs; prints the
# PIDs still alive after SECONDS and fails.
wait_gone() {
  local tries=$(($1 * 10)) left=$2
  while :; do
    left=$(echo "$left" | while read -r p t; do
      if [ -n "$p" ] && alive "$p" "$t"; then echo "$p $t"; fi
    done)
    [ -z "$left" ] && return 0
    tries=$((tries - 1))
    if [ $tries -le 0 ]; then
      echo "$left" | cut -d' ' -f1 | tr '\n' ' '
      echo
      return 1
    fi
    sleep 0.1
  done
}
