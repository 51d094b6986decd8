// passlens: the desktop app. Opens the model given on the command line, or a teaching example.
#include <QApplication>

#include "MainWindow.h"
#include "examples/Examples.h"

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("PassLens");
    QApplication::setOrganizationName("PassLens");
    QApplication::setApplicationVersion(PASSLENS_VERSION);
    passlens::ui::MainWindow window;
    const QStringList args = QApplication::arguments();
    if (args.size() > 1) window.openFile(args.at(1));
    else {
        auto ex = passlens::examples::all().front();
        window.setModel(std::make_shared<passlens::ir::Model>(ex.build()), QString::fromStdString(ex.title));
    }
    window.show();
    return QApplication::exec();
}
