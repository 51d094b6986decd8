#pragma once
// "Why not fused?" for one node: its fusion group and every fusion considered for it (fusion-group
// refusals and pattern-pass remarks, from core/pipeline/Explain), as a summary and a list. The
// remarks come from the stepper's run when the window has one; otherwise the extended pipeline
// runs once per model, off the GUI thread, and its remarks are kept for the next node. Picking
// a list entry announces its blocking node and edges; the window highlights them in the graph.
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "LatestJob.h"
#include "pipeline/Explain.h"
#include "graph/GraphSnapshot.h"

class QLabel;
class QListWidget;
class QTextBrowser;

namespace passlens::ui {

class WhyNotFusedPanel : public QWidget {
    Q_OBJECT
public:
    explicit WhyNotFusedPanel(QWidget* parent = nullptr);
    ~WhyNotFusedPanel() override;

    /// Explains `node` of the shown graph (only a model's main graph can be explained), with the
    /// pass remarks of `runRemarks` (the stepper's run) when given, else of a cached run per model.
    void explain(SnapshotPtr graph, ir::NodeId node, std::shared_ptr<const analysis::FusionRemarks> runRemarks = nullptr);
    /// How many times the pattern passes ran for this panel (a cache hit or the stepper's run adds none).
    int pipelineRuns() const { return pipelineRuns_; }
    void clear();

    bool busy() const { return explainJob_.isBusy(); }  ///< until the newest explanation is shown
    /// The explanation on screen (nullopt while none is).
    const std::optional<analysis::NodeExplanation>& explanation() const { return shown_; }
    QListWidget* considerationList() const { return list_; }
    QString summaryText() const;
    /// Selects list entry `row` (the first refused one is selected when a result arrives).
    void selectConsideration(int row);
    /// The explanation as wrapped HTML: the answer first, then one section per kind of fusion
    /// (TVM-style groups, pattern rewrites, onnxruntime transformers).
    static QString explanationHtml(const ir::Graph& g, const analysis::NodeExplanation& e,
                                   const std::vector<std::string>& warnings, const std::string& remarksSource);

signals:
    /// An explanation is on screen.
    void explained(ir::NodeId node);
    /// The chosen consideration: the explained node, the nodes it was about, what blocked it
    /// (kNone: nothing, e.g. it was applied) and the drawn edges (producer, consumer) to mark.
    void blockerChanged(ir::NodeId node, std::vector<ir::NodeId> involved, ir::NodeId blockingNode,
                        std::vector<std::pair<ir::NodeId, ir::NodeId>> edges);

private:
    struct Result {
        SnapshotPtr graph;
        std::optional<analysis::NodeExplanation> node;
        std::vector<std::string> warnings;
        std::string remarksSource;
        std::shared_ptr<const analysis::FusionRemarks> remarks;  ///< what was used (to cache)
        bool ranPipeline = false;
        QString error;
    };
    void onFinished(Result r);
    void onRowChanged(int row);

    QLabel* title_;
    QTextBrowser* summary_;
    QListWidget* list_;
    SnapshotPtr graph_;
    std::optional<analysis::NodeExplanation> shown_;
    LatestJob<Result> explainJob_;
    // Remarks of the last model explained without a stepper run (one pipeline run per model).
    std::weak_ptr<const ir::Model> cachedModel_;
    std::shared_ptr<const analysis::FusionRemarks> cachedRemarks_;
    int pipelineRuns_ = 0;
};

}  // namespace passlens::ui
