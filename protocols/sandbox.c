/* sandbox.c: the Lua state a sheet runs in: a counting allocator with a
 * memory cap, hand-picked libraries, an instruction budget, protected
 * calls, the sheet's own _ENV and the functions a sheet may call.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <lauxlib.h>
#include <lualib.h>
#include <math.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "protocols/proto_internal.h"

/* Allocator */

/* Every byte Lua uses goes through core_realloc, so the tests' fault
 * injection reaches Lua too. Two limits: the live size (a memory bomb)
 * and the total ever allocated, because a loop that builds and drops a
 * big string costs almost no instructions and would otherwise run for
 * hours inside the instruction budget. */
static void *sheet_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  struct proto_lua *pl = ud;
  size_t old = ptr ? osize : 0;
  void *np;
  if (nsize == 0) {
    core_free(ptr);
    pl->used -= old;
    return NULL;
  }
  if (nsize <= old) {
    /* Lua assumes a shrink never fails (manual, lua_Alloc): when the
     * smaller block cannot be had, the bigger one serves as well. */
    np = core_realloc(ptr, nsize);
    pl->used -= old - nsize;
    return np ? np : ptr;
  }
  /* Written as room left, not as used + growth: a request near SIZE_MAX
   * (string.rep("ab", math.maxinteger)) would wrap the sum around and
   * pass. used <= PROTO_MEM_CAP and total <= the budget always hold. */
  if (nsize - old > PROTO_MEM_CAP - pl->used) {
    pl->refusal = PROTO_REFUSED_CAP;
    return NULL;
  }
  if (nsize - old > PROTO_ALLOC_BUDGET - pl->total) {
    pl->refusal = PROTO_REFUSED_BUDGET;
    return NULL;
  }
  np = core_realloc(ptr, nsize);
  if (!np) {
    pl->refusal = PROTO_REFUSED_SYSTEM;
    return NULL;
  }
  pl->used += nsize - old;
  pl->total += nsize - old;
  return np;
}

/* Budget and protected calls */

static void budget_hook(lua_State *L, lua_Debug *ar);

/* How often the hook runs: every 10 instructions. A single instruction
 * can take time in proportion to its operands (comparing two long
 * strings, a for loop whose limit is a long numeric string, neither of
 * which a price can reach): checked this often, the CPU limit is passed
 * by at most ten of them. The CPU clock costs a system call (some
 * 0.3 us), so the hook reads it only when the monotonic clock (a few
 * ns) says CHECK_EVERY seconds went by; a sheet that uses its whole
 * budget spends a few percent of it in the hook. */
#define HOOK_PERIOD 10
#define CHECK_EVERY 0.002

/* Work inside one call or operator is charged one instruction per this
 * many bytes of string it goes through (comparisons, conversions, the
 * string library): a long string costs what it takes to read it. */
#define CHARGE_BYTES 16

/* What the allocation budget's refusal says, and the spent budget. */
#define ALLOC_SPENT "allocation budget of 256 MiB exceeded"
_Static_assert(PROTO_ALLOC_BUDGET == (size_t)256 << 20,
               "ALLOC_SPENT names the allocation budget");

static double mono_now(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
    return 0;
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The user CPU time of the calling thread: what the sheet's Lua spends
 * itself, not what other threads do meanwhile, nor the kernel's time for
 * the memory it allocates (the allocation budget bounds that), so that
 * which budget stops a sheet does not hang on how fast the machine or
 * its allocator is. */
static double cpu_now(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru) != 0)
    return 0;
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
}

static struct proto_lua *state_of(lua_State *L) {
  void *ud;
  lua_getallocf(L, &ud);
  return ud;
}

/* Raises the budget's error at the running sheet line. From then on
 * every instruction fails, so that no path that survives one error can
 * keep the sheet going. */
static int over_budget(lua_State *L, const char *what) {
  lua_Debug ar;
  int level;
  state_of(L)->spent = what;
  lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1);
  for (level = 0; lua_getstack(L, level, &ar); level++)
    if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
      lua_pushfstring(L, "%s:%d: %s; a sheet should declare, not compute",
                      ar.short_src, ar.currentline, what);
      return lua_error(L);
    }
  lua_pushfstring(L, "%s; a sheet should declare, not compute", what);
  return lua_error(L);
}

static void check_budget(lua_State *L, struct proto_lua *pl) {
  if (pl->instr >= PROTO_INSTR_BUDGET)
    over_budget(L, "instruction budget exceeded (10 million "
                   "instructions)");
  /* Some single instructions take time in proportion to their operands
   * (comparing two long strings): CPU time bounds what counting cannot. */
  double now = mono_now();
  if (now - pl->checked_at < CHECK_EVERY)
    return;
  pl->checked_at = now;
  /* A budget spent before this evaluation began stops it even within the
   * CPU clock's tick (the clock may not have moved since the start). */
  if (pl->cpu_left <= 0 || cpu_now() > pl->cpu_deadline)
    over_budget(L, "CPU time limit of 0.2 s exceeded");
}

