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

QString outputsText(const eval::OutputCheck& c) {
    using S = eval::OutputCheck::Status;
    switch (c.status) {
    case S::Match: return PassTableModel::tr("match");
    case S::Differ:
        if (!c.reason.empty()) return PassTableModel::tr("DIFFER (%1)").arg(QString::fromStdString(c.reason));
        return PassTableModel::tr("DIFFER (max abs %1)").arg(c.maxAbs, 0, 'e', 1);
    case S::NotRun: break;
    }
    QString why = QString::fromStdString(c.reason);
    if (why.size() > 70) why = why.left(69) + "…";
    return PassTableModel::tr("not run: %1").arg(why);
}

static QString tolerance() {
    return PassTableModel::tr("seeded random inputs in natural ranges (seed %1), |a−b| ≤ %2 + %3·|b|")
        .arg(eval::kVerifySeed)
        .arg(eval::kVerifyAtol)
        .arg(eval::kVerifyRtol);
}

QVariant PassTableModel::outputsData(int row, int role) const {
    if (!run_->verified() || row >= int(run_->verification.size())) return {};
    using S = eval::OutputCheck::Status;
    const auto& check = run_->verification[size_t(row)];
    const auto& c = check.vsPrevious;
    if (role == Qt::DisplayRole) return row == 0 && c.status == S::Match ? tr("reference") : outputsText(c);
    if (role == Qt::ForegroundRole) {
        if (c.status == S::Differ) return QColor("#cf222e");
        if (c.status == S::NotRun) return QColor("#9a6700");
        return QColor("#1a7f37");
    }
    if (role == Qt::ToolTipRole) {
        QString tip;
        if (c.status == S::NotRun)
            tip = tr("The interpreter did not run this model: %1").arg(QString::fromStdString(c.reason));
        else if (row == 0)
            tip = tr("The input model's outputs on %1 are the reference").arg(tolerance());
        else if (c.status == S::Differ)
            tip = tr("Output '%1' differs from the model before this pass (max abs %2, max rel %3); %4")
                      .arg(QString::fromStdString(c.output))
                      .arg(c.maxAbs, 0, 'g', 3)
                      .arg(c.maxRel, 0, 'g', 3)
                      .arg(tolerance());
        else
            tip = tr("Same outputs as the model before this pass (max abs %1) on %2")
                      .arg(c.maxAbs, 0, 'g', 3)
                      .arg(tolerance());
        if (row > 0 && check.vsInput.status != S::NotRun)
            tip += tr("\nAgainst the input model: %1").arg(outputsText(check.vsInput));
        if (!run_->pinnedToOne.empty()) {
            QStringList dims;
            for (const auto& d : run_->pinnedToOne) dims << QString::fromStdString(d);
            tip += tr("\nSymbolic dims pinned to 1 (as the CLI without --dim): %1").arg(dims.join(", "));
        }
        return tip;
    }
    return {};
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
    if (col == Outputs && role != Qt::TextAlignmentRole && role != Qt::FontRole) return outputsData(index.row(), role);
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
        return col == Pass || col == Outputs ? QVariant(int(Qt::AlignLeft | Qt::AlignVCenter)) : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ForegroundRole:
        if (index.row() == run_->firstDifferingRow()) return QColor("#cf222e");  // the first pass that broke the outputs
        if (col == Missed && missedCount(r) > 0) return QColor("#bc4c00");
        if (!r.changed) return QColor("#57606a");
        return {};
    case Qt::FontRole:
        if ((col == Pass && r.changed) || index.row() == run_->firstDifferingRow()) { QFont f; f.setBold(true); return f; }
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
    case Outputs: return tr("Outputs");
    }
    return {};
}

}  // namespace passlens::ui
