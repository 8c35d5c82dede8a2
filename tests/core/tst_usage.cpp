// SPDX-License-Identifier: GPL-3.0-or-later
// GPU-hours, CPU-hours and cost (core/usage.h, docs/sweeps.md "GPU-hours and cost"): the
// arithmetic over attempts, Slurm durations, how the runner dates an attempt, the worst case
// `sweep submit --dry-run` prints and the budget rule the runner launches under.
#include "testsupport.h"

#include "orrery/core/usage.h"

#include <QCoreApplication>

using namespace orrery::core;

namespace {

constexpr qint64 kHour = 3600'000;

Trial attempt(qint64 started, qint64 ended, int gpus, int cpus,
              const QString &state = QStringLiteral("completed"))
{
    Trial t;
    t.startedMs = started;
    t.endedMs = ended;
    t.gpus = gpus;
    t.cpus = cpus;
    t.state = state;
    return t;
}

SweepSpec budgetSpec(double budget, const QString &time, int nodes, int gpusPerNode)
{
    SweepSpec s;
    s.budgetGpuHours = budget;
    s.resources.time = time;
    s.resources.nodes = nodes;
    s.resources.gpusPerNode = gpusPerNode;
    return s;
}

}  // namespace

class TestUsage : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void endedAttemptsCountTheirSpanTimesWhatTheyHeld()
    {
        // 90 minutes on 8 GPUs and 64 CPUs.
        const Usage u = attemptUsage(attempt(1000, 1000 + 90 * 60'000, 8, 64), 5 * kHour);
        QCOMPARE(u.gpuHours, 12.0);
        QCOMPARE(u.cpuHours, 96.0);
        QCOMPARE(u.elapsedMs, 90 * 60'000);
        QCOMPARE(u.attempts, 1);
        QCOMPARE(u.counting, 0);
    }

    void runningAttemptsCountUpToNow()
    {
        const Usage u = attemptUsage(attempt(kHour, 0, 4, 8, QStringLiteral("running")), 3 * kHour);
        QCOMPARE(u.gpuHours, 8.0);
        QCOMPARE(u.counting, 1);
        // Later, more.
        QCOMPARE(attemptUsage(attempt(kHour, 0, 4, 8, QStringLiteral("running")), 4 * kHour).gpuHours, 12.0);
    }

    void attemptsNeverSeenRunningCountNothing()
    {
        const Usage u = attemptUsage(attempt(0, 5 * kHour, 8, 8, QStringLiteral("failed")), 6 * kHour);
        QCOMPARE(u.gpuHours, 0.0);
        QCOMPARE(u.attempts, 0);
        QCOMPARE(describeUsage(u, std::nullopt), QStringLiteral("nothing has run yet"));
        // A clock that went backwards counts nothing rather than less than nothing.
        QCOMPARE(attemptUsage(attempt(2 * kHour, kHour, 8, 8), 6 * kHour).gpuHours, 0.0);
    }

    void aRunSumsItsAttempts()
    {
        // A preempted attempt (30 min on 2 GPUs), its resumption (1 h), a failed launch (never ran).
        const QList<Trial> attempts{attempt(1, 1 + kHour / 2, 2, 16, QStringLiteral("preempted")),
                                    attempt(kHour, 2 * kHour, 2, 16),
                                    attempt(0, 0, 2, 16, QStringLiteral("failed"))};
        const Usage u = usageOf(attempts, 10 * kHour);
        QCOMPARE(u.gpuHours, 3.0);
        QCOMPARE(u.cpuHours, 24.0);
        QCOMPARE(u.attempts, 2);
        QCOMPARE(describeUsage(u, std::nullopt), QStringLiteral("3 GPU-hours, 24 CPU-hours over 2 attempts"));
        QCOMPARE(describeUsage(u, Price{2.5, QStringLiteral("USD")}),
                 QStringLiteral("3 GPU-hours, 24 CPU-hours over 2 attempts: 7.50 USD"));
        const QJsonObject j = usageJson(u, Price{2.5, QStringLiteral("EUR")});
        QCOMPARE(j.value(QLatin1String("gpu_hours")).toDouble(), 3.0);
        QCOMPARE(j.value(QLatin1String("cost")).toDouble(), 7.5);
        QCOMPARE(j.value(QLatin1String("currency")).toString(), QStringLiteral("EUR"));
        QVERIFY(!usageJson(u, std::nullopt).contains(QLatin1String("cost")));
    }

    void slurmDurations_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("ms");  // -1: no limit; -2: malformed
        QTest::newRow("minutes") << "90" << qint64(90 * 60'000);
        QTest::newRow("minutes:seconds") << "1:30" << qint64(90'000);
        QTest::newRow("squeue elapsed 0:05") << "0:05" << qint64(5'000);
        QTest::newRow("hours:minutes:seconds") << "02:00:00" << qint64(2 * kHour);
        QTest::newRow("days-hours") << "1-12" << qint64(36 * kHour);
        QTest::newRow("days-hours:minutes") << "1-00:30" << qint64(24 * kHour + 30 * 60'000);
        QTest::newRow("days-hours:minutes:seconds") << "2-01:00:05" << qint64(49 * kHour + 5'000);
        QTest::newRow("spaces around") << " 10:00 " << qint64(600'000);
        QTest::newRow("empty: none") << "" << qint64(-1);
        QTest::newRow("UNLIMITED") << "UNLIMITED" << qint64(-1);
        QTest::newRow("infinite") << "infinite" << qint64(-1);
        QTest::newRow("zero is no limit") << "0" << qint64(-1);
        QTest::newRow("words") << "2 hours" << qint64(-2);
        QTest::newRow("four fields") << "1:2:3:4" << qint64(-2);
        QTest::newRow("negative") << "-5" << qint64(-2);
        QTest::newRow("fraction") << "1.5" << qint64(-2);
        QTest::newRow("trailing colon") << "10:" << qint64(-2);
        QTest::newRow("shell") << "$(reboot)" << qint64(-2);
        QTest::newRow("too many digits") << "9999999999" << qint64(-2);
    }
    void slurmDurations()
    {
        QFETCH(QString, text);
        QFETCH(qint64, ms);
        const SlurmDuration d = parseSlurmDuration(text);
        if (ms == -2) {
            QVERIFY(!d.ok());
            QVERIFY2(d.error.contains(QLatin1String("not a Slurm time")), qPrintable(d.error));
            QVERIFY(!d.ms);
        } else {
            QVERIFY2(d.ok(), qPrintable(d.error));
            QCOMPARE(d.ms.value_or(-1), ms);
        }
    }

    // The runner dates attempts by what the executor says, not by when a follower looked.
    void attemptsAreDatedByTheExecutorsElapsedTime()
    {
        const qint64 now = 100 * kHour;
        QCOMPARE(runningSinceMs(qint64(3 * kHour), now), 97 * kHour);
        QCOMPARE(runningSinceMs(std::nullopt, now), now);
        // Seen running at 97 h, ended after 2 h of elapsed time; the follower came back at 100 h.
        AttemptSpan s = endedAttemptSpan(97 * kHour, qint64(2 * kHour), qint64(99 * kHour + 1000), now);
        QCOMPARE(s.startedMs, 97 * kHour);
        QCOMPARE(s.endedMs, 99 * kHour);
        // No elapsed time (Slurm forgot the job): the trainer's exit.json time.
        s = endedAttemptSpan(97 * kHour, std::nullopt, qint64(98 * kHour), now);
        QCOMPARE(s.endedMs, 98 * kHour);
        // An exit time outside the attempt (a clock ahead, an old exit.json): now.
        s = endedAttemptSpan(97 * kHour, std::nullopt, qint64(101 * kHour), now);
        QCOMPARE(s.endedMs, now);
        s = endedAttemptSpan(97 * kHour, std::nullopt, qint64(90 * kHour), now);
        QCOMPARE(s.endedMs, now);
        // Never seen running but the executor knows how long it ran: dated back from its end.
        s = endedAttemptSpan(0, qint64(kHour), qint64(99 * kHour), now);
        QCOMPARE(s.startedMs, 98 * kHour);
        QCOMPARE(s.endedMs, 99 * kHour);
        s = endedAttemptSpan(0, qint64(kHour), std::nullopt, now);
        QCOMPARE(s.startedMs, 99 * kHour);
        QCOMPARE(s.endedMs, now);
        // Nothing known: it counts nothing.
        s = endedAttemptSpan(0, std::nullopt, qint64(99 * kHour), now);
        QCOMPARE(s.startedMs, 0);
        // Slurm's whole seconds, or the last poll's elapsed: the attempt ends no earlier than its
        // trainer's last event, and starts no earlier than it was submitted.
        s = endedAttemptSpan(97 * kHour, qint64(3000), std::nullopt, now, 0, 97 * kHour + 3800);
        QCOMPARE(s.endedMs, 97 * kHour + 3800);
        s = endedAttemptSpan(97 * kHour, qint64(3000), std::nullopt, now, 0, 97 * kHour + 2000);
        QCOMPARE(s.endedMs, 97 * kHour + 3000);  // an earlier event changes nothing
        s = endedAttemptSpan(97 * kHour, qint64(3000), std::nullopt, now, 0, now + 1000);
        QCOMPARE(s.endedMs, 97 * kHour + 3000);  // nor one from a clock ahead of ours
        s = endedAttemptSpan(97 * kHour - 400, qint64(3000), std::nullopt, now, 97 * kHour);
        QCOMPARE(s.startedMs, 97 * kHour);
        s = endedAttemptSpan(0, qint64(kHour), std::nullopt, now, 99 * kHour + 1000);
        QCOMPARE(s.startedMs, 99 * kHour + 1000);
        QCOMPARE(s.endedMs, now);
    }

    void worstCaseIsTrialsTimesLimitTimesGpus()
    {
        SweepSpec s;
        s.resources.time = QStringLiteral("02:00:00");
        s.resources.nodes = 2;
        s.resources.gpusPerNode = 4;
        QCOMPARE(worstGpuHours(s.resources).value_or(-1), 16.0);
        WorstCase w = worstCase(s, 24, 24);
        QCOMPARE(w.gpuHours.value_or(-1), 384.0);
        QCOMPARE(describeWorstCase(w, Price{2.5, QStringLiteral("USD")}),
                 QStringLiteral("worst case: 24 trials × 2h00m × 8 GPUs = 384 GPU-hours (960.00 USD at 2.50 "
                                "USD/GPU-hour)\n"));
        s.retries = 2;
        QVERIFY(describeWorstCase(worstCase(s, 24, 24), std::nullopt)
                    .contains(QLatin1String("with retries (2 each): up to 1152 GPU-hours")));
        s.resources.time.clear();
        w = worstCase(s, 24, 24);
        QVERIFY(!w.gpuHours);
        QCOMPARE(describeWorstCase(w, std::nullopt),
                 QStringLiteral("worst case: 24 trials × 8 GPUs: no time limit (resources.time): unbounded "
                                "GPU-hours\n"));
        s.resources.gpusPerNode = 0;
        QVERIFY(describeWorstCase(worstCase(s, 3, 3), std::nullopt).contains(QLatin1String("0 GPU-hours")));
    }

    void theBudgetHoldsWhatActiveAttemptsMayStillUse()
    {
        // 10 GPU-hours; a trial may use 2 h × 2 GPUs = 4.
        const SweepSpec spec = budgetSpec(10, QStringLiteral("2:00:00"), 1, 2);
        const qint64 now = 10 * kHour;
        QCOMPARE(budgetState(spec, {}, now)->room(), 2);
        QCOMPARE(firstBatchSize(spec, 8), 2);
        QCOMPARE(firstBatchSize(spec, 1), 1);
        // One attempt ended after 30 min (1 GPU-hour), one runs for 1 h so far, one is queued.
        const QList<Trial> attempts{attempt(now - 2 * kHour, now - 2 * kHour + kHour / 2, 2, 2),
                                    attempt(now - kHour, 0, 2, 2, QStringLiteral("running")),
                                    attempt(0, 0, 2, 2, QStringLiteral("queued"))};
        const BudgetState b = *budgetState(spec, attempts, now);
        QCOMPARE(b.used, 3.0);
        QCOMPARE(b.held, 2.0 + 4.0);  // the running one's last hour, the queued one's whole limit
        QCOMPARE(b.perAttempt, 4.0);
        QCOMPARE(b.room(), 0);  // 3 + 6 + 4 > 10
        QCOMPARE(
            b.explain(),
            QStringLiteral("3 of the budget's 10 GPU-hours used, 6 held by active trials; the next trial "
                           "could use up to 4"));
        // The queued one is cancelled before it starts: 3 + 2 + 4 = 9 fits.
        QList<Trial> fewer = attempts.mid(0, 2);
        QCOMPARE(budgetState(spec, fewer, now)->room(), 1);
        // Exactly full fits (10 = 2 × 4 + 2 used), one GPU-second over does not.
        const SweepSpec exact = budgetSpec(10, QStringLiteral("2:00:00"), 1, 2);
        const QList<Trial> twoUsed{attempt(1, 1 + kHour, 2, 2)};
        QCOMPARE(budgetState(exact, twoUsed, now)->room(), 2);
        const QList<Trial> overUsed{attempt(1, 1 + kHour + 1000, 2, 2)};
        QCOMPARE(budgetState(exact, overUsed, now)->room(), 1);
        // No budget: no state.
        QVERIFY(!budgetState(SweepSpec{}, attempts, now));
    }

    void formats()
    {
        QCOMPARE(formatHours(0), QStringLiteral("0"));
        QCOMPARE(formatHours(0.08333333), QStringLiteral("0.0833"));
        QCOMPARE(formatHours(12.345), QStringLiteral("12.3"));
        QCOMPARE(formatHours(1234.4), QStringLiteral("1234"));
        QCOMPARE(formatCost(3, Price{2.5, QString()}), QStringLiteral("7.50"));
        QCOMPARE(formatCost(3, Price{2.5, QStringLiteral("credits")}), QStringLiteral("7.50 credits"));
    }
};

ORRERY_TEST_MAIN(TestUsage, QCoreApplication)
#include "tst_usage.moc"