static void budget_hook(lua_State *L, lua_Debug *ar) {
  struct proto_lua *pl = state_of(L);
  (void)ar;
  pl->instr += HOOK_PERIOD;
  check_budget(L, pl);
}

/* Library functions that loop inside one instruction are charged for
 * their loop before they start it. */
static void charge(lua_State *L, double cost) {
  struct proto_lua *pl = state_of(L);
  if (cost > (double)PROTO_INSTR_BUDGET)
    cost = (double)PROTO_INSTR_BUDGET;
  pl->instr += (long long)cost;
  check_budget(L, pl);
}

/* One budget for everything the sheet's Lua does in a command: the
 * sheet itself and every function claim draw on the same instructions,
 * bytes allocated and CPU time, so that many claims (or one evaluated
 * many times) cost no more than one. The CPU clock runs only while Lua
 * runs: start_budget before an evaluation, stop_budget after it. */
static void start_budget(struct proto_lua *pl) {
  pl->refusal = PROTO_REFUSED_NONE;
  pl->started = cpu_now();
  pl->cpu_deadline = pl->started + pl->cpu_left;
  pl->checked_at = mono_now();
  /* A budget an earlier evaluation spent stops this one at its first
   * instruction, however short it is. */
  if (pl->cpu_left <= 0 || pl->instr >= PROTO_INSTR_BUDGET) {
    pl->checked_at = -1e300;
    lua_sethook(pl->L, budget_hook, LUA_MASKCOUNT, 1);
    return;
  }
  lua_sethook(pl->L, budget_hook, LUA_MASKCOUNT, HOOK_PERIOD);
}

static void stop_budget(struct proto_lua *pl) {
  double used = cpu_now() - pl->started;
  lua_sethook(pl->L, NULL, 0, 0);
  pl->cpu_left = used >= pl->cpu_left ? 0 : pl->cpu_left - used;
}

/* The message handler of every protected call: gives a position to the
 * messages that have none (error("x", 0), assert, a non-string error),
 * so that every message reads FILE:LINE: where a line exists. */
static int msgh(lua_State *L) {
  const char *msg;
  lua_Debug ar;
  if (lua_type(L, 1) == LUA_TSTRING)
    msg = lua_tostring(L, 1);
  else
    msg = lua_pushfstring(L, "(error object is a %s value)",
                          luaL_typename(L, 1));
  for (int level = 1; lua_getstack(L, level, &ar); level++) {
    size_t n;
    if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0)
      continue;
    n = strlen(ar.short_src);
    if (strncmp(msg, ar.short_src, n) == 0 && msg[n] == ':')
      return 1;
    lua_pushfstring(L, "%s:%d: %s", ar.short_src, ar.currentline, msg);
    return 1;
  }
  return 1;
}

/* lua.c's docall: the function and its narg arguments are on the top. */
static int docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  int status;
  lua_pushcfunction(L, msgh);
  lua_insert(L, base);
  status = lua_pcall(L, narg, nres, base);
  lua_remove(L, base);
  return status;
}

/* Turns a failed protected call into a status and message; pops the
 * error object. */
static core_status lua_failure(struct proto_lua *pl, int status, int c_oom,
                               core_err *err) {
  lua_State *L = pl->L;
  const char *msg =
      lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  core_status st;
  /* lauxlib reports a failed buffer as a runtime error "not enough
   * memory", to which the message handler adds a position. */
  size_t ml = msg ? strlen(msg) : 0;
  int memory = status == LUA_ERRMEM ||
               (ml >= 17 && strcmp(msg + ml - 17, "not enough memory") == 0 &&
                pl->refusal != PROTO_REFUSED_NONE);
  if (c_oom || (memory && pl->refusal == PROTO_REFUSED_SYSTEM) ||
      (status == LUA_ERRMEM && pl->refusal == PROTO_REFUSED_NONE))
    st = core_fail(err, CORE_ENOMEM, "%s: out of memory", pl->name);
  else if (memory && pl->refusal == PROTO_REFUSED_CAP)
    st = core_fail(err, CORE_EPROTOCOL,
                   "%s: memory limit of %zu MiB "
                   "exceeded",
                   pl->name, PROTO_MEM_CAP >> 20);
  else if (memory) {
    pl->spent = ALLOC_SPENT;
    st = core_fail(err, CORE_EPROTOCOL,
                   "%s: %s; a sheet should declare, "
                   "not compute",
                   pl->name, ALLOC_SPENT);
  } else
    st = core_fail(err, CORE_EPROTOCOL, "%s",
                   msg ? msg : "error without a message");
  lua_pop(L, 1);
  return st;
}

/* What a sheet can call */

static int current_line(lua_State *L) {
  lua_Debug ar;
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "l", &ar))
    return ar.currentline;
  return 0;
}

