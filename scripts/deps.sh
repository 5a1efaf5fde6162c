#!/bin/sh
# deps.sh GROUP...: install the Debian packages a group needs, only those
# missing. As root it runs apt-get; otherwise it prints the exact command
# and fails, so nothing half-set-up goes on.
set -eu

build="build-essential cmake pkg-config liblua5.4-dev libgsl-dev
  libxlsxwriter-dev libcmark-gfm-dev libcmark-gfm-extensions-dev libssl-dev
  libcsv-dev libjansson-dev libarchive-dev zlib1g-dev"
# What the demo experiment runs: isolation layers, its image, its workloads.
demo="bubblewrap runc busybox-static git gcc make procps"
# Independent implementations and tools the tests check against.
test="r-cran-boot python3-scipy python3-numpy hyperfine valgrind
  libreoffice-calc-nogui chromium fonts-dejavu-core clang libclang-rt-14-dev
  strace golang-go libbenchmark-dev g++ poppler-utils"

# A private Slurm cluster on loopback for the tests across hosts
# (scripts/slurm/start.sh). The packages' postinst scripts would start a
# system munged (and slurmd, slurmctld) through invoke-rc.d: installing
# them runs under a policy-rc.d that refuses, so nothing is left running.
slurm="slurmctld slurmd slurm-client munge"
# kubectl parses the Kubernetes manifests of run --dry-run --backend
# kubernetes offline; any kubectl will do (Debian's is kubernetes-client).
k8s="kubernetes-client"

want=""
daemons=0
for group in "$@"; do
  case "$group" in
    build) want="$want $build" ;;
    demo) want="$want $demo" ;;
    test) want="$want $test" ;;
    slurm) want="$want $slurm"; daemons=1 ;;
    k8s) command -v kubectl > /dev/null || want="$want $k8s" ;;
    *) echo "deps.sh: unknown group '$group' (build, demo, test, slurm, k8s)" >&2; exit 2 ;;
  esac
done

missing=""
for p in $want; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "prereg needs these Debian packages:$missing" >&2
  echo "run as root: apt-get update && apt-get install -y$missing" >&2
  exit 1
fi
echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# No package may start a system daemon: a policy-rc.d that refuses every
# start, ours only if the machine has none (and removed afterwards).
guard=/usr/sbin/policy-rc.d
if [ "$daemons" = 1 ] && [ ! -e "$guard" ]; then
  printf '#!/bin/sh\n# written by prereg scripts/deps.sh while it installs\nexit 101\n' > "$guard"
  chmod 755 "$guard"
  trap 'rm -f "$guard"' EXIT
fi
# apt-get update once per machine boot is enough; a stale list fails below.
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
