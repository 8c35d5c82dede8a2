// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Shared by the tests that talk to the fixture's sshd through orrery_remote.

#include "testsupport.h"

#include "orrery/remote/session.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QUuid>

#include <functional>
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

// A user of the `orrery` CLI with a home of their own (config, data and database in a temporary
// directory; no ssh-agent), as the end-to-end tests on the fixture drive it.
class CliUser {
public:
    using Result = Ran;

    bool isValid() const { return m_home.isValid(); }
    QString home() const { return m_home.path(); }
    QString filePath(const QString &name) const { return m_home.filePath(name); }
    QString db() const { return m_home.filePath(QStringLiteral("orrery.sqlite")); }

    QProcessEnvironment env() const
    {
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert(QStringLiteral("HOME"), m_home.path());
        e.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.filePath(QStringLiteral("config")));
        e.insert(QStringLiteral("XDG_DATA_HOME"), m_home.filePath(QStringLiteral("data")));
        e.remove(QStringLiteral("SSH_AUTH_SOCK"));
        return e;
    }

    // `orrery --db DB ARGS...` with no terminal (nothing may prompt).
    Result run(const QStringList &args, int timeoutMs = 120'000) const
    {
        return runProcess(qEnvironmentVariable("ORRERY_CLI"),
                          QStringList{QStringLiteral("--db"), db()} + args, {}, env(), timeoutMs);
    }
    void start(QProcess &p, const QStringList &args) const
    {
        p.setProcessEnvironment(env());
        p.start(qEnvironmentVariable("ORRERY_CLI"), QStringList{QStringLiteral("--db"), db()} + args);
        p.closeWriteChannel();
    }

    // Writes `bytes` to NAME in this user's home (a sweep spec, a script): its path, "" when it
    // cannot.
    QString writeFile(const QString &name, const QByteArray &bytes) const
    {
        const QString path = filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size())
            return {};
        return path;
    }

    // `sweep submit SPEC --cluster CLUSTER --json` (an empty CLUSTER: this machine): the new
    // sweep's id, or -1 with what the CLI said in *problem.
    int submitSweep(const QString &spec, const QString &cluster, QString *problem) const
    {
        QStringList args{QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--json")};
        if (!cluster.isEmpty())
            args << QStringLiteral("--cluster") << cluster;
        const Result r = run(args);
        const int id = QJsonDocument::fromJson(r.out.toUtf8()).object().value(QStringLiteral("id")).toInt(-1);
        if (r.code != 0 || id < 0) {
            *problem = QStringLiteral("sweep submit (exit %1): %2").arg(r.code).arg(r.err + r.out);
            return -1;
        }
        return id;
    }

    // Follows the sweep with `sweep watch` (a tick every 0.25 to 0.5 s) until it ends; `during` is
    // called every 100 ms meanwhile. Returns what the watcher printed, led by "(watch timed out)"
    // when the sweep did not end within `timeoutMs`.
    QString watchSweep(int sweep, int timeoutMs, const std::function<void()> &during = {}) const
    {
        QProcess p;
        start(p,
              {QStringLiteral("sweep"), QStringLiteral("watch"), QString::number(sweep),
               QStringLiteral("--pace"), QStringLiteral("0.25,0.5")});
        QDeadlineTimer deadline(timeoutMs);
        while (!p.waitForFinished(100)) {
            if (during)
                during();
            if (deadline.hasExpired()) {
                p.kill();
                p.waitForFinished();
                return QStringLiteral("(watch timed out)\n") + QString::fromUtf8(p.readAll());
            }
        }
        return QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
    }

private:
    QTemporaryDir m_home;
};

// `orrery cluster add NAME` for the fixture's sshd: its key and known_hosts, this remote root.
inline QStringList fixtureClusterAdd(const TestCluster &cluster, const QString &name,
                                     const QString &remoteRoot,
                                     const QString &partition = QStringLiteral("gpu"))
{
    return {QStringLiteral("cluster"),
            QStringLiteral("add"),
            name,
            QStringLiteral("--host"),
            cluster.value("ORRERY_TEST_SSH_HOST"),
            QStringLiteral("--port"),
            cluster.value("ORRERY_TEST_SSH_PORT"),
            QStringLiteral("--user"),
            cluster.value("ORRERY_TEST_SSH_USER"),
            QStringLiteral("--identity"),
            cluster.value("ORRERY_TEST_SSH_KEY"),
            QStringLiteral("--known-hosts"),
            cluster.value("ORRERY_TEST_SSH_KNOWN_HOSTS"),
            QStringLiteral("--remote-root"),
            remoteRoot,
            QStringLiteral("--partition"),
            partition};
}

// Why `user` cannot start a cluster test yet (the fixture not up, no home, no CLI); empty when
// it can: what a cluster test's initTestCase checks first.
inline QString clusterTestBlocker(const TestCluster &cluster, const CliUser &user)
{
    if (!cluster.error().isEmpty())
        return cluster.error();
    if (!user.isValid())
        return QStringLiteral("no temporary home for the CLI user");
    if (qEnvironmentVariableIsEmpty("ORRERY_CLI"))
        return QStringLiteral("ORRERY_CLI must be set (CTest sets it)");
    return {};
}

// `orrery cluster add NAME` for `user`, with a remote root of its own under the fixture's jobs
// directory (named after `test`). Returns the root; "" with what the CLI said in *problem.
inline QString addFixtureCluster(const CliUser &user, const TestCluster &cluster, const QString &name,
                                 const QString &test, QString *problem)
{
    const QString root = cluster.value("ORRERY_TEST_JOBS_DIR") + QLatin1Char('/') + test + QLatin1Char('-') +
        QUuid::createUuid().toString(QUuid::Id128);
    const CliUser::Result add = user.run(fixtureClusterAdd(cluster, name, root));
    if (add.code != 0) {
        *problem = QStringLiteral("cluster add (exit %1): %2").arg(add.code).arg(add.err);
        return {};
    }
    return root;
}

}  // namespace orrery::test
