list(APPEND PREREG_SOURCES
  core/status.c core/mem.c core/buf.c core/file.c core/clock.c core/hash.c
  core/cli.c core/app.c core/stubs.c)
