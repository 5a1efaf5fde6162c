list(APPEND PREREG_SOURCES)
list(APPEND PREREG_SOURCES analysis/version.c)
list(APPEND PREREG_SOURCES analysis/bootstrap.c analysis/analyze.c analysis/table.c)
