/* data.h: an experiment's data folder: the lock (registered and amended
 * sheet versions), frozen CSV batches with provenance, imports, and the
 * manifest of SHA-256 digests. Only data/ touches libcsv and jansson
 * (JSON values below, for the floors above).
 * SPDX-License-Identifier: MIT
 *
 * Layout of DATA/ID/ (every frozen file is mode 0444, never rewritten):
 *   versions/v0.lua        the registered sheet, byte for byte
 *   versions/v0.json       {version, sha256, filed_at, prereg_version, ...}
 *   versions/vN.lua        amended version N (N >= 1)
 *   versions/vN.diff       unified diff of v(N-1) -> vN
 *   versions/vN.json       + why, date, data state when filed
 *   batches/BATCH.csv      raw rows (schema below); BATCH = bNNNN
 *   batches/BATCH.json     batch facts: kind (run|import), host facts,
 *                          image digests, versions, source sha256, quick
 *   batches/BATCH/         per-run stdout/stderr and process lists
 *   MANIFEST               "SHA256  PATH" lines (sha256sum -c format),
 *                          replaced atomically, only ever grows
 */
#ifndef PREREG_DATA_H
#define PREREG_DATA_H

#include <stddef.h>

#include "core/core.h"
#include "protocols/proto.h"

/* Values */

/* The one rule for a value, imported, frozen or reported by a command's
 * metrics file: a decimal number as core_parse_decimal reads one
 * (finite; no hexadecimal, "nan" or "inf"; neither an overflow nor a
 * subnormal), and not negative for a time or an amount of memory
 * (proto_metric_nonnegative). */

/** The reason data_value_parse gives for a negative time or amount of
 * memory (compare the pointer). */
extern const char data_value_negative[];
/** Reads text as a value of metric under the rule. Returns NULL with *v
 * set, or why not (a static string: core_parse_decimal's reason, or
 * data_value_negative). */
const char *data_value_parse(const char *metric, const char *text, double *v);

/* The value rule (data_value_parse, in data.h), for a number already
 * read (a JSON number): NULL, or why not ("not a finite number",
 * data_value_negative). */
const char *data_value_ok(const char *metric, double v);

/* Rows */

/* The CSV header of every batch prereg writes, in this order. One row per
 * run and metric (long format, like the import format). The columns
 * after quick are the machine's conditions around the run (data_fact_kind);
 * a batch written before they existed has DATA_ROW_HEADER_PLAIN, and its
 * rows are read with every fact absent. */
#define DATA_ROW_HEADER_PLAIN                                                 \
  "sheet_version,sheet_sha256,batch,source,workload,arm,round,seq,run_id,"    \
  "started_at,host,image_digest,cache_policy,cache_state,exit_code,valid,"    \
  "reason,metric,value,quick"
#define DATA_ROW_HEADER                                                       \
  DATA_ROW_HEADER_PLAIN                                                       \
  ",load1,runnable,ctxsw_invol,cpu_mhz,throttle,swap_in,cpus"

/* The per-run facts of the machine's conditions, in column order: the
 * 1-minute load average and the running tasks before the run (from
 * /proc/loadavg), the run's involuntary context switches (its rusage),
 * the mean current frequency in MHz of the CPUs it may use (cpufreq), the
 * thermal throttle events during it and the pages swapped in during it.
 * A fact the host has no source for is absent (an empty field), never
 * 0. */
typedef enum data_fact_kind {
  DATA_FACT_LOAD1,
  DATA_FACT_RUNNABLE,
  DATA_FACT_CTXSW_INVOL,
  DATA_FACT_CPU_MHZ,
  DATA_FACT_THROTTLE,
  DATA_FACT_SWAP_IN,
  DATA_NFACTS
} data_fact_kind;

/** The column name of fact f ("load1", ...); "" when out of range. */
const char *data_fact_name(int f);

typedef struct data_row {
  int sheet_version;
  char *sheet_sha256;
  char *batch;
  char *source; /* "run" or "import" */
  char *workload, *arm;
  long round; /* 1-based; 0 when unknown (imports without run) */
  long seq;   /* position in the batch's execution order, 1-based */
  char *run_id;
  char *started_at; /* UTC, ISO 8601 */
  char *host;
  char *image_digest;
  char *cache_policy; /* "warm" | "cold" | "" */
  char *cache_state;  /* observed, free text e.g. "page_cache_mib=812" */
  char *exit_code;    /* "0", or per step "0;1;0" */
  int valid;
  char *reason; /* why invalid, "" when valid */
  char *metric;
  double value; /* NaN when has_value is 0 */
  int has_value;
  int quick; /* collected under run --quick */
  /* The conditions around the run: fact[f] is meaningful only when bit
   * (1u << f) of has_fact is set (a zeroed row has none). */
  double fact[DATA_NFACTS];
  unsigned has_fact;
  char *cpus; /* the CPUs the run was pinned to ("1-2"), "" when not */
} data_row;

/* A set of rows. Who owns the rows' strings depends on pool:
 * - pool == NULL (a zeroed rowset, as tests and importers build them):
 *   each row owns its strings (core_malloc'd), freed one by one;
 * - pool != NULL (every rowset data_load_rows fills): the strings are
 *   borrowed from the pool, shared between rows (equal strings are one
 *   copy) and read-only; never free or overwrite one, and do not push
 *   rows that own their strings into such a set. They stay valid until
 *   data_rowset_free. */
typedef struct data_rowset {
  data_row *rows;
  size_t n, cap;
  struct data_strpool *pool; /* NULL or the strings' pool */
} data_rowset;

/** Frees the rows' strings (the pool in one piece, or each row's own)
 * and the array, and zeroes *rs; NULL is a no-op. */
void data_rowset_free(data_rowset *rs);

/* Rows as the folders above build and read them */

/** Appends a copy of r to rs, which takes r's strings; r is zeroed, on
 * failure too (its strings then freed, unless rs is pooled). */
core_status data_rowset_push(data_rowset *rs, data_row *r, core_err *err);

/* Interned, read-only strings in large chunks: the rows data_load_rows
 * fills share them (see data_rowset), since most columns repeat a few
 * values. */
typedef struct data_strpool data_strpool;

/** A new, empty pool; NULL when out of memory. Freed with
 * the rowset that holds it (data_rowset_free), every string in it. */
data_strpool *data_strpool_new(void);

/** The pool's copy of the len bytes at s (NUL-terminated), made on first
 * sight: equal strings give the same pointer. Borrowed, valid until
 * data_strpool_free; NULL when out of memory. */
const char *data_strpool_intern(data_strpool *p, const char *s, size_t len);

/* One record as the scanner hands it over: fields are NUL-terminated and
 * borrowed until the callback returns. */
typedef core_status (*csvscan_fn)(void *ctx, char **fields, size_t n,
                                  long line, core_err *err);

typedef struct csvscan_result {
  size_t records;  /* complete records seen (header included) */
  size_t good_end; /* byte offset just past the last complete record */
  long last_line;  /* physical line where the last complete record
                      started */
  int torn;        /* the text ends inside a record (no final newline
                      or an open quote) */
  long torn_line;  /* where that incomplete record starts */
} csvscan_result;

