# The module DAG of core/, bottom-up: one line per module, naming the modules it may use directly.
# PUBLIC = its headers include them; PRIVATE = only its .cpp files do. A module may include any
# module it reaches through these lines (transitively) and nothing else.
#
# This file is the single source of truth: core/CMakeLists.txt builds one static library per line
# (passlens_<module>) from it, and cmake/CheckLayering.cmake fails the build (and the
# core_layering test) when a file includes a header of a module its line does not reach.
# Order matters: a module may only name modules listed above it, so the graph cannot have a cycle.
#
#                       module      PUBLIC deps                PRIVATE deps
passlens_module_deps(   ir          ""                         "")
passlens_module_deps(   util        ""                         "ir")
passlens_module_deps(   shape       "ir"                       "")
passlens_module_deps(   onnx        "ir"                       "util;shape")
passlens_module_deps(   eval        "ir"                       "onnx")
passlens_module_deps(   analysis    "ir"                       "")
passlens_module_deps(   hierarchy   "ir"                       "")
passlens_module_deps(   passes      "ir;analysis"              "eval;onnx;shape")
passlens_module_deps(   memory      "ir"                       "analysis;onnx")
passlens_module_deps(   plot        "memory"                   "")
passlens_module_deps(   schedule    "ir;memory"                "analysis")
passlens_module_deps(   layout      "ir;analysis;hierarchy"    "plot;onnx")
passlens_module_deps(   autodiff    "ir;passes"                "memory;onnx")
passlens_module_deps(   pipeline    "ir;analysis;passes"       "autodiff")
passlens_module_deps(   diff        "ir"                       "eval;onnx")
passlens_module_deps(   examples    "ir"                       "onnx;autodiff")
passlens_module_deps(   report      "ir;memory;schedule;autodiff;plot" "eval;onnx;shape")

# Third-party headers: an #include <...> whose path matches the regex is allowed only in the listed
# modules ("" = in none: core/ is Qt-free). Checked by cmake/CheckLayering.cmake like the module
# includes; the libraries themselves are linked in core/CMakeLists.txt on these modules only.
#                       include path regex                 modules allowed
passlens_third_party(   "^(onnx|google/protobuf)/"          "onnx")
passlens_third_party(   "^graphviz/"                        "layout")
passlens_third_party(   "^cblas\\.h$"                        "eval")
passlens_third_party(   "^Q[A-Za-z]*(/|$)"                  "")
