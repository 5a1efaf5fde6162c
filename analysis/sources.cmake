list(APPEND PREREG_SOURCES)
list(APPEND PREREG_SOURCES analysis/version.c)
list(APPEND PREREG_SOURCES analysis/bootstrap.c analysis/analyze.c analysis/table.c)
# The bootstrap's rank tables are part of the documented stream layout,
# operation by operation: a fused multiply-add would change their bits.
set_source_files_properties(analysis/bootstrap.c PROPERTIES
  COMPILE_OPTIONS -ffp-contract=off)
