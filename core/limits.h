/* limits.h: the caps prereg puts on what untrusted input (a sheet, an
 * import file, a data folder, a bundle) may make it hold or do, in one
 * place, each with why it is where it is. Each is far above what an honest
 * study declares; docs/interface.md states each one with the error it
 * gives.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_CORE_LIMITS_H
#define PREREG_CORE_LIMITS_H

/* Files prereg reads */

/** The most core_read_file reads: 256 MiB. */
#define CORE_READ_MAX ((size_t)256 << 20)
/* A batch larger than anything a run writes in one go: recovery reads
 * the whole csv (4 GiB; the rows themselves are streamed elsewhere). */
#define RECOVER_READ_MAX ((size_t)1 << 32)
/* Rows of a sheet's two versions compared line by line (their product):
 * 160 MB of table would be absurd for a sheet. */
#define DIFF_MAX_CELLS 40000000u
/* Workload and arm pairs the plan does not know are tallied by name, up
 * to this many; the rest share one last tally, so that rows naming a
 * million workloads cannot make a count quadratic or unbounded. */
#define COUNT_MAX_OTHER_PAIRS 1024

/* Imports of other tools' files */

/* An import file: a CSV is scanned as it is read (a million rows are some
 * 50 MB, never held whole); a JSON file or go test output is parsed
 * whole, and parsed JSON takes many times its size, so their limit is
 * lower. */
#define IMPORT_MAX ((size_t)256 << 20)
#define IMPORT_WHOLE_MAX ((size_t)64 << 20)

/* Distinct configurations (sets of go benchmark `key: value` lines in
 * effect) one file may hold: `go test ./...` over a large repository has
 * one per package, a few hundred. */
#define IMPORT_CONFIGS_MAX 4096
/* Configuration keys in effect at once (goos, goarch, pkg, cpu and the
 * user's own): a handful in real output. */
#define IMPORT_CONFIG_KEYS_MAX 256
/* Bytes of configuration text built over a whole file (each change of
 * configuration followed by a result builds one): bounds the memory a
 * file that changes its configuration on every line can take. */
#define IMPORT_CONFIG_BYTES_MAX ((size_t)16 << 20)
/* Bytes of an --arm-map file (one name and arm a line). */
#define IMPORT_ARM_MAP_MAX ((size_t)16 << 20)
/* Bytes of a name, a list of names or a value quoted in a message, so
 * that the hint after it always fits. */
#define IMPORT_QUOTE_MAX 300

/* A sheet's text and its Lua */

/* The most bytes a sheet's text may have; readers of frozen versions
 * read no more. */
#define PROTO_MAX_TEXT ((size_t)1 << 20)
/* Limits of one sheet's Lua. Sheets are declarative: a real one uses a
 * few hundred KiB and some thousands of instructions, so these are far
 * away from any honest sheet and close enough to stop a hostile one in
 * well under a second. The budgets (allocation, instructions, CPU) are
 * for everything a sheet's Lua does in one command, its claims' too. */
#define PROTO_MEM_CAP ((size_t)64 << 20)       /* live bytes */
#define PROTO_ALLOC_BUDGET ((size_t)256 << 20) /* bytes allocated in total */
#define PROTO_INSTR_BUDGET 10000000            /* VM instructions */
#define PROTO_CPU_LIMIT 0.2                    /* seconds of CPU */

/* What a sheet declares. Analysis time grows with the hypotheses and with
 * comparisons x resamples (each comparison is bootstrapped resamples
 * times); memory with the declared cells (arms x the metrics of every
 * workload), which status, analyze and report keep one entry each for;
 * a batch's plan holds every run it will make. */
#define CORE_MAX_HYPOTHESES 500           /* hypotheses of a sheet */
#define CORE_MAX_RESAMPLE_WORK 100000000L /* comparisons x resamples */
#define CORE_MAX_CELLS 10000L             /* arms x workloads' metrics */
#define CORE_MAX_PLANNED_RUNS 1000000L    /* runs and warm-ups of a plan */
/* Lists that validation and every lookup walk for each use (a var per
 * placeholder, a declared metric per cell, the verdicts against each
 * other): small in any honest sheet, capped so that no pass over them
 * grows with the square of a hostile one. */
