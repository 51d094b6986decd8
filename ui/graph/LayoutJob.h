#pragma once
// Builds the display graph and lays it out off the GUI thread.
#include <QFont>
#include <QFuture>

#include "graph/GraphSnapshot.h"

namespace passlens::ui {

/// Font used for box text; box sizes are measured with it on the calling thread.
QFont nodeTitleFont();
QFont nodeTextFont();
/// Box sizes measured with those fonts (callable from any thread).
layout::BoxSizer nodeBoxSizer();

/// Starts the layout of `graph` (owned by `model`) in the thread pool. Never throws; the future
/// throws the error on result().
QFuture<SnapshotPtr> startLayout(std::shared_ptr<const ir::Model> model, const ir::Graph* graph,
                                 layout::DisplayOptions options);

/// Same, synchronously (tests, CLI-like uses).
SnapshotPtr layoutNow(std::shared_ptr<const ir::Model> model, const ir::Graph* graph,
                      layout::DisplayOptions options);

}  // namespace passlens::ui
