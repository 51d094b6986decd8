#include "stepper/PassTableModel.h"

#include <QColor>
#include <QFont>

#include "passes/PassRegistry.h"

namespace passlens::ui {

int missedCount(const passes::PassResult& r) {
    int n = 0;
    for (const auto& m : r.remarks) n += m.kind == passes::RemarkKind::Missed;
    return n;
}

void PassTableModel::resetData(PipelineRunPtr run) {
    beginResetModel();
    run_ = std::move(run);
    endResetModel();
}

int PassTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !run_ ? 0 : run_->rowCount();
}

int PassTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant PassTableModel::data(const QModelIndex& index, int role) const {
    if (!run_ || !index.isValid() || index.row() >= rowCount()) return {};
    const int col = index.column();
    if (index.row() == 0) {  // the input model
        const auto& m = *run_->result->initial;
        if (role == Qt::DisplayRole) {
            if (col == Pass) return tr("(input model)");
            if (col == Nodes) return QString::number(passes::countNodesDeep(m.graph));
            return {};
        }
        if (role == Qt::ForegroundRole) return QColor("#57606a");
        if (role == Qt::ToolTipRole) return tr("The model as loaded, before any pass");
        return {};
    }
    const auto& r = run_->stepAt(index.row())->result;
    switch (role) {
    case Qt::DisplayRole:
        switch (col) {
        case Pass: return QString::fromStdString(r.name);
        case Nodes:
            return r.nodesBefore == r.nodesAfter ? QString::number(r.nodesAfter)
                                                 : QString("%1 → %2").arg(r.nodesBefore).arg(r.nodesAfter);
        case Time: return QString::number(r.ms, 'f', r.ms < 10 ? 2 : 1);
        case Changes: return int(r.changes.size());
        case Missed: return missedCount(r);
        }
        return {};
    case Qt::TextAlignmentRole:
        return col == Pass ? QVariant(int(Qt::AlignLeft | Qt::AlignVCenter)) : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ForegroundRole:
        if (col == Missed && missedCount(r) > 0) return QColor("#bc4c00");
        if (!r.changed) return QColor("#57606a");
        return {};
    case Qt::FontRole:
        if (col == Pass && r.changed) { QFont f; f.setBold(true); return f; }
        return {};
    case Qt::ToolTipRole: {
        const auto& reg = passes::PassRegistry::global();
        for (const auto& info : reg.passes())
            if (info.name == r.name) return QString::fromStdString(info.description);
        return {};
    }
    }
    return {};
}

QVariant PassTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, o, role);
    switch (section) {
    case Pass: return tr("Pass");
    case Nodes: return tr("Nodes");
    case Time: return tr("ms");
    case Changes: return tr("Changes");
    case Missed: return tr("Missed");
    }
    return {};
}

}  // namespace passlens::ui
