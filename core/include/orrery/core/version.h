// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace orrery::core {

// Orrery's version, from cmake/OrreryVersion.cmake.
QString version();

}  // namespace orrery::core
