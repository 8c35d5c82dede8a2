// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Metric values as people and JSON see them, the same in every face: NaN and ±inf as the words
// events.jsonl uses for them ("nan", "inf", "-inf").

#include <QJsonValue>
#include <QString>

namespace orrery::core {

// `digits` significant digits (6: the CLI's tables; the monitor's narrow columns take 4).
QString formatNumber(double value, int digits = 6);
// "1h02m", "4m05s", "12s": a duration (an ETA) for a person.
QString formatDuration(qint64 ms);
// JSON has no NaN/inf: a finite value is a number, the others formatNumber's words.
QJsonValue jsonNumber(double value);

}  // namespace orrery::core
