// SPDX-License-Identifier: GPL-3.0-or-later
#include "sparkline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace orrery::monitor {

QString sparkline(std::span<const double> values, int width, Glyphs glyphs)
{
    static const QString unicode = QStringLiteral("▁▂▃▄▅▆▇█");
    static const QString ascii = QStringLiteral("_.-~=+*#");
    const QString &levels = glyphs == Glyphs::Unicode ? unicode : ascii;
    if (width <= 0 || values.empty())
        return {};

    // Resample to at most `width` columns: column c covers values [c·n/w, (c+1)·n/w).
    const std::size_t n = values.size();
    const std::size_t columns = std::min<std::size_t>(n, std::size_t(width));
    std::vector<double> column(columns, std::numeric_limits<double>::quiet_NaN());
    for (std::size_t c = 0; c < columns; ++c) {
        const std::size_t begin = c * n / columns, end = (c + 1) * n / columns;
        double sum = 0;
        int finite = 0;
        for (std::size_t i = begin; i < end; ++i) {
            if (std::isfinite(values[i])) {
                sum += values[i];
                ++finite;
            }
        }
        if (finite > 0)
            column[c] = sum / finite;
    }

    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (double v : column) {
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    const int top = int(levels.size()) - 1;
    QString out;
    out.reserve(qsizetype(columns));
    for (double v : column) {
        if (!std::isfinite(v)) {
            out += QLatin1Char(' ');
            continue;
        }
        const int level = hi > lo ? int(std::lround((v - lo) / (hi - lo) * top)) : top / 2;
        out += levels.at(std::clamp(level, 0, top));
    }
    return out;
}

}  // namespace orrery::monitor
