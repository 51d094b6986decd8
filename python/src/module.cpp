// _passlens: the C++ half of the Python module `passlens` (python/passlens/__init__.py is the
// other half). No Qt: only the core, through the same entry points the CLI commands use
// (app/cli/cmd_*.cpp), so a model optimized here and by `passlens-cli optimize` is the same file.
//
// Rules every binding follows:
//   - results are plain Python objects (dicts from the core's JSON, bytes, str, numpy arrays);
//   - a passlens::Error becomes a Python exception carrying the CLI's message (BadInput → a
//     ValueError, Unsupported → NotImplementedError, CheckFailed, Cancelled, Internal);
//   - long calls run on a worker thread with the GIL released while the calling thread waits and
//     checks for signals, so Ctrl+C raises the core's cancel flag (passes and the interpreter stop
//     at the next node) and surfaces as KeyboardInterrupt; nothing aborts the interpreter.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "autodiff/Autodiff.h"
#include "autodiff/Recompute.h"
#include "diff/DiffReport.h"
#include "diff/ModelDiff.h"
#include "eval/Interpreter.h"
#include "eval/MemoryBudget.h"
#include "ir/Error.h"
#include "ir/Printer.h"
#include "layout/RenderModel.h"
#include "onnx/Checker.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "onnx/ModelInfo.h"
#include "onnx/TensorIO.h"
#include "passes/Diff.h"
#include "passes/PassManager.h"
#include "passes/Report.h"
#include "passes/fusion/GroupFunctions.h"
#include "pipeline/PipelineBuilder.h"
#include "pipeline/Explain.h"
#include "report/Memplan.h"
#include "report/Shapes.h"

#ifndef PASSLENS_VERSION
#define PASSLENS_VERSION "dev"
#endif

namespace py = pybind11;
using namespace passlens;

namespace {

using Dims = std::vector<std::pair<std::string, int64_t>>;

// ---- exceptions -------------------------------------------------------------------------------

PyObject* gError = nullptr;           // passlens.Error
PyObject* gBadInput = nullptr;        // passlens.BadInputError(Error, ValueError)
PyObject* gUnsupported = nullptr;     // passlens.UnsupportedError(Error, NotImplementedError)
PyObject* gCheckFailed = nullptr;     // passlens.CheckFailedError(Error)
PyObject* gCancelled = nullptr;       // passlens.CancelledError(Error)

PyObject* newException(py::module_& m, const char* name, std::vector<PyObject*> bases, const char* doc) {
    py::tuple b(bases.size());
    for (size_t i = 0; i < bases.size(); ++i) b[i] = py::reinterpret_borrow<py::object>(bases[i]);
    std::string qualified = std::string("passlens.") + name;
    PyObject* e = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, b.ptr(), nullptr);
    if (!e) throw py::error_already_set();
    m.add_object(name, py::reinterpret_borrow<py::object>(e));
    return e;
}

/// A usage problem the CLI reports with its usage line (UsageError there): a ValueError here.
[[noreturn]] void throwUsage(const std::string& message) { throw Error(ErrorKind::BadInput, message); }

// ---- the GIL, Ctrl+C and the cancel flag ------------------------------------------------------

/// Runs f(cancel) on a worker thread with the GIL released. The calling thread wakes every 50 ms
/// to run Python's signal handlers: on KeyboardInterrupt (or any exception a handler raises) the
/// cancel flag is raised, the worker is awaited (the core stops at its next check), and the
/// handler's exception propagates. A worker exception is rethrown on the calling thread.
template <class F>
auto cancellable(F&& f) -> decltype(f(static_cast<const std::atomic<bool>*>(nullptr))) {
    using R = decltype(f(static_cast<const std::atomic<bool>*>(nullptr)));
    std::atomic<bool> cancel{false};
    std::optional<R> result;
    std::exception_ptr failure;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::optional<py::error_already_set> interrupted;
    {
        py::gil_scoped_release release;
        std::thread worker([&] {
            try {
                result.emplace(f(&cancel));
            } catch (...) {
                failure = std::current_exception();
            }
            std::lock_guard<std::mutex> lock(mu);
            done = true;
            cv.notify_all();
        });
        std::unique_lock<std::mutex> lock(mu);
        while (!done) {
            cv.wait_for(lock, std::chrono::milliseconds(50));
            if (done || interrupted) continue;
            lock.unlock();
            {
                py::gil_scoped_acquire acquire;
                if (PyErr_CheckSignals() != 0) {
                    interrupted.emplace();  // takes the pending Python error (KeyboardInterrupt)
                    cancel = true;
                }
            }
            lock.lock();
        }
        lock.unlock();
        worker.join();
    }
    if (interrupted) throw std::move(*interrupted);
    if (failure) std::rethrow_exception(failure);
    return std::move(*result);
}

