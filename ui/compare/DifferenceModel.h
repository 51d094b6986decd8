#pragma once
// The compare view's list of differences: one row per changed / only-in-one node of the main
// graphs (bodies' rows carry their path), with status, the two node names, op and what changed.
#include <QAbstractTableModel>
#include <memory>

#include "diff/ModelDiff.h"

namespace passlens::ui {

class DifferenceModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Status, NodeA, NodeB, Op, Changes, ColumnCount };
    using QAbstractTableModel::QAbstractTableModel;

    /// Shows the differing rows of `cmp` (kept alive by the caller's shared pointer).
    void setComparison(std::shared_ptr<const diff::ModelComparison> cmp);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    struct Entry {
        const diff::GraphComparison* graph = nullptr;
        const diff::NodeDiff* row = nullptr;
    };
    const Entry& entry(int row) const { return entries_[size_t(row)]; }

private:
    std::shared_ptr<const diff::ModelComparison> cmp_;
    std::vector<Entry> entries_;
};

}  // namespace passlens::ui
