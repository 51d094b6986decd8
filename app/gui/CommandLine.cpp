#include "CommandLine.h"

#include <QCoreApplication>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace passlens::app {

GuiCommandLine::GuiCommandLine() {
    parser.setApplicationDescription("Watch an AI compiler's graph optimizations happen, pass by pass");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("model", "ONNX model to open (default: a teaching example)");
    parser.addOption(example);
    parser.addOption(timeOpen);
    parser.addOption(timeStep);
}

void setApplicationIdentity() {
    QCoreApplication::setApplicationName("PassLens");
    QCoreApplication::setOrganizationName("PassLens");
    QCoreApplication::setApplicationVersion(PASSLENS_VERSION);
}

namespace {

bool isTextOnlyFlag(const char* a) {
    for (const char* flag : {"-h", "--help", "-?", "--help-all", "-v", "--version"})
        if (std::strcmp(a, flag) == 0) return true;
    return false;
}

bool envSet(const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
}

/// Whether Qt can find a window system: a platform chosen explicitly (QT_QPA_PLATFORM,
/// -platform), or an X11 or Wayland display to connect to. Without one the xcb plugin aborts.
bool displayAvailable(int argc, char** argv) {
    if (envSet("QT_QPA_PLATFORM") || envSet("DISPLAY") || envSet("WAYLAND_DISPLAY")) return true;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "-platform") == 0 || std::strcmp(argv[i], "--platform") == 0) return true;
#if defined(Q_OS_WIN) || defined(Q_OS_MACOS)
    return true;
#else
    return false;
#endif
}

}  // namespace

int answerWithoutWindow(int argc, char** argv) {
    bool textOnly = false;
    for (int i = 1; i < argc; ++i) textOnly |= isTextOnlyFlag(argv[i]);
    if (textOnly) {
        QCoreApplication core(argc, argv);
        setApplicationIdentity();
        GuiCommandLine cl;
        // Help and version win over anything else on the line (Qt's own -platform, say).
        cl.parser.parse(QCoreApplication::arguments());
        if (cl.parser.isSet("version")) cl.parser.showVersion();  // exits 0
        if (cl.parser.isSet("help")) cl.parser.showHelp(0);
        cl.parser.process(core);  // --help-all (exits 0), or a usage error (exits 1)
        return 0;
    }
    if (!displayAvailable(argc, argv)) {
        std::fprintf(stderr,
                     "passlens: no display (DISPLAY and WAYLAND_DISPLAY are unset); run it under xvfb-run or with "
                     "QT_QPA_PLATFORM=offscreen, or use passlens-cli\n");
        return 2;
    }
    return -1;
}

}  // namespace passlens::app
