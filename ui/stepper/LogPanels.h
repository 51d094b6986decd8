#pragma once
// The change log and remarks docks of the chosen pass. A click on a row asks the graph view to
// select and center the row's nodes (nodesActivated).
#include <QWidget>
#include <vector>

#include "ir/Graph.h"
#include "passes/Pass.h"

class QComboBox;
class QLabel;
class QTableView;

namespace passlens::ui {

class ChangeLogModel;
class RemarksModel;

class ChangeLogPanel : public QWidget {
    Q_OBJECT
public:
    explicit ChangeLogPanel(QWidget* parent = nullptr);
    void showPass(const passes::PassResult* result);  ///< null = no pass (input model)
    ChangeLogModel* model() const { return model_; }
    QTableView* tableView() const { return view_; }
    void activateRow(int row);

signals:
    void nodesActivated(const std::vector<passlens::ir::NodeId>& nodes);

private:
    ChangeLogModel* model_;
    QTableView* view_;
    QLabel* caption_;
};

class RemarksPanel : public QWidget {
    Q_OBJECT
public:
    explicit RemarksPanel(QWidget* parent = nullptr);
    void showPass(const passes::PassResult* result);
    RemarksModel* model() const { return model_; }
    QTableView* tableView() const { return view_; }
    /// "all" | "applied" | "missed"; `rule` empty = every rule.
    void setFilter(const QString& kind, const QString& rule);
    void activateRow(int row);

signals:
    void nodesActivated(const std::vector<passlens::ir::NodeId>& nodes);

private:
    void applyFilter();
    RemarksModel* model_;
    QTableView* view_;
    QComboBox* kind_;
    QComboBox* rule_;
    QLabel* caption_;
};

}  // namespace passlens::ui
