# Reads core/Layering.cmake (the module DAG) into variables, shared by core/CMakeLists.txt and
# cmake/CheckLayering.cmake:
#   PASSLENS_MODULES                  modules in declaration order (bottom-up)
#   PASSLENS_MODULE_<m>_PUBLIC/_PRIVATE  direct dependencies
#   PASSLENS_MODULE_<m>_REACH         every module <m> may include (transitive closure)
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

include(${CMAKE_CURRENT_LIST_DIR}/../core/Layering.cmake)
