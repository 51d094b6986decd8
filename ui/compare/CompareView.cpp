#include "compare/CompareView.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "compare/DifferenceModel.h"
#include "diff/DiffReport.h"
#include "graph/GraphView.h"
#include "graph/LayoutJob.h"
#include "stepper/DiffStyle.h"

namespace passlens::ui {

using diff::NodeStatus;

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
    auto* top = new QHBoxLayout;
    summary_ = new QLabel(this);
    summary_->setObjectName("compareSummary");
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 0);
    progress_->setMaximumWidth(180);
    cancel_ = new QToolButton(this);
    cancel_->setText(tr("Cancel"));
    connect(cancel_, &QToolButton::clicked, this, &CompareView::cancel);
    top->addWidget(summary_, 1);
    top->addWidget(progress_);
    top->addWidget(cancel_);

    auto* panes = new QSplitter(Qt::Horizontal, this);
    viewA_ = new GraphView(panes);
    viewA_->setObjectName("compareViewA");
    viewB_ = new GraphView(panes);
    viewB_->setObjectName("compareViewB");
    for (GraphView* v : {viewA_, viewB_}) {
        v->setLegendVisible(false);
        v->setMinimapVisible(false);
    }
    panes->addWidget(viewA_);
    panes->addWidget(viewB_);

    model_ = new DifferenceModel(this);
    list_ = new QTableView(this);
    list_->setObjectName("differenceList");
    list_->setModel(model_);
    list_->setSelectionBehavior(QAbstractItemView::SelectRows);
    list_->setSelectionMode(QAbstractItemView::SingleSelection);
    list_->verticalHeader()->hide();
    list_->horizontalHeader()->setStretchLastSection(true);
    list_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    connect(list_, &QTableView::clicked, this, [this](const QModelIndex& i) { activateDifference(i.row()); });
    connect(list_, &QTableView::activated, this, [this](const QModelIndex& i) { activateDifference(i.row()); });

    auto* vertical = new QSplitter(Qt::Vertical, this);
    vertical->addWidget(panes);
    vertical->addWidget(list_);
    // The graphs get most of the height; the list's size hint would otherwise claim half of it.
    vertical->setStretchFactor(0, 4);
    vertical->setStretchFactor(1, 1);
    vertical->setSizes({800, 200});
    list_->setMinimumHeight(80);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(vertical, 1);

    connect(viewA_, &GraphView::nodeSelected, this, [this](ir::NodeId id) { onNodeSelected(true, id); });
    connect(viewB_, &GraphView::nodeSelected, this, [this](ir::NodeId id) { onNodeSelected(false, id); });
    setBusy(false);
}

CompareView::~CompareView() {
    // A running diff or layout finishes in the pool; its LatestJob drops the result with the view.
    viewA_->disconnect(this);
    viewB_->disconnect(this);
}

void CompareView::setBusy(bool busy, const QString& text) {
    busy_ = busy;
    progress_->setVisible(busy);
    cancel_->setVisible(busy);
    if (busy) progress_->setFormat(text);
    if (!text.isEmpty()) summary_->setText(text);
}

void CompareView::compareWithFile(std::shared_ptr<const ir::Model> a, const QString& titleA, const QString& pathB) {
    const std::string path = pathB.toStdString();
    auto modelA = a;
    start([modelA, path] {
        DiffJob job;
        try {
            auto b = std::make_shared<const ir::Model>(diff::importForDiff(path));
            job.cmp = std::make_shared<const diff::ModelComparison>(diff::compareModels(*modelA, *b));
            job.b = std::move(b);
        } catch (const std::exception& e) {
            job.error = QString::fromStdString(e.what());
        }
        return job;
    }, std::move(a), titleA, pathB.section('/', -1));
}

void CompareView::compareModels(std::shared_ptr<const ir::Model> a, std::shared_ptr<const ir::Model> b,
                                const QString& titleA, const QString& titleB) {
    auto modelA = a;
    start([modelA, b] {
        DiffJob job;
        try {
            job.cmp = std::make_shared<const diff::ModelComparison>(diff::compareModels(*modelA, *b));
            job.b = b;
        } catch (const std::exception& e) {
            job.error = QString::fromStdString(e.what());
        }
        return job;
    }, std::move(a), titleA, titleB);
}

