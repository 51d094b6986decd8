#include "PropertiesPanel.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <QImage>
#include <QPainter>
#include <QUrl>

#include "ir/DataType.h"
#include "layout/DisplayGraph.h"

namespace passlens::ui {

using namespace passlens::ir;

namespace {

QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

template <class T>
void collect(const Tensor& t, std::vector<double>& out) {
    const T* p = t.as<T>();
    const int64_t n = t.elementCount();
    out.reserve(size_t(n));
    for (int64_t i = 0; i < n; ++i) out.push_back(double(p[i]));
}

QImage histogramImage(const std::vector<int64_t>& histogram) {
    const int barWidth = 12, gap = 2, height = 56;
    QImage img(int(histogram.size()) * (barWidth + gap), height, QImage::Format_ARGB32_Premultiplied);
    img.fill(Qt::transparent);
    QPainter p(&img);
    p.setPen(Qt::NoPen);
    p.setBrush(QColor("#3d7bd9"));
    const int64_t peak = histogram.empty() ? 0 : *std::max_element(histogram.begin(), histogram.end());
    for (size_t i = 0; i < histogram.size(); ++i) {
        int h = peak ? int(std::lround((height - 2) * double(histogram[i]) / double(peak))) : 0;
        if (histogram[i] > 0) h = std::max(h, 2);  // a non-empty bin stays visible
        p.drawRect(int(i) * (barWidth + gap), height - h, barWidth, h);
    }
    p.setPen(QColor("#9ca3af"));
    p.drawLine(0, height - 1, img.width(), height - 1);
    return img;
}

QString tensorHtml(const Tensor& t, std::vector<QImage>& images) {
    QString h = QString("<b>%1</b> ⟨%2⟩ %3 elements, %4 bytes<br>")
                    .arg(esc(t.name.empty() ? "tensor" : t.name),
                         esc(layout::shapeText(TypeInfo::tensor(t.dtype, Shape{[&] {
                             std::vector<Dim> d;
                             for (auto v : t.dims) d.push_back(Dim::of(v));
                             return d;
                         }()}))),
                         QString::number(t.elementCount()), QString::number(t.byteSize()));
    TensorStats s = tensorStats(t);
    if (!s.valid) return h + "<i>no statistics for this element type</i>";
    h += QString("min <b>%1</b> &nbsp; max <b>%2</b> &nbsp; mean <b>%3</b><br>")
             .arg(s.min, 0, 'g', 5).arg(s.max, 0, 'g', 5).arg(s.mean, 0, 'g', 5);
    // Rich text cannot size table cells reliably, so the histogram is a painted image that
    // loadResource() hands to the document.
    images.push_back(histogramImage(s.histogram));
    h += QString("<img src='hist:%1'><br>").arg(images.size() - 1);
    QStringList vals;
    for (double v : s.preview) vals << QString::number(v, 'g', 5);
    if (t.elementCount() > int64_t(s.preview.size())) vals << "…";
    h += "<span style='font-family:monospace'>[" + vals.join(", ") + "]</span>";
    return h;
}

QString valueRow(const Graph& g, ValueId v) {
    if (v == kNone) return "<tr><td colspan=2><i>(omitted)</i></td></tr>";
    const Value& val = g.value(v);
    return QString("<tr><td>%1</td><td style='color:#555'>%2</td></tr>").arg(esc(val.name), esc(val.type.toString()));
}

const char* kStyle =
    "<style>body{font-family:'DejaVu Sans';font-size:12px} h2{margin:2px 0} h3{margin:10px 0 2px 0;color:#374151}"
    " td{padding:1px 6px 1px 0}</style>";

}  // namespace

TensorStats tensorStats(const Tensor& t, size_t bins, size_t previewCount) {
    TensorStats s;
    std::vector<double> v;
    switch (t.dtype) {
        case DataType::Float: collect<float>(t, v); break;
        case DataType::Double: collect<double>(t, v); break;
        case DataType::Int64: collect<int64_t>(t, v); break;
        case DataType::Int32: collect<int32_t>(t, v); break;
        case DataType::Int8: collect<int8_t>(t, v); break;
        case DataType::UInt8: collect<uint8_t>(t, v); break;
        default: return s;
    }
    if (v.empty() || t.byteSize() < size_t(t.elementCount()) * elementSize(t.dtype)) return s;
    s.valid = true;
    s.min = *std::min_element(v.begin(), v.end());
    s.max = *std::max_element(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    s.mean = sum / double(v.size());
    s.histogram.assign(bins, 0);
    const double span = s.max - s.min;
    for (double x : v) {
        size_t b = span > 0 ? std::min(bins - 1, size_t((x - s.min) / span * double(bins))) : bins / 2;
        ++s.histogram[b];
    }
    s.preview.assign(v.begin(), v.begin() + std::min(previewCount, v.size()));
    return s;
}

PropertiesPanel::PropertiesPanel(QWidget* parent) : QTextBrowser(parent) {
    setOpenLinks(false);
    showNothing();
}

QVariant PropertiesPanel::loadResource(int type, const QUrl& name) {
    if (type == QTextDocument::ImageResource && name.scheme() == "hist") {
        bool ok = false;
        const int i = name.path().toInt(&ok);
        if (ok && i >= 0 && size_t(i) < images_.size()) return images_[size_t(i)];
    }
    return QTextBrowser::loadResource(type, name);
}

void PropertiesPanel::showNothing() {
    setHtml(QString(kStyle) + "<p style='color:#6b7280'>Select a node to see its attributes, inputs, outputs and weights.</p>");
}

void PropertiesPanel::showNode(const SnapshotPtr& snap, NodeId id) {
    if (!snap || id == kNone || !snap->graph->hasNode(id)) return showNothing();
    const Graph& g = *snap->graph;
    const Node& n = g.node(id);
    images_.clear();
    QString h = kStyle;
    h += QString("<h2>%1</h2><div style='color:#555'>%2%3</div>")
             .arg(esc(n.opType), esc(n.displayName()), n.domain.empty() ? QString() : " · " + esc(n.domain));
    if (!n.attributes.empty()) {
        h += "<h3>Attributes</h3><table>";
        for (const auto& a : n.attributes)
            h += QString("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(esc(a.name), esc(a.valueToString(16)));
        h += "</table>";
    }
    h += "<h3>Inputs</h3><table>";
    for (ValueId v : n.inputs) h += valueRow(g, v);
    h += "</table><h3>Outputs</h3><table>";
    for (ValueId v : n.outputs) h += valueRow(g, v);
    h += "</table>";
    // Weights: initializers read directly, and Constant producers folded into this box.
    for (ValueId v : n.inputs) {
        if (v == kNone) continue;
        const Value& val = g.value(v);
        TensorPtr t = val.initializer;
        if (!t && val.producer != kNone) {
            const Node& p = g.node(val.producer);
            if (p.opType == "Constant")
                if (const Attribute* a = p.attr("value"); a && a->t) t = a->t;
        }
        if (t) h += "<h3>Weight " + esc(val.name) + "</h3>" + tensorHtml(*t, images_);
    }
    if (n.opType == "Constant")
        if (const Attribute* a = n.attr("value"); a && a->t) h += "<h3>Value</h3>" + tensorHtml(*a->t, images_);
    setHtml(h);
}

void PropertiesPanel::showValue(const SnapshotPtr& snap, ValueId id) {
    if (!snap || !snap->graph->hasValue(id)) return showNothing();
    const Value& v = snap->graph->value(id);
    images_.clear();
    QString h = kStyle;
    h += QString("<h2>%1</h2><div style='color:#555'>%2</div>").arg(esc(v.name), esc(v.type.toString()));
    h += QString("<p>%1 consumer(s)%2%3</p>")
             .arg(v.consumers.size())
             .arg(v.isGraphInput ? " · graph input" : "")
             .arg(v.isGraphOutput ? " · graph output" : "");
    if (v.initializer) {
        h += "<h3>Initializer</h3>" + tensorHtml(*v.initializer, images_);
    } else if (v.producer != kNone && snap->graph->hasNode(v.producer)) {
        // A Constant node's output (drawn as its own box when constants are unfolded).
        const Node& p = snap->graph->node(v.producer);
        if (p.opType == "Constant")
            if (const Attribute* a = p.attr("value"); a && a->t)
                h += "<h3>Constant " + esc(p.displayName()) + "</h3>" + tensorHtml(*a->t, images_);
    }
    setHtml(h);
}

}  // namespace passlens::ui