#define CORE_MAX_VARS 1000         /* entries of vars */
#define CORE_MAX_METRIC_DECLS 1000 /* entries of metrics */
#define CORE_MAX_VERDICTS 64       /* rule.verdicts */
/* A workload's looks: each costs a share of the error (the interval at
 * every look is that much wider), and past a handful a look decides
 * nothing a fixed design would not; 20 leaves room for any sane one. */
#define CORE_MAX_LOOKS 20

/* A sheet's `inputs` are hashed at every batch's start and end and by
 * each command that checks the lock, so what they hold together is
 * bounded by what hashing costs there (16 GiB: about a minute at
 * 300 MB/s); a larger tree is an `image` digest. The most bytes all
 * inputs of a sheet may hold together: */
#define PREREG_INPUTS_MAX_BYTES ((long long)16 << 30)
/* Each version keeps a copy of its inputs in the data folder, and every
 * bundle carries them, so the copies stay the size of scripts,
 * configuration and small data: files are copied in path order while
 * the copies together stay within this; a file past it is locked by its
 * digest only (recorded, checked before every batch, named for a
 * replicator to supply), never copied. */
#define PREREG_INPUTS_COPY_MAX_BYTES ((long long)16 << 20)
/* The files outside the inputs a version records as read but not locked
 * (absolute paths in its commands, each once), for its report to name:
 * a sheet names a handful; past this, only how many more. */
#define PREREG_UNLOCKED_MAX 100
/* The most files they may hold (a folder's files each count): */
#define PREREG_INPUTS_MAX_FILES 1000
/* The deepest folder nesting under an input folder: */
#define PREREG_INPUTS_MAX_DEPTH 16

/* prereg plan: its own budget */

/* Simulated experiments per comparison and size (--sims): 1000 gives
 * probabilities to about +-1.6 points; a million would be hours. */
#define PLAN_MAX_SIMS 100000L
/* Candidate sizes (--sizes). */
#define PLAN_MAX_SIZES 32
/* The largest candidate size: the exact law of a resample median is
 * tabled up to this many values (ANALYSIS_TABLE_MAX). */
#define PLAN_MAX_SIZE 2048L
/* Values drawn in all (comparisons x 2 simulations x sims x the sizes
 * summed x 2 arms): about 20 ns each, so the cap is minutes, not days. */
#define PLAN_MAX_DRAWS 20000000000.0
/* Pilot values one cell may hold for the plan (they are drawn from by
 * index, kept in memory). */
#define PLAN_MAX_PILOT 1000000L
/* Atoms of a resample median's law with less probability than this are
 * left out: at most n^2/2 of them, so under 2e-9 in all at n = 2048,
 * against interval ends at probabilities of 0.005 or more. */
#define PLAN_ATOM_FLOOR 1e-15
/* Plausible truths per comparison (the pilot resampled per arm): the
 * power that a share of them reach is read from 40 ranked powers, each
 * from sims / 40 experiments. */
#define PLAN_TRUTHS 40
/* A pilot cell of more values is taken as known (every plausible truth
 * is the pilot itself): its truths' indexes are kept in memory, and its
 * own uncertainty is small beside the sizes planned. */
#define PLAN_TRUTH_MAX_PILOT 4096

/* prereg pilot */

/* Rounds per arm and workload a pilot may run (--runs). */
#define PILOT_MAX_RUNS 1000L

/* prereg compare */

/* Commands a comparison may hold once -L or --parameter-scan expanded
 * them: each is an arm measured every round, and a scan of a wide range
 * with a small step must not ask for a plan of millions of runs. */
#define COMPARE_MAX_ARMS 100
/* Metrics a comparison may name (--metric). */
#define COMPARE_MAX_METRICS 16
/* Rounds and warm-ups a comparison may ask for (--runs, --warmup): a
 * quick look, bounded as a pilot is. */
#define COMPARE_MAX_RUNS 1000L
/* Bytes of a --rule FILE: a rule table, far smaller than a sheet. */
#define COMPARE_RULE_MAX ((size_t)64 << 10)

/* Lines between a node runner and the Slurm coordinator */

/* The longest line a node runner may send (1 MiB): a row line is a CSV
 * record of a few hundred bytes (a reason quoting a command is cut far
 * shorter), the preflight's facts a few KiB; a longer one is refused and
 * its step taken as lost, never held in memory whole. */
#define CORE_NODE_LINE_MAX ((size_t)1 << 20)

/* Bundles (prereg publish's tar files, read by every command) */