void CompareView::start(std::function<DiffJob()> job, std::shared_ptr<const ir::Model> a, const QString& titleA,
                        const QString& titleB) {
    for (auto& j : layoutJobs_) j.cancel();
    a_ = std::move(a);
    b_ = nullptr;
    cmp_ = nullptr;
    titleA_ = titleA;
    titleB_ = titleB;
    model_->setComparison(nullptr);
    viewA_->setSnapshot(nullptr);
    viewB_->setSnapshot(nullptr);
    setBusy(true, tr("Comparing %1 with %2…").arg(titleA, titleB));
    diffJob_.request([job = std::move(job)](const JobControl&) { return job(); },
                     [this](DiffJob done) { onDiffFinished(std::move(done)); });
}

void CompareView::cancel() {
    // Neither the diff nor Graphviz can be interrupted: their results are dropped when they land.
    diffJob_.cancel();
    for (auto& j : layoutJobs_) j.cancel();
    setBusy(false, tr("Comparison cancelled"));
}

void CompareView::onDiffFinished(DiffJob job) {
    if (!job.error.isEmpty()) {
        setBusy(false, tr("Cannot compare: %1").arg(job.error));
        emit failed(job.error);
        return;
    }
    b_ = job.b;
    cmp_ = job.cmp;
    model_->setComparison(cmp_);
    list_->resizeColumnsToContents();
    setBusy(true, summaryText());
    pendingLayouts_ = 2;
    layoutSide(true);
    layoutSide(false);
}

void CompareView::layoutSide(bool sideA) {
    std::shared_ptr<const ir::Model> m = sideA ? a_ : b_;
    layout::DisplayOptions options;
    options.foldConstants = true;
    options.opset = m->opsetFor("") ? m->opsetFor("") : 17;
    const ir::Graph* graph = &m->graph;
    layoutJobs_[sideA ? 0 : 1].request(
        [m = std::move(m), graph, options](const JobControl&) { return layoutNow(m, graph, options); },
        [this, sideA](SnapshotPtr snap) { onSideDrawn(sideA, std::move(snap)); },
        [this, sideA](const QString& error) {
            setBusy(false, tr("Cannot draw model %1: %2").arg(sideA ? "A" : "B", error));
            emit failed(error);
        });
}

void CompareView::onSideDrawn(bool sideA, SnapshotPtr snap) {
    GraphView* view = sideA ? viewA_ : viewB_;
    view->clearNodeStyles();
    view->setSnapshot(snap);
    view->showReadableOverview();
    if (--pendingLayouts_ > 0) return;
    applyStyles();
    setBusy(false, summaryText());
    emit ready();
}

ir::NodeId CompareView::drawnNode(bool sideA, ir::NodeId id) const {
    GraphView* view = sideA ? viewA_ : viewB_;
    const ir::Graph& g = sideA ? a_->graph : b_->graph;
    if (id == ir::kNone || view->itemForNode(id)) return id;
    const ir::Node& n = g.node(id);
    if (n.opType != "Constant" || n.outputs.empty() || n.outputs[0] == ir::kNone) return ir::kNone;
    for (ir::NodeId reader : g.value(n.outputs[0]).consumers)
        if (view->itemForNode(reader)) return reader;
    return ir::kNone;
}

void CompareView::applyStyles() {
    const diff::GraphComparison& main = cmp_->graphs.front();
    const diff::DiffSummary s = main.summary();
    // A changed Constant folded into its reader marks the reader (its weight line changed).
    auto mark = [this](bool sideA, ir::NodeId id, DiffState state) {
        const ir::NodeId drawn = drawnNode(sideA, id);
        if (drawn != ir::kNone && (drawn == id || state == DiffState::Changed))
            (sideA ? viewA_ : viewB_)->setNodeStyle(drawn, styleFor(state));
    };
    for (const diff::NodeDiff& r : main.nodes) {
        if (r.status == NodeStatus::Same) continue;
        if (r.status == NodeStatus::Changed) {
            mark(true, r.a, DiffState::Changed);
            mark(false, r.b, DiffState::Changed);
        } else if (r.status == NodeStatus::OnlyInA) {
            mark(true, r.a, DiffState::Removed);
        } else {
            mark(false, r.b, DiffState::Added);
        }
    }
    viewA_->setCaption(tr("A: %1").arg(titleA_), {{diffColor(DiffState::Changed), tr("%1 changed").arg(s.changed)},
                                                  {diffColor(DiffState::Removed), tr("%1 only in A").arg(s.onlyInA)}});
    viewB_->setCaption(tr("B: %1").arg(titleB_), {{diffColor(DiffState::Changed), tr("%1 changed").arg(s.changed)},
                                                  {diffColor(DiffState::Added), tr("%1 only in B").arg(s.onlyInB)}});
}

