// MainWindow's dims field: one place to give the model's symbolic input dims sizes
// ("batch=8, seq=128"). Applying it re-imports the file with those dims pinned (as
// `passlens-cli shapes/memplan --dim`), so the shapes on the edges, the memory plan, fusion
// decisions and a verifying run all use them. Shown only while the model has symbolic dims.
#include <QAction>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QStatusBar>
#include <QToolBar>

#include "MainWindow.h"
#include "eval/Interpreter.h"
#include "ir/Error.h"
#include "onnx/Import.h"
#include "stepper/StepperPanel.h"

namespace passlens::ui {

void MainWindow::buildDimsField(QToolBar* bar) {
    dimsEdit_ = new QLineEdit(bar);
    dimsEdit_->setObjectName("dimsField");
    dimsEdit_->setPlaceholderText(tr("batch=8, seq=128"));
    dimsEdit_->setClearButtonEnabled(true);
    dimsEdit_->setMaximumWidth(260);
    auto* label = new QLabel(tr("  Dims: "), bar);
    dimsActions_ = {bar->addSeparator(), bar->addWidget(label), bar->addWidget(dimsEdit_)};
    connect(dimsEdit_, &QLineEdit::returnPressed, this, [this] { applyDims(dimsEdit_->text()); });
    updateDimsField();
}

void MainWindow::updateDimsField() {
    // The names come from the file as imported without pins: those are what the field can set.
    const bool show = !symbolicDims_.isEmpty();
    for (QAction* a : dimsActions_) a->setVisible(show);
    if (show) dimsEdit_->setPlaceholderText(symbolicDims_.join("=…, ") + "=…");  // this model's names
    dimsEdit_->setToolTip(tr("Sizes for the symbolic input dims (NAME=VALUE, comma-separated), Enter applies them "
                             "to the shapes on the edges, the memory plan and fusion. This model's: %1")
                              .arg(symbolicDims_.join(", ")));
}

bool MainWindow::applyDims(const QString& text) {
    if (filePath_.isEmpty()) return false;
    std::vector<std::pair<std::string, int64_t>> pins;
    try {
        pins = parseDimPins(text);
        for (const auto& [name, value] : pins)
            if (!symbolicDims_.contains(QString::fromStdString(name)))
                throw Error(ErrorKind::BadInput, "no graph input has a dim named '" + name + "' (this model's: " +
                                                     symbolicDims_.join(", ").toStdString() + ")");
        onnxio::ImportOptions io;
        io.pinnedDims = pins;
        auto m = std::make_shared<ir::Model>(onnxio::importModelFile(filePath_.toStdString(), io));
        const QStringList names = symbolicDims_;
        const QString path = filePath_;
        setModel(std::move(m), QFileInfo(path).fileName());
        filePath_ = path;
        symbolicDims_ = names;  // setModel read the pinned model: keep the file's names
        dims_ = text.trimmed();
        dimsEdit_->setText(dims_);
        updateDimsField();
        stepper_->setVerifyDims(dims_);
        statusBar()->showMessage(pins.empty() ? tr("Dims cleared: symbolic again")
                                              : tr("Dims %1 applied: shapes, memory plan and fusion use them").arg(dims_), 8000);
        return true;
    } catch (const std::exception& e) {
        showError(tr("Cannot apply the dims"), QString::fromStdString(e.what()));
        return false;
    }
}

}  // namespace passlens::ui
