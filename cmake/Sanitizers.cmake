# The instrumented test build (PASSLENS_SANITIZE, what `packaging/dev.sh test` builds): clang with
# AddressSanitizer and UndefinedBehaviorSanitizer on every target, stopping at the first report,
# and libFuzzer's coverage counters on the core so the fuzz targets (tests/fuzz) come from this build.
# The product's code is compiled at -O1 (the tests run it, on real models); test code at -O0
# (tests/CMakeLists.txt), which compiles in 60-75% of the time. docs/performance.md has the figures.
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
add_compile_options(${PASSLENS_SANITIZER_FLAGS} -O1 -gline-tables-only -fno-omit-frame-pointer)
# libFuzzer's edge counters, on the core's modules only (what the fuzz targets exercise; core/
# CMakeLists.txt adds them): -fsanitize=fuzzer-no-link would also trace every comparison, which made
# sorting and planning code several times slower under the tests for little fuzzing gain.
set(PASSLENS_COVERAGE_FLAGS -fsanitize-coverage=inline-8bit-counters,pc-table)
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
  set(modules)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    get_target_property(dir ${t} SOURCE_DIR)
    if(type STREQUAL "STATIC_LIBRARY" AND dir STREQUAL "${PROJECT_SOURCE_DIR}/core")
      list(APPEND modules ${t})
    endif()
  endforeach()
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_sources(${t} PRIVATE ${PROJECT_SOURCE_DIR}/tests/sanitizers/SanitizerDefaults.cpp)
      _passlens_product_code_first(${t} "${modules}")
    endif()
  endforeach()
endfunction()

# Test code is compiled at -O0 and the product at -O1; an inline function or template both use
# (std::vector, std::pair, our own headers) is one symbol, and the linker keeps the copy it loads
# first: the test's unoptimized one, which the product's code then calls (the planning and
# recomputation tests ran 1.7x slower). Loading the product's archives ahead of the executable's
# own objects keeps their optimized copies.
function(_passlens_product_code_first target modules)
  set(seen)
  set(queue ${target})
  set(uses_core FALSE)
  set(uses_ui FALSE)
  while(queue)
    list(POP_FRONT queue t)
    if(NOT TARGET ${t} OR t IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${t})
    if(t STREQUAL "passlens_core")
      set(uses_core TRUE)
    elseif(t STREQUAL "passlens_ui")
      set(uses_ui TRUE)
    endif()
    get_target_property(libs ${t} LINK_LIBRARIES)
    get_target_property(ilibs ${t} INTERFACE_LINK_LIBRARIES)
    foreach(l IN LISTS libs ilibs)
      if(l AND NOT l MATCHES "NOTFOUND|^\\$<")
        list(APPEND queue ${l})
      endif()
    endforeach()
  endwhile()
  # libFuzzer's targets compile at -O1 throughout (tests/fuzz/CMakeLists.txt).
  get_target_property(options ${target} LINK_OPTIONS)
  if(NOT uses_core OR options MATCHES "fuzzer")
    return()
  endif()
  set(archives)
  if(uses_ui)
    list(APPEND archives "$<TARGET_FILE:passlens_ui>")
  endif()
  foreach(m IN LISTS modules)
    list(APPEND archives "$<TARGET_FILE:${m}>")
  endforeach()
  target_link_options(${target} BEFORE PRIVATE "LINKER:--whole-archive" ${archives} "LINKER:--no-whole-archive")
endfunction()
