// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Run parameters as the faces compare them: which keys differ between runs (the columns of a
// sweep's table, the captions of the monitor and of the video grid, `runs compare`).

#include <QMap>
#include <QString>
#include <QStringList>

namespace orrery::core {

using Params = QMap<QString, QString>;  // dotted key → value as text

// A trial's parameters (Trial::params, a JSON object) as text: numbers as JSON writes them.
Params paramsFromJson(const QString &json);

// The keys, sorted, whose values are not the same in every run: a key that some runs lack differs.
// A run with no params at all (a trial not started yet) takes no part. Empty for fewer than two
// runs with params.
QStringList differingParams(const QList<Params> &runs);

}  // namespace orrery::core
