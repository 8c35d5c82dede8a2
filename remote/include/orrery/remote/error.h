// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "orrery/core/error.h"

#include <QString>

#include <stdexcept>

namespace orrery::remote {

// What went wrong talking to a cluster. The message names the host and, where there is one, the
// command, and says what to do (UX.md: errors name the host and command that failed).
class RemoteError : public core::Error {
public:
    enum class Kind {
        Connect,  // TCP or SSH handshake failed, or the connection dropped
        HostKeyUnknown,  // the host is not in known_hosts: the caller decides whether to trust it
        HostKeyChanged,  // known_hosts holds another key for this host: refused
        Auth,  // no authentication method was accepted
        Timeout,  // a call ran past its deadline
        Channel,  // opening a channel or running a command failed
        Sftp,  // an SFTP operation failed (message has the path)
        Cancelled,  // the caller cancelled a transfer
        Slurm,  // a Slurm command refused (message has Slurm's own error text)
    };

    // `commandStarted` false: the failure happened before anything ran remotely (a dead
    // connection found when opening the channel), so the call is safe to retry after reconnecting.
    RemoteError(Kind kind, const QString &message, bool commandStarted = true);

    Kind kind() const noexcept { return m_kind; }
    bool commandStarted() const noexcept { return m_commandStarted; }

private:
    Kind m_kind;
    bool m_commandStarted;
};

QString kindName(RemoteError::Kind kind);

}  // namespace orrery::remote
