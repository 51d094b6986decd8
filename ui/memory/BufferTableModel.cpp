#include "memory/BufferTableModel.h"

#include "plot/Scale.h"

namespace passlens::ui {

void BufferTableModel::setPlan(std::shared_ptr<const memory::MemoryPlan> plan) {
    beginResetModel();
    plan_ = std::move(plan);
    endResetModel();
}

int BufferTableModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !plan_) return 0;
    return static_cast<int>(plan_->buffers.size());
}

int BufferTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant BufferTableModel::data(const QModelIndex& index, int role) const {
    if (!plan_ || !index.isValid() || index.parent().isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const auto& b = plan_->buffers[static_cast<size_t>(index.row())];
    auto stepText = [&](int s) {
        QString t = QString::number(s);
        if (s >= 0 && s < static_cast<int>(plan_->scheduleNames.size()))
            t += "  " + QString::fromStdString(plan_->scheduleNames[static_cast<size_t>(s)]);
        return t;
    };
    auto hostName = [&]() -> QString {
        if (b.inplaceOfIndex >= 0 && b.inplaceOfIndex < static_cast<int>(plan_->buffers.size()))
            return QString::fromStdString(plan_->buffers[static_cast<size_t>(b.inplaceOfIndex)].name);
        return {};
    };
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Value: return b.name.empty() ? QString("(workspace)") : QString::fromStdString(b.name);
        case Bytes: return QString::fromStdString(plot::formatBytes(static_cast<double>(b.bytes)));
        case First: return stepText(b.first);
        case Last: return stepText(b.last);
        case Offset: return QString::fromStdString(plot::formatBytes(static_cast<double>(b.offset)));
        case InplaceOf: return hostName();
        }
    } else if (role == Qt::UserRole) {
        switch (index.column()) {
        case Value: return b.value == ir::kNone ? QVariant() : QVariant(static_cast<qulonglong>(b.value));
        case Bytes: return static_cast<qlonglong>(b.bytes);
        case First: return b.first;
        case Last: return b.last;
        case Offset: return static_cast<qlonglong>(b.offset);
        case InplaceOf: return b.inplaceOfIndex;
        }
    } else if (role == Qt::ToolTipRole) {
        if (index.column() == Bytes || index.column() == Offset)
            return QString("%1 bytes").arg(index.column() == Bytes ? b.bytes : b.offset);
    } else if (role == Qt::TextAlignmentRole) {
        if (index.column() == Bytes || index.column() == Offset) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant BufferTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Value: return "Value";
    case Bytes: return "Bytes";
    case First: return "First step";
    case Last: return "Last step";
    case Offset: return "Offset";
    case InplaceOf: return "In place of";
    }
    return {};
}

}  // namespace passlens::ui