/* The same scan fed in pieces of any size by the caller (a tar stream):
 * data_csvscan_begin (NULL when out of memory, err filled), any number of
 * data_csvscan_feed (each returns the scan's first error so far), then
 * data_csvscan_end, which frees it and returns the first error. */
typedef struct data_csvscan data_csvscan;
data_csvscan *data_csvscan_begin(const char *name, csvscan_fn fn, void *ctx,
                                 csvscan_result *res, core_err *err);
core_status data_csvscan_feed(data_csvscan *s, const char *text, size_t len);
core_status data_csvscan_end(data_csvscan *s);

/* One value per run and metric (values.c): the rows of one batch file
 * are fed in turn; a second row of the same run and metric is found.
 * per_run: a run is the rows of one batch, workload, arm and run id one
 * after the other (the counting rule's run), and only the current run's
 * metrics are kept (bounded memory, for readers of frozen rows); else
 * every row's key is kept (an import, read whole anyway): 24 bytes a row
 * at most twice over. */
typedef struct data_runvalues data_runvalues;

/** A new, empty set; NULL when out of memory. Free with
 * data_runvalues_free (NULL-safe). */
data_runvalues *data_runvalues_new(int per_run);
void data_runvalues_free(data_runvalues *rv);

/** Adds r (found on line): 0 when its run and metric are new, the line
 * of the earlier row of the same run and metric when not, -1 when out of
 * memory. */
long data_runvalues_add(data_runvalues *rv, const data_row *r, long line);

/* The experiment folder */

/* One entry of a sheet's `amendments` as recorded in versions/vN.json. */
typedef struct data_amendment {
  char *date, *why;
  char **supersedes;
  size_t n_supersedes;
} data_amendment;

/* One version of the sheet in the chain (versions/vN.json). */
typedef struct data_version {
  int number; /* 0 = registered */
  char sha256[CORE_SHA256_HEX];
  char *filed_at; /* UTC */
  char *path;     /* versions/vN.lua, relative to the experiment folder */
  long rows_when_filed; /* valid+invalid runs existing when filed */
  char *date, *why;     /* the amendment this version records; NULL
                           for v0 */
  char **supersedes;    /* workloads whose earlier rows stop counting */
  size_t n_supersedes;
  data_amendment *amendments; /* the sheet's list when filed */
  size_t n_amendments;
  struct data_input *inputs; /* the sheet's inputs when filed, by path */
  size_t n_inputs;
  /* Files its commands read by absolute path, not locked ("unlocked"
   * when filed, data_inputs_unlocked), and how many more were found. */
  char **unlocked;
  size_t n_unlocked;
  long unlocked_more;
} data_version;

/* One file of a sheet's `inputs` (a listed file, or a file under a
 * listed folder): its path relative to the sheet's folder and digest. */
typedef struct data_input {
  char *path;
  char sha256[CORE_SHA256_HEX]; /* "" when the file is missing */
  long long bytes;
  /* As a scan found it (0 when read from a record): the file's inode
   * and its change time, which every write moves, also one that puts the
   * old content back. */
  unsigned long long ino;
  long long ctime_ns;
  /* Locked by digest only: past PREREG_INPUTS_COPY_MAX_BYTES, recorded
   * but not copied (a version records it as "copied": false). */
  int by_digest;
} data_input;

/* The files of a sheet's inputs, sorted by path (owned). */
typedef struct data_inputs {
  data_input *v;
  size_t n;
} data_inputs;

/** Hashes the files of sheet s's `inputs` under s->sheet_dir (none when
 * it has none, or no folder). A listed path that is missing is kept with
 * sha256 "" (for the lock to name it); a symbolic link, in a listed
 * folder too, anything but files and folders, or more than the caps of
 * core/limits.h is CORE_EPROTOCOL naming it (bad input). OUT: *out
 * filled from scratch (data_inputs_free, also on error). */
core_status data_inputs_scan(const proto_sheet *s, data_inputs *out,
                             core_err *err);
void data_inputs_free(data_inputs *in);
/** What sheet s's commands (and vars) read that its inputs do not lock,
 * as warnings appended to b (check prints them; never failures): a word
 * that is a file of the sheet's folder `inputs` does not list, and a word
 * that is an absolute path to an existing file that is not a program
 * (stat on this host; register records those in the version as
 * "unlocked"). b->oom on out of memory. */
void data_inputs_unlocked(const proto_sheet *s, core_buf *b);
/** What differs between the inputs recorded (rec, n) and those found
 * (cur), one "  changed work.sh (sha256 1a2b3c4d5e6f, recorded
 * 0a1b2c3d4e5f)" line each ("missing", "added"), appended to b; a file
 * recorded by digest only (by_digest) also says where the file with its
 * recorded digest must be put. Returns how many differ. */
size_t data_inputs_diff(const data_input *rec, size_t n,
                        const data_inputs *cur, core_buf *b);
/** Scans sheet s's inputs again and says what differs from was (the
 * scan made when a batch began): a file changed, added or missing, or
 * written since with its content as before (an edit put back: its
 * inode or change time moved), one line each appended to b as
 * data_inputs_diff does ("  written work.sh during the batch (content as
 * at its start)"); a scan that fails is one difference, its message the
 * line. Returns how many differ (0: the inputs are as they were). */
size_t data_inputs_recheck(const proto_sheet *s, const data_inputs *was,
                           core_buf *b);

/* An open experiment folder. It owns every string and array it points
 * to. The chain (versions) is read again, and its old pointers freed, by
 * data_experiment_lock, and so by every function that writes (register,
 * amend, batch_begin, recover, import): do not keep a pointer into it
 * across one of those. */
typedef struct data_experiment {
  char *dir; /* DATA/ID */
  char *id;
  data_version *versions; /* chain, in order */
  size_t n_versions;
  int lock_fd; /* DATA/ID/.lock while held (flock), else -1 */
  /* The lock file's modification time when it was taken: the holder line
   * written into it is taken out again on release, and the time put
   * back, so that a command that wrote nothing leaves the folder as it
   * was. */
  long long lock_mtime_sec;
  long lock_mtime_nsec;
  /* 0 (the default): frozen files whose digest differs from the MANIFEST
   * are refused by everything that reads them (rows, batch facts). 1:
   * read anyway, for a report stamped UNVERIFIED (report --force). */
  int trust_changed;
} data_experiment;

/** Opens DATA/ID for the sheet (read only: nothing is created).
 * OUT: *exp newly allocated (free with data_experiment_free), NULL on
 * error; (*exp)->n_versions == 0 when not registered. A sheet id that
 * cannot name a folder is CORE_EPROTOCOL. */
core_status data_experiment_open(const char *data_dir,
                                 const proto_sheet *sheet,
                                 data_experiment **exp, core_err *err);
/** Releases the lock if held and frees everything; NULL is a no-op. */
void data_experiment_free(data_experiment *exp);

/** Takes the exclusive flock on DATA/ID/.lock (creating DATA/ID) so that
 * two writing commands cannot interleave, and reloads the chain. Every
 * writing function calls it; holding it twice is a no-op. Released by
 * data_experiment_free. CORE_ERUN when another process holds it. */
core_status data_experiment_lock(data_experiment *exp, core_err *err);

/* Registration, amendments and the lock */

/** Freezes the sheet as version 0. Refuses (CORE_ELOCK) when a different
 * sheet is already registered under the id; registering the identical
 * text again is a no-op. OUT: *already 1 for that no-op, else 0. */
