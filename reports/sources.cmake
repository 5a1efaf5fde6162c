list(APPEND PREREG_SOURCES
  reports/markdown.c reports/svg.c reports/html.c reports/xlsx.c
  reports/gather.c)