QString CompareView::summaryText() const {
    if (!cmp_) return {};
    const diff::DiffSummary& s = cmp_->summary;
    return tr("<b>%1</b> ↔ <b>%2</b>: %3 same, %4 changed, %5 only in A, %6 only in B — %7")
        .arg(titleA_.toHtmlEscaped(), titleB_.toHtmlEscaped())
        .arg(s.same).arg(s.changed).arg(s.onlyInA).arg(s.onlyInB)
        .arg(QString::fromStdString(diff::diffInShort(*cmp_)).toHtmlEscaped());
}

void CompareView::activateDifference(int row) {
    if (!cmp_ || row < 0 || row >= model_->rowCount()) return;
    const DifferenceModel::Entry& e = model_->entry(row);
    if (e.graph != &cmp_->graphs.front()) return;  // a body's node: not drawn in the main panes
    syncing_ = true;
    if (const ir::NodeId a = drawnNode(true, e.row->a); a != ir::kNone) viewA_->selectNode(a);
    else viewA_->scene()->clearSelection();
    if (const ir::NodeId b = drawnNode(false, e.row->b); b != ir::kNone) viewB_->selectNode(b);
    else viewB_->scene()->clearSelection();
    syncing_ = false;
    const bool sideA = e.row->a != ir::kNone;
    const ir::NodeId id = sideA ? e.row->a : e.row->b;
    emit nodeChosen((sideA ? viewA_ : viewB_)->snapshot(), id, matchHtml(sideA, id));
}

void CompareView::onNodeSelected(bool sideA, ir::NodeId id) {
    if (syncing_ || !cmp_ || id == ir::kNone) return;
    const diff::GraphComparison& main = cmp_->graphs.front();
    const diff::NodeDiff* row = sideA ? main.rowForA(id) : main.rowForB(id);
    const ir::NodeId other = row ? (sideA ? row->b : row->a) : ir::kNone;
    GraphView* otherView = sideA ? viewB_ : viewA_;
    syncing_ = true;
    if (other == ir::kNone || !otherView->selectNode(drawnNode(!sideA, other))) otherView->scene()->clearSelection();
    syncing_ = false;
    emit nodeChosen((sideA ? viewA_ : viewB_)->snapshot(), id, matchHtml(sideA, id));
}

QString CompareView::matchHtml(bool sideA, ir::NodeId id) const {
    if (!cmp_) return {};
    const diff::GraphComparison& main = cmp_->graphs.front();
    const diff::NodeDiff* row = sideA ? main.rowForA(id) : main.rowForB(id);
    if (!row) return {};
    QString html;
    if (!row->matched()) {
        html = sideA ? tr("<b>only in A</b>: no counterpart in B") : tr("<b>only in B</b>: no counterpart in A");
    } else {
        const ir::Graph& otherGraph = sideA ? *main.b : *main.a;
        const ir::NodeId other = sideA ? row->b : row->a;
        html = tr("<b>%1</b> — matched to <i>%2</i> in %3 by <b>%4</b>, score %5")
                   .arg(row->status == NodeStatus::Same ? tr("same") : tr("changed"),
                        QString::fromStdString(diff::nodeLabel(otherGraph, other)).toHtmlEscaped(), sideA ? "B" : "A",
                        QString::fromStdString(std::string(diff::howName(row->how))))
                   .arg(row->score, 0, 'f', 2);
        for (const auto& c : row->changes) html += "<br>• " + QString::fromStdString(c).toHtmlEscaped();
    }
    const QColor fill = diffTint(row->status == NodeStatus::Same      ? DiffState::Unchanged
                                 : row->status == NodeStatus::Changed ? DiffState::Changed
                                 : row->status == NodeStatus::OnlyInA ? DiffState::Removed
                                                                      : DiffState::Added);
    return QString("<table width='100%' cellpadding='4' style='background:%1'><tr><td>%2</td></tr></table><br>")
        .arg(fill.isValid() ? fill.name() : QString("#eef2f7"), html);
}

}  // namespace passlens::ui