core_status data_register(data_experiment *exp, const proto_sheet *sheet,
                          int *already, core_err *err);

/** Records the sheet's newest amendment as the next version: exactly one
 * new entry at the end of `amendments`, earlier ones unchanged. A sheet
 * without one (unchanged, or edited with no new entry), or with one
 * edited, removed or several new, is refused as bad input (CORE_EINPUT,
 * nothing written) with the entry to append; CORE_ELOCK when it is not
 * registered. */
core_status data_amend(data_experiment *exp, const proto_sheet *sheet,
                       core_err *err);

/* Time-stamps: a version's record and the MANIFEST after a batch,
 * stamped by a time-stamping authority, are frozen under stamps/
 * (stamps/stamps.h makes, checks and reads them). */
#define DATA_STAMPS_DIR "stamps"

/** Writes tsr as stamps/vK.tsr (frozen, mode 0444; not listed: the
 * caller adds it to the MANIFEST) and removes a pending stamps/vK.tsq. */
core_status data_stamp_write(const data_experiment *exp, int k,
                             const void *tsr, size_t len, core_err *err);

/* Signatures: a version's record signed with an SSH key (ssh-keygen -Y
 * sign -n prereg) is frozen as signatures/vN.sig, listed in the
 * MANIFEST. */
#define DATA_SIGNATURES_DIR "signatures"

/* A stamp and a signature taken while a version is filed (register and
 * amend with --tsa, --sign): fn gets the version's number and the
 * SHA-256 of its record before anything is written, and returns the
 * checked reply to freeze with it (OUT: *tsr newly allocated, core_free;
 * *len); sign gets the record's text and returns its signature (OUT:
 * *sig newly allocated, *sig_len). Either may be NULL; an error leaves
 * nothing filed. */
typedef struct data_stamper {
  core_status (*fn)(void *ctx, int version, const char *hex, char **tsr,
                    size_t *len, core_err *err);
  core_status (*sign)(void *ctx, const char *text, size_t len, char **sig,
                      size_t *sig_len, core_err *err);
  void *ctx;
} data_stamper;

/** data_register, with the version stamped in the same step (stamper may
 * be NULL: none). */
core_status data_register_stamped(data_experiment *exp,
                                  const proto_sheet *sheet,
                                  const data_stamper *stamper, int *already,
                                  core_err *err);
/** data_amend, with the new version stamped in the same step. */
core_status data_amend_stamped(data_experiment *exp, const proto_sheet *sheet,
                               const data_stamper *stamper, core_err *err);

/** The lock that run and import call: CORE_ELOCK when not registered or
 * when the text differs from the newest version; the message lists the
 * changed lines and says to append an amendment and run prereg amend. */
core_status data_check_lock(const data_experiment *exp,
                            const proto_sheet *sheet, core_err *err);

/** Loads version n of the sheet from its frozen copy. Returns a newly
 * allocated sheet (proto_sheet_free), or NULL with err filled. */
proto_sheet *data_load_version(const data_experiment *exp, int n,
                               core_err *err);

/* Reading the data */

/** Loads every row of every batch (frozen or in progress, in batch
 * order). A frozen batch whose bytes differ from the MANIFEST is refused
 * (CORE_EVERIFY naming it), unless exp->trust_changed. OUT: *rows filled
 * from scratch (its old contents are not freed); its strings live in
 * rows->pool (see data_rowset). Free with data_rowset_free, also on error
 * (then *rows is empty). */
core_status data_load_rows(const data_experiment *exp, data_rowset *rows,
                           core_err *err);

/** Called with each row of data_scan_rows: r and its strings are valid
 * during the call only. A status other than CORE_OK stops the scan. */
typedef core_status (*data_row_fn)(void *ctx, const data_row *r,
                                   core_err *err);

/** Reads the rows data_load_rows would load, in the same order and under
 * the same checks (a changed frozen batch is refused), handing each to fn
 * without keeping any: a million rows cost one row's memory. */
core_status data_scan_rows(const data_experiment *exp, data_row_fn fn,
                           void *ctx, core_err *err);

/** The batches whose CSV is not in the MANIFEST (unfinished, for status
 * and verify). OUT: *names newly allocated ("bNNNN"; free with
 * core_names_free(*names, *n)), *n their count; NULL and 0 on error. */
core_status data_unfinished_batches(const data_experiment *exp, char ***names,
                                    size_t *n, core_err *err);

/** Checks every manifest entry and the chain; appends one line per
 * problem to report (the caller's buffer). CORE_EVERIFY when anything
 * is wrong. */
core_status data_verify(const data_experiment *exp, core_buf *report,
                        core_err *err);

/* Which runs count:
 *
 * One rule, here and nowhere else, decides what every command counts:
 * `run` (which planned runs are still to do), `status`, `analyze` and
 * `report`, `verify` of a folder and of a bundle. A run is the rows that
 * share batch, workload, arm and run_id (seq when run_id is empty),
 * written one after the other. Runs are taken in collection order: batch
 * order, then the order of the batch's file, which is its seq order. Under
 * the plan of one version of the sheet (the current one, or the
 * registered v0 for the registered sample) each run has one fate:
 *   superseded      a version filed after the run's own, and not after the
 *                   plan's, lists its workload in `supersedes` (decided
 *                   from the chain alone: versions/vN.json);
 *   not in sheet    its workload or arm is not in the plan's sheet, or its
 *                   source is neither "run" nor "import";
 *   invalid         one of its rows is not valid;
 *   beyond the plan valid, but its workload and arm already have the
 *                   plan's `runs` counted runs before it (a workload
 *                   without `runs` has no cap);
 *   counted         otherwise: its values enter the analysis.
 * Besides, a run of prereg's own (source "run", not superseded, known)
 * with 1 <= round <= runs of a workload prereg runs fills that round of
 * the plan, valid or not: `run` does not run it again. Imported runs never
 * fill a round, nor does a run a lost node left (DATA_NODE_LOST: run
 * --resume runs that round again on its host), a setup failure
 * (DATA_SETUP_FAILURE) or a run beyond the registered conditions
 * (DATA_CONDITIONS).
 *
 * A plan with hosts (the sheet's `hosts` block) crosses every workload and
 * arm with its hosts: the declared nodes, or for a count the first that
 * many hosts prereg's own runs name, in collection order. A run belongs
 * to the host its row names; a round of a (workload, arm) is filled only
 * by a run of its own host, and the cap of `runs` applies per host. A run
 * of prereg's own whose host is not one of the plan's is "not in sheet";
 * an imported run (it names no host) belongs to none, and is capped
 * against the runs of every host together. The collection is complete
 * only when every host filled its rounds; the status names each host
 * that has not. */

/** 1 when rows a and b belong to the same run (batch, workload, arm,
 * run_id; seq when run_id is empty): what groups rows into runs for the
 * rule, wherever rows are read. */
int data_same_run(const data_row *a, const data_row *b);

typedef enum data_fate {
  DATA_COUNTED,
  DATA_SUPERSEDED,
  DATA_NOT_IN_SHEET,
  DATA_INVALID,
  DATA_BEYOND_PLAN
} data_fate;

