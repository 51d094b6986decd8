#include "report/Charts.h"

#include <algorithm>
#include <string>

#include "plot/Scale.h"

namespace passlens::report {

plot::SvgChart scheduleChart(const ir::Model& model, const ir::Graph& graph, const std::vector<schedule::GraphScheduleRun>& runs,
                             int64_t bound) {
    plot::SvgChart c;
    c.title = "live bytes per step";
    c.xLabel = "step";
    c.yLabel = "live bytes";
    c.yBytes = true;
    const char* colors[] = {"#7f7f7f", "#1f77b4"};
    std::vector<const schedule::GraphScheduleRun*> shown;
    for (const auto& r : runs)
        if (r.run.name == "exporter") shown.push_back(&r);
    if (!runs.empty() && (shown.empty() || shown.back() != &runs.back())) shown.push_back(&runs.back());
    for (size_t i = 0; i < shown.size(); ++i) {
        const auto live = memory::analyzeMemory(model, graph, shown[i]->schedule).liveBytesPerStep;
        plot::SvgSeries s;
        s.name = shown[i]->run.name + " (peak " + plot::formatBytes(static_cast<double>(shown[i]->peakLiveBytes)) + ")";
        s.color = colors[std::min<size_t>(i, 1)];
        s.step = true;
        for (size_t k = 0; k < live.size(); ++k) s.points.emplace_back(static_cast<double>(k), static_cast<double>(live[k]));
        if (!live.empty()) {
            const size_t at = static_cast<size_t>(std::max_element(live.begin(), live.end()) - live.begin());
            c.markers.push_back({"peak", s.color, static_cast<double>(at) + 0.5, static_cast<double>(live[at])});
        }
        c.series.push_back(std::move(s));
    }
    c.lines.push_back({"any-order lower bound " + plot::formatBytes(static_cast<double>(bound)), "#d62728", static_cast<double>(bound)});
    return c;
}

plot::SvgChart recomputeChart(const autodiff::RecomputeCurve& c) {
    plot::SvgChart chart;
    chart.title = "planned arena vs recomputation";
    chart.xLabel = "extra FLOPs (% of one forward pass)";
    chart.legendRight = true;
    chart.yLabel = "planned arena";
    chart.yBytes = true;
    auto passes = [&](double flops) { return c.forwardFlops == 0 ? 0.0 : 100 * flops / c.forwardFlops; };
    plot::SvgSeries s;
    s.name = "Pareto curve (" + std::to_string(c.curve.size()) + " points)";
    s.dots = true;
    for (auto it = c.curve.rbegin(); it != c.curve.rend(); ++it)
        s.points.emplace_back(passes(it->extraFlops), static_cast<double>(it->arenaBytes));
    chart.series.push_back(std::move(s));
    // √n that changes nothing sits on store-all: one marker says both.
    const bool sqrtIsStoreAll = c.sqrt.extraFlops == 0 && c.sqrt.arenaBytes == c.storeAll.arenaBytes;
    chart.markers.push_back({sqrtIsStoreAll ? "store-all = sqrt" : "store-all", "#2ca02c", 0, static_cast<double>(c.storeAll.arenaBytes)});
    if (!sqrtIsStoreAll)
        chart.markers.push_back({"sqrt", "#d62728", passes(c.sqrt.extraFlops), static_cast<double>(c.sqrt.arenaBytes)});
    chart.markers.push_back({"all", "#9467bd", passes(c.all.extraFlops), static_cast<double>(c.all.arenaBytes)});
    return chart;
}

}  // namespace passlens::report
