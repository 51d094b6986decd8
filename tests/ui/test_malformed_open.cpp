// The app and the malformed corpus (tests/gen/malformed): opening a malformed file shows the error
// dialog naming the node or value, and the model on screen stays; a model whose bad node got past
// import (built in code, validation off) goes through the stepper and "Why not fused?" without
// taking the window down.
#include <QMessageBox>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include "MainWindow.h"
#include "gen/malformed/MalformedModels.h"
#include "graph/GraphView.h"
#include "onnx/Import.h"

#include <onnx/onnx_pb.h>
#include <fstream>
#include "stepper/StepperPanel.h"

using namespace passlens;
using passlens::ui::GraphView;
using passlens::ui::StepperPanel;
using passlens::ui::MainWindow;

namespace {

bool waitFor(QSignalSpy& spy, int ms = 60000) { return spy.count() > 0 || spy.wait(ms); }

QMessageBox* visibleErrorDialog(MainWindow& w) {
    for (auto* box : w.findChildren<QMessageBox*>("errorDialog"))
        if (box->isVisible()) return box;
    return nullptr;
}

const malformed::MalformedModel& corpusModel(const std::string& name) {
    static const auto models = malformed::malformedModels();
    for (const auto& m : models)
        if (m.name == name) return m;
    qFatal("no malformed model %s", name.c_str());
}

}  // namespace

class MalformedOpenTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void malformedFilesShowTheErrorDialogAndTheModelStays() {
        QTemporaryDir dir;
        malformed::writeMalformedModels(dir.path().toStdString());
        MainWindow w;
        w.show();
        QSignalSpy ready(&w, &MainWindow::layoutReady);
        w.openExample("conv_bn_relu");
        QVERIFY(waitFor(ready));
        const auto before = w.model();
        for (const char* name : {"erf_no_inputs", "function_self_recursive", "function_mutually_recursive", "cycle_long_chain",
                                 "transpose_perm_out_of_range", "concat_missing_axis", "value_defined_twice",
                                 "output_never_produced", "shape_overflow_inferred", "raw_data_short"}) {
            const auto& m = corpusModel(name);
            QSignalSpy errors(&w, &MainWindow::errorShown);
            QVERIFY2(!w.openFile(dir.filePath(QString::fromStdString(m.name) + ".onnx")), name);
            QCOMPARE(errors.count(), 1);
            const QString message = errors.first().at(0).toString();
            QVERIFY2(message.contains(QString::fromStdString(m.mustName)), qPrintable(message));
            QMessageBox* box = visibleErrorDialog(w);
            QVERIFY2(box, "no visible error dialog");
            QCOMPARE(w.model(), before);
            box->close();
            QCoreApplication::processEvents();
        }
        QVERIFY(w.isVisible());
    }

    void unknownOperatorOpensReadOnlyWithTheNodeSelected() {
        // x → Relu → FancyOp (no such op in ai.onnx) → Sigmoid: well formed, beyond this build.
        onnx::ModelProto mp;
        mp.set_ir_version(8);
        mp.add_opset_import()->set_version(17);
        auto* g = mp.mutable_graph();
        g->set_name("g");
        auto* in = g->add_input();
        in->set_name("x");
        in->mutable_type()->mutable_tensor_type()->set_elem_type(1);
        in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
        const char* ops[][3] = {{"Relu", "x", "a"}, {"FancyOp", "a", "b"}, {"Sigmoid", "b", "y"}};
        for (auto& op : ops) {
            auto* n = g->add_node();
            n->set_op_type(op[0]);
            n->set_name(std::string(op[0]) + "_1");
            n->add_input(op[1]);
            n->add_output(op[2]);
        }
        g->add_output()->set_name("y");
        QTemporaryDir dir;
        const QString path = dir.filePath("fancy.onnx");
        std::ofstream(path.toStdString(), std::ios::binary) << mp.SerializeAsString();

        MainWindow w;
        w.show();
        QSignalSpy ready(&w, &MainWindow::layoutReady);
        QSignalSpy errors(&w, &MainWindow::errorShown);
        QVERIFY(w.openFile(path));
        QVERIFY(waitFor(ready));
        QCOMPARE(errors.count(), 0);
        QVERIFY(w.model());
        QCOMPARE(w.model()->graph.nodeCount(), size_t(3));
        QVERIFY2(w.readOnlyReason().contains("unknown operator 'FancyOp'"), qPrintable(w.readOnlyReason()));
        QVERIFY(w.statusBar()->currentMessage().startsWith("Read-only:"));
        auto* stepper = w.findChild<StepperPanel*>();
        QVERIFY(stepper && !stepper->isEnabled());
        auto* run = w.findChild<QAction*>("runPipelineAction");
        QVERIFY(run && !run->isEnabled());
        auto* view = w.findChild<GraphView*>("graphView");
        QVERIFY(view);
        QCOMPARE(view->selectedNode(), *w.model()->graph.findNode("FancyOp_1"));
        // A file that is broken in another way still gets the error dialog, and opening a good
        // model makes the window editable again.
        QSignalSpy ready2(&w, &MainWindow::layoutReady);
        w.openExample("conv_bn_relu");
        QVERIFY(waitFor(ready2));
        QVERIFY(w.readOnlyReason().isEmpty());
        QVERIFY(stepper->isEnabled() && run->isEnabled());
    }

    void unvalidatedBadNodeSurvivesTheStepperAndWhyNotFused() {
        // Import with validation off, as a model built in code could be: an Erf and a Sigmoid
        // without inputs reach the pattern passes the stepper and the explain panel run.
        onnxio::ImportOptions options;
        options.validateOps = false;
        auto model = std::make_shared<const ir::Model>(onnxio::importModelBytes(corpusModel("erf_no_inputs").bytes, ".", options));
        MainWindow w;
        w.show();
        QSignalSpy ready(&w, &MainWindow::layoutReady);
        w.setModel(model, "erf_no_inputs");
        QVERIFY(waitFor(ready));
        QSignalSpy done(w.stepper(), &ui::StepperPanel::runFinished);
        w.stepper()->setLevel("all");
        w.stepper()->run();
        QVERIFY(waitFor(done));
        w.showWhyNotFused(model->graph.nodeOrder().front());
        QTest::qWait(500);
        QVERIFY(w.isVisible());
        QCOMPARE(w.model(), model);
    }
};

QTEST_MAIN(MalformedOpenTest)
#include "test_malformed_open.moc"
