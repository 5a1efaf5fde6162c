/* options.c: the one table of commands (name, arguments, options, usage
 * and the function that runs it), argv to cli_opts as a pure function
 * so that tests can call it, and the dispatch.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "cli/cli_internal.h"
#include "cli/plan_internal.h"

static const char usage_all[] =
    "usage: prereg COMMAND [ARGS] [--data DIR]\n"
    "\n"
    "  new ID                    write a commented starter sheet "
    "protocols/ID.lua\n"
    "  check SHEET               validate; print a summary\n"
    "  register SHEET            freeze the sheet before any data exists\n"
    "  amend SHEET               record the sheet's newest amendment and "
    "its diff\n"
    "  status SHEET              registration, amendments, runs against the "
    "plan\n"
    "  run SHEET [--resume] [--only WORKLOAD] [--dry-run] [--quick]\n"
    "            [--backend slurm|kubernetes] (with --dry-run)\n"
    "  import SHEET FILE [--arm-from NAME=ARM,...]\n"
    "                            add measurements (CSV, hyperfine or Google\n"
    "                            Benchmark JSON, go test -bench output)\n"
    "  pilot SHEET [--runs N]    a few rounds (5) into DATA/ID/pilot, never\n"
    "                            counted, to plan from\n"
    "  plan SHEET --pilot PATH [--power P] [--assurance A] [--sizes A,B,...]\n"
    "            [--sims K] [--looks A,B,...] [--runs N] [--json] [--write]\n"
    "                            how often the rule decides at each size;\n"
    "                            the runs to register\n"
    "  analyze SHEET [--json] [--pairs]\n"
    "                            medians, ratios, CIs, verdicts, hypotheses\n"
    "  report SHEET [--out DIR] [--force]\n"
    "                            report.md, report.html, report.xlsx, plots\n"
    "  stamp SHEET --tsa URL     trusted time-stamps (RFC 3161) of the\n"
    "                            registered versions\n"
    "  verify SHEET|BUNDLE       check every frozen file and the chain\n"
    "  publish SHEET [--out FILE]\n"
    "                            one verifiable .tar.gz of it all\n"
    "  export SHEET [--format csv|json] [--all]\n"
    "                            the rows as the analysis counts them\n"
    "  replicate BUNDLE [--id ID] a replication's sheet from a bundle\n"
    "  host                      what adds noise here, and how to change it\n"
    "  compare [OPTIONS] CMD...  a quick, exploratory comparison of "
    "commands,\n"
    "                            as hyperfine does; --sheet FILE writes it\n"
    "                            as a sheet to register\n"
    "  analyze and report also take a BUNDLE in place of SHEET.\n"
    "\n"
    "Options: --data DIR (default: data), --help, --version.\n"
    "Each command's own options: prereg COMMAND --help.\n"
    "Exit status: 0 done; 1 the work failed or a check found a problem;\n"
    "2 bad input (usage, an invalid sheet, a malformed file), nothing "
    "written.\n";

const char cli_compare_usage[] =
    "usage: prereg compare [OPTIONS] CMD...\n"
    "  Measures the commands as prereg run does (interleaved rounds, "
    "warm-ups,\n"
    "  timeouts, exit codes checked, every process cleaned up) and prints "
    "the\n"
    "  median (IQR) of each, each one's ratio to the reference with its "
    "CI\n"
    "  and the verdict under the starter's rule; one command alone is\n"
    "  described. Exploratory: nothing is registered, every line says so, "
    "and\n"
    "  the data are kept apart (in a new folder prereg-compare-XXXXXX under\n"
    "  $TMPDIR or /tmp, which the output names), never counted by a "
    "registered\n"
    "  analysis.\n"
    "  -n NAME, --command-name NAME  names the next command (its arm)\n"
    "  --reference NAME   the arm the others are compared with (default: "
    "the\n"
    "                     first)\n"
    "  --runs N           rounds, each command once per round (default "
    "10)\n"
    "  --warmup N         warm-up runs of each command (default 1)\n"
    "  --prepare CMD      run before every run, not timed\n"
    "  --timeout S        seconds a run may take (default 120)\n"
    "  --metric NAME      what to compare (default wall_s; repeatable): a\n"
    "                     metric of prereg run, or a name the command "
    "writes\n"
    "                     as NAME=VALUE to the file $PREREG_METRICS\n"
    "  -L NAME V1,V2,...  one command per value, {NAME} replaced by it\n"
    "  --parameter-scan NAME MIN MAX [--parameter-step-size S]\n"
    "                     the same for MIN, MIN+S, ... MAX (S default 1)\n"
    "  --rule FILE        decide under the rule table in FILE (`{ "
    "estimator\n"
    "                     = ..., verdicts = { ... } }`) instead of the "
    "starter's\n"
    "  --json             the output of analyze --json, with "
    "\"exploratory\"\n"
    "  --export-markdown FILE  a Markdown table of it, for a ticket (a new\n"
    "                     file: never overwritten)\n"
    "  --sheet FILE       also write this comparison as a commented sheet\n"
    "                     (a new file), which prereg check accepts and\n"
    "                     prereg register freezes as it is\n";

typedef struct command_spec {
  const char *name;
  int min_args, max_args;
  /* The options it takes besides --data, --help and --version, each
   * followed by a space: an option another command takes is refused
   * rather than silently ignored. */
  const char *options;
  const char *usage;
  cli_cmd_fn fn;
} command_spec;

