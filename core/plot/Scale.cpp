#include "plot/Scale.h"

#include <cmath>
#include <cstdio>

namespace passlens::plot {

double LinearScale::toPixel(double v) const {
    double span = domainEnd - domainStart;
    if (span == 0) return rangeStart;
    return rangeStart + (v - domainStart) / span * (rangeEnd - rangeStart);
}

double LinearScale::toDomain(double px) const {
    double span = rangeEnd - rangeStart;
    if (span == 0) return domainStart;
    return domainStart + (px - rangeStart) / span * (domainEnd - domainStart);
}

double niceStep(double lo, double hi, int maxTicks) {
    if (!(hi > lo) || maxTicks < 2) return 0;
    double raw = (hi - lo) / (maxTicks - 1);
    double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * mag >= raw * (1 - 1e-9)) return m * mag;
    return 10 * mag;
}

std::vector<double> niceTicks(double lo, double hi, int maxTicks) {
    double step = niceStep(lo, hi, maxTicks);
    std::vector<double> out;
    if (step <= 0) return out;
    double first = std::ceil(lo / step - 1e-9) * step;
    for (double v = first; v <= hi + step * 1e-9; v += step) {
        out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
        if (static_cast<int>(out.size()) > maxTicks) break;  // guard against rounding drift
    }
    return out;
}

namespace {
double byteUnit(double hi) {
    double unit = 1;
    while (hi >= unit * 1024 && unit < 1024.0 * 1024 * 1024) unit *= 1024;
    return unit;
}
}  // namespace

std::vector<double> byteTicks(double lo, double hi, int maxTicks) {
    double unit = byteUnit(std::max(std::abs(lo), std::abs(hi)));
    std::vector<double> out = niceTicks(lo / unit, hi / unit, maxTicks);
    for (double& v : out) v *= unit;
    return out;
}

std::string formatBytes(double bytes) {
    static const char* names[] = {"B", "KiB", "MiB", "GiB"};
    int k = 0;
    double v = bytes;
    while (std::abs(v) >= 1024 && k < 3) { v /= 1024; ++k; }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    std::string s = buf;
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    if (s == "-0") s = "0";
    return s + " " + names[k];
}

std::vector<Tick> makeTicks(const LinearScale& s, int maxTicks, bool bytes) {
    double lo = std::min(s.domainStart, s.domainEnd), hi = std::max(s.domainStart, s.domainEnd);
    std::vector<double> values = bytes ? byteTicks(lo, hi, maxTicks) : niceTicks(lo, hi, maxTicks);
    std::vector<Tick> out;
    for (double v : values) {
        if (!bytes && v != std::floor(v)) continue;  // integer axes (steps) never get 0.5 ticks
        Tick t;
        t.value = v;
        t.pixel = s.toPixel(v);
        if (bytes) t.label = formatBytes(v);
        else {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.0f", v);
            t.label = buf;
        }
        out.push_back(std::move(t));
    }
    return out;
}

}  // namespace passlens::plot
