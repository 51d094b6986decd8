// MainWindow's File → Compare With…: opens a CompareView tab (ui/compare) for the open model and
// another file, and shows the match of a selected node in the Properties dock.
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextCursor>

#include "MainWindow.h"
#include "PropertiesPanel.h"
#include "compare/CompareView.h"

namespace passlens::ui {

void MainWindow::buildCompareAction(QMenu* file) {
    QAction* compare = file->addAction(tr("Compare &With…"), this, [this] {
        if (!model_) return showError(tr("Nothing to compare"), tr("Open a model first: it becomes side A of the comparison."));
        QSettings s;
        const QString path = QFileDialog::getOpenFileName(this, tr("Compare with ONNX model"), s.value("lastDir").toString(),
                                                          tr("ONNX models (*.onnx);;All files (*)"));
        if (!path.isEmpty()) compareWith(path);
    });
    compare->setObjectName("compareWithAction");
    compare->setShortcut(QKeySequence(tr("Ctrl+Shift+D")));
}

CompareView* MainWindow::compareWith(const QString& pathB) {
    if (!model_) return nullptr;
    auto* view = new CompareView(tabs_);
    view->setObjectName("compareView");
    const int tab = tabs_->addTab(view, tr("Compare: %1 ↔ %2").arg(title_, QFileInfo(pathB).fileName()));
    tabs_->setCurrentIndex(tab);
    connect(view, &CompareView::failed, this, [this](const QString& m) { showError(tr("Cannot compare"), m); });
    connect(view, &CompareView::nodeChosen, this, [this](SnapshotPtr snap, ir::NodeId id, const QString& html) {
        properties_->showNode(snap, id);
        QTextCursor top(properties_->document());
        top.movePosition(QTextCursor::Start);
        top.insertHtml(html);
    });
    view->compareWithFile(model_, title_, pathB);
    return view;
}

}  // namespace passlens::ui
