// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Shared by the tests that talk to the fixture's sshd through orrery_remote.

#include "testsupport.h"

#include "orrery/remote/session.h"

#include <optional>

namespace orrery::test {

// The fixture's sshd as an Endpoint: its key, its known_hosts (or another of the fixture's
// known_hosts files), and no ~/.ssh/config of the person running the tests.
inline remote::Endpoint clusterEndpoint(const TestCluster &cluster,
                                        const char *knownHostsKey = "ORRERY_TEST_SSH_KNOWN_HOSTS")
{
    remote::Endpoint e;
    e.host = cluster.value("ORRERY_TEST_SSH_HOST");
    e.port = cluster.value("ORRERY_TEST_SSH_PORT").toInt();
    e.user = cluster.value("ORRERY_TEST_SSH_USER");
    e.identityFile = cluster.value("ORRERY_TEST_SSH_KEY");
    e.knownHostsFile = cluster.value(knownHostsKey);
    e.sshConfigFile = QStringLiteral("none");
    e.connectTimeout = std::chrono::seconds(10);
    return e;
}

// The error connect() refused with; nullopt if it connected.
inline std::optional<remote::RemoteError> refusal(remote::Session &session)
{
    try {
        session.connect();
    } catch (const remote::RemoteError &e) {
        return e;
    }
    return std::nullopt;
}

}  // namespace orrery::test
