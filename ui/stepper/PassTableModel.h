#pragma once
// The pass stepper's table: row 0 the input model, then one row per pass of the run (pass name,
// nodes before → after, time, number of changes, number of missed remarks, and with "Verify
// outputs" whether the pass kept the outputs the same).
#include <QAbstractTableModel>

#include "stepper/PipelineJob.h"

namespace passlens::ui {

class PassTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Pass, Nodes, Time, Changes, Missed, Outputs, ColumnCount };
    using QAbstractTableModel::QAbstractTableModel;

    void resetData(PipelineRunPtr run);
    PipelineRunPtr run() const { return run_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    QVariant outputsData(int row, int role) const;

    PipelineRunPtr run_;
};

/// Number of missed remarks of a pass (the stepper's "missed" column).
int missedCount(const passes::PassResult& r);
/// The "Outputs" cell: "match", "DIFFER (max abs 1.2e-03)" or "not run: <reason>".
QString outputsText(const eval::OutputCheck& c);

}  // namespace passlens::ui
