// SPDX-License-Identifier: GPL-3.0-or-later
//
// Shared by the benchmarks that talk to the local test cluster (tests/fixture/localcluster.py):
// timing statistics, the fixture's state file, and its sshd as an Endpoint.
#pragma once

#include "orrery/remote/session.h"

#include <QElapsedTimer>
#include <QFile>
#include <QHash>
#include <QProcess>
#include <QString>
#include <QStringList>

#include <algorithm>
#include <vector>

namespace orrery::bench {

struct Stats {
    double median = 0;
    double p90 = 0;
    double mean = 0;
};

inline Stats stats(std::vector<double> ms)
{
    std::sort(ms.begin(), ms.end());
    Stats s;
    s.median = ms[ms.size() / 2];
    s.p90 = ms[ms.size() * 9 / 10];
    for (const double v : ms)
        s.mean += v;
    s.mean /= static_cast<double>(ms.size());
    return s;
}

inline double msSince(const QElapsedTimer &clock)
{
    return static_cast<double>(clock.nsecsElapsed()) / 1e6;
}

// KEY=VALUE lines of the fixture's state file.
inline QHash<QString, QString> readEnv(const QString &path)
{
    QHash<QString, QString> values;
    QFile file(path);
    if (file.open(QIODevice::ReadOnly))
        while (!file.atEnd()) {
            const QString line = QString::fromUtf8(file.readLine()).trimmed();
            const qsizetype eq = line.indexOf(QLatin1Char('='));
            if (eq > 0 && !line.startsWith(QLatin1Char('#')))
                values.insert(line.left(eq), line.mid(eq + 1));
        }
    return values;
}

// `localcluster.py up|down --state FILE`; the exit status.
inline int fixture(const QString &verb, const QString &state)
{
    return QProcess::execute(QStringLiteral("python3"),
                             {QStringLiteral(ORRERY_SOURCE_DIR "/tests/fixture/localcluster.py"), verb,
                              QStringLiteral("--state"), state});
}

inline remote::Endpoint fixtureEndpoint(const QHash<QString, QString> &env)
{
    remote::Endpoint e;
    e.host = env.value(QStringLiteral("ORRERY_TEST_SSH_HOST"));
    e.port = env.value(QStringLiteral("ORRERY_TEST_SSH_PORT")).toInt();
    e.user = env.value(QStringLiteral("ORRERY_TEST_SSH_USER"));
    e.identityFile = env.value(QStringLiteral("ORRERY_TEST_SSH_KEY"));
    e.knownHostsFile = env.value(QStringLiteral("ORRERY_TEST_SSH_KNOWN_HOSTS"));
    e.sshConfigFile = QStringLiteral("none");
    return e;
}

}  // namespace orrery::bench