// ---- JSON → Python ----------------------------------------------------------------------------

py::object toPython(const nlohmann::ordered_json& j) {
    using V = nlohmann::ordered_json::value_t;
    switch (j.type()) {
    case V::null: return py::none();
    case V::boolean: return py::bool_(j.get<bool>());
    case V::number_integer: return py::int_(j.get<int64_t>());
    case V::number_unsigned: return py::int_(j.get<uint64_t>());
    case V::number_float: return py::float_(j.get<double>());
    case V::string: return py::str(j.get_ref<const std::string&>());
    case V::array: {
        py::list l(j.size());
        size_t i = 0;
        for (const auto& e : j) l[i++] = toPython(e);
        return std::move(l).cast<py::object>();
    }
    case V::object: {
        py::dict d;
        for (auto it = j.begin(); it != j.end(); ++it) d[py::str(it.key())] = toPython(it.value());
        return std::move(d).cast<py::object>();
    }
    default: return py::none();
    }
}

py::object parseJson(const std::string& text) { return toPython(nlohmann::ordered_json::parse(text)); }

// ---- tensors ↔ numpy --------------------------------------------------------------------------

std::optional<std::string> numpyDtypeOf(ir::DataType t) {
    using D = ir::DataType;
    switch (t) {
    case D::Float: return "float32";
    case D::Double: return "float64";
    case D::Float16: return "float16";
    case D::Int8: return "int8";
    case D::Int16: return "int16";
    case D::Int32: return "int32";
    case D::Int64: return "int64";
    case D::UInt8: return "uint8";
    case D::UInt16: return "uint16";
    case D::UInt32: return "uint32";
    case D::UInt64: return "uint64";
    case D::Bool: return "bool";
    case D::Complex64: return "complex64";
    case D::Complex128: return "complex128";
    case D::BFloat16: return "uint16";  // raw bits: numpy has no bfloat16
    default: return std::nullopt;
    }
}

std::optional<ir::DataType> dataTypeOf(const py::dtype& dt) {
    using D = ir::DataType;
    const char kind = dt.kind();
    const auto size = dt.itemsize();
    if (kind == 'f') return size == 4 ? D::Float : size == 8 ? D::Double : size == 2 ? D::Float16 : std::optional<D>{};
    if (kind == 'i') return size == 1 ? D::Int8 : size == 2 ? D::Int16 : size == 4 ? D::Int32 : size == 8 ? D::Int64 : std::optional<D>{};
    if (kind == 'u') return size == 1 ? D::UInt8 : size == 2 ? D::UInt16 : size == 4 ? D::UInt32 : size == 8 ? D::UInt64 : std::optional<D>{};
    if (kind == 'b') return D::Bool;
    if (kind == 'c') return size == 8 ? D::Complex64 : size == 16 ? D::Complex128 : std::optional<D>{};
    return std::nullopt;
}

py::object tensorToNumpy(const ir::Tensor& t) {
    std::vector<py::ssize_t> shape(t.dims.begin(), t.dims.end());
    if (t.dtype == ir::DataType::String) {
        py::list l;
        for (const auto& s : t.strings) l.append(py::bytes(s));
        py::module_ np = py::module_::import("numpy");
        return np.attr("array")(l, "object").attr("reshape")(py::cast(shape));
    }
    auto name = numpyDtypeOf(t.dtype);
    if (!name) throw Error(ErrorKind::Unsupported, "tensor '" + t.name + "': element type " + std::string(ir::dataTypeName(t.dtype)) + " has no numpy equivalent");
    py::array a(py::dtype(*name), shape);
    if (static_cast<size_t>(a.nbytes()) != t.byteSize())
        throw Error(ErrorKind::Internal, "tensor '" + t.name + "': " + std::to_string(t.byteSize()) + " bytes for " + std::to_string(a.nbytes()));
    if (t.byteSize()) std::memcpy(a.mutable_data(), t.data.data(), t.byteSize());
    return py::object(std::move(a));
}

