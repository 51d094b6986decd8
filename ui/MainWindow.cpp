#include "MainWindow.h"

#include <QLabel>
#include <QMessageBox>
#include <QStatusBar>

#include "ir/Error.h"
#include "onnx/Import.h"
#include "onnx/ModelInfo.h"

namespace passlens::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    summary_ = new QLabel(this);
    summary_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    summary_->setMargin(16);
    setCentralWidget(summary_);
    resize(1280, 800);
    setWindowTitle("PassLens");
}

MainWindow::~MainWindow() = default;

bool MainWindow::openFile(const QString& path) {
    try {
        auto m = std::make_shared<ir::Model>(onnxio::importModelFile(path.toStdString()));
        setModel(std::move(m), path);
        return true;
    } catch (const std::exception& e) {
        QMessageBox::critical(this, tr("Cannot open model"),
                              tr("%1\n\n%2").arg(path, QString::fromStdString(e.what())));
        return false;
    }
}

void MainWindow::setModel(std::shared_ptr<const ir::Model> model, const QString& title) {
    model_ = std::move(model);
    auto info = onnxio::describeModel(*model_);
    summary_->setText(QString::fromStdString(onnxio::modelInfoToText(info)));
    setWindowTitle(title + " — PassLens");
    statusBar()->showMessage(tr("%1 nodes, %2 parameters").arg(info.nodeCount).arg(info.parameterCount));
}

}  // namespace passlens::ui
