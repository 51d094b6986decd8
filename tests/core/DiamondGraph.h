#pragma once
// The diamond the dominator tests share: x -> a(Relu) -> {b(Exp), c(Neg)} -> d(Add) -> e(Relu).
#include "examples/Builder.h"

namespace passlens::test {

struct Diamond {
    ir::Model m;
    ir::NodeId a, b, c, d, e;
    Diamond() {
        ir::GraphBuilder gb("diamond");
        auto x = gb.input("x", ir::DataType::Float, {2, 3});
        auto va = gb.op("Relu", {x}, {}, "a");
        auto vb = gb.op("Exp", {va}, {}, "b");
        auto vc = gb.op("Neg", {va}, {}, "c");
        auto vd = gb.op("Add", {vb, vc}, {}, "d");
        auto ve = gb.op("Relu", {vd}, {}, "e");
        gb.output(ve);
        m = gb.finish();
        auto producer = [&](ir::ValueId v) { return m.graph.value(v).producer; };
        a = producer(va); b = producer(vb); c = producer(vc); d = producer(vd); e = producer(ve);
    }
};

}  // namespace passlens::test
