// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "orrery/core/diagnostics.h"
#include "orrery/remote/profile.h"
#include "orrery/remote/session.h"

#include <chrono>

namespace orrery::remote {

// Everything `orrery doctor` reports: core's checks, then libssh and the SSH agent. The CLI and
// the GUI both show this list.
QList<core::Check> environmentChecks();

// `orrery doctor --cluster C`: what a sweep on that cluster needs, each with a fix: SSH, the Slurm
// commands, accounting, GPUs, a writable remote root, the setup lines, PyTorch and CUDA as a job
// sees them (one small `srun` that also runs the trainer's --version), and the trainer. Stops
// after SSH when it cannot connect. Blocks (the srun may wait for a node, up to `jobTimeout`).
QList<core::Check> clusterChecks(const ClusterProfile &profile, const AuthCallbacks &callbacks,
                                 std::chrono::seconds jobTimeout = std::chrono::seconds(180));

// The srun command line of that job (tested alone): bash -c with the setup lines, then Python
// printing torch's facts as one JSON line, then `TRAINER --version --json` when there is one.
QByteArray doctorJobCommand(const ClusterProfile &profile, const QString &trainer, bool withGpu,
                            std::chrono::seconds timeLimit);

}  // namespace orrery::remote
