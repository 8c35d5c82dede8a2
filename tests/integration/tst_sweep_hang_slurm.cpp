// SPDX-License-Identifier: GPL-3.0-or-later
// Hangs ended on the fixture's Slurm (docs/sweeps.md "Hangs"), through the real CLI: a command
// trial prints steps and then sleeps forever; `sweep watch --notify` (a tick every 0.25 to 0.5 s)
// sees its output stop growing in Slurm's log, marks it hung after hang_timeout, cancels it
// (SIGTERM to the step ends the sleep) and resubmits it; the second attempt sees ORRERY_RESUME=1
// and completes. The watch's --notify command (sh appending its stdin to a file: a real process)
// receives the hang's notice and the sweep's end, one JSON line each.
#include "remotesupport.h"

#include "orrery/core/store.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QUuid>

using namespace orrery::core;

class TestSweepHangSlurm : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    orrery::test::CliUser m_user;
    using Result = orrery::test::CliUser::Result;
    Result orrery(const QStringList &args, int timeoutMs = 120000) { return m_user.run(args, timeoutMs); }

private Q_SLOTS:
    void initTestCase()
    {
        const QString blocker = orrery::test::clusterTestBlocker(m_cluster, m_user);
        QVERIFY2(blocker.isEmpty(), qPrintable(blocker));
    }

    void aHungTrialIsEndedResumedAndNoticed()
    {
        const QString root = m_cluster.value("ORRERY_TEST_JOBS_DIR") +
            QStringLiteral("/tst_sweep_hang_slurm-") + QUuid::createUuid().toString(QUuid::Id128);
        const Result add =
            orrery(orrery::test::fixtureClusterAdd(m_cluster, QStringLiteral("fixture"), root));
        QVERIFY2(add.code == 0, qPrintable(add.err));
        const QString spec = m_user.filePath(QStringLiteral("hang.yaml"));
        {
            QFile f(spec);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("name: hang\nexperiment: hangs\nmethod: grid\nretries: 0\nhang_timeout: 6s\n"
                    "command: [sh, -c, 'if [ \"$ORRERY_RESUME\" = 1 ]; then echo resumed; exit 0; fi; "
                    "for i in 1 2 3; do echo step $i; sleep 0.5; done; exec sleep 1000', '{{x}}']\n"
                    "parameters:\n  x: {values: [0]}\n"
                    "resources: {cpus_per_task: 1, time: \"00:05:00\"}\n");
        }
        const Result submit =
            orrery({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--cluster"),
                    QStringLiteral("fixture"), QStringLiteral("--json")});
        QVERIFY2(submit.code == 0, qPrintable(submit.err + submit.out));
        QVERIFY2(submit.err.contains(QStringLiteral("under a minute")), qPrintable(submit.err));
        const int sweep =
            QJsonDocument::fromJson(submit.out.toUtf8()).object().value(QStringLiteral("id")).toInt();

        const QString notices = m_user.filePath(QStringLiteral("notices.jsonl"));
        QProcess watch;
        m_user.start(watch,
                     {QStringLiteral("sweep"), QStringLiteral("watch"), QString::number(sweep),
                      QStringLiteral("--pace"), QStringLiteral("0.25,0.5"), QStringLiteral("--notify"),
                      QStringLiteral("sh -c 'cat >> \"$0\"' ") + notices});
        QDeadlineTimer deadline(150000);
        while (!watch.waitForFinished(200) && !deadline.hasExpired()) { }
        if (watch.state() != QProcess::NotRunning) {
            watch.kill();
            watch.waitForFinished();
        }
        const QString out = QString::fromUtf8(watch.readAllStandardOutput() + watch.readAllStandardError());
        QCOMPARE(watch.exitCode(), 0);

        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        QCOMPARE(store->sweep(sweep)->state, QStringLiteral("finished"));
        const QList<Trial> trials = store->trials(sweep);
        QCOMPARE(trials.size(), 2);
        QVERIFY2(trials[0].exitReason.startsWith(QStringLiteral("hung: no progress for ")),
                 qPrintable(trials[0].exitReason + QLatin1Char('\n') + out));
        QCOMPARE(trials[0].state, QStringLiteral("failed"));
        QVERIFY2(trials[1].state == QStringLiteral("completed"), qPrintable(trials[1].state + out));
        QVERIFY2(out.contains(QStringLiteral("trial 0 hung: no progress for")), qPrintable(out));
        // Ended and resubmitted within hang_timeout + one tick of its last progress, give or take
        // the progress grain (a quarter of the timeout) and a second of Slurm's polling.
        const qint64 took = trials[1].submittedMs - trials[0].progressMs;
        qInfo("last progress → resubmitted on Slurm: %lld ms (hang_timeout 6000 ms)", took);
        QVERIFY2(took <= 6000 + 500 + 1500 + 1000, qPrintable(QString::number(took)));

        QFile f(notices);
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(out));
        const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        const QJsonObject hung = QJsonDocument::fromJson(lines[0]).object();
        QCOMPARE(hung.value(QStringLiteral("kind")).toString(), QStringLiteral("trial_hung"));
        QCOMPARE(hung.value(QStringLiteral("trial")).toInt(), 0);
        QCOMPARE(hung.value(QStringLiteral("sweep_id")).toInt(), sweep);
        const QJsonObject ended = QJsonDocument::fromJson(lines[1]).object();
        QCOMPARE(ended.value(QStringLiteral("kind")).toString(), QStringLiteral("sweep_ended"));
        QCOMPARE(ended.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
    }
};

ORRERY_TEST_MAIN(TestSweepHangSlurm, QCoreApplication)
#include "tst_sweep_hang_slurm.moc"
