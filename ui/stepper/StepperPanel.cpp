#include "stepper/StepperPanel.h"

#include "passes/onnxruntime/OrtPasses.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QProgressBar>
#include <QPushButton>
#include <QShortcut>
#include <QStatusBar>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "eval/Interpreter.h"
#include "ir/Error.h"
#include "onnx/VersionConvert.h"
#include "passes/PassRegistry.h"
#include "pipeline/PipelineText.h"
#include "stepper/PassTableModel.h"

namespace passlens::ui {

/// "; outputs differ first after 'x' (...)" and the like, for the status line.
static QString verificationSummary(const PipelineRun& run) {
    if (!run.verified()) return {};
    using S = eval::OutputCheck::Status;
    if (int row = run.firstDifferingRow(); row > 0) {
        const auto& c = run.verification[size_t(row)].vsPrevious;
        return StepperPanel::tr("; outputs differ first after '%1' (output '%2', max abs %3)")
            .arg(QString::fromStdString(run.stepAt(row)->result.name), QString::fromStdString(c.output))
            .arg(c.maxAbs, 0, 'g', 3);
    }
    if (run.verification[0].vsPrevious.status == S::NotRun) {
        QString hint;
        if (!run.pinnedToOne.empty())
            hint = StepperPanel::tr(" (symbolic dims ran as 1; set their sizes in the dims field)");
        return StepperPanel::tr("; outputs not verified: %1%2").arg(outputsText(run.verification[0].vsPrevious), hint);
    }
    int notRun = 0;
    for (const auto& c : run.verification) notRun += c.vsPrevious.status == S::NotRun;
    if (notRun > 0) return StepperPanel::tr("; outputs match where verified (%1 passes not run)").arg(notRun);
    return StepperPanel::tr("; outputs match after every pass");
}

StepperPanel::StepperPanel(QWidget* parent) : QWidget(parent) {
    setObjectName("stepperPanel");
    auto* root = new QVBoxLayout(this);
    root->setContentsMargins(6, 6, 6, 6);

    auto* top = new QHBoxLayout;
    level_ = new QComboBox(this);
    for (const char* l : {"none", "basic", "extended", "all"}) level_->addItem(l, QString(l));
    // ONNX Runtime's graph transformers as its Level1 / Level2 run them (core/passes/onnxruntime).
    level_->addItem(tr("onnxruntime basic"), QString("ort-basic"));
    level_->addItem(tr("onnxruntime extended"), QString("ort-extended"));
    level_->addItem(tr("custom list"), QString("custom"));
    // extended: the most a run can do while its result stays standard ONNX (`all` adds NHWC and
    // passlens.* ops that other tools do not run).
    level_->setCurrentIndex(level_->findData(QString("extended")));
    level_->setToolTip(tr("Optimization level (each includes the ones before it), or an explicit pass list"));
    passList_ = new QLineEdit(this);
    passList_->setPlaceholderText(tr("passes, e.g. constant-folding,dce"));
    QStringList names;
    for (const auto& n : passes::PassRegistry::global().names()) names << QString::fromStdString(n);
    passList_->setToolTip(tr("Comma-separated pass names; layout:NHWC converts to channels-last. Available: %1")
                              .arg(names.join(", ")));
    passList_->setEnabled(false);
    verify_ = new QCheckBox(tr("Verify outputs"), this);
    verify_->setObjectName("verifyOutputs");
    verify_->setToolTip(tr("Run the reference interpreter on seeded random inputs before the first pass and after "
                           "each pass, and mark the first pass whose outputs differ (slower)"));
    groupFunctions_ = new QCheckBox(tr("+ functions"), this);
    groupFunctions_->setObjectName("groupFunctions");
    groupFunctions_->setToolTip(tr("Add a last step, group-functions: each TVM-style fusion group of two or more nodes "
                                   "becomes one call of a model-local function (the model's kernels)"));
    targetOpset_ = new QComboBox(this);
    targetOpset_->setObjectName("targetOpset");
    // Compact: it shares the navigation row, and the dock's width is taken from the graph.
    targetOpset_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    targetOpset_->setMinimumContentsLength(7);
    targetOpset_->setToolTip(tr("Upgrade the model's ai.onnx opset first, with the ONNX version converter, as the "
                                "first step (version-convert): newer fusions such as LayerNormalization need opset 17"));
    verifyDims_ = new QLineEdit(this);
    verifyDims_->setObjectName("verifyDims");
    verifyDims_->setPlaceholderText(tr("dims N=1,H=64"));
    verifyDims_->setMaximumWidth(220);
    verifyDims_->setVisible(false);  // only for models with symbolic input dims
    runButton_ = new QPushButton(tr("Run"), this);
    runButton_->setObjectName("runPipeline");
    cancelButton_ = new QPushButton(tr("Cancel"), this);
    cancelButton_->setVisible(false);
    top->addWidget(new QLabel(tr("Level:"), this));
    top->addWidget(level_);
    top->addWidget(passList_, 1);
    top->addWidget(verify_);
    top->addWidget(verifyDims_);
    top->addWidget(runButton_);
    top->addWidget(cancelButton_);
    root->addLayout(top);

    auto* nav = new QHBoxLayout;
    back_ = new QToolButton(this);
    back_->setText(tr("◀ Back"));
    back_->setToolTip(tr("Previous snapshot (Alt+Left, Shift+F10)"));
    forward_ = new QToolButton(this);
    forward_->setText(tr("Step ▶"));
    forward_->setToolTip(tr("Next pass (Alt+Right, F10)"));
    progress_ = new QProgressBar(this);
    progress_->setVisible(false);
    progress_->setMaximumWidth(140);
    progress_->setFormat(tr("%v of %m passes"));
    status_ = new QLabel(this);
    nav->addWidget(back_);
    nav->addWidget(forward_);
    nav->addWidget(progress_);
    nav->addStretch(1);
    nav->addWidget(targetOpset_);     // on the second row: the first is as wide as the dock allows
    nav->addWidget(groupFunctions_);
    root->addLayout(nav);
    // The status wraps on a line of its own, so a long message never widens the dock.
    status_->setWordWrap(true);
    root->addWidget(status_);

    table_ = new PassTableModel(this);
    view_ = new QTableView(this);
    view_->setModel(table_);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::SingleSelection);
    view_->verticalHeader()->setVisible(false);
    view_->verticalHeader()->setDefaultSectionSize(22);
    view_->horizontalHeader()->setSectionResizeMode(PassTableModel::Pass, QHeaderView::Stretch);
    for (int c = PassTableModel::Nodes; c < PassTableModel::ColumnCount; ++c)
        view_->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    view_->setAlternatingRowColors(true);
    view_->setColumnHidden(PassTableModel::Outputs, true);  // shown for verified runs
    root->addWidget(view_, 1);

