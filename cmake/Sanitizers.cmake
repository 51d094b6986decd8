# The instrumented test build (PASSLENS_SANITIZE, what `packaging/dev.sh test` builds): clang with
# AddressSanitizer and UndefinedBehaviorSanitizer on every target, stopping at the first report,
# and libFuzzer's coverage counters on everything so the fuzz targets (tests/fuzz) come from this build.
# The product's code is compiled at -O1 (the tests run it, on real models); test code at -O0
# (tests/CMakeLists.txt), which compiles in half the time. docs/performance.md has the figures.
if(NOT PASSLENS_SANITIZE)
  if(PASSLENS_FUZZ)
    message(FATAL_ERROR "PASSLENS_FUZZ needs PASSLENS_SANITIZE=ON (the fuzz targets come from the instrumented build)")
  endif()
  function(passlens_add_sanitizer_defaults)
  endfunction()
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "PASSLENS_SANITIZE needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang")
endif()

set(PASSLENS_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all)
# libFuzzer's edge counters only: -fsanitize=fuzzer-no-link also traces every comparison, which
# made sorting and planning code several times slower under the tests for little fuzzing gain.
add_compile_options(${PASSLENS_SANITIZER_FLAGS} -fsanitize-coverage=inline-8bit-counters,pc-table
                    -O1 -gline-tables-only -fno-omit-frame-pointer)
# The runtimes as a shared library (-shared-libsan): python3 can then load our instrumented module
# (with the runtime preloaded), and processes it starts share that one runtime.
add_link_options(-fsanitize=address,undefined -shared-libsan)
# lld links the large instrumented executables several times faster than ld.bfd.
find_program(PASSLENS_LLD ld.lld)
if(PASSLENS_LLD)
  add_link_options(-fuse-ld=lld)
endif()

execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.asan-x86_64.so
                OUTPUT_VARIABLE PASSLENS_ASAN_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT EXISTS "${PASSLENS_ASAN_RUNTIME}")
  message(FATAL_ERROR "no AddressSanitizer runtime at '${PASSLENS_ASAN_RUNTIME}' (Debian: libclang-rt-14-dev)")
endif()
get_filename_component(_asan_dir ${PASSLENS_ASAN_RUNTIME} DIRECTORY)
list(APPEND CMAKE_BUILD_RPATH ${_asan_dir})
set(CMAKE_INSTALL_RPATH ${_asan_dir})
# Environment for a test that runs an uninstrumented interpreter over our instrumented module:
# the runtime preloaded, and no leak report about the interpreter's own allocations.
set(PASSLENS_PRELOAD_ENVIRONMENT
    "LD_PRELOAD=${PASSLENS_ASAN_RUNTIME}"
    "ASAN_OPTIONS=detect_leaks=0:halt_on_error=1"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")

# Every executable gets the runtimes' default options and the leak suppressions of the system
# libraries (tests/sanitizers/SanitizerDefaults.cpp), so a binary run by hand behaves as under CTest.
function(passlens_add_sanitizer_defaults)
  set(dirs ${PROJECT_SOURCE_DIR})
  set(targets)
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(sub DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${sub})
    get_property(t DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    list(APPEND targets ${t})
  endwhile()
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_sources(${t} PRIVATE ${PROJECT_SOURCE_DIR}/tests/sanitizers/SanitizerDefaults.cpp)
    endif()
  endforeach()
endfunction()
