#include "compare/DifferenceModel.h"

#include <QBrush>
#include <algorithm>
#include <QStringList>

#include "stepper/DiffStyle.h"

namespace passlens::ui {

using diff::NodeStatus;

namespace {

QString statusText(NodeStatus s) {
    switch (s) {
    case NodeStatus::Changed: return QObject::tr("changed");
    case NodeStatus::OnlyInA: return QObject::tr("only in A");
    case NodeStatus::OnlyInB: return QObject::tr("only in B");
    case NodeStatus::Same: break;
    }
    return QObject::tr("same");
}

/// Same colors as the stepper's diff: only in A = removed (red), only in B = added (green).
DiffState stateOf(NodeStatus s) {
    switch (s) {
    case NodeStatus::Changed: return DiffState::Changed;
    case NodeStatus::OnlyInA: return DiffState::Removed;
    case NodeStatus::OnlyInB: return DiffState::Added;
    case NodeStatus::Same: break;
    }
    return DiffState::Unchanged;
}

}  // namespace

void DifferenceModel::setComparison(std::shared_ptr<const diff::ModelComparison> cmp) {
    beginResetModel();
    cmp_ = std::move(cmp);
    entries_.clear();
    if (cmp_)
        for (const auto& g : cmp_->graphs)
            for (const auto& r : g.nodes)
                if (r.status != NodeStatus::Same) entries_.push_back({&g, &r});
    // Constant nodes last: mostly folded or saved as initializers, they would bury the op changes.
    std::stable_partition(entries_.begin(), entries_.end(), [](const Entry& e) {
        const ir::Node& n = e.row->a != ir::kNone ? e.graph->a->node(e.row->a) : e.graph->b->node(e.row->b);
        return n.opType != "Constant";
    });
    endResetModel();
}

int DifferenceModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(entries_.size()); }
int DifferenceModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant DifferenceModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const Entry& e = entries_[size_t(index.row())];
    const diff::NodeDiff& r = *e.row;
    if (role == Qt::BackgroundRole && index.column() == Status) return QBrush(diffTint(stateOf(r.status)));
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
    const QString where = e.graph->path.empty() ? QString() : QString::fromStdString(e.graph->path) + ": ";
    switch (index.column()) {
    case Status: return statusText(r.status);
    case NodeA: return r.a == ir::kNone ? QString() : where + QString::fromStdString(diff::nodeLabel(*e.graph->a, r.a));
    case NodeB: return r.b == ir::kNone ? QString() : where + QString::fromStdString(diff::nodeLabel(*e.graph->b, r.b));
    case Op: return QString::fromStdString(r.a != ir::kNone ? e.graph->a->node(r.a).opType : e.graph->b->node(r.b).opType);
    case Changes: {
        QStringList l;
        for (const auto& c : r.changes) l << QString::fromStdString(c);
        return l.join("; ");
    }
    default: return {};
    }
}

QVariant DifferenceModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"Status", "A", "B", "Op", "What changed"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

}  // namespace passlens::ui