static const command_spec commands[] = {
    {"new", 1, 1, "out ", "usage: prereg new ID [--out FILE]\n", cli_cmd_new},
    {"check", 1, 1, "", "usage: prereg check SHEET\n", cli_cmd_check},
    {"register", 1, 1, "tsa tsa-ca sign ",
     "usage: prereg register SHEET [--tsa URL [--tsa-ca FILE]] [--sign "
     "KEYFILE]\n"
     "                       [--data DIR]\n"
     "  --tsa URL      stamp the version in the same step (RFC 3161); when\n"
     "                 the TSA cannot be reached or refuses, nothing is\n"
     "                 registered\n"
     "  --tsa-ca FILE  the TSA must chain to this CA certificate (PEM)\n"
     "  --sign KEYFILE sign the version's record (ssh-keygen -Y sign -n "
     "prereg)\n",
     cli_cmd_register},
    {"amend", 1, 1, "tsa tsa-ca sign ",
     "usage: prereg amend SHEET [--tsa URL [--tsa-ca FILE]] [--sign "
     "KEYFILE]\n"
     "                    [--data DIR]\n"
     "  --tsa URL      stamp the new version in the same step\n"
     "  --tsa-ca FILE  the TSA must chain to this CA certificate (PEM)\n"
     "  --sign KEYFILE sign the new version's record\n",
     cli_cmd_amend},
    {"stamp", 1, 1, "tsa tsa-ca request attach data-manifest ",
     "usage: prereg stamp SHEET (--tsa URL [--tsa-ca FILE] | --request |\n"
     "                           --attach FILE.tsr [--tsa-ca FILE]) [--data "
     "DIR]\n"
     "       prereg stamp SHEET --data-manifest --tsa URL [--tsa-ca FILE]\n"
     "  Time-stamps (RFC 3161) every registered version not stamped yet,\n"
     "  over the SHA-256 of its record (versions/vN.json), frozen as\n"
     "  DATA/ID/stamps/vN.tsr.\n"
     "  --data-manifest   stamp the MANIFEST as it stands instead (the rows\n"
     "                    collected so far): DATA/ID/stamps/manifest-BATCH\n"
     "                    .txt and .tsr, BATCH the newest batch\n"
     "  --tsa URL         ask this time-stamping authority (HTTP, with "
     "curl)\n"
     "  --tsa-ca FILE     its signer must chain to this CA (PEM)\n"
     "  --request         write DATA/ID/stamps/vN.tsq to send by other "
     "means\n"
     "  --attach FILE.tsr freeze a reply to such a request\n",
     cli_cmd_stamp},
    {"status", 1, 1, "", "usage: prereg status SHEET [--data DIR]\n",
     cli_cmd_status},
    {"run", 1, 1, "resume only dry-run quick backend tsa tsa-ca ",
     "usage: prereg run SHEET [--resume] [--only WORKLOAD] [--dry-run]\n"
     "                  [--quick] [--backend slurm|kubernetes] [--data "
     "DIR]\n"
     "                  [--tsa URL [--tsa-ca FILE]]\n"
     "  --tsa URL        at the end of the batch, stamp the MANIFEST as it\n"
     "                   stands (as prereg stamp --data-manifest does)\n"
     "  --tsa-ca FILE    the TSA must chain to this CA certificate (PEM)\n"
     "  --resume         go on with an interrupted or partial run\n"
     "  --only WORKLOAD  run this workload alone\n"
     "  --dry-run        print the plan with every command expanded\n"
     "  --quick          the documented demo switch: per workload the\n"
     "                   fewest runs whose intervals reach the rule's\n"
     "                   level (5 or more at 95%), recorded in every row\n"
     "                   and in the report\n"
     "  --backend kubernetes  with --dry-run and a sheet with hosts: the "
     "plan\n"
     "                   as pods pinned by nodeName (on paper: not run)\n",
     cli_cmd_run},
    {"node-run", 1, 1,
     "host batch work round seq sha256 arms ref-exit digests sheet-version "
     "only preflight quick ",
     "usage: prereg node-run SHEET --host NAME (--preflight | --batch ID\n"
     "         --work DIR --only WORKLOAD --round N --seq N --digests D\n"
     "         --sheet-version N [--arms A,B] [--ref-exit CODES]) "
     "[--sha256 HEX]\n"
     "         [--quick]\n"
     "  The node runner of a batch across hosts: prereg run starts it on "
     "each\n"
     "  node; it writes what it measures as lines on standard output.\n",
     cli_cmd_node_run},
    {"import", 2, 2, "arm-from arm-map where ignore-unmapped only ",
     "usage: prereg import SHEET FILE [--only WORKLOAD] "
     "[--arm-from NAME=ARM,...]\n"
     "                     [--arm-map FILE] [--where KEY=VALUE] "
     "[--ignore-unmapped]\n"
     "                     [--data DIR]\n"
     "  FILE is a CSV (workload,arm,metric,value[,...]), hyperfine or "
     "Google\n"
     "  Benchmark JSON, or the output of go test -bench (also -v, -json).\n"
     "  --only WORKLOAD        the workload the benchmarks of such a file "
     "measured\n"
     "  --arm-from NAME=ARM,... which arm each named measurement is: a\n"
     "                         hyperfine command (its -n NAME, or the\n"
     "                         command), a benchmark; not needed for names\n"
     "                         that are arms (hyperfine -n ARM), or\n"
     "                         commands that are the arms' whole commands;\n"
     "                         may be given again; a flag whose text before\n"
     "                         its last = is a name of the file is one\n"
     "                         mapping, commas and all; {KEY=VALUE}NAME\n"
     "                         names a go benchmark under one configuration\n"
     "  --arm-map FILE         NAME<TAB>ARM lines, for names of any shape\n"
     "  --where KEY=VALUE      go test output: only the results under the\n"
     "                         configuration line 'KEY: VALUE' (repeatable)\n"
     "  --ignore-unmapped      import only the names that map to an arm;\n"
     "                         the others are listed\n",
     cli_cmd_import},
    {"pilot", 1, 1, "runs ",
     "usage: prereg pilot SHEET [--runs N] [--data DIR]\n"
     "  Runs every arm and workload N rounds (default 5) as run measures "
     "them,\n"
     "  into DATA/ID/pilot (frozen, verified, bundled), before or after\n"
     "  registering; pilot runs never count for the plan, the analysis or "
     "the\n"
     "  verdicts. prereg plan reads them.\n",
     cli_cmd_pilot},
    {"plan", 1, 1, "pilot power assurance sizes sims looks runs json write ",
     "usage: prereg plan SHEET --pilot PATH [--power P] [--assurance A]\n"
     "                   [--sizes A,B,...] [--looks A,B,...] [--runs N]\n"
     "                   [--sims K] [--json] [--write] [--data DIR]\n"
     "  PATH: a pilot folder (DATA/ID/pilot), an experiment's folder "
     "(DATA/ID,\n"
     "  its counted rows) or a bundle. For each comparison and size n, K\n"
     "  simulated experiments (default 1000) draw n values per arm from "
     "PATH's\n"
     "  values and apply the sheet's rule, and as many from each of 40\n"
     "  plausible truths (the pilot resampled per arm, smoothed); the\n"
     "  recommendation is the smallest size (default sizes\n"
     "  " PLAN_SIZES_DEFAULT ") where every comparison of a workload that\n"
     "  a hypothesis tests (every one, without hypotheses) decides with\n"
     "  probability P (default 0.8), and does so in a share A (default\n"
     "  " PLAN_ASSURANCE_TEXT ") of those truths; the others' power there\n"
     "  is reported.\n"
     "  --looks  also the sequential design with these looks: each look's\n"
     "           interval at its share of the error, stopping at the first\n"
     "           look that decides, with its expected runs per arm (default:\n"
     "           the looks the sheet's workloads declare); a look below the\n"
     "           values its share's interval needs is refused, as check\n"
     "           refuses it\n"
     "  --runs   the power at N runs per arm instead of a recommendation\n"
     "  --write  the chosen runs (and looks) and a plan block into the\n"
     "           sheet; refused when the sheet changed since it was read\n",
     cli_cmd_plan},
    {"analyze", 1, 1, "json pairs ",
     "usage: prereg analyze SHEET|BUNDLE [--json] [--pairs] [--data DIR]\n"
     "  --pairs  also every pair of arms (each later one against each\n"
     "           earlier one), under the same rule; exploratory, and said\n"
     "           so, unless the rule registered pairs = \"all\"\n",
     cli_cmd_analyze},
    {"report", 1, 1, "out force ",
     "usage: prereg report SHEET|BUNDLE [--out DIR] [--force] "
     "[--data DIR]\n"
     "  --force  render even when verify fails (stamped UNVERIFIED)\n",
     cli_cmd_report},
    {"verify", 1, 1, "tsa-ca allowed-signers ",
     "usage: prereg verify SHEET|BUNDLE [--tsa-ca FILE] [--allowed-signers "
     "FILE]\n"
     "                     [--data DIR]\n"
     "  --tsa-ca FILE  time-stamps must chain to this CA certificate (PEM);\n"
     "                 without it their signatures are checked against the\n"
     "                 certificates they carry (chain not checked)\n"
     "  --allowed-signers FILE  signatures must be by a key this file "
     "allows\n"
     "                 (ssh-keygen's allowed_signers format); a bundle's\n"
     "                 MANIFEST must then be signed\n",
     cli_cmd_verify},
    {"publish", 1, 1, "out sign ",
     "usage: prereg publish SHEET [--out FILE] [--sign KEYFILE] [--data "
     "DIR]\n"
     "  --sign KEYFILE  sign the bundle's MANIFEST (manifest.sig; "
     "ssh-keygen\n"
     "                  -Y sign -n prereg)\n",
     cli_cmd_publish},
    {"export", 1, 1, "format all ",
     "usage: prereg export SHEET [--format csv|json] [--all] [--data DIR]\n"
     "  The rows as the analysis counts them, one per run and metric, to\n"
     "  standard output: workload, arm, metric, value, unit, run_id, batch,\n"
     "  host, status and reason.\n"
     "  --format csv|json  CSV (the default) or a JSON array\n"
     "  --all              every row with its status (superseded, invalid,\n"
     "                     beyond the plan, ...), not only those counted\n",
     cli_cmd_export},
    {"host", 0, 0, "",
     "usage: prereg host\n"
     "  what adds noise on this host (governor, boost, SMT, isolated CPUs,\n"
     "  nohz_full, ASLR, swap, power, clocksource, other load) and how to\n"
     "  change each; changes nothing\n",
     cli_cmd_host},
    {"compare", 0, 0, "", cli_compare_usage, cli_cmd_compare},
    {"replicate", 1, 1, "id ",
     "usage: prereg replicate BUNDLE [--id ID] [--data DIR]\n"
     "  writes protocols/ID.lua (default: the original's id with\n"
     "  -replication), the original's inputs beside it and its raw data\n"
     "  under DATA/ID/original/; runs nothing\n",
     cli_cmd_replicate},
};

