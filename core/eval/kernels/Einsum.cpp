// Einsum (12): explicit and implicit output, ellipsis with broadcasting, repeated labels
// (diagonals). A direct loop over the output and summed labels — slow for large contractions, but
// exact.
#include <algorithm>
#include <cctype>
#include <map>
#include <type_traits>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

/// A parsed term: one label per dim; labels >= 256 are ellipsis dims (256 + position).
using Term = std::vector<int>;
constexpr int kEllipsis = 256;

struct Equation {
    std::vector<Term> inputs;
    Term output;
    int ellipsisRank = 0;
};

/// Labels of `text`, with "..." expanded to `ellipsisDims` dims right-aligned in `maxEllipsis`.
Term parseTerm(const KernelContext& c, const std::string& text, int64_t rank, int maxEllipsis, bool isOutput) {
    Term t;
    const auto dots = text.find("...");
    int letters = 0;
    for (char ch : text)
        if (ch != '.') {
            if (!std::isalpha(static_cast<unsigned char>(ch))) c.fail("equation has the character '" + std::string(1, ch) + "'");
            ++letters;
        }
    if (dots == std::string::npos && !isOutput && letters != rank)
        c.fail("term '" + text + "' has " + std::to_string(letters) + " labels for an input of rank " + std::to_string(rank));
    const int ellDims = isOutput ? maxEllipsis : int(rank) - letters;
    if (dots != std::string::npos && ellDims < 0) c.fail("term '" + text + "' has more labels than its input has dims");
    for (size_t i = 0; i < text.size(); ++i) {
        if (text.compare(i, 3, "...") == 0) {
            for (int e = 0; e < ellDims; ++e) t.push_back(kEllipsis + (maxEllipsis - ellDims) + e);
            i += 2;
        } else if (text[i] == '.') {
            c.fail("equation has a stray '.'");
        } else {
            t.push_back(static_cast<unsigned char>(text[i]));
        }
    }
    return t;
}

