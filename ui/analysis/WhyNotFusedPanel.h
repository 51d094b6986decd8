#pragma once
// "Why not fused?" for one node: its fusion group and every fusion considered for it (fusion-group
// refusals and pattern-pass remarks, from core/analysis/Explain), as a summary and a list. The
// explanation runs off the GUI thread (it runs the pattern passes on a copy of the model). Picking
// a list entry announces its blocking node and edges; the window highlights them in the graph.
#include <QFutureWatcher>
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

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

    /// Explains `node` of the shown graph (only a model's main graph can be explained).
    void explain(SnapshotPtr graph, ir::NodeId node);
    void clear();

    bool busy() const { return watcher_.isRunning(); }
    /// The explanation on screen (nullopt while none is).
    const std::optional<analysis::NodeExplanation>& explanation() const { return shown_; }
    QListWidget* considerationList() const { return list_; }
    QString summaryText() const;
    /// Selects list entry `row` (the first refused one is selected when a result arrives).
    void selectConsideration(int row);

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
        QString error;
    };
    void onFinished();
    void onRowChanged(int row);

    QLabel* title_;
    QTextBrowser* summary_;
    QListWidget* list_;
    SnapshotPtr graph_;
    std::optional<analysis::NodeExplanation> shown_;
    QFutureWatcher<Result> watcher_;
    uint64_t generation_ = 0, watchedGeneration_ = 0;
};

}  // namespace passlens::ui