static int l_protocol(lua_State *L) {
  struct proto_lua *pl = lua_touserdata(L, lua_upvalueindex(1));
  if (lua_gettop(L) != 1 || !lua_istable(L, 1))
    return luaL_error(L,
                      "protocol takes one table: protocol { id = ..., "
                      "... }, got %s",
                      lua_gettop(L) == 0 ? "nothing" : luaL_typename(L, 1));
  if (pl->protocol_calls++ > 0)
    return luaL_error(L,
                      "protocol{...} is called a second time (the "
                      "first call is on line %d); a sheet declares "
                      "exactly one protocol",
                      pl->protocol_line);
  pl->protocol_line = current_line(L);
  lua_setfield(L, LUA_REGISTRYINDEX, PROTO_TABLE_KEY);
  return 0;
}

static int new_claim(lua_State *L, proto_claim_kind kind, double x) {
  proto_claim_ud *c = lua_newuserdatauv(L, sizeof *c, 1);
  c->kind = kind;
  c->x = x;
  c->line = current_line(L);
  luaL_setmetatable(L, PROTO_CLAIM_META);
  return 1;
}

static double ratio_arg(lua_State *L, const char *fn) {
  double x;
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TNUMBER)
    luaL_error(L,
               "%s(x): x must be one number (a ratio to the "
               "reference), got %s",
               fn, lua_gettop(L) == 0 ? "nothing" : luaL_typename(L, 1));
  x = lua_tonumber(L, 1);
  if (!isfinite(x) || x <= 0)
    luaL_error(L, "%s(x): x must be a positive ratio, got %s", fn,
               lua_tostring(L, 1));
  return x;
}

static int l_at_least(lua_State *L) {
  return new_claim(L, PROTO_CLAIM_AT_LEAST, ratio_arg(L, "at_least"));
}

static int l_below(lua_State *L) {
  return new_claim(L, PROTO_CLAIM_BELOW, ratio_arg(L, "below"));
}

/* A bound on the difference, in the metric's unit: any finite number. */
static double diff_arg(lua_State *L, const char *fn) {
  double x;
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TNUMBER)
    luaL_error(L,
               "%s(x): x must be one number (a difference from the arm "
               "compared with, in the metric's unit), got %s",
               fn, lua_gettop(L) == 0 ? "nothing" : luaL_typename(L, 1));
  x = lua_tonumber(L, 1);
  if (!isfinite(x))
    luaL_error(L, "%s(x): x must be a finite number, got %s", fn,
               lua_tostring(L, 1));
  return x;
}

static int l_diff_below(lua_State *L) {
  return new_claim(L, PROTO_CLAIM_DIFF_BELOW, diff_arg(L, "diff_below"));
}

static int l_diff_at_least(lua_State *L) {
  return new_claim(L, PROTO_CLAIM_DIFF_AT_LEAST, diff_arg(L, "diff_at_least"));
}

static int l_verdict_is(lua_State *L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING ||
      lua_rawlen(L, 1) == 0)
    return luaL_error(L,
                      "verdict_is(name): name must be the name of a "
                      "verdict rule, got %s",
                      lua_gettop(L) == 0 ? "nothing" : luaL_typename(L, 1));
  new_claim(L, PROTO_CLAIM_VERDICT_IS, 0);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  return 1;
}

/* Lua's string.rep copies one piece per step: string.rep("x", 1e7)
 * is ten million calls inside one instruction, and string.rep("", n)
 * loops n times without allocating, so neither budget would bound it.
 * This one fills the result by doubling, so its cost is that of the
 * bytes it allocates, which the allocator charges. */
static int l_rep(lua_State *L) {
  size_t l, lsep, unit, total, filled, reps;
  const char *s = luaL_checklstring(L, 1, &l);
  lua_Integer n = luaL_checkinteger(L, 2);
  const char *sep = luaL_optlstring(L, 3, "", &lsep);
  luaL_Buffer b;
  char *p;
  if (n <= 0 || l + lsep == 0) {
    lua_pushliteral(L, "");
    return 1;
  }
  unit = l + lsep;
  if (unit < l || (lua_Unsigned)n > ((size_t)-1 - lsep) / unit)
    return luaL_error(L, "resulting string too large");
  total = (size_t)n * unit - lsep;
  p = luaL_buffinitsize(L, &b, total);
  memcpy(p, s, l);
  reps = (size_t)(n - 1) * unit; /* the part after the first piece */
  if (reps > 0) {
    memcpy(p + l, sep, lsep);
    memcpy(p + l + lsep, s, l);
    for (filled = unit; filled < reps;) {
      size_t c = filled < reps - filled ? filled : reps - filled;
      memcpy(p + l + filled, p + l, c);
      filled += c;
    }
  }
  luaL_pushresultsize(&b, total);
  return 1;
}

/* Charging library calls by their work */

/* How a library function is priced before it runs. Every one is charged
 * for the bytes of the strings it is given (it may read them all:
 * tonumber, utf8.len, upper, a comparison); some also for the loop they
 * run over a table. */
enum {
  PRICE_STRINGS, /* the strings' bytes only */
  PRICE_FIND,    /* plain search: the bytes it may compare */
  PRICE_SORT,    /* n log n, and each comparison (sort_charged) */
  PRICE_TABLE,   /* one per element */
  PRICE_INSERT,  /* an insert at a position shifts */
  PRICE_REMOVE   /* likewise a removal at a position */
};

