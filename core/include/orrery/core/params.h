// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Run parameters as the faces compare them: which keys differ between runs (the columns of a
// sweep's table, the captions of the monitor and of the video grid, `runs compare`).

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace orrery::core {

struct Sweep;
struct Trial;

using Params = QMap<QString, QString>;  // dotted key → value as text

// A trial's parameters (Trial::params, a JSON object) as text: numbers as JSON writes them.
Params paramsFromJson(const QString &json);

// The keys, sorted, whose values are not the same in every run: a key that some runs lack differs.
// A run with no params at all (a trial not started yet) takes no part. Empty for fewer than two
// runs with params.
QStringList differingParams(const QList<Params> &runs);

// A parameter a sweep varies (UX.md "Views built around the sweep": the first columns, the
// parallel-coordinate axes, the scatter's x, the importance panel's rows).
struct SweptParam {
    QString key;  // dotted, as the runs' params name it
    // Best read on a log axis: a log-distributed parameter (log_uniform, log_uniform_values,
    // q_log_uniform(_values), log_normal, q_log_normal) or a list of positive numbers spanning
    // at least a factor of 10 (lr: [1e-4, 3e-4, 1e-3]).
    bool log = false;
    bool operator==(const SweptParam &) const = default;
};

// The parameters `sweep` varies, in its spec's order: each `parameters:` entry of the stored spec
// that can take more than one value (values lists of two or more, distributions; W&B's nested
// `parameters:` groups as dotted keys). A constant (`value:`, a one-element list) is not swept.
// Where the stored spec cannot be read, the keys whose values differ between the trials' params
// (differingParams over Trial::params), sorted. Reads no store: the caller passes the trials.
QList<SweptParam> sweptParams(const Sweep &sweep, const QList<Trial> &trials);
QStringList keysOf(const QList<SweptParam> &params);

}  // namespace orrery::core
