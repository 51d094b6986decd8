// Kernels for the "passlens.nhwc" domain written by the layout pass: same op and attributes as
// the ONNX op, data input 0 / output 0 channels-last. Correctness first: transpose the data to
// NCHW, run the standard kernel, transpose the result back.
#include "eval/Kernel.h"
#include "ir/NhwcDomain.h"
#include "eval/TensorOps.h"

namespace passlens::eval {

using namespace passlens::ir;

void registerChannelsLast(KernelRegistry& r) {
    for (const std::string& opType : ir::nhwcOps()) {
        KernelInfo k;
        k.fn = [opType](KernelContext& c) -> std::vector<TensorPtr> {
            const int64_t onnxOpset = c.model.opsetFor("");
            const KernelInfo* inner = kernelRegistry().find("", opType, onnxOpset);
            if (!inner) c.unsupported("no NCHW kernel for " + opType + " at opset " + std::to_string(onnxOpset));
            if (c.t(0).dims.size() != 4) c.fail("channels-last data must have rank 4");
            KernelContext nchw{c.model, c.node, onnxOpset, c.in, c.runSubgraph};
            nchw.in[0] = permuted(c.t(0), {0, 3, 1, 2});
            std::vector<TensorPtr> outs = inner->fn(nchw);
            if (!outs.empty() && outs[0]) outs[0] = permuted(*outs[0], {0, 2, 3, 1});
            return outs;
        };
        r.add(ir::kNhwcDomain, opType, std::move(k));
    }
}

}  // namespace passlens::eval