/* The function a priced closure stands in for (its upvalue 1). It is
 * called directly, in the closure's own frame, so that its messages name
 * it ("bad argument #1 to 'upper'") as they would without the price. */
typedef struct priced_fn {
  lua_CFunction fn;
  int kind;
} priced_fn;

/* Bytes of the strings among the arguments. */
static double string_bytes(lua_State *L) {
  double n = 0;
  for (int i = 1, top = lua_gettop(L); i <= top; i++)
    if (lua_type(L, i) == LUA_TSTRING)
      n += (double)lua_rawlen(L, i);
  return n;
}

/* Lua patterns can backtrack for hours inside one instruction, where the
 * budget cannot stop them, so sheets get plain search only, charged for
 * the bytes it may compare. */
static double price_find(lua_State *L) {
  size_t ls, lp;
  luaL_checklstring(L, 1, &ls);
  luaL_checklstring(L, 2, &lp);
  if (!lua_toboolean(L, 4))
    luaL_error(L, "string.find: patterns are not available in a "
                  "sheet; search plain text with "
                  "string.find(s, text, 1, true)");
  return lp <= ls ? (double)(ls - lp + 1) * (double)lp / 64 : 0;
}

static double price_table(lua_State *L, int kind) {
  double n = 0;
  if (!lua_istable(L, 1))
    return 0;
  n = (double)lua_rawlen(L, 1);
  switch (kind) {
  case PRICE_SORT:
    return n * (log2(n + 1) + 1);
  case PRICE_INSERT:
    return lua_gettop(L) >= 3 ? n : 0;
  case PRICE_REMOVE:
    return lua_gettop(L) >= 2 ? n : 0;
  default:
    return n;
  }
}

/* What two values cost to compare: one, and the bytes of the shorter
 * when both are strings (strcoll reads up to the first difference). */
static double compare_cost(lua_State *L) {
  size_t a, b;
  if (lua_type(L, 1) != LUA_TSTRING || lua_type(L, 2) != LUA_TSTRING)
    return 1;
  a = lua_rawlen(L, 1);
  b = lua_rawlen(L, 2);
  return 1 + (double)(a < b ? a : b) / CHARGE_BYTES;
}

/* table.sort's comparison when the sheet gives none: charged, then the
 * same `<` the library would use. */
static int sort_less(lua_State *L) {
  charge(L, compare_cost(L));
  lua_pushboolean(L, lua_compare(L, 1, 2, LUA_OPLT));
  return 1;
}

/* The sheet's own comparison (upvalue 1), charged for what it is given:
 * its `<` on two long strings is a single instruction. */
static int sort_less_by(lua_State *L) {
  charge(L, compare_cost(L));
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 2, 1);
  return 1;
}

/* The sort runs its comparisons inside one call, which neither the hook
 * nor an up-front price can bound (100,000 references to a 20 MiB
 * string are n log n comparisons of 20 MiB each): every comparison goes
 * through a charged one. */
static void sort_charged(lua_State *L) {
  int t = lua_type(L, 2);
  if (!lua_istable(L, 1))
    return; /* the library says what is wrong */
  if (t == LUA_TNONE || t == LUA_TNIL) {
    lua_settop(L, 1);
    lua_pushcfunction(L, sort_less);
  } else if (t == LUA_TFUNCTION) {
    lua_settop(L, 2);
    lua_pushcclosure(L, sort_less_by, 1);
  }
}

static int priced(lua_State *L) {
  const priced_fn *p = lua_touserdata(L, lua_upvalueindex(1));
  double cost = string_bytes(L) / CHARGE_BYTES;
  if (p->kind == PRICE_FIND)
    cost += price_find(L);
  else if (p->kind != PRICE_STRINGS)
    cost += price_table(L, p->kind);
  charge(L, cost);
  if (p->kind == PRICE_SORT)
    sort_charged(L);
  return p->fn(L);
}

/* The price of lib.name: table functions by their loop, find by its
 * search, everything else by its strings. */
static int price_kind(const char *lib, const char *name) {
  static const struct {
    const char *lib, *name;
    int kind;
  } special[] = {{LUA_STRLIBNAME, "find", PRICE_FIND},
                 {LUA_TABLIBNAME, "sort", PRICE_SORT},
                 {LUA_TABLIBNAME, "insert", PRICE_INSERT},
                 {LUA_TABLIBNAME, "remove", PRICE_REMOVE},
                 {LUA_TABLIBNAME, "concat", PRICE_TABLE},
                 {LUA_TABLIBNAME, "unpack", PRICE_TABLE}};
  for (size_t i = 0; i < sizeof special / sizeof *special; i++)
    if (lib && !strcmp(lib, special[i].lib) && !strcmp(name, special[i].name))
      return special[i].kind;
  return PRICE_STRINGS;
}

/* Replaces every C function of the table on the top of the stack (lib
 * names it for price_kind; NULL: the base library) with a priced
 * closure. Modifying existing fields during lua_next is allowed. */
