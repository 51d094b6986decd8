#include "stepper/LogPanels.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "stepper/ChangeLogModel.h"
#include "stepper/RemarksModel.h"

namespace passlens::ui {

namespace {
QTableView* makeTable(QWidget* parent, QAbstractItemModel* model, int stretchColumn) {
    auto* v = new QTableView(parent);
    v->setModel(model);
    v->setSelectionBehavior(QAbstractItemView::SelectRows);
    v->setSelectionMode(QAbstractItemView::SingleSelection);
    v->verticalHeader()->setVisible(false);
    v->verticalHeader()->setDefaultSectionSize(22);
    v->setWordWrap(false);
    v->setAlternatingRowColors(true);
    v->horizontalHeader()->setStretchLastSection(true);
    for (int c = 0; c < stretchColumn; ++c) v->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    return v;
}
}  // namespace

ChangeLogPanel::ChangeLogPanel(QWidget* parent) : QWidget(parent) {
    setObjectName("changeLogPanel");
    auto* root = new QVBoxLayout(this);
    root->setContentsMargins(6, 6, 6, 6);
    caption_ = new QLabel(this);
    root->addWidget(caption_);
    model_ = new ChangeLogModel(this);
    view_ = makeTable(this, model_, ChangeLogModel::Reason);
    root->addWidget(view_, 1);
    connect(view_, &QTableView::clicked, this, [this](const QModelIndex& i) { activateRow(i.row()); });
    connect(view_, &QTableView::activated, this, [this](const QModelIndex& i) { activateRow(i.row()); });
    showPass(nullptr);
}

void ChangeLogPanel::showPass(const passes::PassResult* r) {
    model_->resetData(r ? r->changes : std::vector<passes::Change>{});
    caption_->setText(r ? tr("<b>%1</b>: %n change(s)", nullptr, int(r->changes.size())).arg(QString::fromStdString(r->name))
                        : tr("Choose a pass in the stepper to see what it changed."));
}

void ChangeLogPanel::activateRow(int row) {
    auto nodes = model_->nodesAt(row);
    if (!nodes.empty()) emit nodesActivated(nodes);
}

RemarksPanel::RemarksPanel(QWidget* parent) : QWidget(parent) {
    setObjectName("remarksPanel");
    auto* root = new QVBoxLayout(this);
    root->setContentsMargins(6, 6, 6, 6);
    auto* bar = new QHBoxLayout;
    caption_ = new QLabel(this);
    kind_ = new QComboBox(this);
    kind_->addItem(tr("applied and missed"), QString("all"));
    kind_->addItem(tr("applied"), QString("applied"));
    kind_->addItem(tr("missed"), QString("missed"));
    rule_ = new QComboBox(this);
    rule_->setMinimumContentsLength(14);
    bar->addWidget(caption_, 1);
    bar->addWidget(new QLabel(tr("Show:"), this));
    bar->addWidget(kind_);
    bar->addWidget(new QLabel(tr("Rule:"), this));
    bar->addWidget(rule_);
    root->addLayout(bar);
    model_ = new RemarksModel(this);
    view_ = makeTable(this, model_, RemarksModel::Message);
    root->addWidget(view_, 1);
    connect(kind_, &QComboBox::currentIndexChanged, this, &RemarksPanel::applyFilter);
    connect(rule_, &QComboBox::currentIndexChanged, this, &RemarksPanel::applyFilter);
    connect(view_, &QTableView::clicked, this, [this](const QModelIndex& i) { activateRow(i.row()); });
    connect(view_, &QTableView::activated, this, [this](const QModelIndex& i) { activateRow(i.row()); });
    showPass(nullptr);
}

void RemarksPanel::showPass(const passes::PassResult* r) {
    const QString keepRule = rule_->currentData().toString();
    model_->resetData(r ? r->remarks : std::vector<passes::Remark>{});
    {
        const QSignalBlocker block(rule_);
        rule_->clear();
        rule_->addItem(tr("every rule"), QString());
        for (const QString& rule : model_->rules()) rule_->addItem(rule, rule);
        int i = rule_->findData(keepRule);
        rule_->setCurrentIndex(i >= 0 ? i : 0);
    }
    applyFilter();
    caption_->setText(r ? tr("<b>%1</b>: %2 remark(s)").arg(QString::fromStdString(r->name)).arg(r->remarks.size())
                        : tr("No pass chosen."));
}

void RemarksPanel::setFilter(const QString& kind, const QString& rule) {
    const QSignalBlocker a(kind_), b(rule_);
    int k = kind_->findData(kind);
    kind_->setCurrentIndex(k >= 0 ? k : 0);
    int r = rule_->findData(rule);
    rule_->setCurrentIndex(r >= 0 ? r : 0);
    applyFilter();
}

void RemarksPanel::applyFilter() {
    const QString k = kind_->currentData().toString();
    std::optional<passes::RemarkKind> kind;
    if (k == "applied") kind = passes::RemarkKind::Applied;
    else if (k == "missed") kind = passes::RemarkKind::Missed;
    model_->setFilter(kind, rule_->currentData().toString());
}

void RemarksPanel::activateRow(int row) {
    auto nodes = model_->nodesAt(row);
    if (!nodes.empty()) emit nodesActivated(nodes);
}

}  // namespace passlens::ui
