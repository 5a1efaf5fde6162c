/* proto_internal.h: what the files of protocols/ share and nobody else
 * sees: the sandboxed Lua state behind a sheet and the claim userdata.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_PROTO_INTERNAL_H
#define PREREG_PROTO_INTERNAL_H

#include <lua.h>

#include "protocols/proto.h"

/* The sandboxed Lua state */

/* Its limits (PROTO_MEM_CAP and the budgets) are in core/limits.h. */

/* Why the allocator last refused a block. */
typedef enum {
  PROTO_REFUSED_NONE,
  PROTO_REFUSED_CAP,    /* live memory would pass PROTO_MEM_CAP */
  PROTO_REFUSED_BUDGET, /* total allocation would pass the budget */
  PROTO_REFUSED_SYSTEM  /* core_realloc failed (real or injected) */
} proto_refusal;

/* The state behind a sheet, owned by it (s->lua) from proto_lua_open to
 * proto_lua_close. */
struct proto_lua {
  lua_State *L;
  const char *name; /* borrowed from the sheet: its path */
  size_t used;      /* live bytes */
  size_t total;     /* bytes allocated since the last budget reset */
  proto_refusal refusal;
  int protocol_calls; /* how often the sheet called protocol{} */
  int protocol_line;  /* line of the first call */
  int c_oom;          /* a core_malloc of the converter failed */
  /* strict: a sheet a command is given (to check, register, run): its
   * selections must name only the run; a frozen version or a bundle's
   * sheet is read as it was written. */
  int strict;
  long long instr;     /* instructions (and charged work) so far */
  double cpu_left;     /* seconds of CPU its Lua may still use in this
                          command (all evaluations together) */
  double started;      /* process CPU time the running evaluation began */
  double cpu_deadline; /* process CPU time at which the sheet stops */
  double checked_at;   /* monotonic time of the last look at the CPU */
  /* The budget that stopped an evaluation (a static text: "CPU time
   * limit of 0.2 s exceeded"), or NULL while every budget is left. Once
   * set, the sheet's later evaluations are refused before they start,
   * whichever budget it was. */
  const char *spent;
};

/* Registry key of the table the sheet gave to protocol{}. */
#define PROTO_TABLE_KEY "prereg.protocol"

/** Creates the sandboxed state for sheet s (s->path must be set) and
 * stores it in s->lua. CORE_ENOMEM when even that fails. */
core_status proto_lua_open(proto_sheet *s, core_err *err);
/** Closes the state and frees s->lua; NULL-safe. */
void proto_lua_close(proto_sheet *s);
/** Runs the sheet text under the budget and caps, then converts the
 * table given to protocol{} into s (proto_convert) under protection too. */
core_status proto_lua_run(proto_sheet *s, core_err *err);

/** Calls the function claim h over results, under what is left of the
 * sheet's budget (one for the sheet and all its claims); the
 * contract is proto_eval_claim's. */
core_status proto_eval_function(const proto_sheet *s,
                                const proto_hypothesis *h,
                                const proto_result_view *results, size_t n,
                                proto_outcome *outcome, char **reason,
                                core_err *err);

/* From the protocol table to C */

/* The claim constructors return a full userdata of this shape (memory
 * Lua's); the verdict name of verdict_is lives in its user value 1. */
typedef struct proto_claim_ud {
  proto_claim_kind kind;
  double x;
  int line;
} proto_claim_ud;

#define PROTO_CLAIM_META "prereg.claim" /* the claims' metatable */

/** lua_CFunction run under lua_pcall: argument 1 is a light userdata
 * pointing at the sheet; converts and validates the registry's protocol
 * table into it, raising a message "FILE:LINE: path: what" on the first
 * problem. Every allocation is attached to the sheet at once, so that
 * proto_sheet_free frees what a raised error leaves behind. */
int proto_convert(lua_State *L);

/** The closest of the n names in cand to name, when close enough to be a
 * typo (a few edits, swaps of neighbours counting once), else NULL. */
const char *proto_nearest(const char *name, const char *const cand[],
                          size_t n);

/* Pieces of a command template */

/* One piece of a command template: literal text, or a {name} placeholder
 * (a lower-case letter or '_', then lower-case letters, digits, '_').
 * "{{" is a literal "{"; any other brace (awk '{print $1}', ${HOME}) is
 * literal text. */
typedef struct proto_piece {
  const char *text; /* literal: len bytes borrowed from the template (not
                       NUL-ended) */
  size_t len;
  int placeholder; /* 1: name holds the placeholder's name */
  char name[128];  /* truncated past 127 bytes */
} proto_piece;

/** The piece of a template that starts at p, in *out (OUT; it points
 * into the template); returns where the next one starts, or NULL at the
 * end of the text. */
const char *proto_next_piece(const char *p, proto_piece *out);

/* Used by the files of protocols/ only */

/** The source as the sheet writes it: "run", "import" or "both". */
const char *proto_source_word(proto_source s);

#endif
