#pragma once
// Training graphs in the app: Passes → Build Training Graph… runs the autodiff pass (then the
// basic passes) in the stepper; forward, loss and backward nodes are drawn in distinct styles, and
// selecting a forward node highlights its gradient nodes and the edges of the tensors they saved.
#include <QObject>
#include <memory>

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
    void buildTrainingGraph(const autodiff::AutodiffOptions& options);
    /// The dialog (loss, output, parameters); runs on Build.
    void showDialog();
    /// Backward/loss nodes drawn with their role style in the main view.
    int styledRoleNodes() const { return styledRoleNodes_; }
    /// Gradient nodes and saved-tensor edges highlighted for the selected forward node.
    int highlightedGradientNodes() const { return highlightedNodes_; }
    int highlightedSavedEdges() const { return highlightedEdges_; }

    static NodeStyle backwardStyle();
    static NodeStyle lossStyle();
    static NodeStyle gradientOfSelectionStyle();

private:
    void applyRoleStyles();
    void onNodeSelected(uint32_t id);

    MainWindow* window_;
    std::unique_ptr<passes::PassRegistry> registry_;
    int styledRoleNodes_ = 0, highlightedNodes_ = 0, highlightedEdges_ = 0;
};

}  // namespace passlens::ui
