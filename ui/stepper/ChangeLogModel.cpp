#include "stepper/ChangeLogModel.h"

#include <QColor>
#include <QStringList>
#include <algorithm>

namespace passlens::ui {

namespace {
QString joinNames(const std::vector<std::string>& names) {
    QStringList l;
    for (const auto& n : names) l << QString::fromStdString(n);
    return l.join(", ");
}
QColor kindColor(passes::ChangeKind k) {
    switch (k) {
    case passes::ChangeKind::Added: return QColor("#1a7f37");
    case passes::ChangeKind::Removed: return QColor("#cf222e");
    case passes::ChangeKind::Replaced:
    case passes::ChangeKind::Folded: return QColor("#8250df");
    default: return QColor("#9a6700");
    }
}
}  // namespace

void ChangeLogModel::resetData(std::vector<passes::Change> changes) {
    beginResetModel();
    changes_ = std::move(changes);
    endResetModel();
}

std::vector<ir::NodeId> ChangeLogModel::nodesAt(int row) const {
    if (row < 0 || row >= int(changes_.size()) || !changes_[size_t(row)].graphPath.empty()) return {};
    const auto& c = changes_[size_t(row)];
    std::vector<ir::NodeId> out = c.nodes;  // the change's own nodes first, then the ones it rewired
    for (ir::NodeId n : c.touched)
        if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    return out;
}

int ChangeLogModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(changes_.size()); }
int ChangeLogModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ChangeLogModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const auto& c = changes_[size_t(index.row())];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Kind: return QString::fromUtf8(passes::changeKindName(c.kind).data(), qsizetype(passes::changeKindName(c.kind).size()));
        case Rule: return QString::fromStdString(c.rule);
        case Nodes: {
            QString names = joinNames(c.nodeNames);
            return c.graphPath.empty() ? names : QString::fromStdString(c.graphPath) + ": " + names;
        }
        case Reason: return QString::fromStdString(c.reason);
        }
    }
    if (role == Qt::ForegroundRole && index.column() == Kind) return kindColor(c.kind);
    if (role == Qt::ToolTipRole) return QString::fromStdString(c.reason);
    return {};
}

QVariant ChangeLogModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, o, role);
    switch (section) {
    case Kind: return tr("Change");
    case Rule: return tr("Rule");
    case Nodes: return tr("Nodes");
    case Reason: return tr("Reason");
    }
    return {};
}

}  // namespace passlens::ui
