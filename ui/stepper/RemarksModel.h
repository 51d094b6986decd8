#pragma once
// Remarks of one pass (applied / missed, as LLVM's -Rpass / -Rpass-missed), filtered by kind and
// by rule. The filter is applied when the data is set, so rows are always what is shown.
#include <QAbstractTableModel>
#include <QStringList>
#include <optional>
#include <vector>

#include "passes/ChangeLog.h"

namespace passlens::ui {

class RemarksModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Kind, Rule, Nodes, Message, ColumnCount };
    using QAbstractTableModel::QAbstractTableModel;

    void resetData(std::vector<passes::Remark> remarks);
    /// nullopt = both kinds; `rule` empty = every rule.
    void setFilter(std::optional<passes::RemarkKind> kind, const QString& rule);
    /// Rules present in the unfiltered remarks, sorted.
    QStringList rules() const;
    const passes::Remark* remarkAt(int row) const;
    std::vector<ir::NodeId> nodesAt(int row) const;  ///< main-graph nodes of a row
    int totalCount() const { return int(all_.size()); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    void refilter();
    std::vector<passes::Remark> all_;
    std::vector<size_t> shown_;  ///< indices into all_
    std::optional<passes::RemarkKind> kind_;
    QString rule_;
};

}  // namespace passlens::ui
