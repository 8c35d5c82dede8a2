// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery monitor` against the cluster fixture, in a real terminal (tmux): the profile made with
// `orrery cluster add` as a user would, the partitions and nodes from sinfo, and a job this test
// submits showing up in the queue panel with its name.
#include "remotesupport.h"
#include "testsupport.h"
#include "tmuxsession.h"

#include "orrery/remote/connection.h"
#include "orrery/remote/error.h"
#include "orrery/remote/slurm.h"

#include <QCoreApplication>
#include <QProcess>
#include <QTemporaryDir>
#include <QUuid>

using orrery::test::TmuxSession;

class TestMonitorCluster : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    QTemporaryDir m_home;
    std::unique_ptr<orrery::remote::Connection> m_connection;
    std::unique_ptr<orrery::remote::SlurmClient> m_slurm;
    QString m_job;

    QStringList env() const
    {
        return {QStringLiteral("HOME=") + m_home.path(),
                QStringLiteral("XDG_CONFIG_HOME=") + m_home.filePath(QStringLiteral("config")),
                QStringLiteral("LANG=C.UTF-8"), QStringLiteral("LC_ALL=C.UTF-8")};
    }

    // The first line that starts with `start`.
    static QString lineStarting(const QString &screen, const QString &start)
    {
        for (const QString &line : screen.split(QLatin1Char('\n')))
            if (line.startsWith(start))
                return line;
        return {};
    }

private Q_SLOTS:
    void initTestCase()
    {
        ORRERY_REQUIRE_TMUX();
        QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error()));
        QVERIFY2(!qEnvironmentVariable("ORRERY_CLI").isEmpty(), "ORRERY_CLI (the orrery binary) is not set");

        // The profile, as `orrery cluster add` writes it.
        QProcess add;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert(QStringLiteral("HOME"), m_home.path());
        e.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.filePath(QStringLiteral("config")));
        e.remove(QStringLiteral("SSH_AUTH_SOCK"));
        add.setProcessEnvironment(e);
        add.start(qEnvironmentVariable("ORRERY_CLI"),
                  {QStringLiteral("cluster"), QStringLiteral("add"), QStringLiteral("fixture"),
                   QStringLiteral("--host"), m_cluster.value("ORRERY_TEST_SSH_HOST"),
                   QStringLiteral("--port"), m_cluster.value("ORRERY_TEST_SSH_PORT"),
                   QStringLiteral("--user"), m_cluster.value("ORRERY_TEST_SSH_USER"),
                   QStringLiteral("--identity"), m_cluster.value("ORRERY_TEST_SSH_KEY"),
                   QStringLiteral("--known-hosts"), m_cluster.value("ORRERY_TEST_SSH_KNOWN_HOSTS"),
                   QStringLiteral("--partition"), QStringLiteral("gpu")});
        QVERIFY(add.waitForFinished(30'000));
        QVERIFY2(add.exitCode() == 0, add.readAllStandardError().constData());

        // A job of this user's that holds one GPU while the monitor looks.
        m_connection = std::make_unique<orrery::remote::Connection>(orrery::test::clusterEndpoint(m_cluster));
        m_slurm = std::make_unique<orrery::remote::SlurmClient>(*m_connection);
        const QString dir = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/tst_monitor-") +
            QUuid::createUuid().toString(QUuid::Id128);
        orrery::remote::SubmitOptions options;
        options.jobName = QStringLiteral("monitor-probe");
        options.partition = QStringLiteral("gpu");
        options.output = dir + QStringLiteral("/%j.out");
        options.extra = {QStringLiteral("--gres=gpu:1")};
        m_job =
            m_slurm->submit(dir + QStringLiteral("/probe.sh"), "#!/bin/sh\nexec sleep 120\n", options).jobId;
    }

    void cleanupTestCase()
    {
        if (m_slurm && !m_job.isEmpty()) {
            try {
                m_slurm->cancel(m_job);
            } catch (const orrery::remote::RemoteError &) {
                // already gone
            }
        }
    }

    void partitionsNodesAndTheQueue()
    {
        TmuxSession tmux;
        const QString command = TmuxSession::reportingExit(
            QStringLiteral("'%1' --db '%2' monitor --refresh 1")
                .arg(qEnvironmentVariable("ORRERY_CLI"), m_home.filePath(QStringLiteral("o.sqlite"))));
        QVERIFY2(tmux.start(command, 110, 30, env()), qPrintable(tmux.error()));
        QString s;
        // The one profile is picked without --cluster; the job shows once it runs.
        const bool seen = tmux.waitFor(
            [&](const QString &screen) {
                return lineStarting(screen, m_job + QStringLiteral(" ")).contains(QLatin1String("RUNNING"));
            },
            30'000, &s);
        QVERIFY2(seen, qPrintable(s + m_cluster.logsHint()));
        QVERIFY2(s.contains(QLatin1String("cluster fixture: updated")), qPrintable(s));
        const QString job = lineStarting(s, m_job + QStringLiteral(" "));
        QVERIFY2(job.contains(QLatin1String("monitor-probe")), qPrintable(s));
        const QStringList nodes = m_cluster.value("ORRERY_TEST_SLURM_NODES").split(QLatin1Char(','));
        const int gpusPerNode = m_cluster.value("ORRERY_TEST_SLURM_GPUS_PER_NODE").toInt();
        const int gpus = int(nodes.size()) * gpusPerNode;
        // The default partition: all nodes up, one GPU taken by the probe.
        const QString gpu = lineStarting(s, QStringLiteral("gpu* "));
        QVERIFY2(gpu.contains(QStringLiteral("%1/%1").arg(nodes.size())), qPrintable(s));
        QVERIFY2(gpu.contains(QStringLiteral("%1/%2").arg(gpus - 1).arg(gpus)), qPrintable(s));
        for (const QString &node : nodes)
            QVERIFY2(!lineStarting(s, node + QStringLiteral(" ")).isEmpty(), qPrintable(s));

        // r: a refresh at once; q: out, status 0.
        QVERIFY(tmux.sendKeys({QStringLiteral("r")}));
        QVERIFY(tmux.sendKeys({QStringLiteral("q")}));
        QVERIFY2(tmux.waitForText(QStringLiteral("[exit "), 10'000, &s), qPrintable(s));
        QVERIFY2(s.contains(QLatin1String("[exit 0, tty restored]")), qPrintable(s));
        QCOMPARE(tmux.format(QStringLiteral("#{alternate_on}")), QStringLiteral("0"));
    }
};

ORRERY_TEST_MAIN(TestMonitorCluster, QCoreApplication)
#include "tst_monitor_cluster.moc"
