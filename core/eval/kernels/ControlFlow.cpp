// If and Loop: subgraph bodies read outer-scope values by name through the executor's scopes.
#include <cstring>

#include "eval/Kernel.h"
#include "ir/Graph.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

/// Stacks equally shaped tensors along a new leading axis (Loop scan outputs).
TensorPtr stack(const KernelContext& c, const std::vector<TensorPtr>& items) {
    if (items.empty()) c.unsupported("a Loop scan output with zero iterations has no known shape");
    const Tensor& first = *items[0];
    std::vector<int64_t> dims{int64_t(items.size())};
    dims.insert(dims.end(), first.dims.begin(), first.dims.end());
    OutTensor o(first.dtype, dims);
    size_t at = 0;
    for (const auto& t : items) {
        if (t->dims != first.dims || t->dtype != first.dtype) c.fail("scan output changes shape between iterations");
        std::memcpy(o.data<char>() + at, t->data.data(), t->byteSize());
        at += t->byteSize();
    }
    return o.finish();
}

}  // namespace

void registerControlFlow(KernelRegistry& r) {
    {
        KernelInfo k;
        k.types = {DataType::Bool};
        k.float16ViaFloat = false;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& cond = c.t(0);
            if (cond.elementCount() != 1) c.fail("cond must hold one element");
            const Attribute* a = c.node.attr(cond.as<bool>()[0] ? "then_branch" : "else_branch");
            if (!a || !a->g) c.fail("branch subgraph is missing");
            return c.runSubgraph(*a->g, {});
        };
        r.add("", "If", std::move(k));
    }
    {
        KernelInfo k;
        k.float16ViaFloat = false;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Attribute* a = c.node.attr("body");
            if (!a || !a->g) c.fail("body subgraph is missing");
            const Graph& body = *a->g;
            int64_t maxTrip = c.has(0) ? toInt64s(c.t(0))[0] : -1;
            bool cond = c.has(1) ? c.bools(1)[0] : true;
            std::vector<TensorPtr> carried(c.in.begin() + std::min<size_t>(2, c.in.size()), c.in.end());
            const size_t nCarried = carried.size();
            const size_t nScan = c.node.outputs.size() > nCarried ? c.node.outputs.size() - nCarried : 0;
            std::vector<std::vector<TensorPtr>> scans(nScan);
            for (int64_t i = 0; (maxTrip < 0 || i < maxTrip) && cond; ++i) {
                if (i > 100000000) c.fail("loop did not terminate");
                std::vector<TensorPtr> args{scalarInt64(i), makeTensorOf<uint8_t>(DataType::Bool, {}, {uint8_t(cond)})};
                args.insert(args.end(), carried.begin(), carried.end());
                auto outs = c.runSubgraph(body, args);
                if (outs.size() != 1 + nCarried + nScan) c.fail("body returns the wrong number of outputs");
                if (outs[0]->dtype != DataType::Bool || outs[0]->elementCount() == 0) c.fail("body's condition output is not a bool");
                cond = outs[0]->as<bool>()[0];
                for (size_t j = 0; j < nCarried; ++j) carried[j] = outs[1 + j];
                for (size_t j = 0; j < nScan; ++j) scans[j].push_back(outs[1 + nCarried + j]);
            }
            std::vector<TensorPtr> result = carried;
            for (auto& s : scans) result.push_back(stack(c, s));
            return result;
        };
        r.add("", "Loop", std::move(k));
    }
}

}  // namespace passlens::eval
