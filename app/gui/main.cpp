// passlens: the desktop app. Opens the model given on the command line, or a teaching example.
#include <QApplication>
#include <QCommandLineParser>

#include "MainWindow.h"
#include "examples/Examples.h"

int main(int argc, char** argv) {
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
    parser.process(app);

    passlens::ui::MainWindow window;
    window.show();
    const QStringList args = parser.positionalArguments();
    if (!args.isEmpty()) window.openFile(args.front());
    else if (parser.isSet(example)) window.openExample(parser.value(example));
    else window.openExample(QString::fromStdString(passlens::examples::all().front().id));
    return QApplication::exec();
}
