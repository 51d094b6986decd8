// passlens: the desktop app. Opens the model given on the command line, or a teaching example.
// `passlens --time-open MODEL` measures opening: import, grouping, layout and the first painted
// frame of the graph, one line each on stdout; then how long until the window's analyses (memory
// plan, dominator tree, fusion groups) have landed and the longest the GUI thread was blocked
// after the first frame (what a user feels as a frozen window), then exits. With `--time-step` it
// then runs the extended pipeline in the stepper and times showing each step (median and max from
// choosing the row until the step's drawing is in the view).
#include <QApplication>
#include <QElapsedTimer>
#include <QSettings>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "CommandLine.h"
#include "MainWindow.h"
#include "examples/Examples.h"
#include "graph/GraphView.h"
#include "stepper/PassTableModel.h"
#include "stepper/StepperPanel.h"

namespace {

/// Prints the timings once the graph view has painted the model's drawing, then quits.
class FirstFrameProbe : public QObject {
public:
    FirstFrameProbe(passlens::ui::MainWindow& window, QElapsedTimer& clock, bool timeSteps)
        : window_(window), clock_(clock), timeSteps_(timeSteps) {
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
        if (group == UINT32_MAX) return finishOrTimeSteps();  // a small model, drawn whole
        const qint64 start = clock_.nsecsElapsed();
        connect(&window_, &passlens::ui::MainWindow::expansionShown, this, [this, start] {
            if (expandReported_) return;
            expandReported_ = true;
            std::printf("expand one group: %.2f s\n", double(clock_.nsecsElapsed() - start) / 1e9);
            std::fflush(stdout);
            finishOrTimeSteps();
        });
        window_.setGroupExpanded(group, true);
    }

    void finishOrTimeSteps() {
        if (!timeSteps_) std::_Exit(0);  // work still queued in the pool is not waited for
        auto* stepper = window_.stepper();
        const qint64 start = clock_.nsecsElapsed();
        connect(stepper, &passlens::ui::StepperPanel::runFinished, this, [this, stepper, start] {
            std::printf("run passes (extended): %.2f s\n", double(clock_.nsecsElapsed() - start) / 1e9);
            std::fflush(stdout);
            rows_ = stepper->tableModel()->rowCount();
            if (rows_ < 2) std::_Exit(0);
            connect(&window_, &passlens::ui::MainWindow::stepShown, this, [this](int row) { stepLanded(row); });
            chooseStep(1);
        });
        stepper->setLevel("extended");
        stepper->run();
    }

    void chooseStep(int row) {
        stepStart_ = clock_.nsecsElapsed();
        window_.stepper()->setCurrentRow(row);
        // A step that never lands is a finding, not a hang.
        QTimer::singleShot(60000, this, [this, row, landed = stepSeconds_.size()] {
            if (stepSeconds_.size() > landed) return;
            std::fprintf(stderr, "error: step %d was not shown within 60 s\n", row);
            std::_Exit(1);
        });
    }

    /// One step is in the view: note its time, choose the next; at the end print median and max.
    void stepLanded(int row) {
        if (row != window_.stepper()->currentRow()) return;
        stepSeconds_.push_back(double(clock_.nsecsElapsed() - stepStart_) / 1e9);
        if (row + 1 < rows_) {
            QTimer::singleShot(0, this, [this, row] { chooseStep(row + 1); });
            return;
        }
        auto sorted = stepSeconds_;
        std::sort(sorted.begin(), sorted.end());
        std::printf("step (%zu steps): median %.2f s, max %.2f s\n", sorted.size(), sorted[sorted.size() / 2], sorted.back());
        std::fflush(stdout);
        std::_Exit(0);
    }

private:
    passlens::ui::MainWindow& window_;
    QElapsedTimer& clock_;
    const bool timeSteps_;
    bool armed_ = false, done_ = false, expandReported_ = false;
    int rows_ = 0;
    qint64 stepStart_ = 0;
    std::vector<double> stepSeconds_;
    double firstFrame_ = 0, longestBlock_ = 0;
    qint64 last_ = 0;
    int quietBeats_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    QElapsedTimer clock;
    clock.start();
    if (const int code = passlens::app::answerWithoutWindow(argc, argv); code >= 0) return code;
    QApplication app(argc, argv);
    passlens::app::setApplicationIdentity();
    QApplication::setDesktopFileName("passlens");
    passlens::app::GuiCommandLine cl;
    QCommandLineParser& parser = cl.parser;
    parser.process(app);

    passlens::ui::MainWindow window;
    if (parser.isSet(cl.timeOpen)) {
        auto* probe = new FirstFrameProbe(window, clock, parser.isSet(cl.timeStep));
        probe->setParent(&window);
        window.show();
        if (!window.openFile(parser.value(cl.timeOpen))) return 2;
        return QApplication::exec();
    }
    // First start (no saved geometry): fill the screen; later starts come back as they were left.
    if (QSettings().contains("window/geometry")) window.show();
    else window.showMaximized();
    const QStringList args = parser.positionalArguments();
    if (!args.isEmpty()) window.openFile(args.front());
    else if (parser.isSet(cl.example)) window.openExample(parser.value(cl.example));
    else window.openExample(QString::fromStdString(passlens::examples::all().front().id));
    return QApplication::exec();
}
