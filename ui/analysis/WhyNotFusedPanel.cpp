#include "analysis/WhyNotFusedPanel.h"

#include <QLabel>
#include <QListWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "analysis/BlockingEdge.h"
#include "analysis/FusionReasons.h"

namespace passlens::ui {

namespace {

QString html(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

QString nodeLabel(const ir::Graph& g, ir::NodeId n) {
    if (n == ir::kNone || !g.hasNode(n)) return {};
    return QString::fromStdString(shortNodeName(g.node(n).displayName())) + " (" + QString::fromStdString(g.node(n).opType) + ")";
}

QString considerationHtml(const analysis::FusionConsideration& c, const ir::Graph& g, const analysis::NodeExplanation& e) {
    const std::string headline = c.source == "fusion-groups" ? ruleHeadline(c.rule) : std::string();
    QString out = QString("<p style='margin:4px 0'><span style='color:%1'><b>%2</b></span> %3")
                      .arg(c.applied ? "#166534" : "#b91c1c", c.applied ? QString::fromUtf8("✓") : QString::fromUtf8("✗"),
                           html(headline.empty() ? shortenNames(c.message, c) : headline));
    if (c.rule == "opaque") {  // from the op-pattern table, not "X is Opaque … blocked by X"
        out += "<br>" + html(opaqueReason(e.opType, g.hasNode(e.node) ? g.node(e.node).domain : std::string()));
    } else if (!headline.empty()) {
        out += "<br><span style='color:#4b5563'>" + html(shortenNames(c.message, c)) + "</span>";
    }
    if (c.blockingNode != ir::kNone && c.blockingNode != e.node && c.rule != "opaque")
        out += "<br><span style='color:#4b5563'>" + QObject::tr("stopped at %1").arg(html(shortNodeName(c.blockingNodeName))) +
               (c.blockingValueName.empty() ? QString() : QObject::tr(" (edge %1)").arg(html(shortNodeName(c.blockingValueName)))) + "</span>";
    if (ir::ValueId v = unknownShapeBehind(g, c, e.node); v != ir::kNone && !c.applied) {
        const auto& type = g.value(v).type;
        out += "<br><span style='background:#fff3cd'>" +
               QObject::tr("This rests on an unknown shape: %1 is %2. Give the symbolic dims sizes in the Dims field (toolbar, "
                           "e.g. batch=1, seq=128), run again and ask again.")
                   .arg(html(shortNodeName(g.value(v).name)), html(type.shape ? type.shape->toString() : std::string("of unknown rank"))) +
               "</span>";
    }
    return out + "</p>";
}

}  // namespace

QString WhyNotFusedPanel::explanationHtml(const ir::Graph& g, const analysis::NodeExplanation& e,
                                          const std::vector<std::string>& warnings, const std::string& remarksSource) {
    QString s;
    // The answer first, in one sentence.
    const analysis::FusionConsideration* firstRefusal = nullptr;
    for (const auto& c : e.considered)
        if (!c.applied && !firstRefusal) firstRefusal = &c;
    if (e.groupMembers.size() > 1) {
        QStringList members;
        for (ir::NodeId m : e.groupMembers) members << html(shortNodeName(g.node(m).displayName()));
        s += tr("<p style='font-size:14px'><b>Fused</b> into one kernel with %1 others (group #%2, anchor %3).</p>")
                 .arg(e.groupMembers.size() - 1).arg(e.group).arg(html(shortNodeName(g.node(e.anchor).displayName())));
        s += "<p style='color:#4b5563'>" + members.join(" + ") + "</p>";
    } else {
        const std::string why = firstRefusal && firstRefusal->source == "fusion-groups" ? ruleHeadline(firstRefusal->rule) : std::string();
        s += tr("<p style='font-size:14px'><b>Not fused</b>: it runs as a kernel of its own.%1</p>")
                 .arg(why.empty() ? QString() : " " + html(why));
    }
    const char* order[] = {"Fusion groups (TVM FuseOps)", "Pattern rewrites (passes)", "onnxruntime transformers"};
    for (const char* section : order) {
        QString body;
        for (const auto& c : e.considered)
            if (sectionOf(c) == section) body += considerationHtml(c, g, e);
        if (!body.isEmpty()) s += QString("<h4 style='margin:10px 0 2px 0'>%1</h4>").arg(tr(section)) + body;
    }
    s += e.postDominator == ir::kNone
             ? tr("<p style='color:#6b7280'>Immediate post-dominator: none (its results reach the outputs along separate paths).</p>")
             : tr("<p style='color:#6b7280'>Immediate post-dominator: %1.</p>").arg(nodeLabel(g, e.postDominator).toHtmlEscaped());
    for (const auto& w : warnings) s += QString("<p style='color:#92400e'>%1</p>").arg(html(w));
    if (!remarksSource.empty()) s += tr("<p style='color:#6b7280'>Pass remarks from %1.</p>").arg(html(remarksSource));
    return s;
}

WhyNotFusedPanel::WhyNotFusedPanel(QWidget* parent) : QWidget(parent) {
    title_ = new QLabel(this);
    title_->setWordWrap(true);
    title_->setTextFormat(Qt::RichText);
    summary_ = new QTextBrowser(this);
    summary_->setOpenLinks(false);
    list_ = new QListWidget(this);
    list_->setWordWrap(true);
    list_->setAlternatingRowColors(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(title_);
    layout->addWidget(summary_, 3);
    layout->addWidget(new QLabel(tr("Fusions considered (pick one to mark what stopped it):"), this));
    layout->addWidget(list_, 2);
    connect(list_, &QListWidget::currentRowChanged, this, &WhyNotFusedPanel::onRowChanged);
    clear();
}

WhyNotFusedPanel::~WhyNotFusedPanel() = default;

void WhyNotFusedPanel::clear() {
    explainJob_.cancel();
    graph_.reset();
    shown_.reset();
    title_->setText(tr("<i>Right-click a node in the graph → “Why not fused?”</i>"));
    summary_->clear();
    const QSignalBlocker block(list_);
    list_->clear();
}

QString WhyNotFusedPanel::summaryText() const { return summary_->toPlainText(); }

void WhyNotFusedPanel::explain(SnapshotPtr graph, ir::NodeId node, std::shared_ptr<const analysis::FusionRemarks> runRemarks) {
    clear();
    if (!graph || !graph->model) return;
    if (graph->graph != &graph->model->graph) {
        title_->setText(tr("Fusion is analysed on the model's main graph, not inside subgraphs."));
        return;
    }
    graph_ = graph;
    title_->setText(tr("Explaining %1 …").arg(nodeLabel(*graph->graph, node).toHtmlEscaped()));
    std::shared_ptr<const analysis::FusionRemarks> remarks = std::move(runRemarks);
    if (!remarks && cachedModel_.lock() == graph->model) remarks = cachedRemarks_;
    // Without remarks at hand the pattern passes run on a copy: seconds on a large model.
    explainJob_.request([graph, node, remarks](const JobControl&) -> Result {
        Result r;
        r.graph = graph;
        try {
            analysis::ExplainOptions options;
            options.remarks = remarks;
            if (!options.remarks) {
                options.remarks = std::make_shared<const analysis::FusionRemarks>(analysis::runFusionRemarks(*graph->model));
                r.ranPipeline = true;
            }
            r.remarks = options.remarks;
            auto e = analysis::explainNode(*graph->model, node, options);
            if (!e.nodes.empty()) r.node = std::move(e.nodes.front());
            r.warnings = std::move(e.warnings);
            r.remarksSource = std::move(e.remarksSource);
        } catch (const std::exception& ex) {
            r.error = QString::fromStdString(ex.what());
        }
        return r;
    }, [this](Result r) { onFinished(std::move(r)); });
}

void WhyNotFusedPanel::onFinished(Result r) {
    if (r.ranPipeline) {
        ++pipelineRuns_;
        cachedModel_ = r.graph->model;
        cachedRemarks_ = r.remarks;
    }
    if (!r.error.isEmpty() || !r.node) {
        title_->setText(tr("Cannot explain: %1").arg(r.error.toHtmlEscaped()));
        return;
    }
    shown_ = std::move(r.node);
    const ir::Graph& g = *graph_->graph;
    const auto& e = *shown_;
    title_->setText(QString("<b style='font-size:15px'>%1</b> &nbsp;<span style='color:#4b5563'>%2 · pattern %3</span>")
                        .arg(html(shortNodeName(e.name)), html(e.opType), html(std::string(analysis::patternName(e.pattern)))));
    title_->setToolTip(QString::fromStdString(e.name));
    summary_->setHtml(explanationHtml(g, e, r.warnings, r.remarksSource));

    {
        const QSignalBlocker block(list_);
        list_->clear();
        for (const auto& c : e.considered) {
            // The reason first, then where it came from; full names stay in the tooltip.
            const std::string headline = c.source == "fusion-groups" ? ruleHeadline(c.rule) : std::string();
            QString text = QString("%1 %2").arg(c.applied ? QString::fromUtf8("✓") : QString::fromUtf8("✗"),
                                               QString::fromStdString(headline.empty() ? shortenNames(c.message, c) : headline));
            if (c.rule == "opaque") text += "\n" + QString::fromStdString(opaqueReason(e.opType, g.node(e.node).domain));
            else if (!headline.empty()) text += "\n" + QString::fromStdString(shortenNames(c.message, c));
            text += QString("\n— %1 · %2").arg(QString::fromStdString(c.source), QString::fromStdString(c.rule));
            auto* item = new QListWidgetItem(text, list_);
            item->setForeground(c.applied ? QColor("#166534") : QColor("#991b1b"));
            item->setToolTip(QString::fromStdString(c.message));
        }
    }
    emit explained(e.node);
    // Start on the first refusal that names a blocker, else the first entry.
    int row = e.considered.empty() ? -1 : 0;
    for (size_t i = 0; i < e.considered.size(); ++i)
        if (!e.considered[i].applied && e.considered[i].blockingNode != ir::kNone) { row = int(i); break; }
    if (row >= 0) selectConsideration(row);
    else emit blockerChanged(e.node, {}, ir::kNone, {});
}

void WhyNotFusedPanel::selectConsideration(int row) {
    if (list_->currentRow() == row) onRowChanged(row);
    else list_->setCurrentRow(row);
}

void WhyNotFusedPanel::onRowChanged(int row) {
    if (!shown_ || row < 0 || row >= int(shown_->considered.size())) return;
    const auto& c = shown_->considered[size_t(row)];
    // An Opaque node "blocks" itself: nothing else to mark.
    if (c.blockingNode == shown_->node) return emit blockerChanged(shown_->node, c.nodes, ir::kNone, {});
    emit blockerChanged(shown_->node, c.nodes, c.blockingNode,
                        analysis::blockingEdges(*graph_->graph, c.blockingValue, c.blockingNode, shown_->node));
}

}  // namespace passlens::ui