static void price_all(lua_State *L, const char *lib) {
  int t = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_CFunction fn = lua_tocfunction(L, -1);
    if (fn && lua_type(L, -2) == LUA_TSTRING) {
      priced_fn *p = lua_newuserdatauv(L, sizeof *p, 0);
      p->fn = fn;
      p->kind = price_kind(lib, lua_tostring(L, -3));
      lua_pushcclosure(L, priced, 1);
      lua_pushvalue(L, -3);
      lua_insert(L, -2);
      lua_rawset(L, t);
    }
    lua_pop(L, 1);
  }
}

/* Arithmetic on strings converts them to numbers inside one instruction,
 * through the string metatable: its metamethods are priced too. */
static void price_string_arith(lua_State *L) {
  static const char *const events[] = {"__add",  "__sub", "__mul",
                                       "__mod",  "__pow", "__div",
                                       "__idiv", "__unm", NULL};
  lua_pushliteral(L, "");
  if (!lua_getmetatable(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  for (int i = 0; events[i]; i++) {
    lua_CFunction fn;
    lua_getfield(L, -1, events[i]);
    fn = lua_tocfunction(L, -1);
    lua_pop(L, 1);
    if (fn) {
      priced_fn *p = lua_newuserdatauv(L, sizeof *p, 0);
      p->fn = fn;
      p->kind = PRICE_STRINGS;
      lua_pushcclosure(L, priced, 1);
      lua_setfield(L, -2, events[i]);
    }
  }
  lua_pop(L, 2);
}

static void price_libraries(lua_State *L) {
  static const char *const libs[] = {LUA_STRLIBNAME, LUA_TABLIBNAME,
                                     LUA_MATHLIBNAME, LUA_UTF8LIBNAME, NULL};
  lua_pushglobaltable(L);
  price_all(L, NULL);
  lua_pop(L, 1);
  for (int i = 0; libs[i]; i++) {
    lua_getglobal(L, libs[i]);
    price_all(L, libs[i]);
    lua_pop(L, 1);
  }
  price_string_arith(L);
}

static void drop(lua_State *L, const char *lib, const char *const names[]) {
  if (lib) {
    lua_getglobal(L, lib);
  } else {
    lua_pushglobaltable(L);
  }
  for (int i = 0; names[i]; i++) {
    lua_pushnil(L);
    lua_setfield(L, -2, names[i]);
  }
  lua_pop(L, 1);
}

/* Run protected: argument 1 is the struct proto_lua. */
static int open_sandbox(lua_State *L) {
  /* No io, os, package, debug or coroutine: a sheet cannot reach a file,
   * a process, a clock or the interpreter's internals. */
  static const luaL_Reg libs[] = {
      {LUA_GNAME, luaopen_base},        {LUA_TABLIBNAME, luaopen_table},
      {LUA_STRLIBNAME, luaopen_string}, {LUA_MATHLIBNAME, luaopen_math},
      {LUA_UTF8LIBNAME, luaopen_utf8},  {NULL, NULL}};
  /* Loading code, printing, the collector and randomness make a sheet
   * depend on more than its text; metatables and pcall would let it
   * hide work from the budgets (__len on table.insert, catching the
   * budget's error). */
  static const char *const base_out[] = {
      "dofile",         "loadfile", "load",   "require",
      "collectgarbage", "print",    "warn",   "setmetatable",
      "getmetatable",   "pcall",    "xpcall", NULL};
  static const char *const string_out[] = {"dump", "match", "gmatch", "gsub",
                                           NULL};
  static const char *const math_out[] = {"random", "randomseed", NULL};
  static const char *const table_out[] = {"move", NULL};
  struct proto_lua *pl = lua_touserdata(L, 1);
  for (const luaL_Reg *lib = libs; lib->func; lib++) {
    luaL_requiref(L, lib->name, lib->func, 1);
    lua_pop(L, 1);
  }
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushcfunction(L, l_rep);
  lua_setfield(L, -2, "rep");
  lua_pop(L, 1);
  drop(L, NULL, base_out);
  drop(L, LUA_STRLIBNAME, string_out);
  drop(L, LUA_MATHLIBNAME, math_out);
  drop(L, LUA_TABLIBNAME, table_out);
  /* Before our own globals: protocol{} and the claims cost nothing. */
  price_libraries(L);

  luaL_newmetatable(L, PROTO_CLAIM_META);
  lua_pushliteral(L, "claim");
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);

  lua_pushlightuserdata(L, pl);
  lua_pushcclosure(L, l_protocol, 1);
  lua_setglobal(L, "protocol");
  lua_pushcfunction(L, l_at_least);
  lua_setglobal(L, "at_least");
  lua_pushcfunction(L, l_below);
  lua_setglobal(L, "below");
  lua_pushcfunction(L, l_verdict_is);
  lua_setglobal(L, "verdict_is");
  lua_pushcfunction(L, l_diff_below);
  lua_setglobal(L, "diff_below");
  lua_pushcfunction(L, l_diff_at_least);
  lua_setglobal(L, "diff_at_least");
  return 0;
}

core_status proto_lua_open(proto_sheet *s, core_err *err) {
  struct proto_lua *pl = core_calloc(1, sizeof *pl);
  int status;
  if (!pl)
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", s->path);
  pl->name = s->path;
  s->lua = pl;
  pl->L = lua_newstate(sheet_alloc, pl);
  if (!pl->L)
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", s->path);
  lua_pushcfunction(pl->L, open_sandbox);
  lua_pushlightuserdata(pl->L, pl);
  status = docall(pl->L, 1, 0);
  if (status != LUA_OK)
    return lua_failure(pl, status, 0, err);
  pl->total = 0; /* the budget is the sheet's: the libraries cost nothing */
  pl->cpu_left = PROTO_CPU_LIMIT;
  return CORE_OK;
}

void proto_lua_close(proto_sheet *s) {
  if (!s || !s->lua)
    return;
  if (s->lua->L)
    lua_close(s->lua->L);
  core_free(s->lua);
  s->lua = NULL;
}

/* Running a sheet */

/* The __index of a sheet's globals (argument 1, key 2): the library
 * table's value (upvalue 1), and for a name nobody defined an error at the
 * sheet's line with the nearest known name, since a misspelt constructor
 * (atleast(3)) would otherwise be "attempt to call a nil value". */
static int unknown_global(lua_State *L) {
  /* What open_sandbox leaves out, named as such. */
  static const char *const withheld[] = {
      "io",       "os",     "require", "package",        "load",
      "loadfile", "dofile", "debug",   "collectgarbage", "print",
      "warn",     "pcall",  "xpcall",  "setmetatable",   "getmetatable",
      "coroutine"};
  const char *cand[256], *name, *near;
  size_t n = 0;
  lua_settop(L, 2);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL ||
      lua_type(L, 2) != LUA_TSTRING)
    return 1;
  name = lua_tostring(L, 2);
  for (size_t i = 0; i < sizeof withheld / sizeof withheld[0]; i++)
    if (!strcmp(name, withheld[i]))
      return luaL_error(L,
                        "'%s' is not available to a sheet: no files, "
                        "processes, clocks, code loading, printing, "
                        "metatables or caught errors, so that the same file "
                        "always declares the same protocol within its "
                        "budget",
                        name);
  /* The library's names and the sheet's own globals; keys stay alive in
   * their tables. */
  for (int t = 0; t < 2; t++) {
    lua_pushnil(L);
    while (lua_next(L, t ? 1 : lua_upvalueindex(1)) != 0) {
      lua_pop(L, 1);
      if (lua_type(L, -1) == LUA_TSTRING && n < 255)
        cand[n++] = lua_tostring(L, -1);
    }
  }
  cand[n] = NULL;
  near = proto_nearest(name, cand, n);
  if (near)
    return luaL_error(L, "unknown name '%s'; did you mean %s?", name, near);
  return luaL_error(L,
                    "unknown name '%s': a sheet knows protocol, the claims "
                    "at_least, below, verdict_is, diff_below and "
                    "diff_at_least, the string, math, "
                    "table and utf8 libraries, and the globals it sets",
                    name);
}

