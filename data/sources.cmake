list(APPEND PREREG_SOURCES
  data/csv.c data/manifest.c data/diff.c data/experiment.c data/batch.c
  data/recover.c data/verify.c data/import.c)
# Files of data/ that other engineers own: analysis_json.c (analysis),
# report_inputs.c (reports), bundle.c (publish). Built when present.
foreach(f analysis_json.c report_inputs.c bundle.c)
  if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/${f})
    list(APPEND PREREG_SOURCES data/${f})
  endif()
endforeach()
