# Precompiled headers for the targets with many files that include the same heavy headers (the
# standard library, GoogleTest, nlohmann/json, Qt Widgets, the core's IR): parsing them is a third
# to a half of each file's compile time. On by default; -DPASSLENS_PCH=OFF compiles every file on
# its own includes only (a quick way to find a missing #include). docs/performance.md has figures.
option(PASSLENS_PCH "Precompile the heavy shared headers" ON)

# passlens_precompile(TARGET t HEADERS h...)      t gets its own precompiled header ("x.h" is
#                                                 relative to the calling folder, <x.h> is searched)
# passlens_precompile(TARGET t REUSE_FROM other)  t uses other's (same compile flags needed)
function(passlens_precompile)
  cmake_parse_arguments(ARG "" "TARGET;REUSE_FROM" "HEADERS" ${ARGN})
  if(NOT PASSLENS_PCH)
    return()
  endif()
  if(ARG_REUSE_FROM)
    target_precompile_headers(${ARG_TARGET} REUSE_FROM ${ARG_REUSE_FROM})
  else()
    target_precompile_headers(${ARG_TARGET} PRIVATE ${ARG_HEADERS})
  endif()
  # No timestamp in clang's header, so ccache can cache the files that use it (CMakeLists.txt).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    target_compile_options(${ARG_TARGET} PRIVATE -Xclang -fno-pch-timestamp)
  endif()
endfunction()

# The standard library headers nearly every file of ours includes.
set(PASSLENS_PCH_STD <algorithm> <cmath> <cstdint> <functional> <map> <memory> <optional> <set> <sstream>
    <string> <unordered_map> <utility> <vector>)
