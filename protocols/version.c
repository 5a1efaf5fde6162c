/* version.c: the Lua release prereg was built with, for report
 * provenance (only protocols/ may include Lua's headers).
 * SPDX-License-Identifier: MIT
 */
#include <lua.h>

#include "protocols/proto.h"

const char *proto_lua_version(void) {
  return LUA_RELEASE;
}
