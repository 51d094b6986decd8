#pragma once
// Chart geometry shared by the memory charts (and any later chart): linear scales, nice ticks and
// byte-unit labels. Plain data and pure functions; no Qt, so the maths is unit-tested GUI-less.
#include <cstdint>
#include <string>
#include <vector>

namespace passlens::plot {

/// Maps a domain interval onto a pixel interval. For a y axis pass the bottom pixel as rangeStart
/// and the top pixel as rangeEnd (pixels grow downwards), and the scale inverts by itself.
struct LinearScale {
    double domainStart = 0, domainEnd = 1;
    double rangeStart = 0, rangeEnd = 1;

    double toPixel(double v) const;
    double toDomain(double px) const;
};

struct Rect {
    double x = 0, y = 0, width = 0, height = 0;  ///< pixels, y down
    bool contains(double px, double py) const {
        return px >= x && px < x + width && py >= y && py < y + height;
    }
    double centerX() const { return x + width / 2; }
    double centerY() const { return y + height / 2; }
};

struct Tick {
    double value = 0;
    double pixel = 0;
    std::string label;
};

/// "Nice" tick values (1-2-5 × 10^k spacing) covering [lo, hi] with at most `maxTicks` ticks.
/// The first tick is the first multiple of the spacing >= lo. Returns {} for an empty interval.
std::vector<double> niceTicks(double lo, double hi, int maxTicks);
/// The spacing niceTicks uses.
double niceStep(double lo, double hi, int maxTicks);

/// Byte ticks: picks the unit (B, KiB, MiB, GiB) by `hi`, then 1-2-5 spacing in that unit.
std::vector<double> byteTicks(double lo, double hi, int maxTicks);

/// "0 B", "512 B", "1.5 KiB", "12 MiB", "1.25 GiB" (up to 2 decimals, trailing zeros dropped).
std::string formatBytes(double bytes);

/// Ticks with pixels and labels for a scale; byte labels when `bytes`, integers otherwise.
std::vector<Tick> makeTicks(const LinearScale& s, int maxTicks, bool bytes);

}  // namespace passlens::plot
