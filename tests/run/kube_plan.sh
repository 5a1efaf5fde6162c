#!/usr/bin/env bash
# kube_plan.sh: the plan across hosts written as Kubernetes objects (run
# --dry-run --backend kubernetes), on paper: kubectl parses it offline
# (annotate --local: no API server here), and every pod is checked
# against the plan: pinned to its host by nodeName, its arm as the
# runtimeClassName, each host's arm orders re-derived from the seed, the
# registered sheet byte for byte in the ConfigMap.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
S=$SRC/tests/slurm
T=$(mktemp -d)
on_exit 'rm -rf "$T"'
cd "$T"
cp "$S/sheets/shell.lua" .

check "kubectl is installed (scripts/deps.sh k8s)" command -v kubectl
expect 0 "the plan as pods" "$PREREG" run shell.lua --dry-run --backend kubernetes --data d
printf '%s\n' "$out" > plan.yaml
check "nothing was written" test ! -e d
expect 0 "kubectl parses every object offline" \
  kubectl annotate --local -f plan.yaml prereg/checked=yes -o yaml
printf '%s\n' "$out" > parsed.yaml
check "kubectl saw the ConfigMap and 78 pods" \
  test "$(grep -c '^kind: Pod$' parsed.yaml)" -eq 78 -a "$(grep -c 'prereg/checked: "yes"' parsed.yaml)" -eq 79
python3 "$S/orders.py" 11 start 12 bare sh -- n1 n2 n3 > want.orders
python3 - parsed.yaml want.orders shell.lua > pods.check << 'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
want = {}
for line in open(sys.argv[2]):
    h, r, arms = line.split()
    want[(h, r)] = arms.split(",")
bad = []
cm = [d for d in docs if d["kind"] == "ConfigMap"]
if len(cm) != 1 or cm[0]["data"]["sheet.lua"] != open(sys.argv[3]).read():
    bad.append("configmap")
got = {}
for p in (d for d in docs if d["kind"] == "Pod"):
    lab, spec = p["metadata"]["labels"], p["spec"]
    if spec["nodeName"] != lab["prereg/host"]:
        bad.append("nodeName " + p["metadata"]["name"])
    if spec["runtimeClassName"] != {"bare": "bare", "sh": "gvisor"}[lab["prereg/arm"]]:
        bad.append("runtimeClassName " + p["metadata"]["name"])
    if spec["restartPolicy"] != "Never" or "--host" not in spec["containers"][0]["command"]:
        bad.append("spec " + p["metadata"]["name"])
    if lab["prereg/round"] != "0":
        got.setdefault((lab["prereg/host"], lab["prereg/round"]), []).append(lab["prereg/arm"])
if got != want:
    bad.append("orders")
print("ok" if not bad else "bad " + " ".join(bad[:5]))
PY
check "each pod on its host, its arm's runtime class, the plan's orders: $(cat pods.check)" \
  grep -qx ok pods.check
expect 2 "--backend without --dry-run is refused" "$PREREG" run shell.lua --backend kubernetes --data d
expect 2 "--backend needs a hosts block" "$PREREG" run "$SRC/studies/sandbox-cost/protocols/sandbox-cost.lua" --dry-run --backend kubernetes --data d
check_grep "it says so" "needs a hosts block" "$out"
sed 's/nodes = { "n1", "n2", "n3" }/count = 3, partition = "loop"/' shell.lua > count.lua
expect 2 "hosts by count cannot be pinned before the allocation names them" \
  "$PREREG" run count.lua --dry-run --backend kubernetes --data d
check_grep "it says why" "name the nodes" "$out"
done_testing 10
