#pragma once
// The buffers of one memory plan as a table: value, bytes, first/last step, offset, in-place-of.
// Display text is human (KiB/MiB, node names); Qt::UserRole gives the raw number for sorting.
#include <QAbstractTableModel>
#include <memory>

#include "memory/MemoryPlan.h"

namespace passlens::ui {

class BufferTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Value, Bytes, First, Last, Offset, InplaceOf, ColumnCount };

    explicit BufferTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}

    void setPlan(std::shared_ptr<const memory::MemoryPlan> plan);
    const memory::MemoryPlan* plan() const { return plan_.get(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const memory::MemoryPlan> plan_;
};

}  // namespace passlens::ui
