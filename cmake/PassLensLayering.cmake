# Reads core/Layering.cmake (the module DAG) into variables, shared by core/CMakeLists.txt and
# cmake/CheckLayering.cmake:
#   PASSLENS_MODULES                  modules in declaration order (bottom-up)
#   PASSLENS_MODULE_<m>_PUBLIC/_PRIVATE  direct dependencies
#   PASSLENS_MODULE_<m>_REACH         every module <m> may include (transitive closure)
#   PASSLENS_THIRD_PARTY              third-party include rules (passlens_third_party lines)
# A dependency on a module declared later (or on itself) is a configure error: that is a cycle.
set(PASSLENS_MODULES "")

macro(passlens_module_deps module public private)
  foreach(dep IN ITEMS ${public} ${private})
    if(NOT dep IN_LIST PASSLENS_MODULES)
      message(FATAL_ERROR "core/Layering.cmake: module '${module}' depends on '${dep}', which is not "
                          "declared above it (a module may only use modules below it; this would be a cycle)")
    endif()
  endforeach()
  list(APPEND PASSLENS_MODULES ${module})
  set(PASSLENS_MODULE_${module}_PUBLIC "${public}")
  set(PASSLENS_MODULE_${module}_PRIVATE "${private}")
  set(_reach "")
  foreach(dep IN ITEMS ${public} ${private})
    list(APPEND _reach ${dep} ${PASSLENS_MODULE_${dep}_REACH})
  endforeach()
  list(REMOVE_DUPLICATES _reach)
  set(PASSLENS_MODULE_${module}_REACH "${_reach}")
endmacro()

# Third-party include rules: PASSLENS_THIRD_PARTY holds indices; _REGEX_<i>/_MODULES_<i> the rule.
set(PASSLENS_THIRD_PARTY "")
macro(passlens_third_party regex modules)
  list(LENGTH PASSLENS_THIRD_PARTY _index)
  list(APPEND PASSLENS_THIRD_PARTY ${_index})
  set(PASSLENS_THIRD_PARTY_REGEX_${_index} "${regex}")
  set(PASSLENS_THIRD_PARTY_MODULES_${_index} "${modules}")
endmacro()

include(${CMAKE_CURRENT_LIST_DIR}/../core/Layering.cmake)
