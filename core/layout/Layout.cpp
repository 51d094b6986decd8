#include "layout/Layout.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <chrono>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <unordered_map>

#include "ir/Error.h"
#include "layout/EdgeLabels.h"
#include "layout/LargeStack.h"
#include "layout/LayeredLayout.h"

namespace passlens::layout {

std::mutex& graphvizMutex() {
    static std::mutex m;
    return m;
}

// ---- pure helpers -----------------------------------------------------------------------------

EdgePath convertBezier(const std::vector<Point>& pts, std::optional<Point> arrowEnd, double top) {
    EdgePath path;
    path.points.reserve(pts.size());
    for (const Point& p : pts) path.points.push_back(flipY(p, top));
    if (arrowEnd) path.arrowTip = flipY(*arrowEnd, top);
    path.labelAnchor = pathMidpoint(path.points);
    return path;
}

namespace {

std::optional<double> parseNumber(std::string_view s) {
    double v = 0;
    // from_chars for double is in libstdc++ 11+.
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

std::optional<Point> parsePoint(std::string_view s) {
    auto comma = s.find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    auto x = parseNumber(s.substr(0, comma));
    auto y = parseNumber(s.substr(comma + 1));
    if (!x || !y) return std::nullopt;
    return Point{*x, *y};
}

std::vector<std::string_view> splitSpaces(std::string_view s) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\\')) ++i;
        size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != '\n' && s[j] != '\t' && s[j] != '\\') ++j;
        if (j > i) out.push_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

}  // namespace

std::optional<EdgePath> parseEdgePos(std::string_view pos, double top) {
    std::vector<Point> pts;
    std::optional<Point> end;
    // Only the first Bézier of a multi-spline (';'-separated) edge is kept: dot emits one.
    if (auto semi = pos.find(';'); semi != std::string_view::npos) pos = pos.substr(0, semi);
    for (std::string_view tok : splitSpaces(pos)) {
        if (tok.size() > 2 && (tok[0] == 'e' || tok[0] == 's') && tok[1] == ',') {
            auto p = parsePoint(tok.substr(2));
            if (!p) return std::nullopt;
            if (tok[0] == 'e') end = *p;  // arrow at the tail ('s') is not drawn by us
            continue;
        }
        auto p = parsePoint(tok);
        if (!p) return std::nullopt;
        pts.push_back(*p);
    }
    if (pts.size() < 4 || (pts.size() - 1) % 3 != 0) return std::nullopt;
    return convertBezier(pts, end, top);
}

std::optional<Rect> parseBoundingBox(std::string_view bb) {
    double v[4];
    size_t start = 0;
    for (int i = 0; i < 4; ++i) {
        size_t comma = i < 3 ? bb.find(',', start) : bb.size();
        if (comma == std::string_view::npos) return std::nullopt;
        auto n = parseNumber(bb.substr(start, comma - start));
        if (!n) return std::nullopt;
        v[i] = *n;
        start = comma + 1;
    }
    if (v[2] < v[0] || v[3] < v[1]) return std::nullopt;
    // y-down with the origin at the top-left: ur.y becomes 0.
    return Rect{v[0], 0, v[2] - v[0], v[3] - v[1]};
}

Point pathMidpoint(const std::vector<Point>& points) { return pointAlongPath(points, 0.5); }

Rect unionBounds(const std::vector<BoxPlacement>& boxes, const std::vector<EdgePath>& edges) {
    double x0 = std::numeric_limits<double>::infinity(), y0 = x0, x1 = -x0, y1 = -x0;
    auto add = [&](double x, double y) {
        x0 = std::min(x0, x); y0 = std::min(y0, y);
        x1 = std::max(x1, x); y1 = std::max(y1, y);
    };
    for (const auto& b : boxes) { add(b.rect.x, b.rect.y); add(b.rect.right(), b.rect.bottom()); }
    for (const auto& e : edges) {
        for (const auto& p : e.points) add(p.x, p.y);
        if (e.arrowTip) add(e.arrowTip->x, e.arrowTip->y);
    }
    if (x0 > x1) return {};
    return {x0, y0, x1 - x0, y1 - y0};
}

// ---- Graphviz -------------------------------------------------------------------------------

namespace {

std::string fmt(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

void set(void* obj, const char* name, const std::string& value) {
    agsafeset(obj, const_cast<char*>(name), const_cast<char*>(value.c_str()), const_cast<char*>(""));
}

/// Escapes a label for Graphviz's escString: '\n' → centered line break.
std::string dotLabel(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '"') out += "\\\"";
        else out += c;
    }
    return out;
}

struct GraphvizSession {
    GVC_t* gvc = nullptr;
    Agraph_t* g = nullptr;
    bool laidOut = false;
    std::vector<Agnode_t*> nodes;
    std::vector<Agedge_t*> edges;