    connect(level_, &QComboBox::currentIndexChanged, this, [this] {
        passList_->setEnabled(level_->currentData().toString() == "custom");
    });
    connect(runButton_, &QPushButton::clicked, this, &StepperPanel::run);
    connect(passList_, &QLineEdit::returnPressed, this, &StepperPanel::run);
    connect(cancelButton_, &QPushButton::clicked, this, &StepperPanel::cancel);
    connect(back_, &QToolButton::clicked, this, &StepperPanel::stepBack);
    connect(forward_, &QToolButton::clicked, this, &StepperPanel::stepForward);
    connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& i) { if (i.isValid()) setCurrentRow(i.row()); });
    connect(&runJob_, &LatestJobSignals::progressValueChanged, progress_, &QProgressBar::setValue);
    connect(&runJob_, &LatestJobSignals::progressRangeChanged, progress_, &QProgressBar::setRange);
    updateButtons();
}

// runJob_ stops the running pipeline and waits for it.
StepperPanel::~StepperPanel() = default;

void StepperPanel::setModel(std::shared_ptr<const ir::Model> model) {
    cancel();
    model_ = std::move(model);
    run_.reset();
    current_ = -1;
    table_->resetData(nullptr);
    status_->setText(model_ ? tr("Choose a level and press Run.") : QString());
    // Symbolic input dims: verification runs them as 1 unless pinned here.
    QStringList symbolic;
    if (model_)
        for (const auto& d : eval::unpinnedDims(*model_, {})) symbolic << QString::fromStdString(d);
    // One dims field for the window (MainWindow's, which pins the model itself); this one only
    // carries its text into a verifying run.
    verifyDims_->setVisible(false);
    // Opset targets: the model's own (keep), then every newer one this build's ONNX can convert to.
    targetOpset_->clear();
    const int64_t current = model_ ? model_->opsetFor("") : 0;
    targetOpset_->addItem(current > 0 ? tr("opset %1").arg(current) : tr("opset"), 0);
    if (current > 0)
        for (int64_t v = current + 1; v <= onnxio::maxSupportedOpset(); ++v)
            targetOpset_->addItem(tr("→ %1").arg(v), int(v));
    targetOpset_->setEnabled(targetOpset_->count() > 1);
    verifyDims_->setToolTip(tr("Sizes for the symbolic input dims when verifying (NAME=VALUE, comma-separated); "
                               "unpinned ones run as 1. This model's: %1")
                                .arg(symbolic.join(", ")));
    updateButtons();
}

