#pragma once
// Training graphs in the app: Passes → Build Training Graph… runs the autodiff pass (then the
// basic passes) in the stepper; forward, loss and backward nodes are drawn in distinct styles, and
// selecting a forward node highlights its gradient nodes and the edges of the tensors they saved.
#include <QObject>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "LatestJob.h"
#include "autodiff/Autodiff.h"
#include "passes/PassRegistry.h"

class QDialog;

namespace passlens::ui {

class MainWindow;
struct NodeStyle;

class TrainingController : public QObject {
    Q_OBJECT
public:
    explicit TrainingController(MainWindow* window);

    /// Runs autodiff + the basic passes on the loaded model in the stepper.
    void buildTrainingGraph(const autodiff::AutodiffOptions& options, bool recompute = false);
    /// The dialog (loss, output, parameters); runs on Build.
    void showDialog();
    /// Backward/loss nodes drawn with their role style in the main view.
    int styledRoleNodes() const { return styledRoleNodes_; }
    /// Gradient nodes and saved-tensor edges highlighted for the selected forward node.
    int highlightedGradientNodes() const { return highlightedNodes_; }
    int highlightedSavedEdges() const { return highlightedEdges_; }

    /// View → Show Values: runs the interpreter on the shown model (off the GUI thread) with
    /// `inputs` (by name; values missing or of the wrong count are seeded random) and labels
    /// every node whose output has at most 16 elements with that value. `done` fires when drawn.
    void showValues(const std::map<std::string, std::vector<float>>& inputs);
    void showValuesDialog();
    void hideValues();
    /// The value label of a node ("" when none): "= 1.716", "= [1, 2, 3]".
    QString valueLabel(uint32_t node) const;
    int labelledNodes() const { return int(values_.size()); }

    static NodeStyle backwardStyle();
    static NodeStyle lossStyle();
    static NodeStyle recomputeStyle();  ///< copies the recompute pass placed in the backward pass
    static NodeStyle gradientOfSelectionStyle();

signals:
    void valuesShown(int labelledNodes);
    void valuesFailed(const QString& message);

public:
    /// One "Show Values" run: a label per node, or the error.
    struct ValueRun {
        std::map<uint32_t, QString> labels;
        QString error;
    };

private:
    void applyRoleStyles();
    NodeStyle withValue(NodeStyle s, uint32_t node) const;
    void onNodeSelected(uint32_t id);

    MainWindow* window_;
    std::unique_ptr<passes::PassRegistry> registry_;
    int styledRoleNodes_ = 0, highlightedNodes_ = 0, highlightedEdges_ = 0;
    std::map<uint32_t, QString> values_;   ///< node id → value label of its first output
    const void* valuesOf_ = nullptr;       ///< the graph the labels belong to
    std::set<uint32_t> diffStyled_;        ///< nodes the stepper's diff colours (added/changed)
    LatestJob<ValueRun> valuesJob_;        ///< a newer request drops an older run's labels
};

}  // namespace passlens::ui
