// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "orrery/core/diagnostics.h"

namespace orrery::remote {

// Everything `orrery doctor` reports: core's checks, then libssh and the SSH agent. The CLI and
// the GUI both show this list.
QList<core::Check> environmentChecks();

}  // namespace orrery::remote
