# cluster.sh: a private three-node Slurm cluster on loopback for a test,
# sourced after tests/lib.sh: cluster_up starts it in a folder of its own
# (scripts/slurm/start.sh: ports checked free) and has on_exit stop it by
# the PIDs start.sh recorded; a cluster that cannot start fails the test,
# never skips it. Sets S (scripts/slurm), T (the test's folder) and the
# client's environment (SLURM_CONF).
# SPDX-License-Identifier: MIT

S=$SRC/scripts/slurm
prog=$(basename "$0")
. "$S/lib.sh" # alive PID START: that very process still runs (no zombie)
# A caller inside a Slurm job would lend srun its job: none of that here.
for v in $(env | sed -n 's/^\(SLURM[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
T=$(mktemp -d /tmp/prereg-hosts-XXXXXX)
chmod a+x "$T" # munged needs every folder above its socket searchable

cluster_down() {
  "$S/stop.sh" "$T/cluster" > /dev/null 2>&1
  # Nothing start.sh started may outlive the test.
  local f p t left=""
  for f in "$T"/cluster/pid/*; do
    [ -f "$f" ] || continue
    read -r p t < "$f"
    if alive "$p" "$t"; then left="$left ${f##*/}=$p"; fi
  done
  if [ -n "$left" ]; then
    bad "daemons left running after stop.sh:$left"
  fi
  [ -n "${KEEP:-}" ] || rm -rf "$T"
}

cluster_up() {
  on_exit cluster_down
  local env
  env=$("$S/start.sh" "$T/cluster" 3 2> "$T/start.err")
  if ! check "a three-node cluster starts: $(tail -n 20 "$T/start.err")" test -n "$env"; then
    done_testing
  fi
  eval "$env"
  export SLURM_CONF
}

# until_true SECONDS CMD...: runs CMD every 0.2 s until it succeeds.
until_true() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt "$end" ] || return 1
    sleep 0.2
  done
}
