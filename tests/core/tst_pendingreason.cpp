// SPDX-License-Identifier: GPL-3.0-or-later
// Why a queued trial waits (core/pendingreason.h): Slurm's reason codes in words, which ones
// never clear by themselves, the expected start, and the sweep's summary that every face shows.
#include "testsupport.h"

#include "orrery/core/pendingreason.h"

#include <QCoreApplication>

using namespace orrery::core;

namespace {

constexpr qint64 kNow = 1'700'000'000'000;  // unix ms

Trial queued(int index, const QString &detail, qint64 expectedStartMs = 0)
{
    Trial t;
    t.index = index;
    t.setState(TrialState::Queued);
    t.detail = detail;
    t.expectedStartMs = expectedStartMs;
    return t;
}

}  // namespace

class TestPendingReason : public QObject {
    Q_OBJECT

private slots:
    void code_data()
    {
        QTest::addColumn<QString>("detail");
        QTest::addColumn<QString>("code");
        QTest::newRow("resources") << "PENDING (Resources)"
                                   << "Resources";
        QTest::newRow("req-node-not-avail-with-nodes") << "PENDING (ReqNodeNotAvail, UnavailableNodes:node2)"
                                                       << "ReqNodeNotAvail";
        QTest::newRow("launch-failed-requeued-held") << "REQUEUE_HOLD (launch failed requeued held)"
                                                     << "launch failed requeued held";
        QTest::newRow("none") << "PENDING (None)"
                              << "";
        QTest::newRow("no-reason") << "PENDING"
                                   << "";
        QTest::newRow("empty") << ""
                               << "";
    }
    void code()
    {
        QFETCH(QString, detail);
        QFETCH(QString, code);
        QCOMPARE(pendingCode(detail), code);
    }

    void table_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<int>("outlook");
        QTest::addColumn<QString>("word");  // a word the sentence must hold
        using O = PendingOutlook;
        QTest::newRow("priority") << "Priority" << int(O::Waits) << "priority";
        QTest::newRow("resources") << "Resources" << int(O::Waits) << "free";
        QTest::newRow("dependency") << "Dependency" << int(O::Waits) << "depends";
        QTest::newRow("qos-gres-per-user") << "QOSMaxGRESPerUser" << int(O::Waits) << "GPUs";
        QTest::newRow("qos-jobs-per-user") << "QOSMaxJobsPerUserLimit" << int(O::Waits) << "running jobs";
        QTest::newRow("req-node-not-avail") << "ReqNodeNotAvail" << int(O::Waits) << "node";
        QTest::newRow("assoc-grp-gres") << "AssocGrpGRES" << int(O::Waits) << "GPUs";
        QTest::newRow("begin-time") << "BeginTime" << int(O::Waits) << "start time";
        QTest::newRow("array-throttle") << "JobArrayTaskLimit" << int(O::Waits) << "max_concurrent";
        QTest::newRow("held-by-user") << "JobHeldUser" << int(O::NeedsAction) << "scontrol release";
        QTest::newRow("held-by-admin") << "JobHeldAdmin" << int(O::NeedsAction) << "administrator";
        QTest::newRow("launch-failed") << "launch failed requeued held" << int(O::NeedsAction) << "node";
        QTest::newRow("partition-time-limit") << "PartitionTimeLimit" << int(O::Never) << "MaxTime";
        QTest::newRow("partition-node-limit") << "PartitionNodeLimit" << int(O::Never) << "node count";
        QTest::newRow("dependency-never") << "DependencyNeverSatisfied" << int(O::Never) << "failed";
        QTest::newRow("unknown-code-waits-as-slurm-says")
            << "SomethingNew" << int(O::Waits) << "Slurm says SomethingNew";
    }
    void table()
    {
        QFETCH(QString, code);
        QFETCH(int, outlook);
        QFETCH(QString, word);
        const PendingReason r = pendingReason(code);
        QCOMPARE(r.code, code);
        QCOMPARE(int(r.outlook), outlook);
        QVERIFY2(r.words.contains(word), qPrintable(r.words));
    }

    void startsIn_data()
    {
        QTest::addColumn<qint64>("startMs");
        QTest::addColumn<QString>("text");
        QTest::newRow("past") << kNow - 1000 << "now";
        QTest::newRow("seconds") << kNow + 20'000 << "now";
        QTest::newRow("minutes") << kNow + 14 * 60'000 << "in ~14 min";
        QTest::newRow("hours") << kNow + 5 * 3'600'000 << "in ~5 h";
        QTest::newRow("days") << kNow + 3 * 86'400'000LL << "in ~3 days";
    }
    void startsIn()
    {
        QFETCH(qint64, startMs);
        QFETCH(QString, text);
        QCOMPARE(orrery::core::startsIn(startMs, kNow), text);
    }

    void trialText()
    {
        QCOMPARE(pendingText(queued(0, QStringLiteral("PENDING (Resources)"), kNow + 14 * 60'000), kNow),
                 QStringLiteral("waiting for free nodes or GPUs (Resources), expected start in ~14 min"));
        QCOMPARE(pendingText(queued(0, QStringLiteral("PENDING (PartitionTimeLimit)")), kNow),
                 QStringLiteral("never starts: the time limit is above the partition's maximum (MaxTime) "
                                "(PartitionTimeLimit)"));
        QVERIFY(pendingText(queued(0, QStringLiteral("PENDING (JobHeldUser)")), kNow)
                    .startsWith(QLatin1String("held: ")));
        Trial running = queued(0, QStringLiteral("RUNNING"));
        running.setState(TrialState::Running);
        QCOMPARE(pendingText(running, kNow), QString());
    }

    void summary()
    {
        QList<Trial> latest;
        for (int i = 0; i < 12; ++i)
            latest << queued(i, QStringLiteral("PENDING (Resources)"), kNow + (14 + i) * 60'000);
        latest << queued(12, QStringLiteral("PENDING (PartitionTimeLimit)"));
        latest << queued(13, QStringLiteral("PENDING (None)"));
        Trial done = queued(14, {});
        done.setState(TrialState::Completed);
        latest << done;
        QCOMPARE(
            queuedSummary(latest, kNow),
            QStringLiteral("1 never starts: PartitionTimeLimit — the time limit is above the partition's "
                           "maximum (MaxTime); 12 queued: Resources (expected start in ~14 min)"));
        QCOMPARE(queuedSummary({done}, kNow), QString());
        // Held by the executor's limits: recorded pending, said with the limit.
        Trial held =
            queued(15, QStringLiteral("held: waiting for room under the cluster's MaxArraySize 1001"));
        held.setState(TrialState::Pending);
        QCOMPARE(
            queuedSummary({held, held}, kNow),
            QStringLiteral("2 not submitted yet: waiting for room under the cluster's MaxArraySize 1001"));
    }
};

ORRERY_TEST_MAIN(TestPendingReason, QCoreApplication)
#include "tst_pendingreason.moc"
