# tsa_lib.sh: a time-stamping authority of the test's own (sourced by the
# tests of stamps, after lib.sh).
#   make_tsa DIR NAME   a CA (DIR/ca.pem) and a TSA certificate signed by
#                       it (extendedKeyUsage critical timeStamping), with
#                       the openssl ts configuration DIR/tsa.cnf
#   start_tsa DIR       tsa_server.py on a loopback port the kernel picks
#                       (free by construction), stopped by its PID when the
#                       test ends; sets TSA_URL
# SPDX-License-Identifier: MIT

TSA_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

make_tsa() {
  local d=$1 name=$2
  mkdir -p "$d"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$d/ca.key" -out "$d/ca.pem" -subj "/CN=$name CA" -days 3650 \
    -addext basicConstraints=critical,CA:TRUE \
    -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null || return 1
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$d/tsa.key" -out "$d/tsa.csr" -subj "/CN=$name TSA" \
    2>/dev/null || return 1
  printf 'extendedKeyUsage=critical,timeStamping\nkeyUsage=critical,digitalSignature\nbasicConstraints=CA:FALSE\n' >"$d/ext.cnf"
  openssl x509 -req -in "$d/tsa.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
    -CAcreateserial -out "$d/tsa.pem" -days 3650 -extfile "$d/ext.cnf" \
    2>/dev/null || return 1
  echo 01 >"$d/serial"
  cat >"$d/tsa.cnf" <<CNF
[ tsa ]
default_tsa = tsa1
[ tsa1 ]
dir = $d
serial = \$dir/serial
signer_cert = \$dir/tsa.pem
certs = \$dir/ca.pem
signer_key = \$dir/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
CNF
}

start_tsa() {
  local d=$1 i pid
  rm -f "$d/port"
  python3 "$TSA_LIB_DIR/tsa_server.py" "$d" &
  pid=$!
  on_exit "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
  for ((i = 0; i < 1200; i++)); do
    [ -s "$d/port" ] && break
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  [ -s "$d/port" ] || return 1
  TSA_URL="http://127.0.0.1:$(cat "$d/port")/tsr"
}