/* Whether the command takes option `name` (see command_spec.options). */
static int takes_option(const command_spec *spec, const char *name) {
  static const char *const everywhere[] = {"data", "help", "version"};
  for (size_t i = 0; i < sizeof everywhere / sizeof everywhere[0]; i++)
    if (strcmp(name, everywhere[i]) == 0)
      return 1;
  size_t len = strlen(name);
  for (const char *p = spec->options; (p = strstr(p, name)) != NULL; p += len)
    if ((p == spec->options || p[-1] == ' ') && p[len] == ' ')
      return 1;
  return 0;
}

/* The usage text for command (or the whole program when NULL or
 * unknown): a static string. */
static const char *command_usage(const char *command) {
  if (command)
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
      if (strcmp(commands[i].name, command) == 0)
        return commands[i].usage;
  return usage_all;
}

static const command_spec *find_command(const char *name) {
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

/* Did you mean */

enum { MAX_NAMES = 96 }; /* command and option names, for did-you-mean */

/* The nearest command name to name (a typo's), or NULL. */
static const char *near_command(const char *name) {
  const char *names[MAX_NAMES];
  size_t n = 0;
  for (size_t i = 0; i < sizeof commands / sizeof commands[0] && n < MAX_NAMES;
       i++)
    names[n++] = commands[i].name;
  return core_nearest(name, names, n);
}

/* The nearest option name to name among those of spec (every command's
 * when NULL), written into out without its dashes; NULL when none is
 * near. */
static const char *near_option(const command_spec *spec, const char *name,
                               char *out, size_t cap) {
  static const char all[] = "data help version ";
  char words[2048];
  const char *names[MAX_NAMES];
  size_t n = 0, len = 0;
  len += (size_t)snprintf(words, sizeof words, "%s", all);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if ((!spec || spec == &commands[i]) && len < sizeof words)
      len += (size_t)snprintf(words + len, sizeof words - len, "%s",
                              commands[i].options);
  for (char *p = words; *p && n < MAX_NAMES;) {
    char *e = strchr(p, ' ');
    if (!e)
      break;
    *e = '\0';
    names[n++] = p;
    p = e + 1;
  }
  const char *best = core_nearest(name, names, n);
  if (!best)
    return NULL;
  snprintf(out, cap, "%s", best);
  return out;
}

static const command_spec *find_command(const char *name);

/* An unknown option's refusal, with the nearest option when one is: of
 * the command the arguments name, if any. */
static core_status unknown_option(int argc, char **argv, const char *a,
                                  core_err *err) {
  char name[64], near[64];
  size_t len = strcspn(a + 2, "=");
  const command_spec *spec = NULL;
  for (int i = 1; i < argc && !spec; i++)
    spec = find_command(argv[i]);
  snprintf(name, sizeof name, "%.*s", (int)len, a + 2);
  if (strncmp(a, "--", 2) == 0 && near_option(spec, name, near, sizeof near))
    return core_fail(err, CORE_EUSAGE,
                     "unknown option '%s'; did you mean '--%s'? see 'prereg "
                     "--help'",
                     a, near);
  return core_fail(err, CORE_EUSAGE,
                   "unknown option '%s'; see 'prereg --help'", a);
}

/* Options that take a value: "--data DIR" or "--data=DIR". */
static const char **value_slot(cli_opts *o, const char *name) {
  if (strcmp(name, "data") == 0)
    return &o->data_dir;
  if (strcmp(name, "out") == 0)
    return &o->out;
  if (strcmp(name, "only") == 0)
    return &o->only;
  /* Given again, each value is kept (no more than the options given). */
  if (strcmp(name, "arm-from") == 0)
    return &o->arm_from[o->n_arm_from++];
  if (strcmp(name, "where") == 0)
    return &o->where[o->n_where++];
  if (strcmp(name, "arm-map") == 0)
    return &o->arm_map;
  if (strcmp(name, "format") == 0)
    return &o->format;
  static const struct {
    const char *name;
    size_t offset;
  } node[] = {
      {"backend", offsetof(cli_opts, backend)},
      {"host", offsetof(cli_opts, host)},
      {"batch", offsetof(cli_opts, batch)},
      {"work", offsetof(cli_opts, work)},
      {"round", offsetof(cli_opts, round)},
      {"seq", offsetof(cli_opts, seq)},
      {"sha256", offsetof(cli_opts, sha256)},
      {"arms", offsetof(cli_opts, arms)},
      {"ref-exit", offsetof(cli_opts, ref_exit)},
      {"digests", offsetof(cli_opts, digests)},
      {"sheet-version", offsetof(cli_opts, sheet_version)},
      {"runs", offsetof(cli_opts, runs)},
      {"pilot", offsetof(cli_opts, pilot)},
      {"power", offsetof(cli_opts, power)},
      {"assurance", offsetof(cli_opts, assurance)},
      {"sizes", offsetof(cli_opts, sizes)},
      {"sims", offsetof(cli_opts, sims)},
      {"looks", offsetof(cli_opts, looks)},
      {"id", offsetof(cli_opts, id)},
      {"tsa", offsetof(cli_opts, tsa)},
      {"tsa-ca", offsetof(cli_opts, tsa_ca)},
      {"attach", offsetof(cli_opts, attach)},
      {"sign", offsetof(cli_opts, sign)},
      {"allowed-signers", offsetof(cli_opts, allowed_signers)},
  };
  for (size_t i = 0; i < sizeof node / sizeof node[0]; i++)
    if (strcmp(node[i].name, name) == 0)
      return (const char **)((char *)o + node[i].offset);
  return NULL;
}

static int *flag_slot(cli_opts *o, const char *name) {
  static const struct {
    const char *name;
    size_t offset;
  } flags[] = {
      {"resume", offsetof(cli_opts, resume)},
      {"dry-run", offsetof(cli_opts, dry_run)},
      {"json", offsetof(cli_opts, json)},
      {"force", offsetof(cli_opts, force)},
      {"help", offsetof(cli_opts, help)},
      {"version", offsetof(cli_opts, version)},
      {"quick", offsetof(cli_opts, quick)},
      {"preflight", offsetof(cli_opts, preflight)},
      {"ignore-unmapped", offsetof(cli_opts, ignore_unmapped)},
      {"all", offsetof(cli_opts, all)},
      {"pairs", offsetof(cli_opts, pairs)},
      {"write", offsetof(cli_opts, write)},
      {"request", offsetof(cli_opts, request)},
      {"data-manifest", offsetof(cli_opts, data_manifest)},
  };
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
    if (strcmp(flags[i].name, name) == 0)
      return (int *)((char *)o + flags[i].offset);
  return NULL;
}

/* Every option given (given[0..n-1], each "--NAME" or "--NAME=VALUE")
 * is one the command spec takes. */
static core_status check_given(const command_spec *spec, const cli_opts *o,
                               const char *const *given, size_t n,
                               core_err *err) {
  for (size_t i = 0; i < n; i++) {
    char name[64];
    size_t len = strcspn(given[i] + 2, "=");
    memcpy(name, given[i] + 2, len); /* < 64: checked when parsed */
    name[len] = '\0';
    char alt[64];
    if (!takes_option(spec, name) &&
        near_option(spec, name, alt, sizeof alt) && strcmp(alt, name) != 0)
      return core_fail(err, CORE_EUSAGE,
                       "%s does not take '--%s'; did you mean '--%s'?\n%s",
                       o->command, name, alt, spec->usage);
    if (!takes_option(spec, name))
      return core_fail(err, CORE_EUSAGE, "%s does not take '--%s'\n%s",
                       o->command, name, spec->usage);
  }
  return CORE_OK;
}

/* compare reads its own words (-n names the next command, and commands
 * may look like options of other commands): 1 when argv[i] is it, with
 * the words after it in o->rest. */
static int take_rest(cli_opts *o, int argc, char **argv, int i) {
  if (strcmp(argv[i], "compare") != 0)
    return 0;
  o->rest = argv + i + 1;
  o->n_rest = argc - i - 1;
  for (int k = 0; k < o->n_rest; k++)
    if (!strcmp(o->rest[k], "--help") || !strcmp(o->rest[k], "-h"))
      o->help = 1;
  return 1;
}

core_status cli_parse(int argc, char **argv, cli_opts *o, core_err *err) {
  const command_spec *spec = NULL;
  /* The options given, checked against the command once it is known (it
   * may come after them). */
  const char *given[CLI_OPTIONS_MAX];
  size_t n_given = 0;
  memset(o, 0, sizeof *o);
  o->data_dir = "data";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0)
      a = "--help";
    if (strncmp(a, "--", 2) == 0 && a[2] != '\0') {
      char name[64];
      const char *eq = strchr(a + 2, '=');
      size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
      const char **vs;
      int *fs;
      if (len >= sizeof name)
        return unknown_option(argc, argv, a, err);
      memcpy(name, a + 2, len);
      name[len] = '\0';
      if (n_given == sizeof given / sizeof given[0])
        return core_fail(err, CORE_EUSAGE, "too many options at '%s'", a);
      given[n_given++] = a;
      if ((vs = value_slot(o, name)) != NULL) {
        o->data_given |= vs == &o->data_dir;
        if (eq)
          *vs = eq + 1;
        else if (i + 1 < argc)
          *vs = argv[++i];
        else
          return core_fail(err, CORE_EUSAGE, "option '--%s' needs a value",
                           name);
        if (**vs == '\0')
          return core_fail(err, CORE_EUSAGE,
                           "option '--%s' needs a non-empty value", name);
      } else if ((fs = flag_slot(o, name)) != NULL && !eq) {
        *fs = 1;
      } else {
        return unknown_option(argc, argv, a, err);
      }
    } else if (!o->command && strcmp(a, "-") != 0 && a[0] == '-') {
      return core_fail(err, CORE_EUSAGE,
                       "unknown option '%s'; see 'prereg --help'", a);
    } else if (!o->command) {
      o->command = a;
      if (take_rest(o, argc, argv, i))
        break;
    } else {
      if (o->n_args == (int)(sizeof o->args / sizeof o->args[0]))
        return core_fail(err, CORE_EUSAGE, "too many arguments at '%s'", a);
      o->args[o->n_args++] = a;
    }
  }
  if (o->help || o->version)
    return CORE_OK;
  if (!o->command)
    return core_fail(err, CORE_EUSAGE,
                     "no command given; see "
                     "'prereg --help'");
  spec = find_command(o->command);
  const char *near = spec ? NULL : near_command(o->command);
  if (!spec && near)
    return core_fail(err, CORE_EUSAGE,
                     "unknown command '%s'; did you mean '%s'? see 'prereg "
                     "--help'",
                     o->command, near);
  if (!spec)
    return core_fail(err, CORE_EUSAGE,
                     "unknown command '%s'; see 'prereg --help'", o->command);
  core_status st = check_given(spec, o, given, n_given, err);
  if (st != CORE_OK)
    return st;
  if (o->n_args < spec->min_args || o->n_args > spec->max_args)
    return core_fail(err, CORE_EUSAGE, "%s: wrong number of arguments\n%s",
                     o->command, spec->usage);
  return CORE_OK;
}

core_status cli_run(const cli_opts *opts, FILE *out, core_err *err) {
  if (opts->version) {
    fprintf(out, "%s %s\n", PREREG_NAME, PREREG_VERSION);
    return CORE_OK;
  }
  if (opts->help) {
    fputs(command_usage(opts->command), out);
    return CORE_OK;
  }
  const command_spec *spec = find_command(opts->command);
  if (!spec)
    return core_fail(err, CORE_EUSAGE, "unknown command '%s'", opts->command);
  return spec->fn(opts, out, err);
}
