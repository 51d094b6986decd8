#include "plot/SvgChart.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "ir/Error.h"
#include "plot/Scale.h"

namespace passlens::plot {

namespace {

std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '"') out += "&quot;";
        else out += c;
    }
    return out;
}

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

}  // namespace

std::string renderSvg(const SvgChart& c) {
    double x0 = 1e300, x1 = -1e300, y1 = -1e300;
    auto see = [&](double x, double y) {
        x0 = std::min(x0, x);
        x1 = std::max(x1, x);
        y1 = std::max(y1, y);
    };
    for (const auto& s : c.series)
        for (const auto& [x, y] : s.points) see(x, y);
    for (const auto& m : c.markers) see(m.x, m.y);
    for (const auto& l : c.lines) y1 = std::max(y1, l.y);
    if (x0 > x1) x0 = 0, x1 = 1;
    if (y1 <= 0) y1 = 1;
    if (x1 == x0) x1 = x0 + 1;
    const double left = 78, right = 16, top = 34, bottom = 46;
    LinearScale xs{std::min(0.0, x0), x1 + (x1 - std::min(0.0, x0)) * 0.03, left, c.width - right};
    LinearScale ys{0, y1 * 1.08, c.height - bottom, top};
    std::ostringstream o;
    o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << c.width << "\" height=\"" << c.height << "\" viewBox=\"0 0 "
      << c.width << " " << c.height << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
    // The background in user units: SVG Tiny renderers (Qt's, the app's) read 100% differently.
    o << "<rect width=\"" << c.width << "\" height=\"" << c.height << "\" fill=\"white\"/>\n";
    o << "<text x=\"" << c.width / 2 << "\" y=\"18\" text-anchor=\"middle\" font-size=\"13\">" << escape(c.title) << "</text>\n";
    for (const Tick& t : makeTicks(ys, 6, c.yBytes))
        o << "<line x1=\"" << left << "\" x2=\"" << c.width - right << "\" y1=\"" << num(t.pixel) << "\" y2=\"" << num(t.pixel)
          << "\" stroke=\"#e5e5e5\"/><text x=\"" << left - 4 << "\" y=\"" << num(t.pixel + 4) << "\" text-anchor=\"end\">"
          << escape(t.label) << "</text>\n";
    for (const Tick& t : makeTicks(xs, 8, c.xBytes))
        o << "<line x1=\"" << num(t.pixel) << "\" x2=\"" << num(t.pixel) << "\" y1=\"" << c.height - bottom << "\" y2=\""
          << c.height - bottom + 4 << "\" stroke=\"#333\"/><text x=\"" << num(t.pixel) << "\" y=\"" << c.height - bottom + 16
          << "\" text-anchor=\"middle\">" << escape(t.label) << "</text>\n";
    o << "<path d=\"M" << left << " " << top << " V" << c.height - bottom << " H" << c.width - right
      << "\" fill=\"none\" stroke=\"#333\"/>\n";
    o << "<text x=\"" << (left + c.width - right) / 2 << "\" y=\"" << c.height - 8 << "\" text-anchor=\"middle\">"
      << escape(c.xLabel) << "</text>\n";
    o << "<text transform=\"translate(14 " << (top + c.height - bottom) / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
      << escape(c.yLabel) << "</text>\n";
    for (const auto& l : c.lines) {
        const double py = ys.toPixel(l.y);
        o << "<line x1=\"" << left << "\" x2=\"" << c.width - right << "\" y1=\"" << num(py) << "\" y2=\"" << num(py)
          << "\" stroke=\"" << l.color << "\" stroke-dasharray=\"5 4\"/><text x=\"" << c.width - right - 4 << "\" y=\""
          << num(py - 4) << "\" text-anchor=\"end\" fill=\"" << l.color << "\">" << escape(l.label) << "</text>\n";
    }
    double legendY = top + 4;
    for (const auto& s : c.series) {
        o << "<path fill=\"none\" stroke=\"" << s.color << "\" stroke-width=\"1.6\" d=\"";
        bool first = true;
        double lastPy = 0;
        for (const auto& [x, y] : s.points) {
            const double px = xs.toPixel(x), py = ys.toPixel(y);
            if (first) o << "M" << num(px) << " " << num(py);
            else if (s.step) o << " H" << num(px) << " V" << num(py);
            else o << " L" << num(px) << " " << num(py);
            first = false;
            lastPy = py;
        }
        if (s.step && !s.points.empty()) o << " H" << num(xs.toPixel(s.points.back().first + 1));
        (void)lastPy;
        o << "\"/>\n";
        if (s.dots)
            for (const auto& [x, y] : s.points)
                o << "<circle cx=\"" << num(xs.toPixel(x)) << "\" cy=\"" << num(ys.toPixel(y)) << "\" r=\"2.5\" fill=\"" << s.color
                  << "\"/>\n";
        if (!s.name.empty()) {
            const double lx = c.legendRight ? c.width - right - 230 : left + 10;
            o << "<rect x=\"" << lx << "\" y=\"" << num(legendY) << "\" width=\"12\" height=\"3\" fill=\"" << s.color
              << "\"/><text x=\"" << lx + 16 << "\" y=\"" << num(legendY + 4) << "\">" << escape(s.name) << "</text>\n";
            legendY += 14;
        }
    }
    for (const auto& m : c.markers) {
        const double px = xs.toPixel(m.x), py = ys.toPixel(m.y);
        o << "<circle cx=\"" << num(px) << "\" cy=\"" << num(py) << "\" r=\"4.5\" fill=\"none\" stroke=\"" << m.color
          << "\" stroke-width=\"2\"/><text x=\"" << num(px + 7) << "\" y=\"" << num(py - 6) << "\" fill=\"" << m.color << "\">"
          << escape(m.label) << "</text>\n";
    }
    o << "</svg>\n";
    return o.str();
}

void saveSvg(const std::string& path, const SvgChart& chart) {
    std::ofstream f(path);
    if (!f) throwBadInput("cannot write '" + path + "'");
    f << renderSvg(chart);
    if (!f) throwBadInput("cannot write '" + path + "'");
}

}  // namespace passlens::plot
