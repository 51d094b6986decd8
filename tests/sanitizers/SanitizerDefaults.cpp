// Default options of the sanitizer runtimes, compiled into every executable of the instrumented
// test build (cmake/Sanitizers.cmake): a test binary or passlens-cli run by hand stops at the
// first report exactly as under CTest. ASAN_OPTIONS / UBSAN_OPTIONS / LSAN_OPTIONS still override.

extern "C" {

// The names are the runtimes' hooks; they are looked up by name, so no header declares them.
// NOLINTBEGIN(bugprone-reserved-identifier)
const char* __asan_default_options() { return "detect_leaks=1:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=0"; }

const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }

// Leaks inside system libraries that keep process-lifetime caches (font configuration, Graphviz's
// plugin and layout state): a leak is left out only when one of them is on its allocation stack.
const char* __lsan_default_suppressions() {
    return "leak:libfontconfig.so\n"
           "leak:libgvc.so\n"
           "leak:libcgraph.so\n"
           "leak:libcdt.so\n"
           "leak:libpathplan.so\n"
           "leak:libgvplugin_\n"
           "leak:libexpat.so\n"
           "leak:libfreetype.so\n"
           "leak:libxkbcommon.so\n";
}
// NOLINTEND(bugprone-reserved-identifier)

}  // extern "C"
