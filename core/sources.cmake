list(APPEND PREREG_SOURCES
  core/status.c core/mem.c core/buf.c core/file.c core/clock.c core/hash.c
  core/cli.c core/app.c core/stubs.c)
# {==== prereg run (issue 3): engine, processes, host, plan, command ====
list(APPEND PREREG_SOURCES
  core/exec.c core/proc.c core/host.c core/run_plan.c core/cmd_run.c)
# }====
# {==== prereg report (issue 5) ====
list(APPEND PREREG_SOURCES core/cmd_report.c)
# }====
# {==== lock and import (issue 2, data layer) ====
list(APPEND PREREG_SOURCES core/cmd_lock.c core/cmd_import.c)
# }====
# {==== prereg analyze (issue 4) ====
list(APPEND PREREG_SOURCES core/cmd_analyze.c)
# }====
# {==== new and check (issue 2, sheets) ====
list(APPEND PREREG_SOURCES core/cmd_sheet.c)
# }====
# {==== prereg publish (issue 8) ====
list(APPEND PREREG_SOURCES core/cmd_publish.c)
# }====
