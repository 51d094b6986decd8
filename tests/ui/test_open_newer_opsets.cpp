// The app on the committed torch exports rewritten to opsets 18, 20, 21 and 23 (tests/models):
// each opens editable (not read-only), runs the extended level with "Verify outputs" on, every
// pass keeps the outputs, and stepping through every row shows a model.
#include <QDir>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>

#include "MainWindow.h"
#include "stepper/PipelineJob.h"
#include "stepper/StepperPanel.h"

using passlens::ui::MainWindow;
using passlens::ui::StepperPanel;

namespace {

bool waitFor(QSignalSpy& spy, int ms = 120000) { return spy.count() > 0 || spy.wait(ms); }

QStringList newerOpsetExports() {
    QDir dir(QStringLiteral(PASSLENS_FIXTURES_DIR));
    return dir.entryList({"*_opset18.onnx", "*_opset20.onnx", "*_opset21.onnx", "*_opset23.onnx"}, QDir::Files, QDir::Name);
}

}  // namespace

class OpenNewerOpsetsTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QVERIFY2(newerOpsetExports().size() >= 10, "the opset 18-23 rewrites are missing from tests/models");
    }

    void everyRewriteOpensRunsVerifiedAndSteps() {
        size_t nodesBefore = 0, nodesAfter = 0;
        for (const QString& file : newerOpsetExports()) {
            const QByteArray name = file.toUtf8();
            MainWindow w;
            w.show();
            QSignalSpy ready(&w, &MainWindow::layoutReady);
            QSignalSpy errors(&w, &MainWindow::errorShown);
            QVERIFY2(w.openFile(QDir(QStringLiteral(PASSLENS_FIXTURES_DIR)).filePath(file)), name);
            QVERIFY2(waitFor(ready), name);
            QVERIFY2(errors.count() == 0, name);
            QVERIFY2(w.readOnlyReason().isEmpty(), qPrintable(file + ": " + w.readOnlyReason()));
            QVERIFY2(w.model() && w.model()->graph.nodeCount() > 0, name);

            StepperPanel* stepper = w.stepper();
            QSignalSpy done(stepper, &StepperPanel::runFinished);
            stepper->setLevel("extended");
            stepper->setVerifyOutputs(true);
            stepper->run();
            QVERIFY2(waitFor(done), name);
            auto run = stepper->lastRun();
            QVERIFY2(run && run->error.isEmpty(), qPrintable(file + ": " + (run ? run->error : QString("no run"))));
            QVERIFY2(run->result, name);
            QVERIFY2(run->verified(), name);
            QVERIFY2(run->firstDifferingRow() < 0, qPrintable(file + ": outputs change at row " + QString::number(run->firstDifferingRow())));
            const size_t after = run->modelAt(run->rowCount() - 1)->graph.nodeCount();
            QVERIFY2(after <= w.model()->graph.nodeCount(), name);
            nodesBefore += w.model()->graph.nodeCount();
            nodesAfter += after;
            for (int row = 0; row < run->rowCount(); ++row) {
                stepper->setCurrentRow(row);
                QCoreApplication::processEvents();
            }
            QCOMPARE(stepper->currentRow(), run->rowCount() - 1);
            QVERIFY2(errors.count() == 0, name);
        }
        QVERIFY2(nodesAfter * 2 < nodesBefore, "extended should at least halve the exports' node count");
    }
};

QTEST_MAIN(OpenNewerOpsetsTest)
#include "test_open_newer_opsets.moc"
