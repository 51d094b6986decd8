#pragma once
// The change log of one pass: kind, rule, nodes, reason; nodesAt(row) for "select its nodes".
#include <QAbstractTableModel>
#include <vector>

#include "passes/ChangeLog.h"

namespace passlens::ui {

class ChangeLogModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Kind, Rule, Nodes, Reason, ColumnCount };
    using QAbstractTableModel::QAbstractTableModel;

    void resetData(std::vector<passes::Change> changes);
    const std::vector<passes::Change>& changes() const { return changes_; }
    /// Main-graph nodes of a row (subgraph entries name nodes of their own graph: none here).
    std::vector<ir::NodeId> nodesAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    std::vector<passes::Change> changes_;
};

}  // namespace passlens::ui
