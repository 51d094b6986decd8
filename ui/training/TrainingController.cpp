#include "training/TrainingController.h"


#include <QComboBox>
#include <QCheckBox>
#include <QDialog>
#include <QLabel>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QMenuBar>
#include <QMessageBox>

#include "MainWindow.h"
#include "autodiff/AutodiffPass.h"
#include "autodiff/Recompute.h"
#include "eval/Interpreter.h"
#include "eval/TensorOps.h"
#include "examples/Builder.h"
#include "graph/GraphView.h"
#include "passes/PassRegistry.h"
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
    for (QAction* a : window->menuBar()->actions())
        if (a->menu() && a->text() == tr("&View")) {
            a->menu()->addSeparator();
            QAction* show = a->menu()->addAction(tr("Show &Values…"), this, &TrainingController::showValuesDialog);
            show->setObjectName("showValues");
            a->menu()->addAction(tr("Hide Values"), this, &TrainingController::hideValues);
        }
    connect(window->graphView(), &GraphView::nodeSelected, this, [this](ir::NodeId id) { onNodeSelected(id); });
    connect(window, &MainWindow::layoutReady, this, [this] {
        diffStyled_.clear();  // a new drawing: the stepper has just set its diff styles
        applyRoleStyles();
    });
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

NodeStyle TrainingController::recomputeStyle() {
    // Green like the memory dock's recompute bars: a forward node copied into the backward pass.
    NodeStyle s;
    s.fill = QColor("#dcf0d8");
    s.border = QColor("#3d8a3a");
    s.dashed = true;
    s.badge = QStringLiteral("↻");
    return s;
}

NodeStyle TrainingController::gradientOfSelectionStyle() {
    NodeStyle s = backwardStyle();
    s.fill = QColor("#ffb570");
    s.border = QColor("#8a3a00");
    s.dashed = false;
    return s;
}

void TrainingController::buildTrainingGraph(const autodiff::AutodiffOptions& options, bool recompute) {
    // The training pipeline's passes, with autodiff made for the options chosen in the dialog.
    registry_ = std::make_unique<passes::PassRegistry>();
    for (const char* name : {"constant-folding", "algebraic", "cse", "dce", "recompute"})
        registry_->add(*passes::PassRegistry::global().find(name));
    const auto autodiffPass = autodiff::makeAutodiffPass(options);
    registry_->add(autodiffPass->name(), autodiffPass->description(), passes::Level::None, passes::PassRole::Training,
                   [options] { return autodiff::makeAutodiffPass(options); });
    StepperPanel* stepper = window_->stepper();
    stepper->setRegistry(registry_.get());
    stepper->setLevel("custom");
    stepper->setPassList(recompute ? QString(kTrainingPipeline) + ",recompute" : QString(kTrainingPipeline));
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
    // What the dialog does, from which snapshot, and that it replaces the stepper's run.
    auto* intro = new QLabel(tr("Adds a loss on the chosen output and the backward graph (one <i>&lt;name&gt;_grad</i> output per "
                                "parameter) to <b>the input model as opened</b>, then runs %1 in the Pass Stepper.<br>"
                                "<b>This replaces the stepper's current run</b>%2.")
                                 .arg(QString(kTrainingPipeline).replace(",", ", "),
                                      window_->stepper()->lastRun() ? tr(" (%1 passes)").arg(window_->stepper()->lastRun()->rowCount() - 1)
                                                                    : QString()),
                             &dialog);
    intro->setObjectName("trainingIntro");
    intro->setWordWrap(true);
    intro->setTextFormat(Qt::RichText);
    form->addRow(intro);
    auto* output = new QComboBox(&dialog);
    output->setObjectName("trainingOutput");
    // The output's name and shape (an export's outputs are often bare numbers like "191").
    for (ir::ValueId v : model->graph.outputs()) {
        const auto& value = model->graph.value(v);
        output->addItem(QString::fromStdString(value.name + "  " + value.type.toString()), QString::fromStdString(value.name));
    }
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
    auto* recompute = new QCheckBox(tr("Recompute activations (sqrt strategy) to lower peak memory"), &dialog);
    recompute->setObjectName("trainingRecompute");
    recompute->setToolTip(tr("Adds the recompute pass: some forward results are computed again in the backward pass "
                             "instead of being kept"));
    form->addRow(QString(), recompute);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Build"));
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted) return;
    autodiff::AutodiffOptions o;
    o.loss = loss->currentText().toStdString();
    o.output = output->currentData().toString().toStdString();
    try {
        o.wrt = autodiff::parseWrtList(wrt->text().toStdString());
    } catch (const std::exception&) {
        o.wrt = {"all"};
    }
    buildTrainingGraph(o, recompute->isChecked());
}

