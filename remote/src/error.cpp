// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/error.h"

namespace orrery::remote {

namespace {

// What a failure talking to a cluster is, for whoever only reports it (core::Error's kind).
core::Error::Kind errorKindOf(RemoteError::Kind kind)
{
    switch (kind) {
    case RemoteError::Kind::Connect:
    case RemoteError::Kind::Timeout:
    case RemoteError::Kind::Channel:
        return core::Error::Kind::Unavailable;
    case RemoteError::Kind::Cancelled:
        return core::Error::Kind::Cancelled;
    case RemoteError::Kind::HostKeyUnknown:
    case RemoteError::Kind::HostKeyChanged:
    case RemoteError::Kind::Auth:
    case RemoteError::Kind::Sftp:
    case RemoteError::Kind::Slurm:
        break;
    }
    return core::Error::Kind::Failed;
}

}  // namespace

RemoteError::RemoteError(Kind kind, const QString &message, bool commandStarted)
    : core::Error(errorKindOf(kind), message), m_kind(kind), m_commandStarted(commandStarted)
{ }

QString kindName(RemoteError::Kind kind)
{
    switch (kind) {
    case RemoteError::Kind::Connect:
        return QStringLiteral("connect");
    case RemoteError::Kind::HostKeyUnknown:
        return QStringLiteral("host-key-unknown");
    case RemoteError::Kind::HostKeyChanged:
        return QStringLiteral("host-key-changed");
    case RemoteError::Kind::Auth:
        return QStringLiteral("auth");
    case RemoteError::Kind::Timeout:
        return QStringLiteral("timeout");
    case RemoteError::Kind::Channel:
        return QStringLiteral("channel");
    case RemoteError::Kind::Sftp:
        return QStringLiteral("sftp");
    case RemoteError::Kind::Cancelled:
        return QStringLiteral("cancelled");
    case RemoteError::Kind::Slurm:
        return QStringLiteral("slurm");
    }
    return {};
}

}  // namespace orrery::remote