/* Bytes of text before line `line` (1-based) starts. */
static size_t line_start(const char *text, size_t len, long line) {
  size_t off = 0;
  for (long l = 1; l < line && off < len; off++)
    if (text[off] == '\n')
      l++;
  return off;
}

/* The parser reports nesting deeper than the C stack allows (300 nested
 * brackets) as a bare "C stack overflow": it does not know the line, as
 * its other messages do. Parsing is left to right, so the first lines
 * that overflow on their own end at the line where it happens: found by
 * halving over prefixes of the text. */
static long overflow_line(lua_State *L, const proto_sheet *s,
                          const char *chunkname, const char *msg) {
  long lo = 1, hi = 1;
  for (size_t i = 0; i < s->text_len; i++)
    hi += s->text[i] == '\n';
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    size_t n = line_start(s->text, s->text_len, mid + 1);
    int st = luaL_loadbufferx(L, s->text, n, chunkname, "t");
    int same = st != LUA_OK && lua_type(L, -1) == LUA_TSTRING &&
               strcmp(lua_tostring(L, -1), msg) == 0;
    lua_pop(L, 1);
    if (same)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* A failed load, its message on the top: every message should read
 * FILE:LINE, and the parser's own do, except when it runs out of C
 * stack. */
static int load_error(lua_State *L, const proto_sheet *s,
                      const char *chunkname) {
  const char *msg = lua_tostring(L, -1);
  size_t n = strlen(s->path);
  char copy[256];
  if (!msg || (strncmp(msg, s->path, n) == 0 && msg[n] == ':'))
    return lua_error(L);
  snprintf(copy, sizeof copy, "%s", msg);
  lua_pushfstring(L,
                  "%s:%d: nested too deeply (%s): brackets, calls or "
                  "operators more than some 200 levels deep; a sheet "
                  "declares, it need not nest",
                  s->path, (int)overflow_line(L, s, chunkname, copy), copy);
  return lua_error(L);
}

/* Run protected: argument 1 is the sheet. Loads the text, gives it its
 * own _ENV, runs it, then converts what it declared. */
static int run_sheet(lua_State *L) {
  proto_sheet *s = lua_touserdata(L, 1);
  struct proto_lua *pl = s->lua;
  char chunkname[1024];
  int status;
  snprintf(chunkname, sizeof chunkname, "@%s", s->path);
  status = luaL_loadbufferx(L, s->text, s->text_len, chunkname, "t");
  if (status != LUA_OK)
    return load_error(L, s, chunkname);
  /* A sheet's globals live in a table of its own whose misses fall
   * through to the library table; the main chunk's first upvalue is its
   * _ENV. */
  lua_newtable(L);
  lua_newtable(L);
  lua_pushglobaltable(L);
  lua_pushcclosure(L, unknown_global, 1);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  if (!lua_setupvalue(L, -2, 1))
    lua_pop(L, 1);
  start_budget(pl);
  lua_call(L, 0, 0);
  /* The conversion runs no Lua (raw reads, no metatables in a sheet). */
  stop_budget(pl);
  if (pl->protocol_calls == 0)
    return luaL_error(L,
                      "%s: the sheet never calls protocol { ... }; "
                      "see 'prereg new' for a starter sheet",
                      s->path);
  lua_settop(L, 0);
  lua_pushlightuserdata(L, s);
  return proto_convert(L);
}

/* The text is frozen and shown in reports: it must be UTF-8. */
static core_status check_utf8(const proto_sheet *s, core_err *err) {
  size_t off = core_utf8_invalid(s->text, s->text_len), start = 0;
  long line = 1;
  if (off == s->text_len)
    return CORE_OK;
  for (size_t i = 0; i < off; i++)
    if (s->text[i] == '\n') {
      line++;
      start = i + 1;
    }
  return core_fail(err, CORE_EPROTOCOL,
                   "%s:%ld: not valid UTF-8 at byte offset %zu (column %zu, "
                   "byte 0x%02X); a sheet is UTF-8 text",
                   s->path, line, off, off - start + 1,
                   (unsigned)(unsigned char)s->text[off]);
}

core_status proto_lua_run(proto_sheet *s, core_err *err) {
  struct proto_lua *pl = s->lua;
  core_status st;
  int status;
  if (s->text_len >= 4 && memcmp(s->text, LUA_SIGNATURE, 4) == 0)
    return core_fail(err, CORE_EPROTOCOL,
                     "%s: is precompiled Lua (bytecode); prereg reads "
                     "sheets only as source text, which it can check, "
                     "diff and freeze",
                     s->path);
  if (s->text_len > PROTO_MAX_TEXT)
    return core_fail(err, CORE_EPROTOCOL,
                     "%s: is %zu bytes; a sheet may have at most %zu KiB",
                     s->path, s->text_len, PROTO_MAX_TEXT >> 10);
  if ((st = check_utf8(s, err)) != CORE_OK)
    return st;
  lua_pushcfunction(pl->L, run_sheet);
  lua_pushlightuserdata(pl->L, s);
  status = docall(pl->L, 1, 0);
  if (lua_gethook(pl->L))
    stop_budget(pl); /* the sheet raised */
  if (status != LUA_OK)
    return lua_failure(pl, status, pl->c_oom, err);
  return CORE_OK;
}

/* Function claims */

typedef struct eval_args {
  const proto_sheet *s;
  const proto_hypothesis *h;
  const proto_result_view *results;
  size_t n;
  const proto_result_view *pairs;
  size_t n_pairs;
} eval_args;

static void set_str(lua_State *L, const char *k, const char *v) {
  if (!v)
    return;
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

static void set_num(lua_State *L, const char *k, double v) {
  if (isnan(v)) /* no value: the field stays nil */
    return;
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

/* Run protected: argument 1 is an eval_args. Returns the outcome as an
 * integer and the reason (a string or nil). */
/* Pushes one of the claim function's arguments: a list with a table per
 * entry of r (interface.md lists the fields). */
static void push_results(lua_State *L, const proto_sheet *s,
                         const proto_result_view *res, size_t n) {
  lua_createtable(L, (int)(n > 1000000 ? 1000000 : n), 0);
  for (size_t i = 0; i < n; i++) {
    const proto_result_view *r = &res[i];
    /* Building the list is work of the claim's too: charged as the dozen
     * instructions a sheet would spend on it. */
    charge(L, 16);
    lua_createtable(L, 0, 16);
    set_str(L, "workload", r->workload);
    set_str(L, "metric", r->metric);
    set_str(L, "arm", r->arm);
    set_str(L, "reference",
            r->reference ? r->reference : s->arms[s->reference].name);
    set_str(L, "verdict", r->verdict);
    set_str(L, "rule_verdict", r->rule_verdict ? r->rule_verdict : r->verdict);
    set_num(L, "ratio", r->ratio);
    set_num(L, "ci_low", r->ci_low);
    set_num(L, "ci_high", r->ci_high);
    set_num(L, "median", r->median);
    set_num(L, "median_reference", r->median_reference);
    set_num(L, "difference", r->difference);
    set_num(L, "difference_ci_low", r->difference_ci_low);
    set_num(L, "difference_ci_high", r->difference_ci_high);
    lua_pushinteger(L, (lua_Integer)r->n);
    lua_setfield(L, -2, "n");
    lua_pushinteger(L, (lua_Integer)r->n_reference);
    lua_setfield(L, -2, "n_reference");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

static int eval_fn(lua_State *L) {
  const eval_args *a = lua_touserdata(L, 1);
  const proto_hypothesis *h = a->h;
  size_t hi = (size_t)(h - a->s->hypotheses) + 1;
  lua_Debug ar;
  int line;
  const char *got;
  lua_settop(L, 0);
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->fn_ref);
  lua_pushvalue(L, 1);
  lua_getinfo(L, ">S", &ar);
  line = ar.linedefined;
  /* One budget for the sheet and all its claims: whichever part of it
   * stopped an earlier evaluation, this one does not start. */
  if (a->s->lua->spent)
    return luaL_error(L,
                      "%s:%d: hypotheses[%d] (%s): not evaluated: an "
                      "earlier claim spent the sheet's budget (%s); a "
                      "sheet should declare, not compute",
                      a->s->path, line, (int)hi, h->id, a->s->lua->spent);
  push_results(L, a->s, a->results, a->n);
  push_results(L, a->s, a->pairs, a->n_pairs);
  lua_call(L, 2, 2);
  /* stack: result, reason */
  if (lua_type(L, 1) == LUA_TSTRING) {
    const char *v = lua_tostring(L, 1);
    if (strcmp(v, "held") == 0)
      lua_pushinteger(L, PROTO_HELD);
    else if (strcmp(v, "not held") == 0)
      lua_pushinteger(L, PROTO_NOT_HELD);
    else if (strcmp(v, "inconclusive") == 0)
      lua_pushinteger(L, PROTO_INCONCLUSIVE);
    else
      return luaL_error(L,
                        "%s:%d: hypotheses[%d] (%s): the claim "
                        "function returned \"%s\"; it must return "
                        "\"held\", \"not held\", \"inconclusive\", true, "
                        "false or nil",
                        a->s->path, line, (int)hi, h->id, v);
  } else if (lua_type(L, 1) == LUA_TBOOLEAN) {
    lua_pushinteger(L, lua_toboolean(L, 1) ? PROTO_HELD : PROTO_NOT_HELD);
  } else if (lua_isnil(L, 1)) {
    lua_pushinteger(L, PROTO_INCONCLUSIVE);
  } else {
    got = luaL_typename(L, 1);
    return luaL_error(L,
                      "%s:%d: hypotheses[%d] (%s): the claim function "
                      "returned a %s; it must return \"held\", \"not "
                      "held\", \"inconclusive\", true, false or nil",
                      a->s->path, line, (int)hi, h->id, got);
  }
  if (!lua_isnil(L, 2) && lua_type(L, 2) != LUA_TSTRING)
    return luaL_error(L,
                      "%s:%d: hypotheses[%d] (%s): the claim "
                      "function's second result (the reason) must be a "
                      "string, got a %s",
                      a->s->path, line, (int)hi, h->id, luaL_typename(L, 2));
  if (lua_type(L, 2) == LUA_TSTRING) {
    size_t len;
    const char *why = lua_tolstring(L, 2, &len);
    const char *nul = memchr(why, 0, len);
    size_t off = core_utf8_invalid(why, len);
    if (nul && (size_t)(nul - why) < off)
      off = (size_t)(nul - why);
    if (off < len)
      return luaL_error(L,
                        "%s:%d: hypotheses[%d] (%s): the claim function's "
                        "reason is not valid UTF-8 text (at byte %d); it "
                        "goes into the report",
                        a->s->path, line, (int)hi, h->id, (int)off + 1);
  }
  lua_pushvalue(L, 2);
  return 2;
}

core_status proto_eval_function(const proto_sheet *s,
                                const proto_hypothesis *h,
                                const proto_result_view *results, size_t n,
                                const proto_result_view *pairs, size_t n_pairs,
                                proto_outcome *outcome, char **reason,
                                core_err *err) {
  struct proto_lua *pl = s->lua;
  eval_args a = {s, h, results, n, pairs, n_pairs};
  lua_State *L;
  int status;
  const char *why;
  if (!pl || !pl->L)
    return core_fail(err, CORE_EPROTOCOL,
                     "%s: hypothesis %s: the sheet's "
                     "Lua state is gone",
                     s->path, h->id);
  L = pl->L;
  lua_settop(L, 0);
  start_budget(pl);
  lua_pushcfunction(L, eval_fn);
  lua_pushlightuserdata(L, &a);
  status = docall(L, 1, 2);
  stop_budget(pl);
  if (status != LUA_OK)
    return lua_failure(pl, status, 0, err);
  *outcome = (proto_outcome)lua_tointeger(L, -2);
  why = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  *reason = core_strdup(why);
  lua_settop(L, 0);
  if (!*reason)
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", s->path);
  return CORE_OK;
}

int proto_budget_spent(const proto_sheet *s) {
  return s && s->lua && s->lua->spent;
}