    ~GraphvizSession() {
        if (gvc && g && laidOut) gvFreeLayout(gvc, g);
        if (g) agclose(g);
    }
};

void build(GraphvizSession& s, const LayoutRequest& req, bool styled) {
    const LayoutOptions o = tunedOptions(req.options, req.boxes.size());
    // One context for the process (plugin loading is not free); used under graphvizMutex().
    static GVC_t* context = gvContext();
    s.gvc = context;
    if (!s.gvc) throw Error(ErrorKind::Internal, "Graphviz: cannot create a context");
    char name[] = "passlens";
    s.g = agopen(name, Agdirected, nullptr);
    set(s.g, "rankdir", o.leftToRight ? "LR" : "TB");
    set(s.g, "ranksep", fmt(o.rankSeparation));
    set(s.g, "nodesep", fmt(o.nodeSeparation));
    set(s.g, "splines", o.orthogonal ? "ortho" : "spline");
    if (o.nslimit) set(s.g, "nslimit", fmt(*o.nslimit));
    if (o.nslimit1) set(s.g, "nslimit1", fmt(*o.nslimit1));
    if (o.mclimit) set(s.g, "mclimit", fmt(*o.mclimit));
    if (o.searchsize) set(s.g, "searchsize", std::to_string(*o.searchsize));
    if (styled) {
        set(s.g, "bgcolor", "#fbfbfd");
        set(s.g, "fontname", "DejaVu Sans");
        set(s.g, "pad", "0.3");
    }
    // Defaults declared once on the graph are cheaper than per-object attributes.
    agattr(s.g, AGNODE, const_cast<char*>("shape"), const_cast<char*>("box"));
    agattr(s.g, AGNODE, const_cast<char*>("fixedsize"), const_cast<char*>("true"));
    agattr(s.g, AGNODE, const_cast<char*>("label"), const_cast<char*>(""));
    if (styled) {
        agattr(s.g, AGNODE, const_cast<char*>("style"), const_cast<char*>("rounded,filled"));
        agattr(s.g, AGNODE, const_cast<char*>("fontname"), const_cast<char*>("DejaVu Sans"));
        agattr(s.g, AGNODE, const_cast<char*>("fontsize"), const_cast<char*>("10"));
        agattr(s.g, AGNODE, const_cast<char*>("penwidth"), const_cast<char*>("1.2"));
        agattr(s.g, AGEDGE, const_cast<char*>("fontname"), const_cast<char*>("DejaVu Sans"));
        agattr(s.g, AGEDGE, const_cast<char*>("fontsize"), const_cast<char*>("8"));
        agattr(s.g, AGEDGE, const_cast<char*>("fontcolor"), const_cast<char*>("#555555"));
        agattr(s.g, AGEDGE, const_cast<char*>("color"), const_cast<char*>("#7a7f87"));
        agattr(s.g, AGEDGE, const_cast<char*>("arrowsize"), const_cast<char*>("0.6"));
    }
    s.nodes.reserve(req.boxes.size());
    for (const auto& b : req.boxes) {
        std::string id = "n" + std::to_string(b.key);
        Agnode_t* n = agnode(s.g, id.data(), 1);
        set(n, "width", fmt(std::max(b.width, 1.0) / 72.0));
        set(n, "height", fmt(std::max(b.height, 1.0) / 72.0));
        if (styled) {
            set(n, "label", dotLabel(b.label));
            if (!b.fillColor.empty()) set(n, "fillcolor", b.fillColor);
            if (!b.borderColor.empty()) set(n, "color", b.borderColor);
        }
        s.nodes.push_back(n);
    }
    std::unordered_map<uint32_t, Agnode_t*> byKey;
    for (size_t i = 0; i < req.boxes.size(); ++i) byKey[req.boxes[i].key] = s.nodes[i];
    s.edges.reserve(req.edges.size());
    for (const auto& e : req.edges) {
        auto a = byKey.find(e.from), b = byKey.find(e.to);
        if (a == byKey.end() || b == byKey.end())
            throw Error(ErrorKind::Internal, "layout: edge refers to an unknown box");
        Agedge_t* ge = agedge(s.g, a->second, b->second, nullptr, 1);
        if (styled && !e.label.empty()) set(ge, "label", dotLabel(e.label));
        if (e.weight != 1) set(ge, "weight", std::to_string(e.weight));
        s.edges.push_back(ge);
    }
}

void runDot(GraphvizSession& s) {
    int rc = 0;
    runOnLargeStack([&] { rc = gvLayout(s.gvc, s.g, "dot"); });
    if (rc != 0) throw Error(ErrorKind::Internal, "Graphviz: dot layout failed");
    s.laidOut = true;
}

}  // namespace