namespace {

QString formatValues(const ir::Tensor& t) {
    auto v = eval::toDoubles(t);
    auto one = [](double x) { return QString::number(x, 'g', 4); };
    if (v.size() == 1) return "= " + one(v[0]);
    QStringList parts;
    for (size_t i = 0; i < v.size() && i < 4; ++i) parts << one(v[i]);
    if (v.size() > 4) parts << QStringLiteral("… %1").arg(v.size());
    return "= [" + parts.join(", ") + "]";
}

using ValueRun = TrainingController::ValueRun;

/// Every value of at most 16 elements becomes a graph output of a copy, so one interpreter run
/// yields them all; each producer's first such output labels it.
ValueRun computeValues(std::shared_ptr<const ir::Model> shown, std::map<std::string, std::vector<float>> given) {
    ValueRun out;
    try {
        ir::Model m = *shown;
        ir::Graph& g = m.graph;
        std::vector<ir::ValueId> outs, probes;
        for (ir::NodeId n : g.nodeOrder())
            for (ir::ValueId v : g.node(n).outputs) {
                if (v == ir::kNone) continue;
                const auto& t = g.value(v).type;
                if (!t.isTensor() || !t.shape || !t.shape->isStatic() || !isFloatingPoint(t.elemType)) continue;
                int64_t count = 1;
                for (int64_t d : t.shape->staticDims()) count *= d;
                if (count <= 16) probes.push_back(v);
            }
        outs = probes;
        g.setOutputs(outs);
        auto inputs = eval::randomInputs(m, 7);
        auto runtime = eval::runtimeInputs(g);
        for (size_t i = 0; i < runtime.size(); ++i) {
            auto it = given.find(g.value(runtime[i]).name);
            if (it == given.end() || inputs[i]->dtype != ir::DataType::Float) continue;
            std::vector<float> v = it->second;
            if (v.size() == 1) v.assign(size_t(inputs[i]->elementCount()), v[0]);
            if (int64_t(v.size()) == inputs[i]->elementCount()) inputs[i] = ir::floatTensor(inputs[i]->dims, v);
        }
        auto results = eval::run(m, inputs);
        for (size_t k = 0; k < probes.size(); ++k) {
            const ir::NodeId p = g.value(probes[k]).producer;
            if (!out.labels.count(p)) out.labels[p] = formatValues(*results[k]);
        }
    } catch (const std::exception& e) {
        out.error = QString::fromUtf8(e.what());
    }
    return out;
}

}  // namespace

void TrainingController::showValues(const std::map<std::string, std::vector<float>>& inputs) {
    auto shown = window_->shownModel();
    if (!shown) return;
    valuesJob_.request([shown, inputs](const JobControl&) { return computeValues(shown, inputs); },
                       [this, shown](ValueRun r) {
                           if (!r.error.isEmpty()) return emit valuesFailed(r.error);
                           if (window_->shownModel() != shown) return;  // the user moved on
                           values_ = std::move(r.labels);
                           valuesOf_ = &shown->graph;
                           applyRoleStyles();
                           emit valuesShown(int(values_.size()));
                       });
}