void StepperPanel::setLevel(const QString& level) {
    int i = level_->findData(level);
    if (i >= 0) level_->setCurrentIndex(i);
}

void StepperPanel::setPassList(const QString& list) {
    passList_->setText(list);
    setLevel("custom");
}

void StepperPanel::setVerifyOutputs(bool on) { verify_->setChecked(on); }
void StepperPanel::setVerifyDims(const QString& pins) { verifyDims_->setText(pins); }

std::vector<std::pair<std::string, int64_t>> parseDimPins(const QString& text) {
    std::vector<std::pair<std::string, int64_t>> out;
    for (const QString& item : text.split(',', Qt::SkipEmptyParts)) {
        const QStringList kv = item.trimmed().split('=');
        bool ok = kv.size() == 2 && !kv[0].trimmed().isEmpty();
        const qlonglong v = ok ? kv[1].trimmed().toLongLong(&ok) : 0;
        if (!ok || v <= 0)
            throw Error(ErrorKind::BadInput, "dims: expected NAME=POSITIVE_INT, got '" + item.trimmed().toStdString() + "'");
        out.emplace_back(kv[0].trimmed().toStdString(), int64_t(v));
    }
    return out;
}
bool StepperPanel::verifyOutputs() const { return verify_->isChecked(); }
void StepperPanel::setRegistry(const passes::PassRegistry* registry) {
    registry_ = registry ? registry : &passes::PassRegistry::global();
}
QString StepperPanel::statusText() const { return status_->text(); }

std::vector<std::string> StepperPanel::requestedPasses() const {
    const QString level = level_->currentData().toString();
    std::vector<std::string> out;
    if (level == "ort-basic" || level == "ort-extended") {
        out = passes::ort::profilePipeline(level == "ort-basic" ? passes::Level::Basic : passes::Level::Extended);
    } else if (level != "custom") {
        out = registry_->pipeline(passes::parseLevel(level.toStdString()));
    } else {
        for (const QString& p : passList_->text().split(',', Qt::SkipEmptyParts))
            if (!p.trimmed().isEmpty()) out.push_back(p.trimmed().toStdString());
    }
    if (groupFunctions_->isChecked() && std::find(out.begin(), out.end(), "group-functions") == out.end())
        out.push_back("group-functions");
    if (const int opset = targetOpset_->currentData().toInt(); opset > 0)
        out.insert(out.begin(), "version-convert:" + std::to_string(opset));
    return out;
}

void StepperPanel::setGroupFunctions(bool on) { groupFunctions_->setChecked(on); }

void StepperPanel::setTargetOpset(int opset) {
    const int i = targetOpset_->findData(opset);
    targetOpset_->setCurrentIndex(i >= 0 ? i : 0);
}

