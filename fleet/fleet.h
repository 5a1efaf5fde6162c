/* fleet.h: a plan across hosts handed to a scheduler: run on Slurm (one
 * allocation, the node runner's preflight on every node, one step per
 * host, workload and round, the hosts side by side), or written as
 * Kubernetes objects, on paper. The engine (run/) holds the batch; the
 * node runner, which measures on each node, is the engine's too
 * (run_node_preflight, run_node_round).
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_FLEET_H
#define PREREG_FLEET_H

#include "core/core.h"
#include "data/data.h"
#include "protocols/proto.h"
#include "run/run.h"

/** The plan across hosts p of s as Kubernetes objects, on paper (run
 * --dry-run --backend kubernetes; see fleet/kube.c): a ConfigMap with the
 * sheet, then one Pod per run left (one per arm for its warm-ups) in the
 * plan's order, pinned by nodeName, its arm as runtimeClassName
 * (proto_k8s_class), multi-document YAML appended to out. CORE_EUSAGE
 * when the hosts are a count not yet named. */
core_status run_kube_manifest(const proto_sheet *s, const run_plan *p,
                              core_buf *out, core_err *err);

/** run_batch for a plan across hosts (a sheet with hosts, backend
 * "slurm"): jobs of this experiment a killed coordinator left are
 * cancelled, one exclusive allocation of the hosts with rounds left is
 * made (for hosts by count, the first one names them), the node runner's
 * preflight runs on each (a refusal, a node that does not answer, or an
 * image digest unlike the others' or the earlier rows' refuses the batch
 * before anything is written), then one step per (host, workload, round)
 * runs, the hosts side by side. A round's rows are appended when its end
 * marker comes; a round whose step ended without it is kept as invalid
 * rows (DATA_NODE_LOST) and its host runs nothing more: its rounds left
 * wait for run --resume (CORE_ERUN naming the host). The allocation is
 * released and the batch frozen with every node's facts whatever
 * happened. rows: the rows run_plan_collect loaded (alive for the call).
 * OUT: *res. */
core_status run_slurm_batch(data_experiment *exp, const proto_sheet *s,
                            run_plan *p, const data_rowset *rows, int resume,
                            const run_progress *progress,
                            run_batch_result *res, core_err *err);

#endif
