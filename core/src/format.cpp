// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/format.h"

#include <algorithm>
#include <cmath>

namespace orrery::core {

QString formatNumber(double value, int digits)
{
    if (std::isnan(value))
        return QStringLiteral("nan");
    if (std::isinf(value))
        return value > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(value, 'g', digits);
}

QJsonValue jsonNumber(double value)
{
    return std::isfinite(value) ? QJsonValue(value) : QJsonValue(formatNumber(value));
}

QString formatDuration(qint64 ms)
{
    const qint64 s = std::max<qint64>(ms, 0) / 1000;
    if (s >= 3600)
        return QStringLiteral("%1h%2m").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QLatin1Char('0'));
    if (s >= 60)
        return QStringLiteral("%1m%2s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1s").arg(s);
}

}  // namespace orrery::core
