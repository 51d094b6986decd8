#include "training/TrainingController.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QMenuBar>

#include "MainWindow.h"
#include "autodiff/AutodiffPass.h"
#include "graph/GraphView.h"
#include "stepper/StepperPanel.h"

namespace passlens::ui {

namespace {
/// The basic passes after autodiff: the stepper shows how much of the backward graph folds away.
const char* kTrainingPipeline = "autodiff,constant-folding,algebraic,cse,dce";
}

TrainingController::TrainingController(MainWindow* window) : QObject(window), window_(window) {
    setObjectName("trainingController");
    for (QAction* a : window->menuBar()->actions())
        if (a->menu() && a->text() == tr("&Passes")) {
            a->menu()->addSeparator();
            QAction* build = a->menu()->addAction(tr("Build &Training Graph…"), this, &TrainingController::showDialog);
            build->setObjectName("buildTrainingGraph");
        }
    connect(window->graphView(), &GraphView::nodeSelected, this, [this](ir::NodeId id) { onNodeSelected(id); });
    connect(window, &MainWindow::layoutReady, this, &TrainingController::applyRoleStyles);
}

NodeStyle TrainingController::backwardStyle() {
    NodeStyle s;
    s.fill = QColor("#fde8d4");
    s.border = QColor("#c2631c");
    s.dashed = true;
    s.badge = QStringLiteral("∇");
    return s;
}

NodeStyle TrainingController::lossStyle() {
    NodeStyle s;
    s.fill = QColor("#eadff7");
    s.border = QColor("#6b3fa0");
    s.badge = QStringLiteral("loss");
    return s;
}

NodeStyle TrainingController::gradientOfSelectionStyle() {
    NodeStyle s = backwardStyle();
    s.fill = QColor("#ffb570");
    s.border = QColor("#8a3a00");
    s.dashed = false;
    return s;
}

void TrainingController::buildTrainingGraph(const autodiff::AutodiffOptions& options) {
    registry_ = std::make_unique<passes::PassRegistry>();
    passes::registerBasicPasses(*registry_);
    registry_->add("autodiff", "Adds a loss and the backward graph", passes::Level::None, 50,
                   [options] { return autodiff::makeAutodiffPass(options); });
    StepperPanel* stepper = window_->stepper();
    stepper->setRegistry(registry_.get());
    stepper->setLevel("custom");
    stepper->setPassList(kTrainingPipeline);
    stepper->run();
}

void TrainingController::showDialog() {
    auto model = window_->model();
    if (!model) return;
    QDialog dialog(window_);
    dialog.setWindowTitle(tr("Build Training Graph"));
    auto* form = new QFormLayout(&dialog);
    auto* loss = new QComboBox(&dialog);
    loss->addItems({"mse", "cross-entropy", "none"});
    auto* output = new QComboBox(&dialog);
    for (ir::ValueId v : model->graph.outputs()) output->addItem(QString::fromStdString(model->graph.value(v).name));
    // A single one-element output is most likely a loss already (the lecture's f).
    if (model->graph.outputs().size() == 1) {
        const auto& t = model->graph.value(model->graph.outputs()[0]).type;
        if (t.shape && t.shape->isStatic() && t.shape->rank() <= 1 && (t.shape->rank() == 0 || *t.shape->dims[0].value == 1))
            loss->setCurrentText("none");
    }
    auto* wrt = new QLineEdit("all", &dialog);
    wrt->setToolTip(tr("'all' = every float initializer, or a comma-separated list of tensor names (graph inputs too)"));
    if (model->graph.initializerOrder().empty()) {
        QStringList inputs;
        for (ir::ValueId v : model->graph.inputs()) inputs << QString::fromStdString(model->graph.value(v).name);
        wrt->setText(inputs.join(","));
    }
    form->addRow(tr("Loss"), loss);
    form->addRow(tr("Output"), output);
    form->addRow(tr("Parameters"), wrt);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Build"));
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted) return;
    autodiff::AutodiffOptions o;
    o.loss = loss->currentText().toStdString();
    o.output = output->currentText().toStdString();
    try {
        o.wrt = autodiff::parseWrtList(wrt->text().toStdString());
    } catch (const std::exception&) {
        o.wrt = {"all"};
    }
    buildTrainingGraph(o);
}

void TrainingController::applyRoleStyles() {
    styledRoleNodes_ = 0;
    highlightedNodes_ = highlightedEdges_ = 0;
    GraphView* view = window_->graphView();
    auto shown = window_->shownModel();
    if (!view->snapshot() || !shown) return;
    const ir::Graph& g = *view->snapshot()->graph;
    view->clearEdgeStyles();
    for (ir::NodeId id : g.nodeOrder()) {
        const auto role = autodiff::provenanceOf(g.node(id)).role;
        if (role == autodiff::Role::Forward) continue;
        // The stepper's diff colours (added/changed) win on the step that made the node.
        const NodeStyle* current = view->nodeStyle(id);
        if (current && current->badge != backwardStyle().badge && current->badge != lossStyle().badge &&
            current->badge != gradientOfSelectionStyle().badge)
            continue;
        view->setNodeStyle(id, role == autodiff::Role::Loss ? lossStyle() : backwardStyle());
        ++styledRoleNodes_;
    }
}

void TrainingController::onNodeSelected(uint32_t id) {
    GraphView* view = window_->graphView();
    if (!view->snapshot()) return;
    const ir::Graph& g = *view->snapshot()->graph;
    applyRoleStyles();
    if (id == ir::kNone || !g.hasNode(id) || autodiff::provenanceOf(g.node(id)).role != autodiff::Role::Forward) return;
    const std::string forwardName = g.node(id).displayName();
    EdgeStyle saved;
    saved.color = QColor("#d9480f");
    saved.width = 3.2;
    saved.dashed = true;
    for (ir::NodeId n : g.nodeOrder()) {
        const ir::Node& node = g.node(n);
        const auto p = autodiff::provenanceOf(node);
        if (p.role != autodiff::Role::Backward || p.forwardNode != forwardName) continue;
        view->setNodeStyle(n, gradientOfSelectionStyle());
        ++highlightedNodes_;
        // "saved for backward": the edge from the forward producer of each saved tensor.
        for (const auto& name : p.saved) {
            auto v = g.findValue(name);
            if (!v || g.value(*v).producer == ir::kNone) continue;
            highlightedEdges_ += view->setEdgeStyle(g.value(*v).producer, n, saved) > 0;
        }
    }
}

}  // namespace passlens::ui
