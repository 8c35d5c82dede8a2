// SPDX-License-Identifier: GPL-3.0-or-later
//
// QCustomPlot, included once for every GUI file. Its 2.1 header iterates with Qt's `foreach`
// in two templates, which this project switches off (QT_NO_FOREACH): a range-for stands in
// for those two loops only, and the macro is gone again after the include.
#pragma once

#define foreach(variable, container) for (variable : container)
#include <qcustomplot.h>
#undef foreach
