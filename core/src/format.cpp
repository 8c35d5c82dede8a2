// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/format.h"

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

}  // namespace orrery::core
