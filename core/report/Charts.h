#pragma once
// The charts `passlens-cli memplan --svg` and `grad --recompute pareto --svg` write and the app
// shows: built once here as plot::SvgChart data, so the figure in the docs, the CLI's file and the
// app's panel are the same drawing.
#include <cstdint>
#include <vector>

#include "autodiff/Recompute.h"
#include "ir/Model.h"
#include "plot/SvgChart.h"
#include "schedule/GraphSchedule.h"

namespace passlens::report {

/// Live bytes per step of the exporter order and the last (chosen) schedule of `runs`, each peak
/// marked, with the any-order lower bound `bound` as a line.
plot::SvgChart scheduleChart(const ir::Model& model, const ir::Graph& graph, const std::vector<schedule::GraphScheduleRun>& runs,
                             int64_t bound);

/// Planned arena against extra FLOPs (% of one forward pass): the Pareto curve, with store-all,
/// √n and all marked.
plot::SvgChart recomputeChart(const autodiff::RecomputeCurve& c);

}  // namespace passlens::report
