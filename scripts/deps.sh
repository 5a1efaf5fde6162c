#!/bin/sh
# deps.sh GROUP...: install the Debian packages a group needs, only those
# missing. As root it runs apt-get; otherwise it prints the exact command
# and fails, so nothing half-set-up goes on.
set -eu

build="build-essential cmake pkg-config liblua5.4-dev libgsl-dev
  libxlsxwriter-dev libcmark-gfm-dev libcmark-gfm-extensions-dev libssl-dev
  libcsv-dev libjansson-dev libarchive-dev zlib1g-dev"
# What the demo experiment runs: isolation layers (gVisor's runsc among
# them), its image, its workloads.
demo="bubblewrap runc runsc busybox-static git gcc make procps"
# A Docker engine of prereg's own (scripts/docker/start.sh), for the
# Docker tests and the replication of the published Docker study:
# dockerd, containerd and ctr, runc and runsc as its runtimes,
# busybox-static for its offline image, debootstrap for the replication's
# Debian image.
docker="docker.io containerd runc runsc busybox-static debootstrap"
# A containerd of prereg's own (scripts/containerd/start.sh) for the
# container-runtimes study: containerd and ctr, runc and runsc, and the
# workloads its image is built from (scripts/containerd/bench-image.sh).
containerd="containerd runc runsc busybox-static sysbench fio nginx-light wrk
  iperf3 gcc libc6-dev"
# Independent implementations and tools the tests check against.
# curl and ssh-keygen are what register --tsa and --sign call; openssl is
# the tests' own time-stamping authority.
test="curl openssh-client openssl r-cran-boot python3-scipy python3-numpy hyperfine valgrind
  libreoffice-calc-nogui chromium fonts-dejavu-core clang libclang-rt-14-dev
  strace golang-go libbenchmark-dev g++ poppler-utils"
# A private Slurm cluster on loopback for the tests across hosts
# (scripts/slurm/start.sh).
slurm="slurmctld slurmd slurm-client munge"
# kubectl parses the Kubernetes manifests of run --dry-run --backend
# kubernetes offline; any kubectl will do (Debian's is kubernetes-client).
k8s="kubernetes-client"

# Only what is missing, and only the reasons of the groups it is for.
missing=""
why=""
for group in "$@"; do
  case "$group" in
    build) want=$build; w="build: to compile prereg" ;;
    demo) want=$demo; w="demo: the demo's isolation layers" ;;
    test) want=$test; w="test: the tools the tests check against" ;;
    docker) want=$docker; w="docker: a Docker engine of prereg's own" ;;
    containerd) want=$containerd; w="containerd: a containerd and the study's workloads" ;;
    slurm) want=$slurm; w="slurm: a private Slurm cluster" ;;
    k8s) want=""; command -v kubectl > /dev/null || want=$k8s
      w="k8s: kubectl reads the Kubernetes manifests" ;;
    *)
      echo "deps.sh: unknown group '$group' (build, demo, test, docker, containerd, slurm, k8s)" >&2
      exit 2
      ;;
  esac
  lacking=""
  for p in $want; do
    case " $missing " in *" $p "*) continue ;; esac
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      lacking="$lacking $p"
    fi
  done
  [ -z "$lacking" ] && continue
  missing="$missing$lacking"
  why="${why:+$why; }$w"
done
[ -z "$missing" ] && exit 0

# Fresh cloud machines run unattended upgrades at boot: every apt-get
# waits for the dpkg lock, and update for the package lists' (apt's own
# DPkg::Lock::Timeout, ten minutes), instead of failing at once.
lock_wait=600
apt="apt-get -o DPkg::Lock::Timeout=$lock_wait"
if [ "$(id -u)" != 0 ]; then
  echo "prereg needs these Debian packages:$missing" >&2
  echo "run as root: $apt update && $apt install -y$missing" >&2
  exit 1
fi
echo "deps.sh: installing$missing ($why; waits up to 10 minutes for another apt's lock)" >&2
export DEBIAN_FRONTEND=noninteractive
# The postinst scripts of docker.io, munge, slurmctld and slurmd start
# the system's daemons through invoke-rc.d unless policy-rc.d forbids it:
# prereg's tests start daemons of their own and must never leave a system
# one running. A policy-rc.d that denies every start is put in place for
# the install when the machine has none, and removed afterwards.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# deps.sh (prereg): no service starts while it installs\nexit 101\n' > "$policy"
  chmod 0755 "$policy"
  own_policy=1
fi
# apt-get update does not wait for the package lists' lock (the timeout
# above is dpkg's): while another apt holds it (apt-daily at boot), it is
# tried again every 5 seconds, for as long as the install would wait.
update() {
  waited=0
  while :; do
    out=$(LC_ALL=C $apt update -qq 2>&1) && return 0
    case "$out" in
      *"Could not get lock"*) [ "$waited" -lt "$lock_wait" ] || break ;;
      *) break ;;
    esac
    [ "$waited" -gt 0 ] ||
      echo "deps.sh: another apt holds the package lists; waiting for it" >&2
    sleep 5
    waited=$((waited + 5))
  done
  printf '%s\n' "$out" >&2
  return 1
}
status=0
# apt-get update once per machine boot is enough; a stale list fails below.
update && $apt install -y -qq --no-install-recommends $missing >/dev/null ||
  status=$?
[ "$own_policy" -eq 0 ] || rm -f "$policy"
exit $status
