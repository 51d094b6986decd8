#pragma once
// Byte counts as the memory dock prints them ("52 KiB"): core/plot's formatting as a QString.
#include <QString>

#include "plot/Scale.h"

namespace passlens::ui {

inline QString bytesText(double bytes) { return QString::fromStdString(plot::formatBytes(bytes)); }

}  // namespace passlens::ui
