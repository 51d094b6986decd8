// passlens: the desktop app. Opens the model given on the command line, or a teaching example.
// `passlens --time-open MODEL` measures opening: import, grouping, layout and the first painted
// frame of the graph, one line each on stdout; then how long until the window's analyses (memory
// plan, dominator tree, fusion groups) have landed and the longest the GUI thread was blocked
// after the first frame (what a user feels as a frozen window), then exits.
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QSettings>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "MainWindow.h"
#include "examples/Examples.h"
#include "graph/GraphView.h"

namespace {

/// Prints the timings once the graph view has painted the model's drawing, then quits.
class FirstFrameProbe : public QObject {
public:
    FirstFrameProbe(passlens::ui::MainWindow& window, QElapsedTimer& clock) : window_(window), clock_(clock) {
        connect(&window, &passlens::ui::MainWindow::layoutReady, this, [this] {
            armed_ = true;
            window_.graphView()->viewport()->update();
        });
        connect(&window, &passlens::ui::MainWindow::errorShown, this, [](const QString& message) {
            std::fprintf(stderr, "error: %s\n", message.toUtf8().constData());
            QCoreApplication::exit(2);
        });
        window.graphView()->viewport()->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject* o, QEvent* e) override {
        if (armed_ && !done_ && e->type() == QEvent::Paint) {
            done_ = true;
            // The view paints while this event is delivered; the timer fires right after that.
            QTimer::singleShot(0, this, [this] { report(); });
        }
        return QObject::eventFilter(o, e);
    }

    void report() {
        firstFrame_ = double(clock_.nsecsElapsed()) / 1e9;
        auto snap = window_.graphView()->snapshot();
        std::printf("import: %.2f s\n", window_.importSeconds());
        std::printf("grouping: %.2f s\n", snap ? snap->groupingSeconds : 0.0);
        std::printf("layout: %.2f s\n", snap ? snap->layoutSeconds : 0.0);
        std::printf("boxes: %zu\n", snap ? snap->display.nodes.size() : size_t(0));
        std::printf("first frame: %.2f s\n", firstFrame_);
        std::fflush(stdout);
        waitUntilSettled();
    }

    /// A heartbeat every 5 ms: the largest gap between beats is the longest GUI-thread block.
    /// Settled = no analysis running for three beats in a row (their results delivered and drawn).
    void waitUntilSettled() {
        last_ = clock_.nsecsElapsed();
        auto* beat = new QTimer(this);
        beat->setTimerType(Qt::PreciseTimer);
        connect(beat, &QTimer::timeout, this, [this, beat] {
            const qint64 now = clock_.nsecsElapsed();
            longestBlock_ = std::max(longestBlock_, double(now - last_) / 1e9 - 0.005);
            last_ = now;
            quietBeats_ = window_.analysesRunning() ? 0 : quietBeats_ + 1;
            if (quietBeats_ >= 3 || double(now) / 1e9 > firstFrame_ + 120) {
                beat->stop();
                std::printf("settled: %.2f s\n", double(now) / 1e9);
                std::printf("longest GUI block: %.2f s\n", std::max(0.0, longestBlock_));
                std::fflush(stdout);
                expandOneGroup();
            }
        });
        beat->start(5);
    }

    /// Opens the first collapsed group of the drawing (on a transformer: a range of layers or a
    /// layer) and times it until the redraw is in the view.
    void expandOneGroup() {
        auto snap = window_.graphView()->snapshot();
        uint32_t group = UINT32_MAX;
        if (snap)
            for (const auto& n : snap->display.nodes)
                if (n.kind == passlens::layout::DisplayNode::Kind::Group) { group = n.group; break; }
        if (group == UINT32_MAX) std::_Exit(0);  // a small model, drawn whole
        const qint64 start = clock_.nsecsElapsed();
        connect(&window_, &passlens::ui::MainWindow::expansionShown, this, [this, start] {
            std::printf("expand one group: %.2f s\n", double(clock_.nsecsElapsed() - start) / 1e9);
            std::fflush(stdout);
            // Work still queued in the pool is not waited for.
            std::_Exit(0);
        });
        window_.setGroupExpanded(group, true);
    }

private:
    passlens::ui::MainWindow& window_;
    QElapsedTimer& clock_;
    bool armed_ = false, done_ = false;
    double firstFrame_ = 0, longestBlock_ = 0;
    qint64 last_ = 0;
    int quietBeats_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    QElapsedTimer clock;
    clock.start();
    QApplication app(argc, argv);
    QApplication::setApplicationName("PassLens");
    QApplication::setOrganizationName("PassLens");
    QApplication::setApplicationVersion(PASSLENS_VERSION);
    QApplication::setDesktopFileName("passlens");
    QCommandLineParser parser;
    parser.setApplicationDescription("Watch an AI compiler's graph optimizations happen, pass by pass");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("model", "ONNX model to open (default: a teaching example)");
    QCommandLineOption example("example", "Open the teaching example with this id.", "id");
    parser.addOption(example);
    QCommandLineOption timeOpen("time-open", "Open MODEL, print import/grouping/layout/first-frame times, exit.", "model");
    parser.addOption(timeOpen);
    parser.process(app);

    passlens::ui::MainWindow window;
    if (parser.isSet(timeOpen)) {
        auto* probe = new FirstFrameProbe(window, clock);
        probe->setParent(&window);
        window.show();
        if (!window.openFile(parser.value(timeOpen))) return 2;
        return QApplication::exec();
    }
    // First start (no saved geometry): fill the screen; later starts come back as they were left.
    if (QSettings().contains("window/geometry")) window.show();
    else window.showMaximized();
    const QStringList args = parser.positionalArguments();
    if (!args.isEmpty()) window.openFile(args.front());
    else if (parser.isSet(example)) window.openExample(parser.value(example));
    else window.openExample(QString::fromStdString(passlens::examples::all().front().id));
    return QApplication::exec();
}
