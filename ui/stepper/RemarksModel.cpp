#include "stepper/RemarksModel.h"

#include <QColor>
#include <set>

namespace passlens::ui {

void RemarksModel::resetData(std::vector<passes::Remark> remarks) {
    beginResetModel();
    all_ = std::move(remarks);
    refilter();
    endResetModel();
}

void RemarksModel::setFilter(std::optional<passes::RemarkKind> kind, const QString& rule) {
    beginResetModel();
    kind_ = kind;
    rule_ = rule;
    refilter();
    endResetModel();
}

void RemarksModel::refilter() {
    shown_.clear();
    for (size_t i = 0; i < all_.size(); ++i) {
        if (kind_ && all_[i].kind != *kind_) continue;
        if (!rule_.isEmpty() && QString::fromStdString(all_[i].rule) != rule_) continue;
        shown_.push_back(i);
    }
}

QStringList RemarksModel::rules() const {
    std::set<QString> s;
    for (const auto& r : all_)
        if (!r.rule.empty()) s.insert(QString::fromStdString(r.rule));
    return QStringList(s.begin(), s.end());
}

const passes::Remark* RemarksModel::remarkAt(int row) const {
    return row >= 0 && row < int(shown_.size()) ? &all_[shown_[size_t(row)]] : nullptr;
}

std::vector<ir::NodeId> RemarksModel::nodesAt(int row) const {
    const auto* r = remarkAt(row);
    return r && r->graphPath.empty() ? r->nodes : std::vector<ir::NodeId>{};
}

int RemarksModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(shown_.size()); }
int RemarksModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RemarksModel::data(const QModelIndex& index, int role) const {
    const auto* r = index.isValid() ? remarkAt(index.row()) : nullptr;
    if (!r) return {};
    const bool missed = r->kind == passes::RemarkKind::Missed;
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Kind: return missed ? tr("missed") : tr("applied");
        case Rule: return QString::fromStdString(r->rule);
        case Nodes: {
            QStringList l;
            for (const auto& n : r->nodeNames) l << QString::fromStdString(n);
            return (r->graphPath.empty() ? QString() : QString::fromStdString(r->graphPath) + ": ") + l.join(", ");
        }
        case Message: return QString::fromStdString(r->message);
        }
    }
    if (role == Qt::ForegroundRole && index.column() == Kind) return missed ? QColor("#bc4c00") : QColor("#1a7f37");
    if (role == Qt::ToolTipRole) return QString::fromStdString(r->message);
    return {};
}

QVariant RemarksModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, o, role);
    switch (section) {
    case Kind: return tr("Remark");
    case Rule: return tr("Rule");
    case Nodes: return tr("Nodes");
    case Message: return tr("Message");
    }
    return {};
}

}  // namespace passlens::ui
