// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/metricgoal.h"

#include <cmath>

namespace orrery::core {

QString toString(Goal g)
{
    return g == Goal::Minimize ? QStringLiteral("minimize") : QStringLiteral("maximize");
}

std::optional<Goal> goalFromText(QStringView text)
{
    if (text == QLatin1String("minimize"))
        return Goal::Minimize;
    if (text == QLatin1String("maximize"))
        return Goal::Maximize;
    return std::nullopt;
}

bool isBetter(double a, double b, Goal goal)
{
    if (std::isnan(a))
        return false;
    if (std::isnan(b))
        return true;
    return goal == Goal::Minimize ? a < b : a > b;
}

double betterOf(double a, double b, Goal goal)
{
    return isBetter(b, a, goal) ? b : a;
}

QString bestWord(Goal goal)
{
    return goal == Goal::Minimize ? QStringLiteral("min") : QStringLiteral("max");
}

}  // namespace orrery::core