void TrainingController::showValuesDialog() {
    auto shown = window_->shownModel();
    if (!shown) return;
    QDialog dialog(window_);
    dialog.setWindowTitle(tr("Show Values"));
    auto* form = new QFormLayout(&dialog);
    std::vector<std::pair<std::string, QLineEdit*>> edits;
    for (ir::ValueId v : eval::runtimeInputs(shown->graph)) {
        const std::string name = shown->graph.value(v).name;
        // The lecture's point: x1 = 2, x2 = 5.
        auto* e = new QLineEdit(name == "x1" ? "2" : name == "x2" ? "5" : "", &dialog);
        e->setPlaceholderText(tr("numbers, comma-separated (empty: random)"));
        form->addRow(QString::fromStdString(name + "  " + shown->graph.value(v).type.toString()), e);
        edits.push_back({name, e});
    }
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Run"));
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted) return;
    std::map<std::string, std::vector<float>> inputs;
    for (const auto& [name, e] : edits) {
        std::vector<float> v;
        for (const QString& part : e->text().split(',', Qt::SkipEmptyParts)) {
            bool ok = false;
            const float x = part.trimmed().toFloat(&ok);
            if (ok) v.push_back(x);
        }
        if (!v.empty()) inputs[name] = v;
    }
    showValues(inputs);
}

void TrainingController::hideValues() {
    values_.clear();
    valuesOf_ = nullptr;
    GraphView* view = window_->graphView();
    if (view->snapshot())
        for (ir::NodeId id : view->snapshot()->graph->nodeOrder())
            if (const NodeStyle* s = view->nodeStyle(id); s && s->badge.startsWith("="))
                view->clearNodeStyle(id);
    applyRoleStyles();
}

QString TrainingController::valueLabel(uint32_t node) const {
    auto it = values_.find(node);
    return it == values_.end() ? QString() : it->second;
}

NodeStyle TrainingController::withValue(NodeStyle s, uint32_t node) const {
    const QString v = valueLabel(node);
    if (!v.isEmpty()) s.badge = s.badge.isEmpty() ? v : s.badge + " " + v;
    return s;
}

void TrainingController::applyRoleStyles() {
    styledRoleNodes_ = 0;
    highlightedNodes_ = highlightedEdges_ = 0;
    GraphView* view = window_->graphView();
    auto shown = window_->shownModel();
    if (!view->snapshot() || !shown) return;
    const ir::Graph& g = *view->snapshot()->graph;
    view->clearEdgeStyles();
    if (valuesOf_ && valuesOf_ != &shown->graph) {  // labels of another snapshot
        values_.clear();
        valuesOf_ = nullptr;
    }
    auto ours = [](const NodeStyle* s) {
        return !s || s->badge.startsWith(backwardStyle().badge) || s->badge.startsWith(lossStyle().badge) ||
               s->badge.startsWith(recomputeStyle().badge) || s->badge.startsWith("=");
    };
    for (ir::NodeId id : g.nodeOrder()) {
        const auto role = autodiff::provenanceOf(g.node(id)).role;
        // The stepper's diff colours (added/changed) win on the step that made the node; a value
        // label joins them as the badge.
        const NodeStyle* current = view->nodeStyle(id);
        if (current && (!ours(current) || diffStyled_.count(id))) {
            diffStyled_.insert(id);
            // Another view's badge (the stepper's "new", the dominator path's "ipdom") stays
            // unless a value label replaces it.
            if (const QString v = valueLabel(id); !v.isEmpty()) {
                NodeStyle kept = *current;
                kept.badge = v;
                view->setNodeStyle(id, kept);
            }
            continue;
        }
        if (role == autodiff::Role::Forward) {
            if (!valueLabel(id).isEmpty()) view->setNodeStyle(id, withValue({}, id));
            continue;
        }
        view->setNodeStyle(id, withValue(role == autodiff::Role::Loss        ? lossStyle()
                                         : role == autodiff::Role::Recompute ? recomputeStyle()
                                                                             : backwardStyle(),
                                         id));
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
        if (diffStyled_.count(n)) continue;  // the diff colour of this step stays
        view->setNodeStyle(n, withValue(gradientOfSelectionStyle(), n));
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