/* What the rule reads of one run (all borrowed for the call). */
typedef struct data_run_in {
  const char *batch, *workload, *arm, *source, *host;
  int sheet_version;
  long round;
  int valid;         /* every row of the run is valid */
  int quick;         /* collected under run --quick */
  int node_lost;     /* a row of it is a lost node's (data_row_node_lost) */
  int setup_failure; /* a row of it is marked a setup failure */
} data_run_in;

/** What the rule reads of a run whose first row is r (strings borrowed
 * from r; a caller that keeps in past r's life points them at copies). */
data_run_in data_run_in_of(const data_row *r);
/** Folds r, a further row of the same run, into in. */
void data_run_in_add(data_run_in *in, const data_row *r);

/** What the reason of every row of a round a lost node left unfinished
 * starts with: such rows are kept (they arrived) but invalid, and they
 * fill no round of the plan (run --resume runs it again on its host). */
#define DATA_NODE_LOST "node lost"
/** What the reason of a run `run` stopped at as a setup mistake starts
 * with (an arm whose first run failed before any of its planned runs was
 * collected): kept, invalid, and filling no round of the plan, so that
 * the plan is run whole once the mistake is fixed. */
#define DATA_SETUP_FAILURE "setup failure"
/** What the reason of a run beyond the sheet's registered conditions
 * starts with ("outside the registered conditions: load 3.2 above the
 * registered 1.0"): kept, invalid, and filling no round of the plan, so
 * that `run --resume` takes it again. */
#define DATA_CONDITIONS "outside the registered conditions"

/* What the rule decided for one run. */
typedef struct data_run_fate {
  const char *by_why;  /* DATA_SUPERSEDED: its why, borrowed from the chain */
  int by_version;      /* DATA_SUPERSEDED: the version that supersedes */
  int workload, arm;   /* indexes into the plan's sheet, -1 when not in it */
  int host;            /* a plan with hosts: the run's host (an index into
                          data_counter_hosts' list), -1 when none */
  unsigned char fate;  /* a data_fate (one byte: a million runs are held) */
  unsigned char fills; /* fills round `round` of the plan (of its host) */
  char what;           /* DATA_NOT_IN_SHEET: 'w'orkload, 'a'rm, 's'ource
                          or 'h'ost */
} data_run_fate;

/* Runs of one workload and arm under the plan. Counts are of runs. */
typedef struct data_tally {
  char *workload, *arm;
  int in_sheet; /* both are in the plan's sheet */
  long planned; /* the plan's runs for the workload (0: no cap); with
                   hosts, of every host together in the experiment's
                   tallies, of one in a host's */
  long counted; /* valid runs within the plan: those analysed */
  long invalid, superseded, not_in_sheet, beyond;
  long imported;  /* of the counted, imported ones */
  long collected; /* distinct rounds of the plan prereg has run (valid or
                     invalid, not superseded) */
} data_tally;

/* The collection against the plan, in the words every output shows
 * (interface.md): COMPLETE, or each flag that applies, joined by " · ". */
typedef struct data_status {
  long collected, planned; /* planned: runs x arms of every workload
                              prereg runs; collected: of those, run */
  int incomplete;          /* collected < planned */
  int quick;               /* a run that counts was collected with --quick */
  int interrupted;         /* a batch holding runs that count is still
                              unfinished, or was cut short while the plan
                              is not yet complete */
  int beyond_plan;         /* valid runs past the plan, not analysed */
  int imported;            /* imported runs are counted */
  int amended_after_data;  /* an amendment was filed after data existed */
  int inputs_changed;      /* a batch holding runs that count found its
                              inputs changed or written when it ended */
  int unverified;          /* set by the caller: the data did not verify */
  /* A plan with hosts: its hosts, how many of them have not run all their
   * planned runs, and those in words ("n3 9/20, n2 19/20"; hosts of a
   * count not yet named as "2 hosts not named yet"), cut to fit. */
  long hosts, hosts_short;
  char short_hosts[160];
  /* Cells (workload and arm) whose collection is done, or that hold
   * imported rows, with fewer valid runs than the rule's min_n, and
   * those in words ("w/b 1 of 3, w/c 0 of 3"), cut to fit. */
  long too_few;
  char too_few_cells[160];
  /* Workloads stopped early at a look, and those in words ("startup:
   * stopped at look 1 of 3 (n=5)"), cut to fit: a stopped workload is
   * complete. */
  long stopped;
  char stops[240];
} data_status;

/** The status line of st: "COMPLETE", or e.g. "INCOMPLETE (23/180) ·
 * INTERRUPTED" or "TOO FEW VALID (w/b 1 of 3)"; with hosts, the hosts
 * short of their plan follow the count ("INCOMPLETE (49/60; n3 9/20)").
 * Writes at most cap bytes (NUL included) to out. */
void data_status_line(const data_status *st, char *out, size_t cap);
/** 1 when verdicts on these data are provisional (incomplete, quick, or
 * run with inputs that changed). */
int data_status_provisional(const data_status *st);
/* How many flags the status line has words for. */
#define DATA_STATUS_WORDS 9
/** The flags that apply, as the line spells them ("INCOMPLETE", "QUICK",
 * ...): fills up to DATA_STATUS_WORDS static strings into words, returns
 * their count. */
size_t data_status_flags(const data_status *st,
                         const char *words[DATA_STATUS_WORDS]);

/* What a batch's facts say about how its collection ended. */
/* A workload that a run batch stopped early at one of its looks, every
 * comparison decided there (facts key "stops": [{workload, look, looks,
 * n, at}]). */
typedef struct data_stop {
  char workload[80]; /* its name (a longer one is no workload's) */
  long look, looks;  /* 1-based look, of the sheet's looks */
  long n;            /* the look's runs per arm */
  char at[32];       /* when (UTC) */
} data_stop;

typedef struct data_batch_state {
  char id[16];        /* "b0001" */
  int interrupted;    /* facts: "interrupted": true */
  int unfinished;     /* its CSV is not in the MANIFEST (yet) */
  int inputs_changed; /* facts: a non-empty "inputs_changed" */
  data_stop *stops;   /* the stops its facts record (owned), or NULL */
  size_t n_stops;
} data_batch_state;

/** Frees n states and the array; NULL-safe. */
void data_batch_states_free(data_batch_state *b, size_t n);

/** The state of every batch of exp (CSV present), in batch order. A facts
 * file listed in the MANIFEST whose digest differs is CORE_EVERIFY naming
 * it, unless exp->trust_changed. OUT: *out newly allocated (core_free), *n its
 * length; NULL and 0 on error or when there is no batch. */
core_status data_batch_states(const data_experiment *exp,
                              data_batch_state **out, size_t *n,
                              core_err *err);

/* The rule as a running count: runs are given one at a time, in
 * collection order, so that a folder's rows or a bundle's stream can be
 * counted without holding the rows (a verifier keeps no row). */
typedef struct data_counter data_counter;

/** A counter under the plan of sheet plan (NULL: no plan: nothing is "not
 * in sheet", no cap, nothing planned), with supersession by the versions
 * of chain[0..n_chain) numbered at most upto (the plan's own version;
 * 0 for the registered sample, which supersedes nothing). Borrows plan
 * and chain until data_counter_free. NULL when out of memory. */
data_counter *data_counter_new(const proto_sheet *plan,
                               const data_version *chain, size_t n_chain,
                               int upto);
void data_counter_free(data_counter *c);

