// SPDX-License-Identifier: GPL-3.0-or-later
#include "runcolors.h"

#include <array>
#include <cmath>

namespace orrery::gui {

QColor runColor(core::RunId run)
{
    static constexpr std::array<QRgb, 10> kTableau{0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                                   0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};
    const auto n = static_cast<std::uint64_t>(run < 0 ? -run : run);
    if (n >= 1 && n <= kTableau.size())
        return QColor(kTableau[std::size_t(n - 1)]);
    const double hue = std::fmod(double(n) * 0.618033988749895, 1.0);
    return QColor::fromHsvF(float(hue), 0.65f, 0.85f);
}

}  // namespace orrery::gui
