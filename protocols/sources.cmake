# protocols/: Lua sheets to C structs (the only folder that includes Lua).
list(APPEND PREREG_SOURCES
  protocols/compare.c
  protocols/sandbox.c protocols/load.c protocols/sheet.c
  protocols/summary.c)
list(APPEND PREREG_SOURCES protocols/version.c)