/** The stops of batches b[0..nb) that hold under the plan (the
 * workload has looks, the stop is at one of them before the last, and its
 * n is that look's): each such workload's plan ends at its earliest stop,
 * its rows beyond are beyond the plan. Call before the first run is
 * counted; data_counter_end applies them too, for the status. */
void data_counter_stops(data_counter *c, const data_batch_state *b, size_t nb);
/** The look (1-based) workload w of the plan stopped at, 0 when none. */
long data_counter_stopped(const data_counter *c, size_t w);

/** The rule: the fate of the next run in collection order (and its
 * count). Out of memory is remembered and reported by data_counter_end. */
data_run_fate data_count_run(data_counter *c, const data_run_in *run);

/** The tallies (the plan's workloads and arms in sheet order, then those
 * it does not know in order of appearance) and the status, given the
 * batches' states (may be NULL). OUT: *tallies newly allocated
 * (data_tally_free), *n their count, *st. CORE_ENOMEM when the counter
 * ran out of memory. */
core_status data_counter_end(data_counter *c, const data_batch_state *batches,
                             size_t n_batches, data_tally **tallies, size_t *n,
                             data_status *st, core_err *err);
/** Frees n tallies and the array; NULL-safe. */
void data_tally_free(data_tally *t, size_t n);

/* One host of a plan with hosts, as the rule counted its runs. */
typedef struct data_host_tally {
  char *name;
  data_tally *tallies; /* the plan's workloads and arms, in sheet order */
  size_t n_tallies;
  data_status status; /* this host's runs against its plan */
  /* Rounds of workloads prereg runs whose every arm has a run on this
   * host that fills the plan, and the plan's rounds (at most 3 a
   * workload when its runs are quick). */
  long rounds_done, rounds_planned;
} data_host_tally;

/** After data_counter_end: the hosts of a plan with hosts, in the order
 * of fate.host (the declared nodes in order, or the hosts of a count as
 * runs named them), each with its tallies and status. OUT: *hosts newly
 * allocated (data_host_tallies_free), *n; NULL and 0 without hosts.
 * CORE_ENOMEM only. */
core_status data_counter_hosts(const data_counter *c, data_host_tally **hosts,
                               size_t *n, core_err *err);
void data_host_tallies_free(data_host_tally *h, size_t n);

/* The rule over a loaded rowset: every run and row with its fate. */
typedef struct data_counted {
  size_t n_runs;
  data_run_fate *runs;   /* in collection order */
  size_t *run_first;     /* its first row */
  size_t *run_rows;      /* its number of rows (they follow the first) */
  size_t *row_run;       /* per row: its run */
  unsigned char *counts; /* per row: 1 when its value is analysed (its run
                            counts, its metric is the workload's, it has
                            a value) */
  data_tally *tallies;
  size_t n_tallies;
  data_status status;
  data_host_tally *hosts; /* a plan with hosts (data_counter_hosts) */
  size_t n_hosts;
  long *stopped; /* per workload of the plan: the look it stopped at
                    (data_counter_stopped), 0 when none; NULL without a
                    plan */
} data_counted;

/** Applies the rule to rows (in collection order, as data_load_rows
 * gives them) under plan (may be NULL) with the chain of exp (may be
 * NULL: nothing superseded) up to version upto. The batches' states are
 * read from exp's folder when it has one. OUT: *out filled from scratch
 * (free with data_counted_free, also on error). */
core_status data_count_rows(const proto_sheet *plan,
                            const data_experiment *exp, int upto,
                            const data_rowset *rows, data_counted *out,
                            core_err *err);
void data_counted_free(data_counted *c);

/** Whether the value of row r, of a run the rule gave fate f under plan
 * (may be NULL), enters the analysis: its run counts, it holds a value,
 * and its metric is one its workload declares. The rule's word on a row;
 * data_count_run's is the word on its run. */
int data_row_analysed(const data_run_fate *f, const proto_sheet *plan,
                      const data_row *r);

/** Why row r (fate f, as for data_row_analysed) is not analysed, in the
 * words the report shows ("superseded by amendment 1: ...", "beyond the
 * plan (runs = 10): valid, not analysed", "timeout after 120 s": for an
 * invalid run, invalid_reason, the reason of its first invalid row), or
 * NULL when it is. Newly allocated (core_free); also NULL when out of
 * memory, which *oom says. For a row fed one at a time (the streaming
 * analysis); data_row_why says the same of a counted rowset. */
char *data_fate_why(const data_run_fate *f, const proto_sheet *plan,
                    const data_row *r, const char *invalid_reason, int *oom);

/* Export */

/* The columns of `prereg export --format csv`, in this order. */
#define DATA_EXPORT_HEADER                                                    \
  "workload,arm,metric,value,unit,run_id,batch,host,status,reason"

/** The rows of exp as the analysis under sheet (its newest version)
 * counts them, by the rule above, appended to out: CSV (DATA_EXPORT_HEADER
 * then a line per row) or, json, an array of objects with those keys (a
 * value without a number is empty, null in JSON). status: "counted",
 * "imported" (an imported row that counts), "superseded", "invalid",
 * "beyond the plan", "not in the sheet", or "not analysed" (a row of a
 * counted run without a value or with a metric its workload does not
 * declare), with reason (data_row_why) for those that do not count.
 * all: every row, else only those that count. CSV values are the
 * shortest text (15 to 17 significant digits) that reads back as the same
 * double; JSON's are 17 digits. */
core_status data_export(const data_experiment *exp, const proto_sheet *sheet,
                        int json, int all, core_buf *out, core_err *err);

/* Batches */

/* A batch being written: an open handle, owned by the caller from
 * data_batch_begin until data_batch_freeze or data_batch_abandon frees
 * it. */
typedef struct data_batch data_batch;

/** Takes the experiment's lock and starts the next batch (kind "run" or
 * "import"): batches/BATCH.csv with its header. The experiment must be
 * registered (else CORE_ELOCK) and must outlive the batch. OUT: *batch
 * the new handle, NULL on error. */
core_status data_batch_begin(data_experiment *exp, const char *kind,
                             data_batch **batch, core_err *err);
/** The batch's id ("b0001"): borrowed, valid until the handle is freed. */
const char *data_batch_id(const data_batch *b);
/** The batch's folder for per-run files (DATA/ID/batches/BATCH), created
 * on the first call: borrowed, valid until the handle is freed. */
const char *data_batch_dir(const data_batch *b);
/* How often appended rows are synced to disk, at most (seconds). */
#define DATA_SYNC_S 1.0

/** Appends rows (all the rows of one run) with one write(): once it
 * returns, the rows survive the death of the process (kill -9). They are
 * synced to disk in groups: by the first append DATA_SYNC_S or more after
 * the last sync, and always by data_batch_freeze and data_batch_abandon,
 * so a power loss costs at most the rows appended in the DATA_SYNC_S
 * after the last sync. */
core_status data_batch_append(data_batch *b, const data_row *rows, size_t n,
                              core_err *err);
/** Freezes the batch: writes batches/BATCH.json from facts_json (a JSON
 * object text, or NULL for {}; prereg's bookkeeping keys are added),
 * makes the batch's files read-only and adds them to the manifest.
 * Frees b, on error too. */
core_status data_batch_freeze(data_batch *b, const char *facts_json,
                              core_err *err);
