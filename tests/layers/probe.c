/* probe.c: a file that includes Lua, compiled as if it stood in reports/
 * and in protocols/ (tests/layers/guard.sh): only the second may build.
 * SPDX-License-Identifier: MIT
 */
#include <lua.h>

int layers_probe(void);
int layers_probe(void) {
  return LUA_OK;
}
