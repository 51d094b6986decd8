// The pass stepper on the offscreen platform: diff states as plain data (GUI-less), the stepper,
// change-log and remarks models under QAbstractItemModelTester, stepping through every pass of
// the `all` pipeline on PP-OCRv4 rec with one box per node of each snapshot, diff colors that mark
// exactly the nodes the change log names, remark/memory clicks that select graph nodes,
// provenance, the non-standard-domain notice, exports, and 1920×1080 screenshots.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QHeaderView>
#include <QLabel>
#include <QSemaphore>
#include <QSettings>
#include <QThreadPool>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "ScreenshotContent.h"
#include <algorithm>

#include "MainWindow.h"
#include "eval/Verify.h"
#include "ir/Error.h"
#include "PropertiesPanel.h"
#include "examples/Builder.h"
#include "examples/Examples.h"
#include "graph/GraphItems.h"
#include "graph/GraphView.h"
#include "ir/Graph.h"
#include "memory/MemoryChartWidget.h"
#include "memory/MemoryView.h"
#include "onnx/Import.h"
#include "passes/PassRegistry.h"
#include "stepper/ChangeLogModel.h"
#include "stepper/DiffStyle.h"
#include "stepper/GhostPlacement.h"
#include "stepper/LogPanels.h"
#include "stepper/PassTableModel.h"
#include "stepper/PipelineJob.h"
#include "stepper/RemarksModel.h"
#include "stepper/StepperPanel.h"

using namespace passlens;
using passlens::ui::MainWindow;

namespace {

QString realModel(const QString& name) { return QString(PASSLENS_MODELS_DIR) + "/" + name; }

std::shared_ptr<const ir::Model> example(const char* id) {
    return std::make_shared<const ir::Model>(examples::find(id)->build());
}

std::vector<std::string> allPasses() { return passes::PassRegistry::global().pipeline(passes::Level::All); }

bool waitFor(QSignalSpy& spy, int ms = 60000) { return spy.count() > 0 || spy.wait(ms); }

/// Runs `level` in the window's stepper and waits for the run to land.
bool runLevel(MainWindow& w, const QString& level) {
    QSignalSpy done(w.stepper(), &ui::StepperPanel::runFinished);
    w.stepper()->setLevel(level);
    w.stepper()->run();
    return waitFor(done) && w.stepper()->lastRun() && w.stepper()->lastRun()->result;
}

/// Shows stepper row `row` and waits until it is drawn.
bool showRow(MainWindow& w, int row) {
    QSignalSpy shown(&w, &MainWindow::stepShown);
    w.stepper()->setCurrentRow(row);
    if (w.shownStep() == row && !w.layoutRunning()) return true;  // already drawn
    while (waitFor(shown))
        if (shown.last().at(0).toInt() == row && !w.layoutRunning()) return true;
        else shown.clear();
    return false;
}

/// Constant nodes and Identities of a weight, which the view folds into their readers (as lines
/// of the reader's box) or, unread, does not draw.
int foldedConstantNodes(const ir::Graph& g) {
    int n = 0;
    for (ir::NodeId id : g.nodeOrder()) {
        const auto& node = g.node(id);
        const bool constant = node.opType == "Constant" && node.inputs.empty();
        const bool weightAlias = node.opType == "Identity" && node.inputs.size() == 1 && node.inputs[0] != ir::kNone &&
                                 g.value(node.inputs[0]).initializer && !g.value(node.inputs[0]).isGraphOutput;
        // Read ones are drawn inside their readers, unread ones not at all.
        n += (constant || weightAlias) && node.domain.empty() && node.outputs.size() == 1 &&
             !g.value(node.outputs[0]).isGraphOutput;
    }
    return n;
}

/// A deliberately wrong pass for the verification tests: adds 0.5 to every element of the first
/// float initializer that something reads (a Conv weight in conv_bn_relu).
class BreakConstantPass : public passes::Pass {
public:
    std::string name() const override { return "test-break-constant"; }
    std::string description() const override { return "test only: changes a constant"; }

protected:
    void runImpl(passes::PassContext& ctx) const override {
        passes::Rewriter& rw = ctx.rewriter();
        const ir::Graph& g = rw.graph();
        for (ir::ValueId v : g.initializerOrder()) {
            const auto& t = g.value(v).initializer;
            if (!t || t->dtype != ir::DataType::Float || g.value(v).consumers.empty()) continue;
            std::vector<float> values(t->as<float>(), t->as<float>() + t->elementCount());
            for (float& x : values) x += 0.5f;
            // Every reader reads the shifted copy (through the Rewriter, like any pass).
            const ir::ValueId broken = rw.newInitializer(g.value(v).name + "_broken",
                                                         ir::makeTensorOf(ir::DataType::Float, t->dims, values, t->name));
            const std::vector<ir::NodeId> readers = g.value(v).consumers;
            for (ir::NodeId r : readers) {
                const auto inputs = g.node(r).inputs;
                for (size_t slot = 0; slot < inputs.size(); ++slot)
                    if (inputs[slot] == v) rw.setInput(r, slot, broken, "test: reads a shifted constant");
            }
            return;
        }
    }
};

/// The project's passes plus test-break-constant (only by name, in no level).
const passes::PassRegistry& registryWithBrokenPass() {
    static const passes::PassRegistry reg = [] {
        passes::PassRegistry r = passes::PassRegistry::global();
        r.add("test-break-constant", "test only: changes a constant", passes::Level::None, passes::PassRole::Simplify,
              [] { return std::make_unique<BreakConstantPass>(); });
        return r;
    }();
    return reg;
}

/// `all` with the broken pass after fuse-conv-bn (so the passes around it have work to do).
std::vector<std::string> allWithBrokenPass() {
    std::vector<std::string> names = allPasses();
    auto at = std::find(names.begin(), names.end(), "fuse-conv-bn");
    names.insert(at == names.end() ? names.end() : at + 1, "test-break-constant");
    return names;
}

QString outputsCell(const ui::PassTableModel& t, int row) { return t.data(t.index(row, ui::PassTableModel::Outputs)).toString(); }

bool openAndWait(MainWindow& w, const std::function<void()>& open) {
    QSignalSpy ready(&w, &MainWindow::layoutReady);
    open();
    return waitFor(ready);
}

}  // namespace

class StepperTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QDir().mkpath(PASSLENS_SCREENSHOT_DIR);
    }

    void groupIntoFunctionsIsALastStepWithItsChanges() {
        MainWindow w;
        w.show();
        w.setModel(example("conv_bn_relu"), "conv_bn_relu");
        w.stepper()->setGroupFunctions(true);
        QVERIFY(runLevel(w, "extended"));
        auto run = w.stepper()->lastRun();
        const auto& steps = run->result->steps;
        QVERIFY(!steps.empty());
        QCOMPARE(QString::fromStdString(steps.back().result.name), QString("group-functions"));
        const auto extended = passes::PassRegistry::global().pipeline(passes::Level::Extended);
        QCOMPARE(steps.size(), extended.size() + 1);
        // Its row is drawn like any step, and the change log names the function it added.
        const int row = static_cast<int>(steps.size());
        QVERIFY(showRow(w, row));
        bool functionLogged = false;
        auto* log = w.changeLog()->model();
        for (int r = 0; r < log->rowCount(); ++r)
            for (int c = 0; c < log->columnCount(); ++c)
                functionLogged = functionLogged || log->data(log->index(r, c)).toString().contains("function");
        QVERIFY2(functionLogged, "the group-functions step's change log names no function");
        // Unticked: the pipeline is the level's own.
        w.stepper()->setGroupFunctions(false);
        QVERIFY(runLevel(w, "extended"));
        QCOMPARE(w.stepper()->lastRun()->result->steps.size(), extended.size());
    }

    void versionConvertIsAFirstStepWithItsModelLevelDiff() {
        // An opset-9 model: the opset box offers 10..max; choosing 14 prepends version-convert.
        ir::GraphBuilder b("clip9", 9);
        auto x = b.input("x", ir::DataType::Float, {2, 3});
        auto c = b.op("Clip", {x}, {ir::Attribute::makeFloat("min", 0.f), ir::Attribute::makeFloat("max", 6.f)}, "clip");
        b.output(b.op("Relu", {c}, {}, "relu"));
        MainWindow w;
        w.show();
        w.setModel(std::make_shared<const ir::Model>(b.finish()), "clip9");
        auto* opsets = w.stepper()->findChild<QComboBox*>("targetOpset");
        QVERIFY(opsets);
        QVERIFY(opsets->isEnabled());
        QCOMPARE(opsets->itemData(0).toInt(), 0);                  // keep
        QCOMPARE(opsets->itemData(1).toInt(), 10);                 // then every newer opset
        w.stepper()->setTargetOpset(14);
        QCOMPARE(w.stepper()->requestedPasses().front(), std::string("version-convert:14"));
        QVERIFY(runLevel(w, "basic"));
        const auto& steps = w.stepper()->lastRun()->result->steps;
        QVERIFY(!steps.empty());
        QCOMPARE(QString::fromStdString(steps.front().result.name), QString("version-convert"));
        QCOMPARE(steps.size(), passes::PassRegistry::global().pipeline(passes::Level::Basic).size() + 1);
        // Its row shows the replaced Clip in the node diff and the opset change beside it.
        QVERIFY(showRow(w, 1));
        QCOMPARE(w.shownModelDiff(), QString("ai.onnx opset 9 → 14"));
        QCOMPARE(w.shownDiff().removed.size(), size_t(1));
        QVERIFY(w.statusBar()->currentMessage().contains("ai.onnx opset 9 → 14"));
        // The next step changes no opset, so its caption has no model-level line.
        QVERIFY(showRow(w, 2));
        QVERIFY(w.shownModelDiff().isEmpty());
        // Back to "keep": the pipeline is the level's own.
        w.stepper()->setTargetOpset(0);
        QCOMPARE(w.stepper()->requestedPasses(), passes::PassRegistry::global().pipeline(passes::Level::Basic));
        // A real opset-9 model: the step's diff is the converter's work, the rest keeps its ids.
        w.resize(1600, 1000);
        QVERIFY(w.openFile(realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx")));
        w.stepper()->setTargetOpset(17);
        QVERIFY(runLevel(w, "none"));
        QCOMPARE(w.stepper()->lastRun()->result->steps.size(), size_t(1));
        QVERIFY(showRow(w, 1));
        QCOMPARE(w.shownModelDiff(), QString("ai.onnx opset 9 → 17"));
        QVERIFY(!w.shownDiff().removed.empty());
        QVERIFY(w.shownDiff().removed.size() * 4 < w.model()->graph.nodeCount());
        QDir().mkpath(PASSLENS_SCREENSHOT_DIR);
        const QImage shot = w.grab().toImage();
        PASSLENS_VERIFY_DRAWN(shot);
        QVERIFY(shot.save(QString(PASSLENS_SCREENSHOT_DIR) + "/stepper_version_convert.png"));
    }

    // ---- GUI-less: diff states ---------------------------------------------------------------
    void diffStatesOfAHandEditedGraph() {
        const ir::Model before = examples::find("cleanup_opportunities")->build();
        ir::Model after = before;
        ir::Graph& g = after.graph;
        const ir::NodeId dead = *g.findNode("dead.mul");
        g.eraseNode(dead);
        const ir::ValueId out = g.addValue("extra_out");
        const ir::NodeId added = g.addNode("Relu", {g.inputs()[0]}, {out}, {}, "extra");
        const ir::NodeId changed = *g.findNode("identity");
        g.setNodeInput(changed, 0, g.inputs()[0]);
        const ir::NodeId untouched = *g.findNode("dead.sigmoid");

        ui::StepDiff d = ui::computeStepDiff(before.graph, after.graph);
        QCOMPARE(d.added, std::vector<ir::NodeId>{added});
        QCOMPARE(d.removed, std::vector<ir::NodeId>{dead});
        QCOMPARE(d.changed, std::vector<ir::NodeId>{changed});
        QCOMPARE(d.stateOf(added), ui::DiffState::Added);
        QCOMPARE(d.stateOf(dead), ui::DiffState::Removed);
        QCOMPARE(d.stateOf(changed), ui::DiffState::Changed);
        QCOMPARE(d.stateOf(untouched), ui::DiffState::Unchanged);
        QCOMPARE(d.marked().size(), size_t(3));
        // Identical graphs: nothing marked. Swapped direction: added and removed swap.
        QVERIFY(ui::computeStepDiff(before.graph, before.graph).empty());
        ui::StepDiff back = ui::computeStepDiff(after.graph, before.graph);
        QCOMPARE(back.added, std::vector<ir::NodeId>{dead});
        QCOMPARE(back.removed, std::vector<ir::NodeId>{added});
    }

    void diffStylesAreDistinct() {
        auto a = ui::styleFor(ui::DiffState::Added), c = ui::styleFor(ui::DiffState::Changed),
             r = ui::styleFor(ui::DiffState::Removed), u = ui::styleFor(ui::DiffState::Unchanged);
        // Marked by rings, never by fill (fills are the op categories); changed also hatched.
        QVERIFY(a.outline.isValid() && c.outline.isValid() && r.outline.isValid());
        QVERIFY(a.outline != c.outline && c.outline != r.outline && a.outline != r.outline);
        QVERIFY(!a.fill.isValid() && !c.fill.isValid());
        QVERIFY(c.hatched && !a.hatched);
        QVERIFY(a.outline.green() > a.outline.red());   // green
        QVERIFY(r.outline.red() > r.outline.green());   // red
        QVERIFY(r.dashed && r.opacity < 1.0);     // a ghost
        QVERIFY(!u.fill.isValid() && u.opacity == 1.0);
    }

    void ghostsKeepTheirOffsetFromTheNearestSurvivor() {
        // Before: A at the top, B (removed) right of it, C below A. After: the drawing moved right
        // by 50 and a new box D stands exactly where B's ghost would land.
        auto box = [](uint32_t key, double x, double y) { return layout::BoxPlacement{key, {x, y, 80, 30}}; };
        auto node = [](uint32_t key, const char* title) {
            layout::DisplayNode n;
            n.key = key;
            n.node = key;
            n.title = title;
            return n;
        };
        layout::DisplayGraph dgBefore, dgAfter;
        layout::LayoutResult before, after;
        dgBefore.nodes = {node(1, "A"), node(2, "B"), node(3, "C")};
        before.boxes = {box(1, 0, 0), box(2, 100, 0), box(3, 0, 100)};
        dgAfter.nodes = {node(1, "A"), node(3, "C")};
        after.boxes = {box(1, 50, 0), box(3, 50, 100)};
        auto ghosts = ui::placeGhosts(dgBefore, before, dgAfter, after, {2, 7});  // 7 had no box
        QCOMPARE(ghosts.size(), size_t(1));
        QCOMPARE(ghosts[0].node, ir::NodeId(2));
        QCOMPARE(ghosts[0].title, std::string("B"));
        QCOMPARE(ghosts[0].rect.x, 150.0);  // A moved by +50: so does B
        QCOMPARE(ghosts[0].rect.y, 0.0);
        dgAfter.nodes.push_back(node(4, "D"));
        after.boxes.push_back(box(4, 150, 0));
        ghosts = ui::placeGhosts(dgBefore, before, dgAfter, after, {2});
        QCOMPARE(ghosts.size(), size_t(1));
        QVERIFY(ghosts[0].rect.x >= 150 + 80);  // stepped right of D, not on top of it
        QCOMPARE(ghosts[0].rect.y, 0.0);
        // Nothing survived: nothing to anchor to.
        QVERIFY(ui::placeGhosts(dgBefore, before, {}, {}, {2}).empty());
    }

    void changeLogNamesExactlyTheDiffedNodes() {
        // On every pass of `all` over every teaching example, the nodes the change log names are
        // exactly the nodes the diff marks (GUI-less: core snapshots only).
        for (const auto& ex : examples::all()) {
            ir::Model m = ex.build();
            ui::PipelineRun run = ui::runPipeline(m, allPasses(), nullptr);
            QVERIFY2(run.error.isEmpty(), qPrintable(run.error));
            int changedPasses = 0;
            for (int row = 1; row < run.rowCount(); ++row) {
                const auto& before = run.modelAt(row - 1)->graph;
                const auto& after = run.modelAt(row)->graph;
                const auto& changes = run.stepAt(row)->result.changes;
                auto named = ui::nodesNamedByChanges(changes, before, after);
                auto marked = ui::computeStepDiff(before, after).marked();
                QVERIFY2(named == marked, qPrintable(QString("%1 / %2").arg(ex.id.c_str(), run.stepAt(row)->result.name.c_str())));
                changedPasses += !marked.empty();
            }
            if (ex.id == "cleanup_opportunities") QVERIFY(changedPasses >= 3);  // folding, cse, dce at least
        }
    }

    void provenanceNamesComeFromTheOriginalGraph() {
        ir::Model m = examples::find("conv_bn_relu")->build();
        ui::PipelineRun run = ui::runPipeline(m, {"fuse-conv-bn"}, nullptr);
        QVERIFY(run.result);
        const auto& g = run.modelAt(1)->graph;
        int fused = 0;
        for (ir::NodeId id : g.nodeOrder()) {
            if (g.node(id).provenance.empty()) continue;
            auto names = ui::provenanceNames(g.node(id), run.modelAt(0)->graph);
            QCOMPARE(names.size(), g.node(id).provenance.size());
            QVERIFY(std::find(names.begin(), names.end(), "conv") != names.end());
            ++fused;
        }
        QCOMPARE(fused, 1);
    }

    void pipelineJobCancelsAndReportsBadNames() {
        ir::Model m = examples::find("cleanup_opportunities")->build();
        std::atomic<bool> cancel{true};
        ui::PipelineRun cancelled = ui::runPipeline(m, allPasses(), &cancel);
        QVERIFY(cancelled.cancelled);
        QVERIFY(!cancelled.result);
        ui::PipelineRun bad = ui::runPipeline(m, {"no-such-pass"}, nullptr);
        QVERIFY(bad.error.contains("no-such-pass"));
        QCOMPARE(bad.rowCount(), 0);
        int calls = 0;
        ui::PipelineRun ok = ui::runPipeline(m, allPasses(), nullptr, [&](int done, int total) {
            ++calls;
            QCOMPARE(total, int(allPasses().size()));
            QCOMPARE(done, calls);
        });
        QCOMPARE(calls, int(allPasses().size()));
        QCOMPARE(ok.rowCount(), int(allPasses().size()) + 1);
    }

    // ---- verify outputs ------------------------------------------------------------------------
    void verifiedRunsMatchOnEveryPassOfEveryExample() {
        using S = eval::OutputCheck::Status;
        for (const auto& ex : examples::all()) {
            ir::Model m = ex.build();
            auto run = std::make_shared<const ui::PipelineRun>(ui::runPipeline(m, allPasses(), nullptr, {}, true));
            QVERIFY2(run->error.isEmpty(), qPrintable(run->error));
            QCOMPARE(int(run->verification.size()), run->rowCount());
            QCOMPARE(run->firstDifferingRow(), -1);
            ui::PassTableModel table;
            QAbstractItemModelTester tester(&table, QAbstractItemModelTester::FailureReportingMode::QtTest);
            table.resetData(run);
            QCOMPARE(outputsCell(table, 0), QString("reference"));
            for (int row = 1; row < table.rowCount(); ++row) {
                const auto& c = run->verification[size_t(row)];
                QVERIFY2(c.vsPrevious.status == S::Match && c.vsInput.status == S::Match,
                         qPrintable(QString("%1 / %2: %3").arg(ex.id.c_str(), run->stepAt(row)->result.name.c_str(),
                                                                outputsCell(table, row))));
                QCOMPARE(outputsCell(table, row), QString("match"));
                QVERIFY(table.data(table.index(row, ui::PassTableModel::Outputs), Qt::ToolTipRole).toString().contains("seed 1234"));
            }
        }
        // Without verification the column stays empty.
        ir::Model m = examples::find("conv_bn_relu")->build();
        auto plain = std::make_shared<const ui::PipelineRun>(ui::runPipeline(m, allPasses(), nullptr));
        QVERIFY(!plain->verified());
        ui::PassTableModel table;
        table.resetData(plain);
        QVERIFY(outputsCell(table, 1).isEmpty());
    }

    void verificationNamesExactlyTheBrokenPass() {
        ui::StepperPanel panel;
        panel.setRegistry(&registryWithBrokenPass());
        panel.setModel(example("conv_bn_relu"));
        QVERIFY(!panel.verifyOutputs());  // off by default
        const auto names = allWithBrokenPass();
        QStringList list;
        for (const auto& n : names) list << QString::fromStdString(n);
        panel.setPassList(list.join(","));
        panel.setVerifyOutputs(true);
        QSignalSpy done(&panel, &ui::StepperPanel::runFinished);
        panel.run();
        QVERIFY(waitFor(done));
        const auto run = panel.lastRun();
        QVERIFY(run && run->result && run->verified());
        const int broken = int(std::find(names.begin(), names.end(), "test-break-constant") - names.begin()) + 1;
        QCOMPARE(run->firstDifferingRow(), broken);
        const ui::PassTableModel& table = *panel.tableModel();
        QAbstractItemModelTester tester(panel.tableModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(!panel.tableView()->isColumnHidden(ui::PassTableModel::Outputs));
        for (int row = 1; row < table.rowCount(); ++row) {
            const QString cell = outputsCell(table, row);
            if (row == broken) QVERIFY2(cell.startsWith("DIFFER (max abs "), qPrintable(cell));
            else QVERIFY2(cell == "match", qPrintable(QString("row %1: %2").arg(row).arg(cell)));
        }
        // The broken row is red (every column); the passes after it still match their own input
        // but not the original model's outputs (tooltip).
        for (int col = 0; col < ui::PassTableModel::ColumnCount; ++col)
            QCOMPARE(table.data(table.index(broken, col), Qt::ForegroundRole).value<QColor>(), QColor("#cf222e"));
        QVERIFY(table.data(table.index(broken - 1, ui::PassTableModel::Pass), Qt::ForegroundRole).value<QColor>() != QColor("#cf222e"));
        QVERIFY(table.data(table.index(table.rowCount() - 1, ui::PassTableModel::Outputs), Qt::ToolTipRole)
                    .toString()
                    .contains("Against the input model: DIFFER"));
        QVERIFY2(panel.statusText().contains("outputs differ first after 'test-break-constant'"), qPrintable(panel.statusText()));
        // The same list without verification: no column, no verdict.
        panel.setVerifyOutputs(false);
        done.clear();
        panel.run();
        QVERIFY(waitFor(done));
        QVERIFY(!panel.lastRun()->verified());
        QVERIFY(panel.tableView()->isColumnHidden(ui::PassTableModel::Outputs));
        QVERIFY(!panel.statusText().contains("outputs"));
    }

    void unsupportedModelsAreNotRunWithTheReason() {
        // An op the interpreter does not know: every row says "not run" with the op's name.
        ir::Model m = examples::find("conv_bn_relu")->build();
        m.graph.node(*m.graph.findNode("conv")).domain = "com.example";
        m.opsetImports.push_back({"com.example", 1});
        ui::PipelineRun run = ui::runPipeline(m, {"dce"}, nullptr, {}, true);
        QVERIFY2(run.error.isEmpty(), qPrintable(run.error));
        QCOMPARE(run.verification.size(), size_t(2));
        for (const auto& c : run.verification) {
            QCOMPARE(c.vsPrevious.status, eval::OutputCheck::Status::NotRun);
            QVERIFY2(ui::outputsText(c.vsPrevious).startsWith("not run: "), qPrintable(ui::outputsText(c.vsPrevious)));
        }
        QVERIFY2(QString::fromStdString(run.verification[0].vsPrevious.reason).contains("com.example"),
                 run.verification[0].vsPrevious.reason.c_str());
        QCOMPARE(run.firstDifferingRow(), -1);
    }

    void symbolicDimsRunAsOneOrAsPinned() {
        // PP-OCR cls (?x3x?x?): as 1×3×1×1 its pooling kernel does not fit, so nothing is verified
        // and the tooltip says the dims were pinned to 1; with the dims pinned every pass matches.
        using S = eval::OutputCheck::Status;
        ui::StepperPanel panel;
        auto cls = std::make_shared<const ir::Model>(onnxio::importModelFile(realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx").toStdString()));
        panel.setModel(cls);
        panel.setLevel("all");
        panel.setVerifyOutputs(true);
        QSignalSpy done(&panel, &ui::StepperPanel::runFinished);
        panel.run();
        QVERIFY(waitFor(done));
        auto run = panel.lastRun();
        QVERIFY(run && run->verified());
        QCOMPARE(run->pinnedToOne.size(), size_t(3));
        QCOMPARE(run->verification[0].vsPrevious.status, S::NotRun);
        const ui::PassTableModel& table = *panel.tableModel();
        QVERIFY(outputsCell(table, 1).startsWith("not run: "));
        QVERIFY(table.data(table.index(1, ui::PassTableModel::Outputs), Qt::ToolTipRole).toString().contains("pinned to 1"));
        QVERIFY2(panel.statusText().contains("outputs not verified"), qPrintable(panel.statusText()));
        // A malformed pin is refused before anything runs.
        QSignalSpy failed(&panel, &ui::StepperPanel::runFailed);
        panel.setVerifyDims("p2o.DynamicDimension.0=x");
        panel.run();
        QCOMPARE(failed.count(), 1);
        QVERIFY(failed.first().at(0).toString().contains("p2o.DynamicDimension.0=x"));
        done.clear();
        panel.setVerifyDims("p2o.DynamicDimension.0=1, p2o.DynamicDimension.1=48, p2o.DynamicDimension.2=192");
        panel.run();
        QVERIFY(waitFor(done));
        run = panel.lastRun();
        QVERIFY(run->pinnedToOne.empty());
        QCOMPARE(int(run->verification.size()), run->rowCount());
        for (int row = 0; row < run->rowCount(); ++row)
            QVERIFY2(run->verification[size_t(row)].vsPrevious.status == S::Match, qPrintable(outputsCell(table, row)));
        QVERIFY2(panel.statusText().contains("outputs match after every pass"), qPrintable(panel.statusText()));
        panel.resize(1000, 560);
        QVERIFY(panel.grab().save(QString(PASSLENS_SCREENSHOT_DIR) + "/stepper_verify_ocr_cls.png"));
    }

    void cancelStopsAVerifiedRun() {
        ir::Model m = examples::find("transformer_block")->build();
        // Cancelled inside the interpreter's reference run: the verifier gives up at once.
        std::atomic<bool> cancel{true};
        try {
            eval::StepVerifier v(m, {}, &cancel);
            QFAIL("the verifier ran a cancelled reference");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Cancelled);
        }
        // Cancelled after the first pass's verification: no further pass runs, no result.
        cancel = false;
        int calls = 0;
        ui::PipelineRun run = ui::runPipeline(m, allPasses(), &cancel, [&](int, int) { ++calls; cancel = true; }, true);
        QVERIFY(run.cancelled);
        QVERIFY(!run.result);
        QCOMPARE(calls, 1);
        // In the panel: a cancelled verified run leaves the previous run in place.
        ui::StepperPanel panel;
        panel.setModel(example("transformer_block"));
        panel.setVerifyOutputs(true);
        QSemaphore gate;
        const int threads = QThreadPool::globalInstance()->maxThreadCount();
        for (int i = 0; i < threads; ++i) QThreadPool::globalInstance()->start([&gate] { gate.acquire(); });
        QSignalSpy done(&panel, &ui::StepperPanel::runFinished);
        panel.run();
        QVERIFY(panel.isRunning());
        panel.cancel();
        gate.release(threads);
        QVERIFY(waitFor(done));
        QVERIFY(!panel.lastRun());
        QCOMPARE(panel.statusText(), QString("Run cancelled."));
        QCOMPARE(panel.tableModel()->rowCount(), 0);
    }

    void verifiedStepperScreenshot() {
        // The window with "Verify outputs" on and the broken pass in the list: the Outputs column,
        // the red row and the status naming it.
        MainWindow w;
        w.resize(1920, 1080);
        w.show();
        w.stepper()->setRegistry(&registryWithBrokenPass());
        QVERIFY(openAndWait(w, [&] { w.openExample("conv_bn_relu"); }));
        QStringList list;
        for (const auto& n : allWithBrokenPass()) list << QString::fromStdString(n);
        w.stepper()->setPassList(list.join(","));
        w.stepper()->setVerifyOutputs(true);
        QSignalSpy done(w.stepper(), &ui::StepperPanel::runFinished);
        w.stepper()->run();
        QVERIFY(waitFor(done));
        const int broken = w.stepper()->lastRun()->firstDifferingRow();
        QVERIFY(broken > 0);
        QVERIFY2(w.statusBar()->currentMessage().contains("'test-break-constant' changed the model's outputs"),
                 qPrintable(w.statusBar()->currentMessage()));
        QVERIFY(showRow(w, broken));
        w.stepper()->tableView()->clearSelection();  // the row's red, not the selection's blue
        QCOMPARE(w.stepper()->currentRow(), broken);
        w.graphView()->fitAll();
        QCoreApplication::processEvents();
        const QString path = QString(PASSLENS_SCREENSHOT_DIR) + "/stepper_verify_outputs.png";
        QVERIFY(w.grab().save(path));
        QVERIFY(w.stepper()->grab().save(QString(PASSLENS_SCREENSHOT_DIR) + "/stepper_verify_outputs_panel.png"));
        QCOMPARE(QImage(path).width(), 1920);
        PASSLENS_VERIFY_DRAWN(path);
    }

    // ---- item models ---------------------------------------------------------------------------
    void modelsPassTheModelTester() {
        auto m = example("blocked_fusion");
        auto run = std::make_shared<const ui::PipelineRun>(ui::runPipeline(*m, allPasses(), nullptr));
        QVERIFY(run->result);
        ui::PassTableModel table;
        QAbstractItemModelTester t1(&table, QAbstractItemModelTester::FailureReportingMode::QtTest);
        table.resetData(run);
        QCOMPARE(table.rowCount(), int(allPasses().size()) + 1);
        QCOMPARE(table.data(table.index(1, ui::PassTableModel::Pass)).toString(), QString::fromStdString(allPasses()[0]));
        for (int row = 1; row < table.rowCount(); ++row) {
            const auto& r = run->stepAt(row)->result;
            QCOMPARE(table.data(table.index(row, ui::PassTableModel::Changes)).toInt(), int(r.changes.size()));
            QCOMPARE(table.data(table.index(row, ui::PassTableModel::Missed)).toInt(), ui::missedCount(r));
        }
        table.resetData(nullptr);
        QCOMPARE(table.rowCount(), 0);

        // The remarks of the pass with the most of them, filtered by kind and rule.
        const passes::PassResult* most = nullptr;
        for (int row = 1; row < run->rowCount(); ++row)
            if (!most || run->stepAt(row)->result.remarks.size() > most->remarks.size()) most = &run->stepAt(row)->result;
        QVERIFY(most && !most->remarks.empty());
        ui::RemarksModel remarks;
        QAbstractItemModelTester t2(&remarks, QAbstractItemModelTester::FailureReportingMode::QtTest);
        remarks.resetData(most->remarks);
        QCOMPARE(remarks.rowCount(), int(most->remarks.size()));
        int missed = ui::missedCount(*most);
        QVERIFY(missed > 0);  // blocked_fusion: the Conv output is read twice
        remarks.setFilter(passes::RemarkKind::Missed, {});
        QCOMPARE(remarks.rowCount(), missed);
        for (int r = 0; r < remarks.rowCount(); ++r) QCOMPARE(remarks.remarkAt(r)->kind, passes::RemarkKind::Missed);
        remarks.setFilter(passes::RemarkKind::Applied, {});
        QCOMPARE(remarks.rowCount(), int(most->remarks.size()) - missed);
        const QString rule = remarks.rules().value(0);
        QVERIFY(!rule.isEmpty());
        remarks.setFilter(std::nullopt, rule);
        int withRule = 0;
        for (const auto& r : most->remarks) withRule += QString::fromStdString(r.rule) == rule;
        QCOMPARE(remarks.rowCount(), withRule);
        remarks.setFilter(std::nullopt, "no-such-rule");
        QCOMPARE(remarks.rowCount(), 0);

        ui::ChangeLogModel log;
        QAbstractItemModelTester t3(&log, QAbstractItemModelTester::FailureReportingMode::QtTest);
        for (int row = 1; row < run->rowCount(); ++row) {
            log.resetData(run->stepAt(row)->result.changes);
            QCOMPARE(log.rowCount(), int(run->stepAt(row)->result.changes.size()));
            for (int r = 0; r < log.rowCount(); ++r)
                QVERIFY(!log.data(log.index(r, ui::ChangeLogModel::Reason)).toString().isEmpty());
        }
    }

    // ---- the window ----------------------------------------------------------------------------
    void steppingThroughAllPassesOnOcrRecKeepsOneItemPerNode() {
        // Constants folded into their readers (the app's default): unfolded, CSE'd initializers
        // shared across the whole graph make Graphviz take minutes.
        MainWindow w;
        w.setFoldConstants(true);
        QVERIFY(openAndWait(w, [&] { QVERIFY(w.openFile(realModel("ch_PP-OCRv4_rec_infer.onnx"))); }));
        // Over 300 boxes it is drawn through its hierarchy: every group opened, every node is a
        // box (the steps keep the open groups).
        if (w.graphView()->snapshot()->hierarchy()) {
            QSignalSpy expanded(&w, &MainWindow::expansionShown);
            w.expandAllGroups();
            QVERIFY(expanded.count() > 0 || expanded.wait(120000));
        }
        QElapsedTimer clock;
        clock.start();
        QVERIFY(runLevel(w, "all"));
        const qint64 runMs = clock.elapsed();
        const auto run = w.stepper()->lastRun();
        QCOMPARE(run->rowCount(), int(allPasses().size()) + 1);
        bool someChange = false, constantsFolded = false;
        clock.restart();
        for (int row = 0; row < run->rowCount(); ++row) {
            QVERIFY(showRow(w, row));
            qInfo("rec row %d (%s): %zu nodes, diff +%zu ~%zu -%zu", row,
                  row ? run->stepAt(row)->result.name.c_str() : "input", w.shownModel()->graph.nodeCount(),
                  w.shownDiff().added.size(), w.shownDiff().changed.size(), w.shownDiff().removed.size());
            const auto& g = w.shownModel()->graph;
            QCOMPARE(w.shownModel(), row == 0 ? w.model() : run->modelAt(row));
            const int folded = foldedConstantNodes(g);
            // Above 300 boxes the drawing goes through the hierarchy (one rule with the CLI): the
            // snapshot's operator boxes, drawn or inside a collapsed group, are exactly its nodes.
            const ui::SnapshotPtr shot = w.graphView()->snapshot();
            int drawnOps = w.graphView()->operatorItemCount();
            if (shot->hierarchy()) {
                QVERIFY(drawnOps <= int(shot->layouter->full().nodes.size()));
                drawnOps = 0;
                for (const auto& n : shot->layouter->full().nodes) drawnOps += n.kind == layout::DisplayNode::Kind::Op;
            }
            QCOMPARE(drawnOps, int(g.nodeCount()) - folded);
            if (row > 0) {
                // Once constant folding has run, every Constant node is an initializer (the basic
                // level starts with shape-chain-folding, so it is not always the first row).
                constantsFolded |= run->stepAt(row)->result.name == "constant-folding";
                if (constantsFolded) QCOMPARE(folded, 0);
                QCOMPARE(size_t(drawnOps + folded), run->stepAt(row)->result.nodesAfter);
            }
            someChange |= !w.shownDiff().empty();
            // Removed nodes stand as ghosts next to the survivors, never on top of a real box,
            // and are not counted as node items.
            // (Drawn through the hierarchy, a removed node inside a collapsed group has no ghost:
            // the group's "changed" badge counts it.)
            if (row >= 2 && !w.shownDiff().removed.empty() && !w.graphView()->snapshot()->hierarchy())
                QTRY_VERIFY(w.graphView()->ghostCount() > 0);
            QVERIFY(w.graphView()->ghostCount() <= int(w.shownDiff().removed.size()));
            for (QGraphicsItem* ghost : w.graphView()->scene()->items())
                if (ghost->type() == ui::GhostItem::Type)
                    for (QGraphicsItem* box : w.graphView()->scene()->items(ghost->sceneBoundingRect().center()))
                        QVERIFY(box->type() != ui::NodeItem::Type);
        }
        QVERIFY(someChange);
        qInfo("rec: pipeline 'all' in the worker %lld ms; %d snapshots drawn in %lld ms", runMs, run->rowCount(),
              clock.elapsed());
        // Back with the keyboard path (F10 / Shift+F10 act through the same slots).
        w.stepper()->stepBack();
        QCOMPARE(w.stepper()->currentRow(), run->rowCount() - 2);
    }

    void diffColorsMarkExactlyTheChangeLogNodes() {
        MainWindow w;
        w.setFoldConstants(false);
        w.setSideBySide(true);
        QVERIFY(openAndWait(w, [&] { w.openExample("cleanup_opportunities"); }));
        QVERIFY(runLevel(w, "all"));
        const auto run = w.stepper()->lastRun();
        int checked = 0;
        for (int row = 1; row < run->rowCount(); ++row) {
            QVERIFY(showRow(w, row));
            const auto expectedBefore = row == 1 ? w.model() : run->modelAt(row - 1);
            QTRY_VERIFY(w.beforeView()->snapshot() && w.beforeView()->snapshot()->model == expectedBefore);
            std::vector<ir::NodeId> colored = w.graphView()->styledNodes();
            for (ir::NodeId id : w.beforeView()->styledNodes())
                if (w.beforeView()->nodeStyle(id)->outline == ui::styleFor(ui::DiffState::Removed).outline) colored.push_back(id);
            std::sort(colored.begin(), colored.end());
            colored.erase(std::unique(colored.begin(), colored.end()), colored.end());
            const auto& before = run->modelAt(row - 1)->graph;
            const auto& after = run->modelAt(row)->graph;
            auto named = ui::nodesNamedByChanges(run->stepAt(row)->result.changes, before, after);
            QCOMPARE(colored, named);
            // The change log dock lists this pass.
            QCOMPARE(w.changeLog()->model()->rowCount(), int(run->stepAt(row)->result.changes.size()));
            // Colors by state: added green and changed yellow after, removed red before.
            for (ir::NodeId id : w.shownDiff().added)
                QCOMPARE(w.graphView()->nodeStyle(id)->outline, ui::styleFor(ui::DiffState::Added).outline);
            for (ir::NodeId id : w.shownDiff().changed)
                QCOMPARE(w.graphView()->nodeStyle(id)->outline, ui::styleFor(ui::DiffState::Changed).outline);
            for (ir::NodeId id : w.shownDiff().removed) QVERIFY(w.beforeView()->nodeStyle(id) && !w.graphView()->itemForNode(id));
            checked += !named.empty();
        }
        QVERIFY(checked >= 3);
    }

    void clickingAChangeOrRemarkSelectsItsNodes() {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(openAndWait(w, [&] { w.openExample("blocked_fusion"); }));
        QVERIFY(runLevel(w, "all"));
        const auto run = w.stepper()->lastRun();
        int remarkRow = -1;
        for (int row = 1; row < run->rowCount(); ++row)
            if (ui::missedCount(run->stepAt(row)->result) > 0) remarkRow = row;
        QVERIFY(remarkRow > 0);
        QVERIFY(showRow(w, remarkRow));
        w.remarks()->setFilter("missed", {});
        QVERIFY(w.remarks()->model()->rowCount() > 0);
        const auto nodes = w.remarks()->model()->nodesAt(0);
        QVERIFY(!nodes.empty());
        QTableView* table = w.remarks()->tableView();
        const QRect cell = table->visualRect(w.remarks()->model()->index(0, 0));
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
        QCOMPARE(w.graphView()->selectedNode(), nodes.front());
        w.graphView()->scene()->clearSelection();
        QCOMPARE(w.graphView()->selectedNode(), ir::kNone);

        // A change row of a pass that changed something selects its (surviving) node too.
        QVERIFY(openAndWait(w, [&] { w.openExample("cleanup_opportunities"); }));
        QVERIFY(runLevel(w, "all"));
        const auto run2 = w.stepper()->lastRun();
        for (int row = 1; row < run2->rowCount(); ++row) {
            if (run2->stepAt(row)->result.changes.empty()) continue;
            QVERIFY(showRow(w, row));
            for (int r = 0; r < w.changeLog()->model()->rowCount(); ++r) {
                auto ids = w.changeLog()->model()->nodesAt(r);
                if (ids.empty() || !w.graphView()->itemForNode(ids.front())) continue;
                w.changeLog()->activateRow(r);
                QCOMPARE(w.graphView()->selectedNode(), ids.front());
                return;
            }
        }
        QFAIL("no change row with a drawn node");
    }

    void memoryClickSelectsTheProducerInTheGraph() {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QSignalSpy planned(w.memoryView(), &ui::MemoryView::planReady);
        QVERIFY(openAndWait(w, [&] { w.openExample("inplace_chain"); }));
        QVERIFY(waitFor(planned, 30000));
        auto* chart = w.memoryView()->arenaChart(0);
        const auto& plan = *w.memoryView()->snapshot().primary;
        int clicked = 0;
        for (int i = 0; i < int(plan.buffers.size()); ++i) {
            const auto& b = plan.buffers[size_t(i)];
            if (b.value == ir::kNone) continue;
            const ir::NodeId producer = w.model()->graph.value(b.value).producer;
            if (producer == ir::kNone || !w.graphView()->itemForNode(producer)) continue;
            QPoint c = chart->itemCenter(i).toPoint();
            if (chart->itemAt(c) != i) continue;
            QTest::mouseClick(chart, Qt::LeftButton, {}, c);
            QCOMPARE(w.graphView()->selectedNode(), producer);
            // And back: the selected node's output buffer is outlined in the arena chart.
            const int outlined = chart->selectedItem();
            QVERIFY(outlined >= 0);
            const auto& outs = w.model()->graph.node(producer).outputs;
            QVERIFY(std::find(outs.begin(), outs.end(), plan.buffers[size_t(outlined)].value) != outs.end());
            ++clicked;
        }
        QVERIFY(clicked >= 2);
        w.graphView()->scene()->clearSelection();
        QCOMPARE(chart->selectedItem(), -1);
    }

    void fusedNodeShowsWhereItCameFrom() {
        MainWindow w;
        QVERIFY(openAndWait(w, [&] { w.openExample("conv_bn_relu"); }));
        QVERIFY(runLevel(w, "all"));
        const auto run = w.stepper()->lastRun();
        int fuseRow = -1;
        for (int row = 1; row < run->rowCount(); ++row)
            if (run->stepAt(row)->result.name == "fuse-conv-bn") fuseRow = row;
        QVERIFY(fuseRow > 0);
        QVERIFY(showRow(w, fuseRow));
        QCOMPARE(w.shownDiff().added.size(), size_t(1));
        const ir::NodeId fused = w.shownDiff().added.front();
        QVERIFY(w.graphView()->selectNode(fused));
        const QString text = w.propertiesPanel()->toPlainText();
        QVERIFY2(text.contains("came from"), qPrintable(text));
        QVERIFY(text.contains("conv") && text.contains("bn"));
        // An original node has no provenance line.
        for (ir::NodeId id : w.shownModel()->graph.nodeOrder())
            if (id != fused && w.graphView()->selectNode(id)) {
                QVERIFY(!w.propertiesPanel()->toPlainText().contains("came from"));
                break;
            }
    }

    void sideBySideSelectionFollowsTheNodeId() {
        MainWindow w;
        w.setSideBySide(true);
        QVERIFY(openAndWait(w, [&] { w.openExample("cleanup_opportunities"); }));
        QVERIFY(runLevel(w, "all"));
        QVERIFY(showRow(w, 1));
        QTRY_VERIFY(w.beforeView()->snapshot() != nullptr);
        // A node in both panes: selecting it on either side selects it on the other.
        for (ir::NodeId id : w.shownModel()->graph.nodeOrder()) {
            if (!w.beforeView()->itemForNode(id) || !w.graphView()->itemForNode(id)) continue;
            QVERIFY(w.graphView()->selectNode(id));
            QCOMPARE(w.beforeView()->selectedNode(), id);
            w.graphView()->scene()->clearSelection();
            QVERIFY(w.beforeView()->selectNode(id));
            QCOMPARE(w.graphView()->selectedNode(), id);
            return;
        }
        QFAIL("no node in both panes");
    }

    void nonStandardDomainsRaiseANotice() {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, [&] { w.openExample("conv_bn_relu"); }));
        auto* notice = w.findChild<QLabel*>("domainNotice");
        QVERIFY(notice);
        QVERIFY(w.domainNotice().isEmpty());
        QVERIFY(!notice->isVisible());
        ir::Model m = examples::find("conv_bn_relu")->build();
        m.graph.node(*m.graph.findNode("conv")).domain = "passlens.nhwc";
        m.opsetImports.push_back({"passlens.nhwc", 1});
        QVERIFY(openAndWait(w, [&] { w.setModel(std::make_shared<const ir::Model>(m), "nhwc"); }));
        QCOMPARE(w.domainNotice(), QString("not standard ONNX: uses passlens.nhwc"));
        QVERIFY(notice->isVisible());
        QCOMPARE(notice->text(), w.domainNotice());
    }

    void layoutPassInTheStepperRaisesTheNotice() {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, [&] { w.openExample("conv_bn_relu"); }));
        QSignalSpy done(w.stepper(), &ui::StepperPanel::runFinished);
        w.stepper()->setPassList("layout:NHWC");
        w.stepper()->run();
        QVERIFY(waitFor(done));
        QVERIFY(w.stepper()->lastRun() && w.stepper()->lastRun()->result);
        QVERIFY(showRow(w, 0));
        QVERIFY(w.domainNotice().isEmpty());
        QVERIFY(showRow(w, 1));
        QVERIFY2(w.domainNotice().contains("passlens.nhwc"), qPrintable(w.domainNotice()));
        QVERIFY(w.findChild<QLabel*>("domainNotice")->isVisible());
        QVERIFY(!w.shownDiff().empty());
        // A bad list is refused before anything runs, with the valid names in the message.
        QSignalSpy failed(w.stepper(), &ui::StepperPanel::runFailed);
        w.stepper()->setPassList("dce,no-such-pass");
        w.stepper()->run();
        QCOMPARE(failed.count(), 1);
        QVERIFY(failed.first().at(0).toString().contains("no-such-pass"));
        QVERIFY(!w.stepper()->isRunning());
    }

    void keyboardStepsAndCancel() {
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openAndWait(w, [&] { w.openExample("cleanup_opportunities"); }));
        QVERIFY(runLevel(w, "all"));
        QCOMPARE(w.stepper()->currentRow(), 0);
        w.graphView()->setFocus();
        QTest::keyClick(&w, Qt::Key_F10);
        QCOMPARE(w.stepper()->currentRow(), 1);
        QTest::keyClick(&w, Qt::Key_Right, Qt::AltModifier);
        QCOMPARE(w.stepper()->currentRow(), 2);
        QTest::keyClick(&w, Qt::Key_Left, Qt::AltModifier);
        QCOMPARE(w.stepper()->currentRow(), 1);
        QTest::keyClick(&w, Qt::Key_F10, Qt::ShiftModifier);
        QCOMPARE(w.stepper()->currentRow(), 0);
        QTest::keyClick(&w, Qt::Key_F10, Qt::ShiftModifier);  // stays at the first row
        QCOMPARE(w.stepper()->currentRow(), 0);
        // Clicking a row jumps there.
        QTableView* table = w.stepper()->tableView();
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(table->model()->index(4, 0)).center());
        QCOMPARE(w.stepper()->currentRow(), 4);
        QCOMPARE(w.shownStep(), 4);
        // Cancel: the run that was cancelled leaves the previous run in place.
        // The pool is held busy so the cancel surely lands before the first pass starts.
        const auto before = w.stepper()->lastRun();
        QSemaphore gate;
        const int threads = QThreadPool::globalInstance()->maxThreadCount();
        for (int i = 0; i < threads; ++i) QThreadPool::globalInstance()->start([&gate] { gate.acquire(); });
        QSignalSpy done(w.stepper(), &ui::StepperPanel::runFinished);
        w.stepper()->run();
        QVERIFY(w.stepper()->isRunning());
        w.stepper()->cancel();
        gate.release(threads);
        QVERIFY(waitFor(done));
        QCOMPARE(w.stepper()->lastRun(), before);
        QVERIFY(!w.stepper()->isRunning());
    }

    void openingAnotherModelDropsTheRunningPipeline() {
        MainWindow w;
        QVERIFY(openAndWait(w, [&] { w.openExample("cleanup_opportunities"); }));
        QSemaphore gate;
        const int threads = QThreadPool::globalInstance()->maxThreadCount();
        for (int i = 0; i < threads; ++i) QThreadPool::globalInstance()->start([&gate] { gate.acquire(); });
        w.stepper()->setLevel("all");
        w.stepper()->run();
        QVERIFY(w.stepper()->isRunning());
        QSignalSpy ready(&w, &MainWindow::layoutReady);
        w.openExample("conv_bn_relu");  // while the first model's pipeline waits for a thread
        gate.release(threads);
        QVERIFY(waitFor(ready));
        QTRY_VERIFY(!w.stepper()->isRunning());
        QCoreApplication::processEvents();
        QVERIFY(!w.stepper()->lastRun());  // nothing of the old model's run is shown
        QCOMPARE(w.shownStep(), -1);
        QCOMPARE(w.stepper()->tableModel()->rowCount(), 0);
        QVERIFY(runLevel(w, "all"));
        QCOMPARE(w.stepper()->lastRun()->modelAt(0)->graph.nodeCount(), w.model()->graph.nodeCount());
    }

    void exportsReportModelAndCharts() {
        MainWindow w;
        QSignalSpy planned(w.memoryView(), &ui::MemoryView::planReady);
        QVERIFY(openAndWait(w, [&] { w.openExample("cleanup_opportunities"); }));
        QTemporaryDir dir;
        QVERIFY(!w.exportPassReport(dir.filePath("none.json")));  // nothing run yet
        QVERIFY(runLevel(w, "all"));
        const auto run = w.stepper()->lastRun();
        QVERIFY(w.exportPassReport(dir.filePath("report.json")));
        QFile f(dir.filePath("report.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject report = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(report["passes"].toArray().size(), qsizetype(allPasses().size()));
        QCOMPARE(report["passes"].toArray()[0].toObject()["name"].toString(), QString::fromStdString(allPasses()[0]));
        QCOMPARE(report["nodes_after"].toInt(), int(run->result->steps.back().result.nodesAfter));

        QVERIFY(w.exportOptimizedModel(dir.filePath("opt.onnx")));
        ir::Model back = onnxio::importModelFile(dir.filePath("opt.onnx").toStdString());
        const ir::Model& last = *run->result->steps.back().snapshot;
        QCOMPARE(back.graph.nodeCount(), last.graph.nodeCount());
        QVERIFY(back.graph.nodeCount() < w.model()->graph.nodeCount());
        QCOMPARE(back.graph.outputs().size(), w.model()->graph.outputs().size());
        QCOMPARE(back.opsetFor(""), w.model()->opsetFor(""));
        QVERIFY(w.model()->graph.nodeCount() == examples::find("cleanup_opportunities")->build().graph.nodeCount());  // loaded model untouched

        QVERIFY(waitFor(planned, 30000));
        QVERIFY(w.exportMemoryCharts(dir.filePath("mem.png")));
        for (const char* kind : {"lifetime", "arena", "live"}) QVERIFY(QImage(dir.filePath(QString("mem-%1.png").arg(kind))).width() > 100);
        QVERIFY(w.exportMemoryCharts(dir.filePath("mem.svg")));
        QVERIFY(QFile::exists(dir.filePath("mem-arena.svg")));
    }

    void screenshots() {
        {
            MainWindow w;
            w.setFoldConstants(true);
            w.resize(1920, 1080);
            w.show();
            w.setSideBySide(true);
            QVERIFY(openAndWait(w, [&] { w.openExample("cleanup_opportunities"); }));
            QVERIFY(runLevel(w, "all"));
            const auto run = w.stepper()->lastRun();
            int row = -1;  // a pass in the middle of the pipeline that changed the graph
            for (int r = 1; r < run->rowCount(); ++r)
                if (run->stepAt(r)->result.name == "cse") row = r;
            QVERIFY(row > 0);
            QVERIFY(showRow(w, row));
            QTRY_VERIFY(w.beforeView()->snapshot() && w.beforeView()->snapshot()->model == (row == 1 ? w.model() : run->modelAt(row - 1)));
            QVERIFY(!w.shownDiff().empty());
            // Click the change that rewired `merge`: it is selected in both panes. The selection
            // is dropped again for the picture: a selected node shows its post-dominator path
            // (dominator tree view), which would cover the diff colors on that path.
            for (int r = 0; r < w.changeLog()->model()->rowCount(); ++r)
                if (w.changeLog()->model()->changes()[size_t(r)].nodeNames == std::vector<std::string>{"merge"}) {
                    w.changeLog()->tableView()->selectRow(r);
                    w.changeLog()->activateRow(r);
                    QCOMPARE(w.beforeView()->selectedNode(), w.graphView()->selectedNode());
                }
            QVERIFY(w.graphView()->selectedNode() != ir::kNone);
            w.graphView()->scene()->clearSelection();
            w.beforeView()->scene()->clearSelection();
            QCOMPARE(w.graphView()->nodeStyle(*w.shownModel()->graph.findNode("merge"))->outline,
                     ui::styleFor(ui::DiffState::Changed).outline);
            QCoreApplication::processEvents();
            const QString path = QString(PASSLENS_SCREENSHOT_DIR) + "/stepper_diff.png";
            QVERIFY(w.grab().save(path));
            QCOMPARE(QImage(path).width(), 1920);
            PASSLENS_VERIFY_DRAWN(path);
        }
        {
            // Single view: the fused Conv is new (green), the Conv and BatchNorm it replaced stand
            // as red ghosts, and the properties say where the fused node came from.
            MainWindow w;
            w.resize(1920, 1080);
            w.show();
            QVERIFY(openAndWait(w, [&] { w.openExample("conv_bn_relu"); }));
            QVERIFY(runLevel(w, "all"));
            const auto run = w.stepper()->lastRun();
            int row = -1;
            for (int r = 1; r < run->rowCount(); ++r)
                if (run->stepAt(r)->result.name == "fuse-conv-bn") row = r;
            QVERIFY(row > 0);
            QSignalSpy ghosts(&w, &MainWindow::ghostsShown);
            QVERIFY(showRow(w, row));
            QVERIFY(waitFor(ghosts, 10000));
            QCOMPARE(ghosts.last().at(0).toInt(), int(w.shownDiff().removed.size()));
            QVERIFY(w.graphView()->selectNode(w.shownDiff().added.front()));
            // The selection's dominator path (border) keeps the diff colors of the step.
            QCOMPARE(w.graphView()->nodeStyle(w.shownDiff().added.front())->outline, ui::styleFor(ui::DiffState::Added).outline);
            w.graphView()->fitAll();
            QCoreApplication::processEvents();
            const QString path = QString(PASSLENS_SCREENSHOT_DIR) + "/stepper_fusion_ghosts.png";
            QVERIFY(w.grab().save(path));
        }
        {
            // The memory of the optimized transformer block: in-place reuse against greedy-by-size.
            MainWindow w;
            w.resize(1920, 1080);
            w.show();
            QVERIFY(openAndWait(w, [&] { w.openExample("transformer_block"); }));
            QVERIFY(runLevel(w, "all"));
            QVERIFY(showRow(w, w.stepper()->lastRun()->rowCount() - 1));
            QSignalSpy planned(w.memoryView(), &ui::MemoryView::planReady);
            w.memoryView()->setPlanners("greedy-size", "inplace");
            QVERIFY(waitFor(planned, 30000));
            QTRY_VERIFY(!w.memoryView()->isPlanning());
            QVERIFY(w.memoryView()->snapshot().compare != nullptr);
            if (auto* log = w.findChild<QDockWidget*>("changeLog")) log->hide();
            if (auto* dock = w.findChild<QDockWidget*>("memory")) {
                dock->raise();
                w.resizeDocks({dock}, {700}, Qt::Vertical);
            }
            // Select a node: its output buffer is outlined in the charts.
            for (ir::NodeId id : w.shownModel()->graph.nodeOrder())
                if (w.shownModel()->graph.node(id).opType == "Softmax") w.graphView()->selectNode(id);
            QCoreApplication::processEvents();
            const QString path = QString(PASSLENS_SCREENSHOT_DIR) + "/stepper_memory_two_planners.png";
            QVERIFY(w.grab().save(path));
            QCOMPARE(QImage(path).width(), 1920);
            PASSLENS_VERIFY_DRAWN(path);
        }
    }
};

QTEST_MAIN(StepperTest)
#include "test_stepper.moc"
