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
#include <QTemporaryDir>

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

// The cluster a benchmark runs against: the running fixture whose state file `--env FILE` in
// `arguments` names, else one of its own, started here (tests/fixture/localcluster.py up) and
// stopped when this goes.
class Fixture {
public:
    explicit Fixture(const QStringList &arguments)
    {
        const qsizetype env = arguments.indexOf(QStringLiteral("--env"));
        if (env >= 0 && env + 1 < arguments.size())
            m_file = arguments[env + 1];
        if (m_file.isEmpty()) {
            m_file = m_dir.filePath(QStringLiteral("cluster.env"));
            m_own = run(QStringLiteral("up")) == 0;
            m_ok = m_own;
        }
    }
    ~Fixture()
    {
        if (m_own)
            run(QStringLiteral("down"));
    }
    Fixture(const Fixture &) = delete;
    Fixture &operator=(const Fixture &) = delete;

    bool ok() const { return m_ok; }
    QHash<QString, QString> env() const { return readEnv(m_file); }

private:
    int run(const QString &verb) const
    {
        return QProcess::execute(QStringLiteral("python3"),
                                 {QStringLiteral(ORRERY_SOURCE_DIR "/tests/fixture/localcluster.py"), verb,
                                  QStringLiteral("--state"), m_file});
    }

    QTemporaryDir m_dir;
    QString m_file;
    bool m_own = false;
    bool m_ok = true;
};

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
