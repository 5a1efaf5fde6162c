# layers.cmake: one static library per source folder, and the rule that a
# third-party header is included only by the folder that owns it.
#
# prereg_library(NAME SOURCES... [USES lib...] [OWNS dep...] [LINKS t...])
#   NAME   the folder (core, protocols, ...): the library is prereg_NAME
#   USES   the prereg libraries of the floors below that it calls (PUBLIC:
#          our public headers include the headers of the floor below)
#   OWNS   the third-party libraries only this folder may include, keys of
#          PREREG_DEPS below (their link targets are PRIVATE)
#   LINKS  other link targets (PRIVATE), e.g. m or Threads::Threads
#
# Every other dependency's headers are shadowed for the library by a
# generated folder of headers that stop the compiler with a message (the
# guard), put before the system folders: `#include <lua.h>` in reports/
# fails to compile, naming the folder that may include it.

# Each dependency: its link target, then the headers or header folders it
# installs (relative to an include folder).
set(PREREG_DEPS crypto lua gsl jansson csv archive xlsx cmark)
set(PREREG_DEP_crypto_TARGET PkgConfig::CRYPTO)
set(PREREG_DEP_crypto_HEADERS openssl)
set(PREREG_DEP_lua_TARGET PkgConfig::LUA)
set(PREREG_DEP_lua_HEADERS lua.h lauxlib.h lualib.h luaconf.h lua.hpp)
set(PREREG_DEP_gsl_TARGET PkgConfig::GSL)
set(PREREG_DEP_gsl_HEADERS gsl)
set(PREREG_DEP_jansson_TARGET PkgConfig::JANSSON)
set(PREREG_DEP_jansson_HEADERS jansson.h jansson_config.h)
set(PREREG_DEP_csv_TARGET ${CSV_LIB})
set(PREREG_DEP_csv_HEADERS csv.h)
set(PREREG_DEP_archive_TARGET PkgConfig::ARCHIVE)
set(PREREG_DEP_archive_HEADERS archive.h archive_entry.h)
set(PREREG_DEP_xlsx_TARGET PkgConfig::XLSX)
set(PREREG_DEP_xlsx_HEADERS xlsxwriter.h xlsxwriter)
set(PREREG_DEP_cmark_TARGET PkgConfig::CMARK ${CMARK_EXT})
set(PREREG_DEP_cmark_HEADERS cmark-gfm.h cmark-gfm_export.h
    cmark-gfm_version.h cmark-gfm-core-extensions.h
    cmark-gfm-extension_api.h cmark-gfm-extensions_export.h cmark-gfm)

# Who owns each dependency, filled by prereg_library (for the messages).
function(prereg_guard_header dir rel dep)
  get_property(owners GLOBAL PROPERTY PREREG_OWNERS_${dep})
  string(REPLACE ";" "/ and " owners "${owners}")
  file(WRITE ${dir}/${rel}
       "#error \"<${rel}> (${dep}) may be included only in ${owners}/: "
       "call that folder's public header instead\"\n")
endfunction()

# Writes the guard folder of library NAME: a poisoned copy of every header
# of every dependency NAME does not own.
function(prereg_write_guard name)
  set(dir ${PROJECT_BINARY_DIR}/guard/${name})
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir})
  get_property(owned GLOBAL PROPERTY PREREG_OWNED_${name})
  foreach(dep ${PREREG_DEPS})
    if(dep IN_LIST owned)
      continue()
    endif()
    foreach(h ${PREREG_DEP_${dep}_HEADERS})
      set(found "")
      foreach(inc /usr/include /usr/include/lua5.4 ${LUA_INCLUDE_DIRS}
              ${CSV_INCLUDE})
        if(EXISTS ${inc}/${h})
          set(found ${inc}/${h})
          break()
        endif()
      endforeach()
      if(found AND IS_DIRECTORY ${found})
        file(GLOB_RECURSE inner RELATIVE ${found} ${found}/*.h)
        foreach(f ${inner})
          get_filename_component(sub ${dir}/${h}/${f} DIRECTORY)
          file(MAKE_DIRECTORY ${sub})
          prereg_guard_header(${dir} ${h}/${f} ${dep})
        endforeach()
      elseif(NOT h MATCHES "/$" AND NOT IS_DIRECTORY "${found}")
        if(h MATCHES "\\.h(pp)?$")
          prereg_guard_header(${dir} ${h} ${dep})
        endif()
      endif()
    endforeach()
  endforeach()
endfunction()

function(prereg_library name)
  cmake_parse_arguments(L "" "" "USES;OWNS;LINKS" ${ARGN})
  set(lib prereg_${name})
  list(TRANSFORM L_UNPARSED_ARGUMENTS PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/
       OUTPUT_VARIABLE sources)
  add_library(${lib} STATIC ${sources})
  target_include_directories(${lib} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${lib} PUBLIC ${L_USES})
  foreach(dep ${L_OWNS})
    if(NOT dep IN_LIST PREREG_DEPS)
      message(FATAL_ERROR "prereg_library(${name}): unknown dependency "
                          "${dep}")
    endif()
    target_link_libraries(${lib} PRIVATE ${PREREG_DEP_${dep}_TARGET})
    set_property(GLOBAL APPEND PROPERTY PREREG_OWNERS_${dep} ${name})
  endforeach()
  set_property(GLOBAL PROPERTY PREREG_OWNED_${name} ${L_OWNS})
  target_link_libraries(${lib} PRIVATE ${L_LINKS})
  target_include_directories(${lib} BEFORE PRIVATE
                             ${PROJECT_BINARY_DIR}/guard/${name})
  set_property(GLOBAL APPEND PROPERTY PREREG_LIBRARIES ${name})
  set_property(GLOBAL APPEND PROPERTY PREREG_LIB_SOURCES ${sources})
  prereg_warnings(${lib})
endfunction()

# Called once all libraries are declared, when every owner is known.
function(prereg_write_guards)
  get_property(libs GLOBAL PROPERTY PREREG_LIBRARIES)
  foreach(name ${libs})
    prereg_write_guard(${name})
  endforeach()
endfunction()