/** Frees b without freezing (the rows written stay, for --resume). */
void data_batch_abandon(data_batch *b);

/* The facts of a batch that `prereg run` collected, as C data: the schema
 * of batches/BATCH.json for such a batch. data_batch_freeze_run writes
 * them, in this order (JSON types in brackets):
 *   kind "run", protocol [string], sheet_version [integer], sheet_sha256,
 *   batch (the batch's id), started_at, ended_at [UTC strings],
 *   host {hostname, kernel, cpu_model [string or null], cores,
 *         mem_total_mib [integers], cpu_governor [string or null],
 *         prereg_version, load_avg_start, load_avg_end [three reals (1,
 *         5, 15 minutes) or null]},
 *   quick, resume [booleans], only [string or null], interrupted
 *   [boolean], runs_planned, runs_recorded, runs_valid, runs_invalid
 *   [integers], order [string: how the round order is drawn],
 *   images {ARM: {kind, source, digest}} (kind "tree", "digest" or
 *   "none"; source null for none, digest "" for none),
 *   versions {ARM: [{command, exit_code [integer; -1: did not exit],
 *   output}]}, warmup_failures [strings],
 *   and for a batch across hosts (backend not NULL): backend, job
 *   [string or null], nodes {NAME: {the node's report (data_node_report),
 *   scheduler [string or null], boot_id_end [string or null],
 *   rounds_done, rounds_lost [integers]}}, host_threats, lost_rounds
 *   [strings], and for a sheet with inputs: inputs {PATH: sha256},
 *   and when they differed at the batch's end: inputs_changed [strings],
 *   and when the batch stopped a workload early: stops [{workload
 *   [string], look, looks, n [integers], at [UTC string]}],
 * then the keys every frozen batch gets (see data_batch_freeze).
 * Strings are written as valid UTF-8: a byte that is not becomes U+FFFD.
 * Structs rather than a JSON builder: the schema stands here as types,
 * in one place, the caller fills plain values without knowing how they
 * are encoded, and only data/ writes what it stores (with jansson).
 * Every pointer is borrowed for the call. */
/* One fact of what adds noise on a host (`prereg host`): its name
 * ("governor", "aslr", ...) and its value in words, "" when the host has
 * no source for it. */
#define DATA_HOST_CONDS 12
typedef struct data_host_cond {
  char name[24];
  char value[160];
} data_host_cond;

typedef struct data_host_facts {
  char hostname[256];
  char kernel[700];      /* uname: system, release, version, machine */
  char cpu_model[256];   /* "" when unknown (written as null) */
  long cores;            /* processors online */
  long mem_total_mib;    /* MemTotal */
  char cpu_governor[64]; /* "" when unknown (written as null) */
  int has_load_start, has_load_end; /* 0: the load was unreadable */
  double load_avg_start[3], load_avg_end[3];
  /* What adds noise here (written as host.conditions): n_cond of them,
   * none for a host whose facts predate them. */
  data_host_cond cond[DATA_HOST_CONDS];
  size_t n_cond;
} data_host_facts;

typedef struct data_arm_image {
  const char *arm;
  const char *kind;   /* "tree", "digest" or "none" */
  const char *source; /* the tree's path or the digest command; NULL */
  const char *digest; /* "" when none */
} data_arm_image;

typedef struct data_version_probe {
  const char *command; /* as run (expanded) */
  int exit_code;       /* -1 when it did not exit */
  const char *output;  /* its standard output, trimmed */
} data_version_probe;

typedef struct data_arm_versions {
  const char *arm;
  const data_version_probe *probes;
  size_t n_probes;
} data_arm_versions;

/* A node of a batch across hosts, as the node runner sees itself at the
 * preflight (data_node_report). */
typedef struct data_node_facts {
  char node[65];          /* the name the plan and the scheduler use */
  data_host_facts host;   /* load_avg_start: at the preflight */
  char machine_id[65];    /* /etc/machine-id, "" when unreadable */
  char boot_id[65];       /* /proc/sys/kernel/random/boot_id */
  char smt[64];           /* /sys/devices/system/cpu/smt/control, "" */
  long threads_per_core;  /* siblings / cpu cores of cpu 0, 0: unknown */
  char cpus_allowed[256]; /* Cpus_allowed_list of the node runner */
} data_node_facts;

/* One host of a batch across hosts, for its facts. */
typedef struct data_node_run {
  const char *name;
  const char *report;      /* the node's preflight report as it sent it
                              (a JSON object text), NULL: none came */
  const char *scheduler;   /* the scheduler's view of the node
                              (scontrol show node NAME --oneliner), or NULL */
  const char *boot_id_end; /* the boot_id its last step saw, or NULL */
  size_t rounds_done, rounds_lost;
} data_node_run;

typedef struct data_run_facts {
  const char *protocol;
  int sheet_version;
  const char *sheet_sha256;
  const char *started_at, *ended_at;
  data_host_facts host;
  int quick, resume;
  const char *only; /* NULL: every workload */
  int interrupted;
  size_t runs_planned, runs_recorded, runs_valid, runs_invalid;
  const char *order;
  /* the token the round orders were drawn from ("stamps/vN.tsr"), or
   * NULL: the sheet's seed */
  const char *order_stamp;
  const data_arm_image *images; /* one per arm, in the sheet's order */
  size_t n_images;
  const data_arm_versions *versions; /* one per arm */
  size_t n_versions;
  const char *const *warmup_failures;
  size_t n_warmup_failures;
  /* A batch across hosts: backend "slurm" (NULL for a batch here and
   * nothing below is written), the allocation's job id, each host, the
   * host threats found (hosts that are one machine, a reboot) and the
   * rounds lost with their node, in words. */
  const char *backend;
  const char *job;
  const data_node_run *nodes;
  size_t n_nodes;
  const char *const *host_threats;
  size_t n_host_threats;
  const char *const *lost_rounds;
  size_t n_lost_rounds;
  /* The sheet's inputs the batch ran with (written as inputs {PATH:
   * sha256} when there are any), or NULL. */
  const data_inputs *inputs;
  /* What differed in them when the batch ended (data_inputs_recheck's
   * lines, written as inputs_changed [strings] when there are any). */
  const char *const *inputs_changed;
  size_t n_inputs_changed;
  /* Workloads the batch stopped early at a look (written as stops when
   * there are any). */
  const data_stop *stops;
  size_t n_stops;
} data_run_facts;

/** A node's preflight report, one JSON object on one line (no newline
 * appended): {node, host {as above}, machine_id, boot_id, smt,
 * threads_per_core, cpus_allowed, images {ARM: {kind, source, digest}},
 * versions {ARM: [...]}}, appended to out (check out->oom). */
void data_node_report(const data_node_facts *f, const data_arm_image *images,
                      size_t n_images, const data_arm_versions *versions,
                      size_t n_versions, core_buf *out);
/** Reads back what the coordinator checks in such a report: the facts
 * (f) and the image digest of each arm of s (OUT: *digests, newly
 * allocated, one per arm in the sheet's order, "" when the report names
 * none; free with core_names_free(*digests, s->n_arms)). CORE_EINPUT when
 * text is not a report. */
core_status data_node_report_read(const char *text, const proto_sheet *s,
                                  data_node_facts *f, char ***digests,
                                  core_err *err);

