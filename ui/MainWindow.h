#pragma once
#include <QMainWindow>
#include <memory>

#include "ir/Model.h"

class QLabel;

namespace passlens::ui {

/// The application window. Owns the loaded model; views observe it.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Loads a model file; on failure shows an error dialog and keeps the current model.
    bool openFile(const QString& path);
    /// Shows an in-memory model (examples) under a display name.
    void setModel(std::shared_ptr<const ir::Model> model, const QString& title);
    std::shared_ptr<const ir::Model> model() const { return model_; }

private:
    std::shared_ptr<const ir::Model> model_;
    QLabel* summary_ = nullptr;
};

}  // namespace passlens::ui
