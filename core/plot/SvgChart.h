#pragma once
// A small SVG line chart for the CLI and the docs: series of points drawn as polylines (or step
// curves), labelled marker points, horizontal reference lines, byte or count axes with the shared
// nice ticks. Text out, no dependencies; the same data the app charts.
#include <string>
#include <vector>

namespace passlens::plot {

struct SvgSeries {
    std::string name;
    std::string color = "#1f77b4";
    std::vector<std::pair<double, double>> points;  ///< (x, y) in data units
    bool step = false;                              ///< draw as a step curve (live bytes per step)
    bool dots = false;                              ///< a dot at every point
};

struct SvgMarker {
    std::string label;
    std::string color = "#d62728";
    double x = 0, y = 0;
};

struct SvgHLine {
    std::string label;
    std::string color = "#555555";
    double y = 0;
};

struct SvgChart {
    std::string title, xLabel, yLabel;
    bool xBytes = false, yBytes = false;  ///< byte units on the axis ticks
    int width = 640, height = 360;
    bool legendRight = false;             ///< legend in the top-right corner (default top-left)
    std::vector<SvgSeries> series;
    std::vector<SvgMarker> markers;
    std::vector<SvgHLine> lines;
};

/// The chart as a standalone SVG document (axes from 0 or the data's minimum to its maximum).
std::string renderSvg(const SvgChart& chart);
/// Writes renderSvg(chart) to `path`; Error(BadInput) naming the path when it cannot be written.
void saveSvg(const std::string& path, const SvgChart& chart);

}  // namespace passlens::plot
