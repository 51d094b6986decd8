#pragma once
// The pass stepper dock: choose a level or an explicit pass list, run the pipeline off the GUI
// thread (progress, cancel), then step through the snapshots (buttons, Alt+Left/Alt+Right,
// F10/Shift+F10, or a click on a row). Emits stepChosen(row): row 0 is the input model.
// "Verify outputs" runs the interpreter after each pass (the table's Outputs column; the status
// line names the first pass whose outputs differ).
#include <QWidget>
#include <atomic>
#include <memory>

#include "LatestJob.h"
#include "stepper/PipelineJob.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableView;
class QToolButton;

namespace passlens::ui {

class PassTableModel;

/// "N=1, H=64" → pins; throws BadInput naming the bad item.
std::vector<std::pair<std::string, int64_t>> parseDimPins(const QString& text);

class StepperPanel : public QWidget {
    Q_OBJECT
public:
    explicit StepperPanel(QWidget* parent = nullptr);
    ~StepperPanel() override;

    /// The model pipelines run on (the loaded model); clears the previous run.
    void setModel(std::shared_ptr<const ir::Model> model);
    /// "none" | "basic" | "extended" | "all", or "custom" to use passList().
    void setLevel(const QString& level);
    void setPassList(const QString& commaSeparated);
    /// Run the interpreter before the pipeline and after each pass (off by default).
    void setVerifyOutputs(bool on);
    /// Append the `group-functions` pass (each fusion group becomes one function call) as the last step.
    void setGroupFunctions(bool on);
    /// Prepend the `version-convert` pass toward ai.onnx opset `opset` (0: keep the model's opset).
    void setTargetOpset(int opset);
    bool verifyOutputs() const;
    /// "NAME=VALUE,..." pins for the model's symbolic input dims during verification (others: 1).
    void setVerifyDims(const QString& pins);
    /// Where pass names are looked up (tests add broken passes); must outlive the panel.
    void setRegistry(const passes::PassRegistry* registry);
    QString statusText() const;
    /// Pass names the next run will use.
    std::vector<std::string> requestedPasses() const;

    void run();
    void cancel();
    bool isRunning() const;
    PipelineRunPtr lastRun() const { return run_; }
    PassTableModel* tableModel() const { return table_; }
    QTableView* tableView() const { return view_; }

    int currentRow() const { return current_; }
    void setCurrentRow(int row);  ///< clamps; emits stepChosen when the row changes
    void stepForward() { setCurrentRow(current_ + 1); }
    void stepBack() { setCurrentRow(current_ - 1); }

signals:
    void runFinished();                 ///< a run landed (lastRun() has it, maybe failed/cancelled)
    void runFailed(const QString& message);
    void stepChosen(int row);

private:
    void onFinished(PipelineRun run);
    void updateButtons();

    const passes::PassRegistry* registry_ = &passes::PassRegistry::global();
    std::shared_ptr<const ir::Model> model_;
    std::shared_ptr<const ir::Model> runModel_;  ///< the model the running job works on
    PipelineRunPtr run_;
    int current_ = -1;
    LatestJob<PipelineRun> runJob_;
    PassTableModel* table_ = nullptr;
    QComboBox* level_ = nullptr;
    QLineEdit* passList_ = nullptr;
    QCheckBox* verify_ = nullptr;
    QCheckBox* groupFunctions_ = nullptr;  ///< append group-functions: fusion groups become function calls
    QComboBox* targetOpset_ = nullptr;     ///< prepend version-convert toward this opset (data 0: keep)
    QLineEdit* verifyDims_ = nullptr;
    QPushButton* runButton_ = nullptr;
    QPushButton* cancelButton_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QToolButton* back_ = nullptr;
    QToolButton* forward_ = nullptr;
    QLabel* status_ = nullptr;
    QTableView* view_ = nullptr;
};

}  // namespace passlens::ui
