#pragma once
// passlens's command line, answered in two stages: --help and --version (and usage errors) by a
// QCoreApplication before any window system is touched, so they work without a display; the
// rest by the QApplication the window needs.
#include <QCommandLineOption>
#include <QCommandLineParser>

namespace passlens::app {

struct GuiCommandLine {
    GuiCommandLine();
    QCommandLineParser parser;
    QCommandLineOption example{"example", "Open the teaching example with this id.", "id"};
    QCommandLineOption timeOpen{"time-open", "Open MODEL, print import/grouping/layout/first-frame times, exit.", "model"};
    QCommandLineOption timeStep{"time-step", "With --time-open: then run the extended passes and time showing each step."};
};

/// Sets the application name, organization and version (QSettings and --version read them).
void setApplicationIdentity();

/// Answers the arguments that need no window: prints help or the version and returns 0, or a
/// usage error and returns 1 (QCommandLineParser's own codes). Returns -1 when the window must
/// open, and 2 with one line on stderr when it cannot because there is no display.
int answerWithoutWindow(int argc, char** argv);

}  // namespace passlens::app