void StepperPanel::run() {
    if (!model_) return;
    std::vector<std::string> names;
    std::vector<std::pair<std::string, int64_t>> dims;
    try {
        if (verify_->isChecked()) dims = parseDimPins(verifyDims_->text());
        names = requestedPasses();
        for (const auto& n : names)  // unknown names and bad options fail here, before a thread starts
            passes::parsePipeline(n, *registry_);
    } catch (const std::exception& e) {
        status_->setText(QString::fromStdString(e.what()));
        emit runFailed(QString::fromStdString(e.what()));
        return;
    }
    runModel_ = model_;
    progress_->setRange(0, int(names.size()));
    progress_->setValue(0);
    status_->setText(verify_->isChecked() ? tr("Running and verifying %1 passes…").arg(names.size())
                                          : tr("Running %1 passes…").arg(names.size()));
    // A run still going is superseded (its cancel flag is set, its result dropped). The passes
    // read the job's flag (PassOptions::cancel), so Cancel stops them between steps.
    const passes::PassRegistry& registry = *registry_;
    runJob_.request(
        [model = model_, names = std::move(names), verify = verify_->isChecked(), dims = std::move(dims),
         &registry](const JobControl& control) {
            control.setProgressRange(0, int(names.size()));
            return runPipeline(
                *model, names, control.cancelFlag(), [&control](int done, int) { control.setProgressValue(done); },
                verify, dims, registry);
        },
        [this](PipelineRun done) { onFinished(std::move(done)); });
    updateButtons();
}

void StepperPanel::cancel() {
    if (!isRunning()) return;
    runJob_.stop();  // the run ends early and reports itself cancelled
    status_->setText(tr("Cancelling…"));
}

bool StepperPanel::isRunning() const { return runJob_.isBusy(); }

void StepperPanel::onFinished(PipelineRun finished) {
    auto run = std::make_shared<const PipelineRun>(std::move(finished));
    updateButtons();
    if (runModel_ != model_) return;  // started on a model that is no longer loaded
    if (run->cancelled) {
        status_->setText(tr("Run cancelled."));
        emit runFinished();
        return;
    }
    if (!run->error.isEmpty()) {
        status_->setText(tr("Run failed: %1").arg(run->error));
        emit runFailed(run->error);
        emit runFinished();
        return;
    }
    run_ = std::move(run);
    current_ = -1;
    table_->resetData(run_);
    view_->setColumnHidden(PassTableModel::Outputs, !run_->verified());
    double ms = 0;
    for (const auto& s : run_->result->steps) ms += s.result.ms;
    status_->setText(tr("%1 passes, %2 → %3 nodes, %4 ms")
                         .arg(run_->result->steps.size())
                         .arg(passes::countNodesDeep(run_->result->initial->graph))
                         .arg(run_->result->steps.empty() ? passes::countNodesDeep(run_->result->initial->graph)
                                                          : run_->result->steps.back().result.nodesAfter)
                         .arg(ms, 0, 'f', 1) +
                     verificationSummary(*run_));
    emit runFinished();
    setCurrentRow(0);
    // The first pass that broke the outputs is named in the window's status bar too.
    if (const int bad = run_->firstDifferingRow(); bad > 0)
        if (auto* mw = qobject_cast<QMainWindow*>(window()))
            mw->statusBar()->showMessage(tr("Verify outputs: '%1' changed the model's outputs (max abs %2)")
                                             .arg(QString::fromStdString(run_->stepAt(bad)->result.name))
                                             .arg(run_->verification[size_t(bad)].vsPrevious.maxAbs, 0, 'g', 3),
                                         20000);
}

void StepperPanel::setCurrentRow(int row) {
    if (!run_) return;
    row = std::clamp(row, 0, run_->rowCount() - 1);
    if (row == current_) return;
    current_ = row;
    {
        const QSignalBlocker block(view_->selectionModel());
        view_->selectRow(row);
        view_->selectionModel()->setCurrentIndex(table_->index(row, 0), QItemSelectionModel::NoUpdate);
    }
    view_->scrollTo(table_->index(row, 0));
    updateButtons();
    emit stepChosen(row);
}

void StepperPanel::updateButtons() {
    const bool running = isRunning();
    runButton_->setEnabled(model_ != nullptr && !running);
    cancelButton_->setVisible(running);
    progress_->setVisible(running);
    back_->setEnabled(run_ && current_ > 0);
    forward_->setEnabled(run_ && current_ + 1 < run_->rowCount());
}

}  // namespace passlens::ui
