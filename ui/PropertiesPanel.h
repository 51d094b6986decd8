#pragma once
// The properties dock: everything about the selected node or value, as rich text.
#include <QTextBrowser>

#include "graph/GraphSnapshot.h"

namespace passlens::ui {

class PropertiesPanel : public QTextBrowser {
    Q_OBJECT
public:
    explicit PropertiesPanel(QWidget* parent = nullptr);
    void showNode(const SnapshotPtr& snap, ir::NodeId id);
    void showValue(const SnapshotPtr& snap, ir::ValueId id);
    void showNothing();
};

/// min/max/mean and a 16-bin histogram of a numeric tensor (empty stats for strings/unsupported).
struct TensorStats {
    bool valid = false;
    double min = 0, max = 0, mean = 0;
    std::vector<int64_t> histogram;
    std::vector<double> preview;  ///< first values
};
TensorStats tensorStats(const ir::Tensor& t, size_t bins = 16, size_t previewCount = 12);

}  // namespace passlens::ui