/** Writes the facts a run batch has at its start (interrupted true, no
 * end yet) as its batches/BATCH.json, not frozen, so that a batch ended
 * by kill -9 or a power loss keeps its host facts: recovery freezes
 * them with its rows, and a freeze replaces them. */
core_status data_batch_start_run(data_batch *b, const data_run_facts *facts,
                                 core_err *err);
/** data_batch_freeze with the facts of a run batch (above); frees b. */
core_status data_batch_freeze_run(data_batch *b, const data_run_facts *facts,
                                  core_err *err);

/* What a batch's facts say of the versions and the token it ran under,
 * as stamps/ reads them back (a data stamp's plan, round orders drawn
 * from a stamp). */
typedef struct data_stamp_facts {
  long long at_start;   /* sheet_versions_at_start; 0 when no integer */
  long version;         /* sheet_version; -1 when no integer */
  int has_order_stamp;  /* 1: order_stamp is a string, then: */
  char order_stamp[64]; /* its text (cut at 63 bytes) */
} data_stamp_facts;

/** Reads them from the facts file rel (batches/BATCH.json, relative to
 * exp's folder). OUT: *f, as above when the file cannot be read or is no
 * JSON. */
void data_stamp_facts_read(const data_experiment *exp, const char *rel,
                           data_stamp_facts *f);

/** For --resume: freezes batches left unfinished by a crash. A torn last
 * line, or the rows of a run cut short, is removed and reported in
 * notes (the caller's buffer, one line each). */
core_status data_recover(data_experiment *exp, core_buf *notes, core_err *err);

/* The manifest, the one verifier, batch names and JSON, for the folders
 * above that read an experiment's files their own way (bundles/,
 * imports/) or freeze files of their own in it (stamps/) */

typedef struct data_manifest_line {
  char *path; /* relative to the experiment folder */
  char sha256[CORE_SHA256_HEX];
  long line;
} data_manifest_line;

/* The entries of DIR/MANIFEST; owns their paths (data_manifest_free). */
typedef struct data_manifest {
  data_manifest_line *e;
  size_t n, cap;
} data_manifest;

/** The same from the MANIFEST's text, name naming it in messages. */
core_status data_manifest_parse(const char *name, const char *text, size_t len,
                                data_manifest *m, core_buf *problems,
                                core_err *err);
void data_manifest_free(data_manifest *m);
/** Loads DIR/MANIFEST (missing: empty) into *m, filled from scratch.
 * Malformed lines are CORE_EINPUT naming MANIFEST:LINE unless problems
 * (the caller's buffer) is given, in which case each is appended there
 * and skipped. Free *m with data_manifest_free; on error it is empty. */
core_status data_manifest_load(const char *dir, data_manifest *m,
                               core_buf *problems, core_err *err);

/** The entry for path, or NULL: borrowed from m, valid until m changes. */
const data_manifest_line *data_manifest_find(const data_manifest *m,
                                             const char *path);
/** Hashes each path (relative to dir) and appends it to the MANIFEST,
 * which is replaced atomically (mode 0444). */
core_status data_manifest_add(const char *dir, char *const *paths, size_t n,
                              core_err *err);

/** The pid in the name of a temporary file of core_write_file_atomic
 * ("NAME.tmp.PID"), or 0 when name is not one. */
long data_tmp_file_pid(const char *name);

/** 1 when name is "bNNNN" followed by suffix exactly (e.g. ".csv");
 * OUT: *num the number. */
int data_batch_name(const char *name, const char *suffix, long *num);

/* The verifier:
 *
 * One verifier of an experiment's files, for a data folder (verify.c
 * walks it) and for a bundle (bundle.c streams its members): the same
 * MANIFEST parser, CSV scan, chain rules, counting and messages. Every
 * message is "WHERE" + the file's path relative to the experiment folder
 * + ": what" (WHERE is "DATA/ID/" or "BUNDLE: ID/"). It is fed in this
 * order: the MANIFEST, the files of versions/, the batches' facts, then
 * any other file (a batch's CSV is parsed as it streams, so no file is
 * ever held whole), and checks what needs everything at the end. A
 * bundle's members come sorted, versions/ after batches/: its reader
 * takes the small members first (a first pass it makes anyway), so that
 * rows are checked against the chain as they stream, with memory that
 * does not grow with the data. */

typedef struct data_check data_check;

/** A verifier whose messages start with where; report is the caller's
 * buffer (one line per problem or note). NULL when out of memory. */
data_check *data_check_new(const char *where, core_buf *report);
/** The MANIFEST's text; NULL text: there is none. */
void data_check_manifest(data_check *v, const char *text, size_t len);
/** A file of versions/ (whole: sheets, their facts and diffs are small). */
void data_check_version(data_check *v, const char *rel, const char *text,
                        size_t len);
/** batches/BATCH.json (whole). */
void data_check_facts(data_check *v, const char *rel, const char *text,
                      size_t len);
/** Any other file, streamed: begin, data (any number of pieces), end. A
 * batch's CSV (batches/BATCH.csv) is parsed as it streams. unfinished: a
 * batch still being written (a folder's, not in the MANIFEST): its rows
 * are counted, not checked. */