ir::TensorPtr numpyToTensor(const py::handle& obj, const std::string& name) {
    py::array a = py::array::ensure(obj, py::array::c_style);
    if (!a) throw py::type_error("input '" + name + "': expected a numpy array");
    auto dt = dataTypeOf(a.dtype());
    if (!dt) throw py::type_error("input '" + name + "': numpy dtype " + std::string(py::str(a.dtype())) + " is not an ONNX tensor type");
    std::vector<int64_t> dims(a.shape(), a.shape() + a.ndim());
    return ir::makeTensor(*dt, std::move(dims), a.data(), static_cast<size_t>(a.nbytes()), name);
}

// ---- models -----------------------------------------------------------------------------------

/// An imported model. Immutable: every operation works on a copy (copies share the weights).
struct PyModel {
    std::shared_ptr<const ir::Model> model;
    Dims dims;             ///< pinned at load (--dim)
    std::string source;    ///< the path, or "<bytes>"
};

PyModel loadFile(const std::string& path, const Dims& dims, bool inferShapes, bool validateOps) {
    return cancellable([&](const std::atomic<bool>*) {
        onnxio::ImportOptions io;
        io.validateOps = validateOps;
        io.pinnedDims = dims;
        io.inferShapes = inferShapes;
        return PyModel{std::make_shared<const ir::Model>(onnxio::importModelFile(path, io)), dims, path};
    });
}

PyModel loadBytes(const py::bytes& data, const std::string& baseDir, const Dims& dims, bool inferShapes, bool validateOps) {
    std::string bytes = data;  // copied while the GIL is held
    return cancellable([&](const std::atomic<bool>*) {
        onnxio::ImportOptions io;
        io.validateOps = validateOps;
        io.pinnedDims = dims;
        io.inferShapes = inferShapes;
        return PyModel{std::make_shared<const ir::Model>(onnxio::importModelBytes(bytes, baseDir, io)), dims, "<bytes>"};
    });
}

PyModel derived(const PyModel& from, ir::Model&& m, const std::string& what) {
    return PyModel{std::make_shared<const ir::Model>(std::move(m)), from.dims, what};
}

// ---- optimize -----------------------------------------------------------------------------------

struct PyOptimizeResult {
    PyModel model;                                         ///< the optimized model
    std::shared_ptr<const passes::PipelineResult> result;  ///< steps, with snapshots when kept
    std::string report;                                    ///< `optimize --report` JSON
    std::string table;                                     ///< the CLI's stdout table
    std::string checkerProblem;                            ///< the ONNX checker's complaint, if any
    std::string verifyFailure;                             ///< first differing pass (verify=True)
};

/// What `passlens-cli optimize` builds from its options: the same core builder
/// (pipeline/PipelineBuilder.h), with the default level extended.
PyOptimizeResult optimize(const PyModel& in, std::optional<std::string> level, std::optional<std::vector<std::string>> passList,
                          bool fixedPoint, std::optional<int64_t> targetOpset, std::optional<std::string> targetLayout,
                          bool groupFunctions, std::optional<std::string> recompute, bool snapshots,
                          std::optional<std::string> pipeline, std::optional<std::string> profile) {
    using namespace passlens::passes;
    return cancellable([&](const std::atomic<bool>* cancel) {
        PipelineRequest request;
        request.pipeline = pipeline;
        request.level = level;
        if (passList) {
            std::string text;
            for (const auto& n : *passList) text += (text.empty() ? "" : ",") + n;
            request.passes = text;
        }
        request.profile = profile;
        request.defaultLevel = "extended";
        request.targetOpset = targetOpset;
        request.targetLayout = targetLayout;
        request.recompute = recompute;
        request.groupFunctions = groupFunctions;
        PassManager pm;
        PipelineOptions options;
        buildPipeline(request, pm, options.pass);
        options.fixedPoint = fixedPoint;
        options.keepSnapshots = snapshots;
        options.pass.cancel = cancel;
        ir::Model model = *in.model;
        auto result = std::make_shared<PipelineResult>(pm.run(model, options));
        PyOptimizeResult r;
        if (auto problem = onnxio::checkModel(model)) r.checkerProblem = *problem;
        r.report = optimizeReportToJson(*result).dump();
        r.model = derived(in, std::move(model), in.source + " (optimized)");
        r.result = std::move(result);
        return r;
    });
}