LayoutOptions tunedOptions(LayoutOptions o, size_t boxes) {
    // Measured on transformer layers and long chains: crossing minimization dominates past a few
    // hundred boxes and its later rounds rarely change the picture.
    if (!o.mclimit && boxes > 200) o.mclimit = boxes > 800 ? 0.2 : 0.5;
    if (!o.searchsize && boxes > 400) o.searchsize = 20;
    if (!o.nslimit1 && boxes > 400) o.nslimit1 = 2.0;
    return o;
}

LayoutResult layoutOrFallBack(const LayoutRequest& req) {
    std::string reason;
    if (req.boxes.size() > kMaxGraphvizBoxes) {
        reason = std::to_string(req.boxes.size()) + " boxes are more than Graphviz is given at once (" +
                 std::to_string(kMaxGraphvizBoxes) + ")";
    } else {
        try {
            return layoutGraph(req);
        } catch (const std::exception& e) {
            reason = e.what();
        }
    }
    LayoutResult r = layeredLayout(req);
    r.fallbackReason = reason;
    return r;
}

LayoutResult layoutGraph(const LayoutRequest& req) {
    std::lock_guard lock(graphvizMutex());
    GraphvizSession s;
    build(s, req, false);
    auto t0 = std::chrono::steady_clock::now();
    runDot(s);
    LayoutResult r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    const boxf bb = GD_bb(s.g);
    const double top = bb.UR.y;
    r.boxes.reserve(req.boxes.size());
    for (size_t i = 0; i < req.boxes.size(); ++i) {
        Agnode_t* n = s.nodes[i];
        const double w = ND_width(n) * 72.0, h = ND_height(n) * 72.0;
        Point c = flipY({ND_coord(n).x, ND_coord(n).y}, top);
        r.boxes.push_back({req.boxes[i].key, Rect{c.x - w / 2, c.y - h / 2, w, h}});
    }
    r.edges.reserve(req.edges.size());
    for (size_t i = 0; i < req.edges.size(); ++i) {
        Agedge_t* e = s.edges[i];
        EdgePath path;
        if (const splines* spl = ED_spl(e); spl && spl->size > 0) {
            std::vector<Point> pts;
            std::optional<Point> end;
            for (int k = 0; k < spl->size; ++k) {
                const bezier& bz = spl->list[k];
                for (int j = (k == 0 ? 0 : 1); j < bz.size; ++j) pts.push_back({bz.list[j].x, bz.list[j].y});
                if (bz.eflag) end = Point{bz.ep.x, bz.ep.y};
            }
            path = convertBezier(pts, end, top);
        }
        path.from = req.edges[i].from;
        path.to = req.edges[i].to;
        r.edges.push_back(std::move(path));
    }
    r.bounds = unionBounds(r.boxes, r.edges);
    return r;
}

