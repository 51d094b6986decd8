#pragma once
// When a float32 rewrite by constants computes the same bits as the original.
//
// x / c and x · (1/c) are both one rounding of a real number, and it is the same real number only
// when 1/c is exact in float32, i.e. c = ±2^k. Likewise (x·a)·b rounds twice and x·(ab) once; the
// two agree when one factor is a power of two (that step only moves the exponent), not in general.
// Float addition has no such case: (x+a)+b and x+(a+b) round differently for some x whatever a, b.
// A one-ulp change looks harmless under a tolerance, but a model that compares, floors, sorts or
// suppresses (torchvision's detectors: Floor of the RoI level, NonMaxSuppression with tied
// scores, TopK) turns it into a different box (issue #43), so value-exact passes only take these.
#include <cmath>

namespace passlens::passes {

/// v = ±2^k with v and 1/v both normal float32 numbers: x·v and x/v only move x's exponent, so
/// x/v = x·(1/v) for every x, and a product with v is exact while it stays in the normal range.
inline bool isPowerOfTwoScale(float v) {
    if (!std::isnormal(v) || !std::isnormal(1.f / v)) return false;
    int exponent = 0;
    return std::fabs(std::frexp(v, &exponent)) == 0.5f;
}

}  // namespace passlens::passes
