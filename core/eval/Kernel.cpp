#include "eval/Kernel.h"

#include <algorithm>

namespace passlens::eval {

using namespace passlens::ir;

const std::vector<DataType> kFloatTypes = {DataType::Float, DataType::Double, DataType::Float16};
const std::vector<DataType> kIntTypes = {DataType::Int64, DataType::Int32, DataType::Int16, DataType::Int8,
                                         DataType::UInt8, DataType::UInt16, DataType::UInt32, DataType::UInt64};
const std::vector<DataType> kNumericTypes = {DataType::Float, DataType::Double, DataType::Float16, DataType::Int64,
                                             DataType::Int32, DataType::Int16, DataType::Int8, DataType::UInt8,
                                             DataType::UInt16, DataType::UInt32, DataType::UInt64};
const std::vector<DataType> kAllTypes = {DataType::Float, DataType::Double, DataType::Float16, DataType::Int64,
                                         DataType::Int32, DataType::Int16, DataType::Int8, DataType::UInt8,
                                         DataType::UInt16, DataType::UInt32, DataType::UInt64, DataType::Bool};

const Tensor& KernelContext::t(size_t i) const { return *ptr(i); }

const TensorPtr& KernelContext::ptr(size_t i) const {
    if (!has(i)) fail("input " + std::to_string(i) + " is missing");
    return in[i];
}

const bool* KernelContext::bools(size_t i) const {
    const ir::Tensor& x = t(i);
    if (x.dtype != ir::DataType::Bool) fail("input " + std::to_string(i) + " is " + std::string(ir::dataTypeName(x.dtype)) + ", not bool");
    if (x.elementCount() == 0) fail("input " + std::to_string(i) + " is empty");
    return x.as<bool>();
}

std::string KernelContext::where() const {
    std::string d = node.domain.empty() ? "ai.onnx" : node.domain;
    return node.opType + (node.name.empty() ? "" : " '" + node.name + "'") + " (" + d + " opset " + std::to_string(opset) + ")";
}

void KernelContext::fail(const std::string& msg) const { throwBadInput(where() + ": " + msg); }
void KernelContext::unsupported(const std::string& msg) const { throwUnsupported(where() + ": " + msg); }

void KernelRegistry::add(const std::string& domain, const std::string& op, KernelInfo k) {
    table_[{domain, op}].push_back(std::move(k));
}

const KernelInfo* KernelRegistry::find(const std::string& domain, const std::string& op, int64_t opset) const {
    auto it = table_.find({domain, op});
    if (it == table_.end()) return nullptr;
    for (const auto& k : it->second)
        if (opset >= k.sinceMin && opset <= k.sinceMax) return &k;
    return nullptr;
}

bool KernelRegistry::knowsOp(const std::string& domain, const std::string& op) const {
    return table_.count({domain, op}) > 0;
}

std::vector<std::pair<std::string, std::string>> KernelRegistry::ops() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [k, v] : table_) out.push_back(k);
    return out;
}

const KernelRegistry& kernelRegistry() {
    static const KernelRegistry reg = [] {
        KernelRegistry r;
        registerElementwise(r);
        registerShape(r);
        registerConv(r);
        registerLinalg(r);
        registerReduce(r);
        registerNorm(r);
        registerControlFlow(r);
        registerRnn(r);
        registerResize(r);
        registerIndexing(r);
        registerQuant(r);
        registerChannelsLast(r);
        registerDetection(r);
        registerNormExtra(r);
        registerAttention(r);
        registerBitwise(r);
        registerSpatial(r);
        registerEinsum(r);
        return r;
    }();
    return reg;
}

}  // namespace passlens::eval