void renderWithGraphviz(const LayoutRequest& req, const std::string& format, const std::string& path) {
    std::lock_guard lock(graphvizMutex());
    GraphvizSession s;
    build(s, req, true);
    runDot(s);
    if (gvRenderFilename(s.gvc, s.g, format.c_str(), path.c_str()) != 0)
        throw Error(ErrorKind::BadInput, "Graphviz cannot write '" + format + "' files to " + path);
}

namespace {

std::string pointText(Point p, double top) { return fmt(p.x) + "," + fmt(top - p.y); }

}  // namespace

void renderPlaced(const LayoutRequest& req, const LayoutResult& placed, const std::vector<PlacedFrame>& frames,
                  const std::string& format, const std::string& path) {
    if (placed.boxes.size() != req.boxes.size() || placed.edges.size() != req.edges.size())
        throw Error(ErrorKind::Internal, "renderPlaced: placements do not match the request");
    std::lock_guard lock(graphvizMutex());
    // Frames first: Graphviz draws nodes in creation order, so boxes land on top of them.
    LayoutRequest all;
    all.options = req.options;
    for (size_t i = 0; i < frames.size(); ++i)
        all.boxes.push_back({frames[i].key, frames[i].rect.width, frames[i].rect.height,
                             frames[i].label, "#f6f7fb", "#9aa3b5"});
    all.boxes.insert(all.boxes.end(), req.boxes.begin(), req.boxes.end());
    all.edges = req.edges;
    GraphvizSession s;
    build(s, all, true);
    const double top = placed.bounds.bottom();
    set(s.g, "bb", "0,0," + fmt(placed.bounds.right()) + "," + fmt(top));
    for (size_t i = 0; i < frames.size(); ++i) {
        const Rect& r = frames[i].rect;
        Agnode_t* n = s.nodes[i];
        set(n, "pos", pointText({r.x + r.width / 2, r.y + r.height / 2}, top));
        set(n, "labelloc", "t");
        set(n, "style", "rounded,dashed,filled");
        set(n, "fontsize", "11");
    }
    for (size_t i = 0; i < placed.boxes.size(); ++i)
        set(s.nodes[frames.size() + i], "pos", pointText(placed.boxes[i].center(), top));
    for (size_t i = 0; i < placed.edges.size(); ++i) {
        const EdgePath& e = placed.edges[i];
        if (e.points.size() < 4) continue;
        std::string pos;
        if (e.arrowTip) pos = "e," + pointText(*e.arrowTip, top);
        for (const Point& p : e.points) pos += (pos.empty() ? "" : " ") + pointText(p, top);
        set(s.edges[i], "pos", pos);
        if (!req.edges[i].label.empty()) set(s.edges[i], "lp", pointText(e.labelAnchor, top));
    }
    int rc = 0;
    runOnLargeStack([&] { rc = gvLayout(s.gvc, s.g, "nop2"); });
    if (rc != 0) throw Error(ErrorKind::Internal, "Graphviz: cannot place the drawing (nop2)");
    s.laidOut = true;
    if (gvRenderFilename(s.gvc, s.g, format.c_str(), path.c_str()) != 0)
        throw Error(ErrorKind::BadInput, "Graphviz cannot write '" + format + "' files to " + path);
}

}  // namespace passlens::layout