Equation parseEquation(const KernelContext& c, std::string eq) {
    eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
    Equation e;
    const auto arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms;
    size_t start = 0;
    while (true) {
        const auto comma = lhs.find(',', start);
        terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (terms.size() != c.in.size())
        c.fail("equation has " + std::to_string(terms.size()) + " input terms for " + std::to_string(c.in.size()) + " inputs");
    for (size_t i = 0; i < terms.size(); ++i) {
        int letters = 0;
        for (char ch : terms[i]) letters += ch != '.';
        if (terms[i].find("...") != std::string::npos)
            e.ellipsisRank = std::max(e.ellipsisRank, int(c.t(i).dims.size()) - letters);
    }
    for (size_t i = 0; i < terms.size(); ++i)
        e.inputs.push_back(parseTerm(c, terms[i], int64_t(c.t(i).dims.size()), e.ellipsisRank, false));
    if (arrow != std::string::npos) {
        e.output = parseTerm(c, eq.substr(arrow + 2), 0, e.ellipsisRank, true);
    } else {
        // implicit: ellipsis dims, then the labels seen exactly once, alphabetically
        std::map<int, int> count;
        for (const auto& t : e.inputs)
            for (int l : t) ++count[l];
        for (int k = 0; k < e.ellipsisRank; ++k) e.output.push_back(kEllipsis + k);
        for (const auto& [l, n] : count)
            if (l < kEllipsis && n == 1) e.output.push_back(l);
    }
    return e;
}

std::vector<TensorPtr> einsum(KernelContext& c) {
    const Equation eq = parseEquation(c, c.node.attrString("equation", ""));
    const DataType dt = c.t(0).dtype;
    std::map<int, int64_t> size;
    for (size_t i = 0; i < eq.inputs.size(); ++i) {
        const Tensor& t = c.t(i);
        if (t.dtype != dt) c.fail("inputs have different element types");
        for (size_t d = 0; d < eq.inputs[i].size(); ++d) {
            const int l = eq.inputs[i][d];
            const int64_t n = t.dims[d];
            auto it = size.find(l);
            if (it == size.end()) size[l] = n;
            else if (it->second == n) continue;
            else if (l >= kEllipsis && (n == 1 || it->second == 1)) it->second = std::max(it->second, n);  // broadcast
            else
                c.fail("label '" + (l < kEllipsis ? std::string(1, char(l)) : std::string("...")) + "' has sizes " +
                       std::to_string(it->second) + " and " + std::to_string(n));
        }
    }
    std::vector<int> outLabels = eq.output, sumLabels;
    for (int l : outLabels)
        if (!size.count(l)) c.fail("output label '" + std::string(1, char(l)) + "' is not in any input");
    {
        std::vector<int> seen = outLabels;
        std::sort(seen.begin(), seen.end());
        if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) c.fail("output repeats a label");
    }
    for (const auto& [l, n] : size)
        if (std::find(outLabels.begin(), outLabels.end(), l) == outLabels.end()) sumLabels.push_back(l);
    // all labels: output first, then summed; per input, its stride for each label (0 when absent or broadcast)
    std::vector<int> all = outLabels;
    all.insert(all.end(), sumLabels.begin(), sumLabels.end());
    std::vector<int64_t> allDims;
    for (int l : all) allDims.push_back(size[l]);
    std::vector<std::vector<int64_t>> strides(eq.inputs.size(), std::vector<int64_t>(all.size(), 0));
    for (size_t i = 0; i < eq.inputs.size(); ++i) {
        const auto st = stridesOf(c.t(i).dims);
        for (size_t d = 0; d < eq.inputs[i].size(); ++d) {
            const size_t li = size_t(std::find(all.begin(), all.end(), eq.inputs[i][d]) - all.begin());
            if (c.t(i).dims[d] != 1 || size[eq.inputs[i][d]] == 1) strides[i][li] += st[d];
        }
    }
    std::vector<int64_t> outDims(allDims.begin(), allDims.begin() + outLabels.size());
    const std::vector<int64_t> sumDims(allDims.begin() + outLabels.size(), allDims.end());
    const int64_t sumCount = product(sumDims);
    OutTensor o(dt, outDims);
    dispatchNumeric(dt, "Einsum", [&](auto tag) {
        using T = decltype(tag);
        using Acc = std::conditional_t<std::is_floating_point_v<T>, double, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
        const size_t nIn = eq.inputs.size(), nOut = outLabels.size(), nAll = all.size();
        std::vector<const T*> ptr(nIn);
        for (size_t i = 0; i < nIn; ++i) ptr[i] = c.t(i).template as<T>();
        std::vector<int64_t> base(nIn), off(nIn);
        std::vector<int64_t> sidx(nAll - nOut);
        forEachIndex(outDims, [&](int64_t e, const std::vector<int64_t>& pos) {
            for (size_t i = 0; i < nIn; ++i) {
                base[i] = 0;
                for (size_t d = 0; d < nOut; ++d) base[i] += pos[d] * strides[i][d];
            }
            Acc acc = 0;
            std::fill(sidx.begin(), sidx.end(), 0);
            for (int64_t s = 0; s < sumCount; ++s) {
                Acc term = 1;
                for (size_t i = 0; i < nIn; ++i) {
                    int64_t o2 = base[i];
                    for (size_t d = 0; d < sidx.size(); ++d) o2 += sidx[d] * strides[i][nOut + d];
                    term *= static_cast<Acc>(ptr[i][o2]);
                }
                acc += term;
                for (int64_t d = int64_t(sidx.size()) - 1; d >= 0; --d) {
                    if (++sidx[d] < sumDims[d]) break;
                    sidx[d] = 0;
                }
            }
            o.data<T>()[e] = static_cast<T>(acc);
        });
    });
    return {o.finish()};
}

}  // namespace

void registerEinsum(KernelRegistry& r) {
    KernelInfo k;
    k.types = kNumericTypes;
    k.sinceMin = 12;
    k.fn = einsum;
    r.add("", "Einsum", std::move(k));
}

}  // namespace passlens::eval
