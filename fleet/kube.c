/* kube.c: a plan across hosts written as Kubernetes objects, on paper
 * (no control plane is packaged for Debian 12, so nothing here runs
 * them): one Pod per run of the plan, pinned to its host by nodeName
 * (the host is a declared factor: the scheduler must not choose), its
 * arm as the runtimeClassName (runc, gVisor's runsc, Kata: the isolation
 * layer is the runtime class), the node runner as its command, and the
 * registered sheet in a ConfigMap every pod mounts.
 * SPDX-License-Identifier: MIT
 *
 * A coordinator would create the pods of a host one after another in the
 * order listed (its rounds in the plan's arm orders), read each pod's log
 * (rows, then the end marker) and delete it; the hosts side by side.
 */
#define _GNU_SOURCE /* PATH_MAX */
#include <stdio.h>
#include <string.h>

#include "fleet/fleet_internal.h"

/* A YAML double-quoted scalar (the JSON escapes, which YAML 1.2 reads). */
static void quoted(core_buf *b, const char *s) {
  core_buf_puts(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      core_buf_printf(b, "\\%c", *p);
    else if (*p == '\n')
      core_buf_puts(b, "\\n");
    else if (*p == '\t')
      core_buf_puts(b, "\\t");
    else if (*p < 0x20 || *p == 0x7f)
      core_buf_printf(b, "\\u%04x", *p);
    else
      core_buf_append(b, p, 1);
  }
  core_buf_puts(b, "\"");
}

/* A piece of a DNS-1123 name or a label value: lower case letters,
 * digits and '-' (anything else becomes '-'), at most max bytes. */
static void dns(core_buf *b, const char *s, size_t max) {
  for (size_t i = 0; s[i] && i < max; i++) {
    char ch = s[i];
    if (ch >= 'A' && ch <= 'Z')
      ch = (char)(ch - 'A' + 'a');
    core_buf_printf(
        b, "%c",
        (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ? ch : '-');
  }
}

static void config_map(const proto_sheet *s, core_buf *b) {
  core_buf_puts(b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "
                   "prereg-");
  dns(b, s->id, 40);
  core_buf_puts(b, "-sheet\n  labels:\n    prereg/experiment: ");
  dns(b, s->id, 63);
  core_buf_printf(b,
                  "\n  annotations:\n    prereg/sheet-sha256: \"%s\"\n"
                  "data:\n  sheet.lua: ",
                  s->sha256);
  quoted(b, s->text);
  core_buf_puts(b, "\n");
}

/* The node runner's arguments for one run (its arm alone). */
static void command(const proto_sheet *s, const run_plan *p,
                    const run_plan_item *it, long seq, core_buf *b) {
  const char *host = p->hosts[it->host];
  core_buf_puts(b, "    command: [\"prereg\", \"node-run\", "
                   "\"/prereg/sheet/sheet.lua\", \"--sha256\", ");
  quoted(b, s->sha256);
  core_buf_puts(b, ", \"--host\", ");
  quoted(b, host);
  core_buf_puts(b, ", \"--batch\", \"bNEXT\", \"--work\", \"/prereg/work\", "
                   "\"--only\", ");
  quoted(b, s->workloads[it->workload].name);
  core_buf_printf(b,
                  ", \"--round\", \"%ld\", \"--seq\", \"%ld\", \"--arms\", ",
                  it->round, seq);
  quoted(b, s->arms[it->arm].name);
  core_buf_puts(b, ", \"--digests\", ");
  core_buf_puts(b, "\"");
  for (size_t a = 0; a < s->n_arms; a++)
    core_buf_puts(b, a ? ",-" : "-");
  core_buf_printf(b, "\", \"--sheet-version\", \"0\"%s]\n",
                  p->quick ? ", \"--quick\"" : "");
}

static void pod(const proto_sheet *s, const run_plan *p,
                const run_plan_item *it, long seq, long nth, core_buf *b) {
  const proto_workload *w = &s->workloads[it->workload];
  const char *host = p->hosts[it->host], *arm = s->arms[it->arm].name;
  core_buf_puts(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: "
                   "prereg-");
  dns(b, s->id, 40);
  core_buf_puts(b, "-");
  dns(b, host, 40);
  core_buf_printf(b, "-%ld\n  labels:\n    prereg/experiment: ", nth);
  dns(b, s->id, 63);
  core_buf_puts(b, "\n    prereg/host: ");
  dns(b, host, 63);
  core_buf_puts(b, "\n    prereg/workload: ");
  dns(b, w->name, 63);
  core_buf_printf(b,
                  "\n    prereg/round: \"%ld\"\n    prereg/arm: ", it->round);
  dns(b, arm, 63);
  core_buf_printf(b,
                  "\n  annotations:\n    prereg/run: \"%s %s %s %s %ld\"\n"
                  "spec:\n  nodeName: ",
                  it->round ? "round" : "warm-ups", host, w->name, arm,
                  it->round);
  quoted(b, host);
  core_buf_puts(b, "\n  runtimeClassName: ");
  quoted(b, proto_k8s_class(s, it->arm));
  core_buf_printf(b,
                  "\n  restartPolicy: Never\n  activeDeadlineSeconds: %ld\n"
                  "  enableServiceLinks: false\n"
                  "  automountServiceAccountToken: false\n"
                  "  containers:\n  - name: bench\n    image: ",
                  (long)(((double)(w->n_steps ? w->n_steps : 1) + 2) *
                             (w->timeout_s + RUN_GRACE_S) +
                         60));
  quoted(b,
         s->hosts.k8s_image ? s->hosts.k8s_image : "prereg:" PREREG_VERSION);
  core_buf_puts(b, "\n    imagePullPolicy: IfNotPresent\n");
  command(s, p, it, seq, b);
  core_buf_puts(b, "    volumeMounts:\n    - {name: sheet, mountPath: "
                   "/prereg/sheet, readOnly: true}\n"
                   "    - {name: work, mountPath: /prereg/work}\n"
                   "  volumes:\n  - name: sheet\n    configMap: {name: "
                   "prereg-");
  dns(b, s->id, 40);
  core_buf_puts(b, "-sheet}\n  - name: work\n    emptyDir: {}\n");
}

core_status run_kube_manifest(const proto_sheet *s, const run_plan *p,
                              core_buf *out, core_err *err) {
  if (!p->n_hosts)
    return core_fail(err, CORE_EUSAGE,
                     "%s: the hosts are a count, named by the first "
                     "allocation: pods are pinned by nodeName, so name the "
                     "nodes (hosts.nodes) to write them",
                     s->path);
  core_buf_printf(
      out,
      "# prereg %s: the plan of %s (sheet sha256 %s) as Kubernetes "
      "objects, on paper:\n# prereg does not run them (no control "
      "plane here). One Pod per run, created one after\n# another "
      "per node in this order, the nodes side by side; its log "
      "holds the\n# rows and the end marker.\n",
      PREREG_VERSION, s->id, s->sha256);
  config_map(s, out);
  size_t host = (size_t)-1;
  long seq = 0, nth = 0;
  for (size_t i = 0; i < p->n; i++) {
    const run_plan_item *it = &p->items[i];
    if (it->host != host)
      host = it->host, seq = 0, nth = 0;
    nth++;
    /* One pod runs an arm's warm-ups of a workload, all of them. */
    if (!it->done && (it->round > 0 || it->warm == 1))
      pod(s, p, it, seq + 1, nth, out);
    seq += it->round > 0;
  }
  return out->oom ? core_fail(err, CORE_ENOMEM, "out of memory") : CORE_OK;
}
