// `passlens --help` and `--version` print and exit 0 with no display at all (QT_QPA_PLATFORM,
// DISPLAY and WAYLAND_DISPLAY unset); opening a model without one exits 2 with one line, never
// an abort. The app binary runs as a subprocess.
#include <QProcess>
#include <QProcessEnvironment>
#include <QtTest>

namespace {

struct Outcome {
    QProcess::ExitStatus status = QProcess::CrashExit;
    int code = -1;
    QString out, err;
};

/// Runs the app with `args` in an environment without any display.
Outcome runWithoutDisplay(const QStringList& args) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"}) env.remove(name);
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(PASSLENS_GUI_BINARY, args);
    Outcome o;
    if (!p.waitForFinished(30000)) {
        p.kill();
        p.waitForFinished();
        o.err = "timed out";
        return o;
    }
    o.status = p.exitStatus();
    o.code = p.exitCode();
    o.out = QString::fromUtf8(p.readAllStandardOutput());
    o.err = QString::fromUtf8(p.readAllStandardError());
    return o;
}

QString describe(const Outcome& o) {
    return QString("status %1, exit %2, stdout: %3, stderr: %4")
        .arg(o.status == QProcess::NormalExit ? "normal" : "crash").arg(o.code).arg(o.out.left(200), o.err.left(400));
}

}  // namespace

class HeadlessStartTest : public QObject {
    Q_OBJECT
private slots:
    void helpPrintsAndExitsZero() {
        for (const QString& flag : {QString("--help"), QString("-h")}) {
            const Outcome o = runWithoutDisplay({flag});
            QVERIFY2(o.status == QProcess::NormalExit && o.code == 0, qPrintable(describe(o)));
            QVERIFY2(o.out.contains("Usage:") && o.out.contains("--example"), qPrintable(describe(o)));
        }
    }

    void versionPrintsAndExitsZero() {
        const Outcome o = runWithoutDisplay({"--version"});
        QVERIFY2(o.status == QProcess::NormalExit && o.code == 0, qPrintable(describe(o)));
        QVERIFY2(o.out.contains(QString("PassLens ") + PASSLENS_VERSION), qPrintable(describe(o)));
    }

    void helpWinsOverOtherArguments() {
        const Outcome o = runWithoutDisplay({QString(PASSLENS_FIXTURES_DIR) + "/resnet_tiny_static.onnx", "--help"});
        QVERIFY2(o.status == QProcess::NormalExit && o.code == 0 && o.out.contains("Usage:"), qPrintable(describe(o)));
    }

    void openingAModelWithoutDisplayExitsTwoWithOneLine() {
        const Outcome o = runWithoutDisplay({QString(PASSLENS_FIXTURES_DIR) + "/resnet_tiny_static.onnx"});
        QVERIFY2(o.status == QProcess::NormalExit && o.code == 2, qPrintable(describe(o)));
        QCOMPARE(o.err.trimmed().count('\n'), 0);
        QVERIFY2(o.err.contains("no display"), qPrintable(describe(o)));
    }
};

QTEST_GUILESS_MAIN(HeadlessStartTest)
#include "test_headless_start.moc"