void data_check_file_begin(data_check *v, const char *rel, int unfinished);
void data_check_file_data(data_check *v, const void *p, size_t n);
void data_check_file_end(data_check *v);
/** A file the feeder found wrong itself (it is then taken as seen). */
void data_check_problem(data_check *v, const char *rel, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* What the verifier found, for the summary lines. */
typedef struct data_check_result {
  long problems;
  size_t files, versions, batches, rows;
  char status[512]; /* "status: ..." line, without the newline */
} data_check_result;

/** Checks what needs everything (files the MANIFEST lists that never
 * came, the chain), appends the status line, frees v. OUT: *res.
 * CORE_ENOMEM when out of memory, else CORE_OK (problems are counted in
 * res, not returned). */
core_status data_check_end(data_check *v, data_check_result *res,
                           core_err *err);

/** 1 when rel is a path a bundle or manifest may hold: relative,
 * '/'-separated, no empty, "." or ".." component, no control character
 * or backslash. */
int data_safe_rel(const char *rel);

/* Batch facts are informational (load averages, sizes): they are
 * written with 15 significant digits, which print 3.2 rather than
 * 3.2000000000000002. The measurements themselves are in the CSV,
 * written exactly. */
#define DATA_FACTS_DIGITS 15

/** The member key of the JSON object that text (len bytes) holds: a
 * string as it is, an integer in decimal, newly allocated (core_free);
 * NULL when text is no JSON object, key is missing or of another type,
 * or out of memory. For the folders that read one fact. */
char *data_json_member_text(const char *text, size_t len, const char *key);

/* JSON values (json_value.c)
 *
 * For the floors that read other tools' files (imports/) and write
 * `analyze --json` (analysis/): jansson's values, so that only data/
 * includes and links it. Each function is the jansson call it names and
 * behaves as it does: a NULL value in gives NULL, 0 or failure out, so
 * that lookups chain; jansson allocates through core_malloc. */

typedef struct json_t data_json; /* jansson's json_t, opaque here */

/* Where a text failed to parse, as jansson says it. */
typedef struct data_json_error {
  int line, column; /* 1-based */
  char text[160];   /* jansson's message */
} data_json_error;
/* For data_json_parse: a key given twice in one object is refused
 * (jansson would keep the last without a word). */
#define DATA_JSON_NO_DUPLICATES 1u
/** The one JSON value text holds (len bytes; json_loadb, which reads
 * each byte once and nests 2048 levels at most); flags 0 or
 * DATA_JSON_NO_DUPLICATES. Newly allocated (data_json_free); NULL when
 * text holds no JSON value, with where and why in *e (NULL: not
 * wanted), or out of memory. */
data_json *data_json_parse(const char *text, size_t len, unsigned flags,
                           data_json_error *e);
/** Drops v and what it holds (json_decref); NULL is a no-op. */
void data_json_free(data_json *v);

/* The kinds of value, as masks for data_json_is. */
enum {
  DATA_JSON_OBJECT = 1,
  DATA_JSON_ARRAY = 2,
  DATA_JSON_STRING = 4,
  DATA_JSON_INTEGER = 8,
  DATA_JSON_REAL = 16,
  DATA_JSON_NUMBER = DATA_JSON_INTEGER | DATA_JSON_REAL,
  DATA_JSON_TRUE = 32,
  DATA_JSON_FALSE = 64,
  DATA_JSON_NULL = 128
};
/** 1 when v is of one of kinds (a mask of the above; json_typeof), 0 when
 * not or NULL. */
int data_json_is(const data_json *v, unsigned kinds);
/** Member key of object o (json_object_get), item i of array a
 * (json_array_get: items 0 to data_json_size - 1), borrowed from it; NULL
 * when there is none or o, a is of another kind. */
data_json *data_json_get(const data_json *o, const char *key);
data_json *data_json_at(const data_json *a, size_t i);
/** The number of items of array a, 0 for any other kind
 * (json_array_size). */
size_t data_json_size(const data_json *a);
/** A string's text, borrowed from v (json_string_value); an integer's
 * value (json_integer_value); an integer's or a real's value as a double
 * (json_number_value). NULL or 0 for any other kind. */
const char *data_json_text(const data_json *v);
long long data_json_integer(const data_json *v);
double data_json_number(const data_json *v);

/** New values: an empty object or array; a copy of s (NULL when s is
 * NULL or not UTF-8); an integer; a real (NULL for NaN or an infinity:
 * JSON has none); true or false; null. NULL when out of memory. Each is
 * the caller's, to data_json_free or to give to data_json_set or
 * data_json_append. */
data_json *data_json_new_object(void);
data_json *data_json_new_array(void);
data_json *data_json_new_text(const char *s);
data_json *data_json_new_integer(long long n);
data_json *data_json_new_real(double x);
data_json *data_json_new_bool(int b);
data_json *data_json_new_null(void);
/** Sets member key of object o to v (json_object_set_new), appends v to
 * array a (json_array_append_new); either takes v over, whatever
 * happens. 0, or -1 when v is NULL, o or a of another kind, key not
 * UTF-8, or out of memory. */
int data_json_set(data_json *o, const char *key, data_json *v);
int data_json_append(data_json *a, data_json *v);
/** v as text (json_dump_callback), members in the order they were set: indent
 * spaces a level, or 0 for one line (items after ", ", values after
 * ": "); reals with digits significant digits (1 to 17). Newly
 * allocated (core_free); NULL when out of memory. */
char *data_json_dump(const data_json *v, int indent, int digits);

/* Rows across hosts (data/hosts.c) */

/** One row as the node runner sends it to the coordinator, on one line:
 * its CSV record (as a batch holds it) as a JSON string, appended to out
 * without a newline (check out->oom). */
void data_row_line(const data_row *r, core_buf *out);
/** The row of such a text. OUT: *r with newly allocated strings (free
 * with data_row_free_strings). CORE_EINPUT when text is not one row. */
core_status data_row_unline(const char *text, data_row *r, core_err *err);
/** Frees the strings of a row that owns them and zeroes it. */
void data_row_free_strings(data_row *r);

/* What a report shows besides the rows */

/* All of it is owned by the data_report_inputs that holds it and freed
 * with it. */

/* One fact of a batch's facts JSON, flattened: nested keys joined with
 * ".", array items as "[i]" ("host.kernel", "versions.bwrap[0]"). */
typedef struct data_fact {
  char *key, *value; /* value: strings as is, numbers as JSON text */
} data_fact;

/* A small table read from a file (process lists): header + rows. */
typedef struct data_table {
  char *source;  /* path relative to the experiment folder */
  char **header; /* n_cols names */
  size_t n_cols;
  char **cells; /* n_rows * n_cols, row-major; "" for missing */
  size_t n_rows;
} data_table;

typedef struct data_batch_info {
  char *id;         /* "b0001" */
  data_fact *facts; /* sorted by key; empty when no facts file */
  size_t n_facts;
  data_table *procs; /* process lists found under batches/ID/ */
  size_t n_procs;
} data_batch_info;

typedef struct data_manifest_entry {
  char *path; /* relative to the experiment folder */
  char sha256[CORE_SHA256_HEX];
} data_manifest_entry;

typedef struct data_report_inputs {
  data_batch_info *batches; /* in batch order */
  size_t n_batches;
  data_manifest_entry *manifest; /* in file order */
  size_t n_manifest;
} data_report_inputs;

/** Reads what a report shows besides the rows: every batch's facts JSON
 * (flattened), the process lists under each batch folder (JSON arrays of
 * objects, or tab/comma-separated text with a header line; files whose
 * name contains "proc") and the MANIFEST. Missing files give empty
 * lists. OUT: *out newly allocated (free with data_report_inputs_free),
 * NULL on error. */
core_status data_report_inputs_load(const data_experiment *exp,
                                    data_report_inputs **out, core_err *err);
/** Frees everything; NULL is a no-op. */
void data_report_inputs_free(data_report_inputs *in);
/** Value of fact key in b (NULL b: none), or NULL: borrowed from b, valid
 * until its data_report_inputs is freed. */
const char *data_fact_get(const data_batch_info *b, const char *key);

/* The pilot */

/* DATA/ID/pilot: rounds `prereg pilot` ran to plan the sample size. It
 * is laid out like an experiment folder of its own (versions/v0 the sheet
 * piloted, batches/, its MANIFEST), so nothing that reads DATA/ID's
 * batches (the counting rule, run's to-do, analyze, report) ever reads
 * its rows; DATA/ID's MANIFEST lists its frozen files under pilot/, so
 * verify checks them and publish bundles them. */
#define DATA_PILOT_DIR "pilot"

/** Opens the experiment-like folder dir under id (nothing created).
 * OUT: *out as data_experiment_open's. */
core_status data_experiment_open_dir(const char *dir, const char *id,
                                     data_experiment **out, core_err *err);
/** Opens exp's pilot folder (DATA/ID/pilot). OUT: as above. */
core_status data_pilot_open(const data_experiment *exp, data_experiment **out,
                            core_err *err);
/** The runs in exp's pilot folder and how many of them are valid, or -1
 * and -1 when it has none. */
core_status data_pilot_count(const data_experiment *exp, long *runs,
                             long *valid, core_err *err);
/** Lists in exp's MANIFEST, under pilot/, every file pilot's MANIFEST
 * lists that it does not list yet (the caller holds exp's lock). */
core_status data_pilot_cover(const data_experiment *exp,
                             const data_experiment *pilot, core_err *err);

#endif
