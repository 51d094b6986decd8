#pragma once
// The properties dock: everything about the selected node or value, as rich text.
#include <QImage>
#include <QTextBrowser>
#include <vector>

#include "graph/GraphSnapshot.h"

namespace passlens::ui {

class PropertiesPanel : public QTextBrowser {
    Q_OBJECT
public:
    explicit PropertiesPanel(QWidget* parent = nullptr);
    void showNode(const SnapshotPtr& snap, ir::NodeId id);
    void showValue(const SnapshotPtr& snap, ir::ValueId id);
    void showNothing();
    /// Number of histogram images the current text shows (for tests).
    size_t histogramCount() const { return images_.size(); }

protected:
    QVariant loadResource(int type, const QUrl& name) override;

private:
    std::vector<QImage> images_;  ///< histograms of the tensors shown, served as hist:<index>
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