// ---- drawing ------------------------------------------------------------------------------------

/// Temporary file for Graphviz's renderers (they write files), removed on scope exit.
struct TempFile {
    std::string path;
    explicit TempFile(const std::string& suffix) {
        const char* dir = std::getenv("TMPDIR");
        std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/passlens-XXXXXX" + suffix;
        std::vector<char> buf(pattern.begin(), pattern.end());
        buf.push_back('\0');
        int fd = mkstemps(buf.data(), static_cast<int>(suffix.size()));
        if (fd < 0) throw Error(ErrorKind::BadInput, "cannot create a temporary file in " + pattern);
        ::close(fd);
        path = buf.data();
    }
    ~TempFile() { std::remove(path.c_str()); }
    std::string read() const {
        std::ifstream f(path, std::ios::binary);
        std::ostringstream ss;
        ss << f.rdbuf();
        return ss.str();
    }
};

using NodeColors = std::map<uint32_t, std::pair<std::string, std::string>>;

py::object render(const PyModel& m, const std::string& format, bool fold, std::optional<int> depth,
                  const std::vector<std::string>& expand, bool expandAll, const NodeColors& colors) {
    if (format != "svg" && format != "png" && format != "dot")
        throwBadInput("render: format must be svg, png or dot, not '" + format + "'");
    auto [text, summary] = cancellable([&](const std::atomic<bool>*) {
        layout::RenderModelOptions o;
        o.foldConstants = fold;
        o.depth = depth;
        o.expand = expand;
        o.expandAll = expandAll;
        for (const auto& [id, c] : colors) o.nodeColors[id] = c;
        TempFile tmp("." + format);
        auto r = layout::renderModel(*m.model, o, format, tmp.path);
        return std::make_pair(tmp.read(), r);
    });
    (void)summary;
    if (format == "png") return py::bytes(text);
    return py::str(text);
}

// ---- steps: before/after snapshots and their diff colors ----------------------------------------

py::dict stepDiff(const PyOptimizeResult& r, size_t i) {
    if (i >= r.result->steps.size()) throw py::index_error("step " + std::to_string(i) + " of " + std::to_string(r.result->steps.size()));
    const auto& step = r.result->steps[i];
    if (!step.snapshot) throw Error(ErrorKind::BadInput, "this optimize ran without snapshots (snapshots=False)");
    const auto before = i == 0 ? r.result->initial : r.result->steps[i - 1].snapshot;
    const auto after = step.snapshot;
    auto d = passes::diffGraphs(before->graph, after->graph);
    py::dict out;
    out["before"] = PyModel{before, r.model.dims, "before " + step.result.name};
    out["after"] = PyModel{after, r.model.dims, "after " + step.result.name};
    out["added"] = py::cast(std::vector<uint32_t>(d.addedNodes.begin(), d.addedNodes.end()));
    out["removed"] = py::cast(std::vector<uint32_t>(d.removedNodes.begin(), d.removedNodes.end()));
    out["changed"] = py::cast(std::vector<uint32_t>(d.changedNodes.begin(), d.changedNodes.end()));
    out["came_from"] = py::cast(d.cameFrom);
    return out;
}

// ---- node lookup for the drawings of an explanation ---------------------------------------------

uint32_t nodeId(const PyModel& m, const std::string& name) {
    return static_cast<uint32_t>(analysis::findNodeForExplain(m.model->graph, name));
}

}  // namespace

