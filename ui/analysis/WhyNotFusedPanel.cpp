#include "analysis/WhyNotFusedPanel.h"

#include <QLabel>
#include <QListWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "analysis/BlockingEdge.h"

namespace passlens::ui {

namespace {

QString html(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

QString nodeLabel(const ir::Graph& g, ir::NodeId n) {
    if (n == ir::kNone || !g.hasNode(n)) return {};
    return QString::fromStdString(g.node(n).displayName()) + " (" + QString::fromStdString(g.node(n).opType) + ")";
}

}  // namespace

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
                        .arg(html(e.name), html(e.opType), html(std::string(analysis::patternName(e.pattern)))));

    int refused = 0, applied = 0;
    for (const auto& c : e.considered) (c.applied ? applied : refused)++;
    QString s;
    if (e.groupMembers.size() > 1) {
        QStringList members;
        for (ir::NodeId m : e.groupMembers) members << html(g.node(m).displayName());
        s += tr("<p><b>Fused</b> in group #%1 (anchor %2): %3.</p>")
                 .arg(e.group).arg(html(g.node(e.anchor).displayName()), members.join(" + "));
    } else {
        s += tr("<p><b>Not fused</b>: alone in group #%1 — it runs as its own kernel.</p>").arg(e.group);
    }
    s += e.postDominator == ir::kNone
             ? tr("<p>Immediate post-dominator: none (its results reach the outputs along separate paths).</p>")
             : tr("<p>Immediate post-dominator: %1.</p>").arg(nodeLabel(g, e.postDominator).toHtmlEscaped());
    s += tr("<p>%1 fusion(s) considered: %2 refused or missed, %3 applied.</p>").arg(e.considered.size()).arg(refused).arg(applied);
    for (const auto& c : e.considered)
        if (!c.applied)
            s += tr("<p style='color:#b91c1c'><b>Why not</b> (%1): %2</p>").arg(html(c.rule), html(c.message));
    for (const auto& w : r.warnings) s += QString("<p style='color:#92400e'>%1</p>").arg(html(w));
    if (!r.remarksSource.empty())
        s += tr("<p style='color:#6b7280'>Pass remarks from %1.</p>").arg(html(r.remarksSource));
    summary_->setHtml(s);

    {
        const QSignalBlocker block(list_);
        list_->clear();
        for (const auto& c : e.considered) {
            QString text = QString("%1 %2 · %3\n%4")
                               .arg(c.applied ? QString::fromUtf8("✓") : QString::fromUtf8("✗"),
                                    QString::fromStdString(c.source), QString::fromStdString(c.rule),
                                    QString::fromStdString(c.message));
            if (!c.blockingNodeName.empty() || !c.blockingValueName.empty())
                text += tr("\nblocked by %1%2").arg(QString::fromStdString(c.blockingNodeName),
                                                   c.blockingValueName.empty() ? QString()
                                                       : tr(" via edge %1").arg(QString::fromStdString(c.blockingValueName)));
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
    emit blockerChanged(shown_->node, c.nodes, c.blockingNode,
                        analysis::blockingEdges(*graph_->graph, c.blockingValue, c.blockingNode, shown_->node));
}

}  // namespace passlens::ui
