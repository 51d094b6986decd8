# Fails when a file of a core module includes a header of a module it may not use.
#   cmake -DCORE_DIR=<core folder> [-DSTAMP=<file to touch on success>] -P CheckLayering.cmake
# Run by the build before any core module compiles (target passlens_layering) and by the
# core_layering test. Only "module/..." includes that name a file under CORE_DIR count as module
# includes, so <onnx/onnx_pb.h> is not mistaken for core/onnx; <...> includes are checked against
# the third-party rules (passlens_third_party lines of core/Layering.cmake).
cmake_minimum_required(VERSION 3.20)
if(NOT CORE_DIR)
  message(FATAL_ERROR "CheckLayering.cmake: pass -DCORE_DIR=<core folder>")
endif()
if(NOT LAYERING_FILE)
  set(LAYERING_FILE ${CMAKE_CURRENT_LIST_DIR}/PassLensLayering.cmake)
endif()
include(${LAYERING_FILE})

set(_violations "")
set(_count 0)
foreach(module IN LISTS PASSLENS_MODULES)
  file(GLOB_RECURSE _files RELATIVE ${CORE_DIR} ${CORE_DIR}/${module}/*.h ${CORE_DIR}/${module}/*.cpp)
  foreach(file IN LISTS _files)
    # Third-party headers (<onnx/...>, <QString>) only in the modules core/Layering.cmake names.
    file(STRINGS ${CORE_DIR}/${file} _system REGEX "^[ \t]*#[ \t]*include[ \t]*<")
    foreach(line IN LISTS _system)
      string(REGEX MATCH "<([^>]+)>" _m "${line}")
      set(_header ${CMAKE_MATCH_1})
      foreach(rule IN LISTS PASSLENS_THIRD_PARTY)
        if(_header MATCHES "${PASSLENS_THIRD_PARTY_REGEX_${rule}}" AND NOT module IN_LIST PASSLENS_THIRD_PARTY_MODULES_${rule})
          string(REPLACE ";" " " _allowed "${PASSLENS_THIRD_PARTY_MODULES_${rule}}")
          if(_allowed STREQUAL "")
            set(_who "no core module may include it")
          else()
            set(_who "only ${_allowed} may include it; call it through that module's API")
          endif()
          string(APPEND _violations "core/${file}: #include <${_header}>: ${_who} (core/Layering.cmake)\n")
          math(EXPR _count "${_count} + 1")
        endif()
      endforeach()
    endforeach()
    file(STRINGS ${CORE_DIR}/${file} _includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[a-z_]+/")
    foreach(line IN LISTS _includes)
      string(REGEX MATCH "\"(([a-z_]+)/[^\"]+)\"" _m "${line}")
      set(_path ${CMAKE_MATCH_1})
      set(_target ${CMAKE_MATCH_2})
      if(_target STREQUAL module OR NOT _target IN_LIST PASSLENS_MODULES OR NOT EXISTS ${CORE_DIR}/${_path})
        continue()
      endif()
      if(NOT _target IN_LIST PASSLENS_MODULE_${module}_REACH)
        string(REPLACE ";" " " _allowed "${PASSLENS_MODULE_${module}_REACH}")
        string(APPEND _violations "core/${file}: #include \"${_path}\": module '${module}' may not use '${_target}' "
                                  "(core/Layering.cmake lets it use: ${_allowed})\n")
        math(EXPR _count "${_count} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()

if(_count GREATER 0)
  message(FATAL_ERROR "layering: ${_count} include(s) break the module DAG or the third-party rules:\n${_violations}"
                      "Move the code to the module that owns it, or change core/Layering.cmake if the "
                      "dependency is intended (it must keep pointing down).")
endif()
if(STAMP)
  file(TOUCH ${STAMP})
endif()