/* A BUNDLE-MANIFEST larger than this is not one we wrote. */
#define BUNDLE_MANIFEST_MAX (64u * 1024u * 1024u)
/* A member kept whole (a version, batch facts, the MANIFEST), and all of
 * them together, at most: sheets and facts are small. */
#define BUNDLE_KEEP_MAX (64u * 1024u * 1024u)
#define BUNDLE_KEEP_TOTAL_MAX (256u * 1024u * 1024u)
/* Of report/, only the analysis and the Markdown are extracted, each at
 * most this, for verify's value-by-value account of what differs; every
 * file of the report, whatever its size, is compared by its digest. */
#define BUNDLE_REPORT_EXTRACT_MAX (16u * 1024u * 1024u)
/* A bundle's tar stream is at most this many times its compressed size:
 * deflate cannot do better than about 1032:1, so a stream that grows past
 * this is no gzip prereg wrote, and is stopped before it costs more work. */
#define BUNDLE_GZIP_RATIO_MAX 1100ull
/* A member's name (ID/batches/BATCH/FILE, a few dozen bytes in a bundle
 * prereg writes) at most this long, and at most this many folders deep
 * (ID/original/ORIGINAL/batches/BATCH/FILE is six): names are kept for the
 * duplicate check, and the extracted copy is removed folder by folder. */
#define BUNDLE_NAME_MAX 1024u
#define BUNDLE_DEPTH_MAX 10
/* Members of every kind (folders too) at most: three files a run at
 * most, for far more runs than any study has; with the name cap this
 * bounds what the duplicate check holds. */
#define BUNDLE_MEMBERS_MAX 2000000u
/* The names kept for the duplicate check, all together, at most. */
#define BUNDLE_NAMES_TOTAL_MAX (64u * 1024u * 1024u)
/* What an extraction may write in all, unless PREREG_BUNDLE_MAX_MIB says
 * otherwise: a small bundle may declare members far larger than itself. */
#define BUNDLE_EXTRACT_MAX_MIB 4096ull

/* A run's commands */

/* What prereg keeps of a command's stdout and of its stderr, per run. */
#define RUN_OUTPUT_LIMIT ((size_t)1 << 20) /* per stream and run */
/* A metrics file: more than any command reports about itself in
 * name=value lines. */
#define RUN_METRICS_MAX ((size_t)1 << 20)
/* A message from the spawn helper (its reply and what it passes on). */
#define HELPER_MSG_MAX (1 << 20)

/** The highest CPU number a sheet's `cpus` may name: glibc's cpu_set_t
 * holds CPUs 0 to 1023. */
#define CORE_MAX_CPU 1023

/* Analysis */

/** Most values one arm may have in a bootstrap (2^31 - 1). */
#define ANALYSIS_MAX_ARM 2147483647UL

/* Reports */

/** Rows the workbook's Raw sheet holds at most, in the data's order; a
 * note above them says how many there are and where all of them are (the
 * frozen batch files). A sheet of this size opens quickly, and writing a
 * million rows would take most of a report's time (each cell is text to
 * compress). */
#define REPORT_RAW_MAX 100000
/** Above this many values per arm a plot summarises instead of drawing
 * each point, so that it stays small at a million rows. */
#define REPORT_POINTS_MAX 2000
/** Bytes of a notice's text a plot shows under its title (its first
 * clause, cut here at a character): one line that a plot shared on its
 * own still shows whole; report.md says the rest. */
#define REPORT_NOTE_MAX 120

/* Time-stamps and signatures */

/* A time-stamp reply or token (RFC 3161): a signed TSTInfo and the TSA's
 * certificates, a few KiB; a public TSA's with its whole chain under 16
 * KiB. A larger reply is refused without being read further. */
#define STAMP_REPLY_MAX ((size_t)256 << 10)
/* How long prereg waits for a TSA's reply (seconds, all of it). */
#define STAMP_TIMEOUT_S 30
/* An SSH signature (ssh-keygen -Y sign): an armoured blob of about 300
 * bytes for an ed25519 key, about 1.5 KiB for RSA 4096. */
#define SIGNATURE_MAX ((size_t)64 << 10)
/* How long ssh-keygen may take to sign or check one signature (a key on
 * an agent or a token may ask for a touch). */
#define SIGNATURE_TIMEOUT_S 60

/* The command line */

/* The most options one command line may give (also the size of the
 * option lists in cli_opts). */
#define CLI_OPTIONS_MAX 32

#endif
