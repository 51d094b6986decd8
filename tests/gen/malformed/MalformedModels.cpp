#include "MalformedModels.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <fstream>
#include <initializer_list>

namespace passlens::malformed {

namespace {

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kInt64 = onnx::TensorProto::INT64;

// A tiny model builder: opset 17, one graph, helpers that return the proto for further edits.
struct ModelSketch {
    onnx::ModelProto mp;
    onnx::GraphProto* g;

    ModelSketch() {
        mp.set_ir_version(8);
        mp.set_producer_name("passlens-genmalformed");
        mp.add_opset_import()->set_version(17);
        g = mp.mutable_graph();
        g->set_name("malformed");
    }
    void input(const std::string& name, std::initializer_list<int64_t> dims, int elem = kFloat) {
        auto* t = g->add_input()->mutable_type()->mutable_tensor_type();
        g->mutable_input(g->input_size() - 1)->set_name(name);
        t->set_elem_type(elem);
        auto* shape = t->mutable_shape();
        for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
    }
    void output(const std::string& name) { g->add_output()->set_name(name); }
    onnx::NodeProto* node(const std::string& op, const std::string& name, std::initializer_list<std::string> ins,
                          std::initializer_list<std::string> outs) {
        return addNode(g->add_node(), op, name, ins, outs);
    }
    static onnx::NodeProto* addNode(onnx::NodeProto* n, const std::string& op, const std::string& name,
                                    std::initializer_list<std::string> ins, std::initializer_list<std::string> outs) {
        n->set_op_type(op);
        n->set_name(name);
        for (const auto& i : ins) n->add_input(i);
        for (const auto& o : outs) n->add_output(o);
        return n;
    }
    void int64Initializer(const std::string& name, std::initializer_list<int64_t> values) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(kInt64);
        t->add_dims(static_cast<int64_t>(values.size()));
        for (int64_t v : values) t->add_int64_data(v);
    }
    std::string bytes() const { return mp.SerializeAsString(); }
};

onnx::AttributeProto* intAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
    return a;
}

onnx::AttributeProto* intsAttr(onnx::NodeProto* n, const std::string& name, std::initializer_list<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return a;
}

// x:float[2,3] → one node → y.
ModelSketch unary(const std::string& op, const std::string& name, std::initializer_list<std::string> ins,
                  std::initializer_list<std::string> outs = {"y"}) {
    ModelSketch m;
    m.input("x", {2, 3});
    m.node(op, name, ins, outs);
    m.output("y");
    return m;
}

// Adds a model-local function local:NAME (x) → (y) whose body is one node of `calleeOp` in `calleeDomain`.
void addFunction(ModelSketch& m, const std::string& name, const std::string& calleeOp, const std::string& calleeDomain) {
    auto* f = m.mp.add_functions();
    f->set_name(name);
    f->set_domain("local");
    f->add_input("x");
    f->add_output("y");
    auto* op = f->add_opset_import();
    op->set_version(17);
    auto* local = f->add_opset_import();
    local->set_domain("local");
    local->set_version(1);
    auto* n = ModelSketch::addNode(f->add_node(), calleeOp, name + "_body", {"x"}, {"y"});
    n->set_domain(calleeDomain);
}

ModelSketch callingLocalFunction(const std::string& function) {
    ModelSketch m;
    auto* local = m.mp.add_opset_import();
    local->set_domain("local");
    local->set_version(1);
    m.input("x", {2, 3});
    m.node(function, "call_" + function, {"x"}, {"y"})->set_domain("local");
    m.output("y");
    return m;
}

MalformedModel longCycle(int length) {
    ModelSketch m;
    m.input("x", {2, 3});
    for (int i = 0; i < length; ++i) {
        std::string in = "v" + std::to_string((i + length - 1) % length);  // node 0 reads the last node's output
        m.node("Relu", "relu_" + std::to_string(i), {in}, {"v" + std::to_string(i)});
    }
    m.output("v" + std::to_string(length - 1));
    return {"cycle_long_chain", "a chain of " + std::to_string(length) + " Relu nodes closed into a cycle", m.bytes(), "relu_"};
}

}  // namespace