PYBIND11_MODULE(_passlens, m) {
    m.doc() = "The C++ core of PassLens (use the `passlens` package, not this module).";
    m.attr("__version__") = PASSLENS_VERSION;

    gError = newException(m, "Error", {PyExc_Exception}, "An error the PassLens engine reported (the CLI's message).");
    gBadInput = newException(m, "BadInputError", {gError, PyExc_ValueError},
                             "Malformed model or bad argument (the CLI exits 2 with this message).");
    gUnsupported = newException(m, "UnsupportedError", {gError, PyExc_NotImplementedError},
                                "Something this build does not support (an op, a type, an opset).");
    gCheckFailed = newException(m, "CheckFailedError", {gError}, "A check failed (the CLI exits 1).");
    gCancelled = newException(m, "CancelledError", {gError}, "The work was cancelled.");
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const Error& e) {
            PyObject* type = gError;
            switch (e.kind()) {
            case ErrorKind::BadInput: type = gBadInput; break;
            case ErrorKind::Unsupported: type = gUnsupported; break;
            case ErrorKind::CheckFailed: type = gCheckFailed; break;
            case ErrorKind::Cancelled: type = gCancelled; break;
            case ErrorKind::Internal: type = gError; break;
            }
            PyErr_SetString(type, e.what());
        } catch (const std::bad_alloc&) {
            PyErr_SetString(PyExc_MemoryError, "out of memory");
        } catch (const nlohmann::json::exception& e) {
            PyErr_SetString(gError, e.what());
        }
    });

    py::class_<PyModel>(m, "Model")
        .def_property_readonly("source", [](const PyModel& p) { return p.source; })
        .def_property_readonly("dims", [](const PyModel& p) { return p.dims; })
        .def_property_readonly("node_count", [](const PyModel& p) { return p.model->graph.nodeCount(); })
        .def_property_readonly("opset", [](const PyModel& p) { return p.model->opsetFor(""); })
        .def_property_readonly("warnings", [](const PyModel& p) { return p.model->warnings; })
        .def("input_types", [](const PyModel& p) {
            // (name, numpy dtype or None, dims with None for a symbolic/unknown dim) per runtime input
            py::list out;
            const auto& g = p.model->graph;
            for (ir::ValueId v : eval::runtimeInputs(g)) {
                const auto& val = g.value(v);
                py::object dt = py::none();
                if (auto n = numpyDtypeOf(val.type.elemType)) dt = py::str(*n);
                py::object dims = py::none();
                if (val.type.shape) {
                    py::list l;
                    for (const auto& d : val.type.shape->dims) l.append(d.value ? py::object(py::int_(*d.value)) : py::object(py::str(d.param)));
                    dims = l;
                }
                out.append(py::make_tuple(val.name, dt, dims));
            }
            return out;
        })
        .def("output_names", [](const PyModel& p) {
            std::vector<std::string> names;
            for (ir::ValueId v : p.model->graph.outputs()) names.push_back(p.model->graph.value(v).name);
            return names;
        })
        .def("info", [](const PyModel& p) { return parseJson(onnxio::modelInfoToJson(onnxio::describeModel(*p.model))); })
        .def("info_text", [](const PyModel& p) { return onnxio::modelInfoToText(onnxio::describeModel(*p.model)); })
        .def("print_text", [](const PyModel& p) { return ir::printModel(*p.model); })
        .def("shapes", [](const PyModel& p, const std::map<std::string, int64_t>& dims, bool text) {
            auto [json, txt, unknown] = cancellable([&](const std::atomic<bool>*) {
                shape::Bindings b(dims.begin(), dims.end());
                auto r = report::analyzeModelShapes(*p.model, b);
                return std::make_tuple(text ? std::string() : report::shapesToJson(*p.model, r).dump(),
                                       text ? report::shapesToText(*p.model, r) : std::string(), r.unknownBindings);
            });
            if (!unknown.empty()) {
                auto warnings = py::module_::import("warnings");
                for (const auto& n : unknown)
                    warnings.attr("warn")("dims[" + n + "]: no graph input has a dim named so");
            }
            return text ? py::object(py::str(txt)) : parseJson(json);
        }, py::arg("dims"), py::arg("text") = false)
        .def("to_onnx", [](const PyModel& p) {
            std::string bytes = cancellable([&](const std::atomic<bool>*) { return onnxio::exportModelBytes(*p.model); });
            return py::bytes(bytes);
        })
        .def("save", [](const PyModel& p, const std::string& path) {
            cancellable([&](const std::atomic<bool>*) { onnxio::exportModelFile(*p.model, path); return 0; });
        })
        .def("optimize", &optimize, py::arg("level"), py::arg("passes"), py::arg("fixed_point"), py::arg("target_opset"),
             py::arg("target_layout"), py::arg("group_functions"), py::arg("recompute"), py::arg("snapshots"),
             py::arg("pipeline"), py::arg("profile"))
        .def("explain", [](const PyModel& p, std::optional<std::string> node, std::optional<int> maxDepth, bool runPasses, bool text) {
            if (maxDepth && (*maxDepth < 1 || *maxDepth > 1000000)) throwUsage("--max-depth must be between 1 and 1000000");
            return cancellable([&](const std::atomic<bool>*) {
                analysis::ExplainOptions options;
                options.runPatternPasses = runPasses;
                if (maxDepth) options.fusion.maxDepth = *maxDepth;
                analysis::Explanation e = node ? analysis::explainNode(*p.model, analysis::findNodeForExplain(p.model->graph, *node), options)
                                               : analysis::explainModel(*p.model, options);
                if (text) return analysis::explanationToText(p.model->graph, e);
                std::ostringstream os;
                analysis::writeExplanationJson(os, p.model->graph, e);
                return os.str();
            });
        }, py::arg("node"), py::arg("max_depth"), py::arg("passes"), py::arg("text"))
        .def("memplan", [](const PyModel& p, const std::string& planner, const std::string& schedule, bool parallelAware, bool text) {
            report::MemplanOptions options;
            options.planner = planner;
            options.schedule = schedule;
            options.parallelAware = parallelAware;
            if (auto problem = report::memplanOptionsProblem(options)) throwUsage(*problem);
            auto [out, assumed] = cancellable([&](const std::atomic<bool>*) {
                ir::Model model = *p.model;
                auto assumed = report::pinUnpinnedDims(model, p.dims);
                auto r = report::planModelMemory(model, assumed, options);
                return std::make_pair(text ? report::memplanToText(r) : report::memplanToJson(r).dump(), assumed);
            });
            (void)assumed;
            return text ? py::object(py::str(out)) : parseJson(out);
        }, py::arg("planner"), py::arg("schedule"), py::arg("parallel_aware"), py::arg("text"))
        .def("grad", [](const PyModel& p, const std::string& loss, const std::string& output, const std::string& wrt,
                        std::optional<std::string> recompute) {
            // passlens-cli grad (app/cli/cmd_grad.cpp): the options parsed before any work.
            const autodiff::RecomputeOptions rc = autodiff::parseRecomputeOptions(recompute.value_or("none"));
            autodiff::AutodiffOptions o;
            o.loss = loss;
            o.output = output;
            o.wrt = autodiff::parseWrtList(wrt);
            return cancellable([&](const std::atomic<bool>*) {
                ir::Model train = autodiff::makeTrainingModel(*p.model, o);
                std::optional<autodiff::RecomputeResult> recomputed;
                if (recompute) recomputed = autodiff::recomputeModel(train, rc);
                size_t lossNodes = 0, backwardNodes = 0, recomputeNodes = 0;
                for (ir::NodeId n : train.graph.nodeOrder()) {
                    auto role = autodiff::provenanceOf(train.graph.node(n)).role;
                    lossNodes += role == autodiff::Role::Loss;
                    backwardNodes += role == autodiff::Role::Backward;
                    recomputeNodes += role == autodiff::Role::Recompute;
                }
                nlohmann::ordered_json j;
                j["forward_nodes"] = p.model->graph.nodeCount();
                j["loss_nodes"] = lossNodes;
                j["backward_nodes"] = backwardNodes;
                j["recompute_nodes"] = recomputeNodes;
                j["gradients"] = train.graph.outputs().size() - p.model->graph.outputs().size() - 1;
                j["loss"] = o.loss;
                if (recomputed) {
                    auto& r = j["recompute"];
                    r["strategy"] = recomputed->strategy;
                    r["saved_activations"] = recomputed->savedActivations;
                    r["checkpoints"] = recomputed->checkpoints;
                    r["dropped"] = recomputed->dropped;
                    r["extra_flops"] = recomputed->extraFlops;
                    r["forward_flops"] = recomputed->forwardFlops;
                    r["peak_before"] = recomputed->peakBefore;
                    r["peak_after"] = recomputed->peakAfter;
                    r["message"] = recomputed->message;
                }
                if (auto problem = onnxio::checkModel(train))
                    throw Error(ErrorKind::CheckFailed, "the training graph fails the ONNX checker: " + *problem);
                return std::make_pair(derived(p, std::move(train), p.source + " (training)"), j.dump());
            });
        }, py::arg("loss"), py::arg("output"), py::arg("wrt"), py::arg("recompute"))
        .def("run", [](const PyModel& p, py::object inputs, uint64_t seed, int64_t maxMemory) {
            // Inputs: None → seeded random inputs (passlens-cli run --seed), else one array per
            // runtime input in graph order.
            std::vector<ir::TensorPtr> tensors;
            const auto runtime = eval::runtimeInputs(p.model->graph);
            const bool random = inputs.is_none();
            if (!random) {
                py::list l = py::list(inputs);
                if (l.size() != runtime.size())
                    throwBadInput("the model has " + std::to_string(runtime.size()) + " inputs, got " + std::to_string(l.size()));
                for (size_t i = 0; i < l.size(); ++i) tensors.push_back(numpyToTensor(l[i], p.model->graph.value(runtime[i]).name));
            }
            auto [ins, outs] = cancellable([&](const std::atomic<bool>* cancel) {
                eval::MemoryBudgetScope budget(maxMemory);
                auto used = random ? eval::randomInputs(*p.model, seed, p.dims) : tensors;
                eval::RunOptions ro;
                ro.cancel = cancel;
                auto o = eval::run(*p.model, used, ro);
                return std::make_pair(used, o);
            });
            py::list in, out;
            for (const auto& t : ins) in.append(tensorToNumpy(*t));
            for (const auto& t : outs) out.append(tensorToNumpy(*t));
            return py::make_tuple(in, out);
        }, py::arg("inputs"), py::arg("seed"), py::arg("max_memory"))
        .def("render", &render, py::arg("format"), py::arg("fold"), py::arg("depth"), py::arg("expand"), py::arg("expand_all"),
             py::arg("colors"))
        .def("node_id", &nodeId, py::arg("name"))
        .def("node_names", [](const PyModel& p) {
            std::vector<std::pair<uint32_t, std::string>> out;
            for (ir::NodeId n : p.model->graph.nodeOrder()) out.push_back({n, p.model->graph.node(n).displayName()});
            return out;
        });

    py::class_<PyOptimizeResult>(m, "OptimizeResult")
        .def_property_readonly("model", [](const PyOptimizeResult& r) { return r.model; })
        .def_property_readonly("report", [](const PyOptimizeResult& r) { return parseJson(r.report); })
        .def_property_readonly("checker_problem", [](const PyOptimizeResult& r) { return r.checkerProblem; })
        .def_property_readonly("step_count", [](const PyOptimizeResult& r) { return r.result->steps.size(); })
        .def("step_diff", &stepDiff, py::arg("index"));

    m.def("load_file", &loadFile, py::arg("path"), py::arg("dims"), py::arg("infer_shapes"), py::arg("validate_ops"));
    m.def("load_bytes", &loadBytes, py::arg("data"), py::arg("base_dir"), py::arg("dims"), py::arg("infer_shapes"), py::arg("validate_ops"));
    m.def("diff", [](const PyModel& a, const PyModel& b, bool namesOnly) {
        auto [json, text, identical] = cancellable([&](const std::atomic<bool>*) {
            diff::DiffOptions o;
            o.namesOnly = namesOnly;
            auto d = diff::compareModels(*a.model, *b.model, o);
            return std::make_tuple(diff::diffToJson(d).dump(), diff::diffToText(d), d.identical());
        });
        return py::make_tuple(parseJson(json), text, identical);
    }, py::arg("a"), py::arg("b"), py::arg("names_only"));
    m.def("read_tensor", [](const std::string& path) { return tensorToNumpy(*onnxio::readTensorFile(path)); }, py::arg("path"));
    m.def("pass_names", [] { return passes::PassRegistry::global().names(); });
    m.def("pipeline", [](const std::string& level) { return passes::PassRegistry::global().pipeline(passes::parseLevel(level)); });
    m.def("_sleep_cancellable", [](double seconds) {
        // For the tests: a long call that honours the cancel flag, like a pass between nodes.
        cancellable([&](const std::atomic<bool>* cancel) {
            auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
            while (std::chrono::steady_clock::now() < until) {
                if (cancel->load()) throw Error(ErrorKind::Cancelled, "cancelled");
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            return 0;
        });
    });
}
