// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/diagnostics.h"

#include <QFileInfo>

#include <libssh/libssh.h>

namespace orrery::remote {

QList<core::Check> environmentChecks()
{
    using Status = core::Check::Status;
    QList<core::Check> checks = core::coreChecks();
    checks.append({QStringLiteral("libssh"), Status::Ok, QString::fromLatin1(ssh_version(0)), {}});

    const QString agent = qEnvironmentVariable("SSH_AUTH_SOCK");
    if (agent.isEmpty())
        checks.append({QStringLiteral("ssh-agent"), Status::Warning,
                       QStringLiteral("SSH_AUTH_SOCK is not set"),
                       QStringLiteral("clusters will need a key file (or start ssh-agent and ssh-add)")});
    else if (!QFileInfo::exists(agent))
        checks.append({QStringLiteral("ssh-agent"), Status::Warning,
                       QStringLiteral("SSH_AUTH_SOCK=%1 does not exist").arg(agent),
                       QStringLiteral("restart ssh-agent")});
    else
        checks.append({QStringLiteral("ssh-agent"), Status::Ok, agent, {}});
    return checks;
}

}  // namespace orrery::remote