std::vector<MalformedModel> malformedModels() {
    std::vector<MalformedModel> out;
    auto add = [&](std::string name, std::string defect, const ModelSketch& m, std::string mustName) {
        out.push_back({std::move(name), std::move(defect), m.bytes(), std::move(mustName)});
    };

    // ---- input/output counts -------------------------------------------------------------------
    add("erf_no_inputs", "an Erf node with no inputs", unary("Erf", "erf1", {}), "erf1");
    add("sigmoid_no_inputs", "a Sigmoid node with no inputs", unary("Sigmoid", "sigmoid1", {}), "sigmoid1");
    add("relu_two_inputs", "a Relu node with two inputs", unary("Relu", "relu1", {"x", "x"}), "relu1");
    add("add_one_input", "an Add node with one input", unary("Add", "add1", {"x"}), "add1");
    add("relu_two_outputs", "a Relu node with two outputs", unary("Relu", "relu1", {"x"}, {"y", "z"}), "relu1");
    {
        ModelSketch m = unary("Gemm", "gemm1", {"x"});
        add("gemm_one_input", "a Gemm node with one of its two required inputs", m, "gemm1");
    }
    {
        ModelSketch m = unary("Clip", "clip1", {"", "lo"});
        m.g->add_initializer()->set_name("lo");
        m.g->mutable_initializer(0)->set_data_type(kFloat);
        m.g->mutable_initializer(0)->add_float_data(0.f);
        add("clip_required_input_empty", "a Clip node whose required input is the empty name", m, "clip1");
    }

    // ---- attributes ----------------------------------------------------------------------------
    add("concat_missing_axis", "a Concat node without its required 'axis'", unary("Concat", "concat1", {"x", "x"}), "concat1");
    add("cast_missing_to", "a Cast node without its required 'to'", unary("Cast", "cast1", {"x"}), "cast1");
    {
        ModelSketch m = unary("Transpose", "transpose1", {"x"});
        auto* a = m.g->mutable_node(0)->add_attribute();
        a->set_name("perm");
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(1.f);
        add("transpose_perm_float", "a Transpose whose 'perm' is a float", m, "transpose1");
    }
    {
        ModelSketch m = unary("Concat", "concat1", {"x", "x"});
        auto* a = m.g->mutable_node(0)->add_attribute();
        a->set_name("axis");
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s("zero");
        add("concat_axis_string", "a Concat whose 'axis' is a string", m, "concat1");
    }

    // ---- attribute values out of range ----------------------------------------------------------
    {
        ModelSketch m = unary("Transpose", "transpose1", {"x"});
        intsAttr(m.g->mutable_node(0), "perm", {0, 7});
        add("transpose_perm_out_of_range", "a Transpose with perm [0, 7] on a rank-2 input", m, "transpose1");
    }
    {
        ModelSketch m = unary("Transpose", "transpose1", {"x"});
        intsAttr(m.g->mutable_node(0), "perm", {1, 1});
        add("transpose_perm_repeated", "a Transpose with perm [1, 1]", m, "transpose1");
    }
    {
        ModelSketch m = unary("Transpose", "transpose1", {"x"});
        intsAttr(m.g->mutable_node(0), "perm", {2, 1, 0});
        add("transpose_perm_wrong_rank", "a Transpose with a rank-3 perm on a rank-2 input", m, "transpose1");
    }
    {
        ModelSketch m = unary("Softmax", "softmax1", {"x"});
        intAttr(m.g->mutable_node(0), "axis", 5);
        add("softmax_axis_out_of_range", "a Softmax with axis 5 on a rank-2 input", m, "softmax1");
    }
    {
        ModelSketch m = unary("Concat", "concat1", {"x", "x"});
        intAttr(m.g->mutable_node(0), "axis", -3);
        add("concat_axis_out_of_range", "a Concat with axis -3 on rank-2 inputs", m, "concat1");
    }
    {
        ModelSketch m = unary("ReduceSum", "reduce1", {"x"});  // opset 17: axes is an attribute for ReduceMean, an input for ReduceSum
        m.g->mutable_node(0)->set_op_type("ReduceMean");
        intsAttr(m.g->mutable_node(0), "axes", {4});
        add("reduce_axes_out_of_range", "a ReduceMean with axes [4] on a rank-2 input", m, "reduce1");
    }
    {
        ModelSketch m = unary("Flatten", "flatten1", {"x"});
        intAttr(m.g->mutable_node(0), "axis", 9);
        add("flatten_axis_out_of_range", "a Flatten with axis 9 on a rank-2 input", m, "flatten1");
    }
    {
        ModelSketch m = unary("Unsqueeze", "unsqueeze1", {"x", "axes"});
        m.int64Initializer("axes", {0, 0});
        add("unsqueeze_axes_repeat", "an Unsqueeze whose axes name axis 0 twice", m, "unsqueeze1");
    }

    // ---- model-local functions ------------------------------------------------------------------
    {
        ModelSketch m = callingLocalFunction("F");
        addFunction(m, "F", "F", "local");
        add("function_self_recursive", "a model-local function F whose body calls F", m, "F");
    }
    {
        ModelSketch m = callingLocalFunction("F");
        addFunction(m, "F", "G", "local");
        addFunction(m, "G", "F", "local");
        add("function_mutually_recursive", "model-local functions F and G that call each other", m, "F");
    }
    {
        // The file the fuzzer found: the F -> G -> F model written twice into one file (protobuf
        // merges the copies), so F and G are each defined twice and the graph calls F twice.
        ModelSketch m = callingLocalFunction("F");
        addFunction(m, "F", "G", "local");
        addFunction(m, "G", "F", "local");
        m.mp.MergeFrom(onnx::ModelProto(m.mp));
        add("function_recursive_defined_twice", "mutually recursive F and G, each defined twice", m, "F");
    }
    {
        // The campaign's variant: F and G each defined twice, the second F calling G in a domain
        // nobody imports. Read by the last definitions there is no cycle; libonnx reads the first
        // ones (F -> G -> F) and recursed until the stack ran out. Two definitions are refused.
        ModelSketch m = callingLocalFunction("F");
        addFunction(m, "F", "G", "local");
        addFunction(m, "G", "F", "local");
        addFunction(m, "F", "G", "loca\x99");
        addFunction(m, "G", "F", "local");
        add("function_defined_twice_first_recursive", "F and G defined twice; only the first definitions call each other", m,
            "defined twice");
    }
    {
        ModelSketch m = callingLocalFunction("F");
        addFunction(m, "F", "Relu", "");
        m.g->mutable_node(0)->add_input("x");
        m.g->mutable_node(0)->add_input("x");
        add("function_call_arity", "a call of F (one input) with three inputs", m, "call_F");
    }
    {
        ModelSketch m = callingLocalFunction("F");
        addFunction(m, "F", "Erf", "");
        m.mp.mutable_functions(0)->mutable_node(0)->clear_input();
        add("function_body_erf_no_inputs", "a function body with an Erf node without inputs", m, "F_body");
    }

    // ---- graph structure ------------------------------------------------------------------------
    out.push_back(longCycle(20000));
    {
        ModelSketch m;
        m.input("x", {2, 3});
        m.node("Relu", "relu1", {"x"}, {"t"});
        m.node("Sigmoid", "sigmoid1", {"x"}, {"t"});
        m.output("t");
        add("value_defined_twice", "two nodes write the value 't'", m, "'t'");
    }
    {
        ModelSketch m = unary("Relu", "relu1", {"x"});
        m.output("never_made");
        add("output_never_produced", "a graph output no node produces", m, "never_made");
    }
    {
        ModelSketch m;
        m.input("x", {2, 3});
        m.input("cond", {}, onnx::TensorProto::BOOL);
        auto* iff = m.node("If", "if1", {"cond"}, {"y"});
        for (const char* branch : {"then_branch", "else_branch"}) {
            auto* a = iff->add_attribute();
            a->set_name(branch);
            a->set_type(onnx::AttributeProto::GRAPH);
            auto* body = a->mutable_g();
            body->set_name(branch);
            ModelSketch::addNode(body->add_node(), "Erf", std::string("erf_in_") + branch, {}, {std::string("b_") + branch});
            body->add_output()->set_name(std::string("b_") + branch);
        }
        m.output("y");
        add("subgraph_erf_no_inputs", "an If whose branches hold Erf nodes without inputs", m, "erf_in_then_branch");
    }

    // ---- ranks libonnx's shape inference indexes without checking ------------------------------
    {
        ModelSketch m;
        m.input("a", {2, 3});
        m.input("b", {4});
        m.node("Gemm", "gemm1", {"a", "b"}, {"y"});
        m.output("y");
        add("gemm_rank1_operand", "a Gemm whose B operand is declared 1-D", m, "gemm1");
    }
    {
        // Gemm-6's inference function reads dim(1) of B unchecked: this crashed InferShapes (a fuzz find).
        ModelSketch m;
        m.mp.mutable_opset_import(0)->set_version(6);
        m.input("a", {2, 3});
        m.input("b", {4});
        m.input("c", {2, 4});
        m.node("Gemm", "gemm_old", {"a", "b", "c"}, {"y"});
        m.output("y");
        add("gemm6_rank1_operand", "an opset-6 Gemm whose B operand is declared 1-D", m, "gemm_old");
    }
    {
        ModelSketch m;
        m.input("x", {1, 2, 8, 8});
        m.input("w", {2});
        m.node("ConvTranspose", "deconv1", {"x", "w"}, {"y"});
        m.output("y");
        add("convtranspose_rank1_weight", "a ConvTranspose whose weight is declared 1-D", m, "deconv1");
    }
    {
        // Conv's inference takes the kernel from the weight (no kernel_shape) and indexes the data
        // with it: a 3-D input under a 4-D weight crashed InferShapes (the 2026-12-07 campaign).
        ModelSketch m;
        m.input("x", {1, 8, 8});
        m.input("w", {8, 8, 1, 1});
        m.node("Conv", "conv_ranks", {"x", "w"}, {"y"});
        m.output("y");
        add("conv_rank3_input_rank4_weight", "a Conv whose data is 3-D and weight 4-D", m, "conv_ranks");
    }
    {
        // libonnx's convolution inference divides by the strides: stride 0 was a SIGFPE in
        // InferShapes (the fuzz run of the test command, 2026-12-08).
        ModelSketch m;
        m.input("x", {1, 2, 8, 8});
        m.input("w", {2, 2, 3, 3});
        intsAttr(m.node("Conv", "conv_stride0", {"x", "w"}, {"y"}), "strides", {0, 1});
        m.output("y");
        add("conv_stride_zero", "a Conv with a stride of 0", m, "conv_stride0");
    }

    // ---- sizes ----------------------------------------------------------------------------------
    {
        ModelSketch m;
        m.input("x", {int64_t{1} << 32, int64_t{1} << 32});
        m.node("Relu", "relu1", {"x"}, {"y"});
        m.output("y");
        add("shape_overflow_input", "an input of 2^32 x 2^32 floats: its byte size overflows int64", m, "'x'");
    }
    {
        ModelSketch m;
        m.input("x", {1});
        m.int64Initializer("big_shape", {int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 31});
        m.node("Expand", "expand1", {"x", "big_shape"}, {"y"});
        m.output("y");
        add("shape_overflow_inferred", "an Expand whose inferred output has 2^93 elements", m, "'y'");
    }
    {
        ModelSketch m;
        m.input("x", {1});
        m.int64Initializer("shape", {65536, 65536});
        m.node("ConstantOfShape", "fill1", {"shape"}, {"c"});
        m.node("Add", "add1", {"c", "x"}, {"y"});
        m.output("y");
        out.push_back({"fold_gigabytes", "a ConstantOfShape of 65536 x 65536 floats (16 GiB) with constant inputs",
                       m.bytes(), "fill1", true});
    }
    {
        ModelSketch m;
        m.input("x", {4, 4});
        auto* w = m.g->add_initializer();
        w->set_name("w");
        w->set_data_type(kFloat);
        w->add_dims(4);
        w->add_dims(4);
        w->set_raw_data(std::string(8, '\0'));  // 8 bytes for 64
        m.node("Add", "add1", {"x", "w"}, {"y"});
        m.output("y");
        add("raw_data_short", "an initializer of 4x4 floats with 8 bytes of raw_data", m, "'w'");
    }
    return out;
}

std::vector<std::string> writeMalformedModels(const std::string& dir) {
    std::vector<std::string> paths;
    for (const auto& m : malformedModels()) {
        std::string path = dir + "/" + m.name + ".onnx";
        std::ofstream(path, std::ios::binary) << m.bytes;
        paths.push_back(path);
    }
    return paths;
}

}  // namespace passlens::malformed
