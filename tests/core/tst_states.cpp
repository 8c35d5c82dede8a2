// SPDX-License-Identifier: GPL-3.0-or-later
// The one table of trial and sweep states (core/states.h): the text stored for each, its phase and
// whether it is active. The stored words are a format (the store outlives versions): pinned here.
#include "testsupport.h"

#include "orrery/core/format.h"
#include "orrery/core/states.h"
#include "orrery/core/store.h"
#include "orrery/core/sweepprogress.h"
#include "orrery/core/sweeprunner.h"

#include <QCoreApplication>

using namespace orrery::core;

class TestStates : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Every follower's pace (sweep watch, the GUI): at once with a backlog, fast after news,
    // doubling every two quiet ticks up to the slow limit.
    void followersTickAtOnePace()
    {
        const orrery::core::TickPace pace{1000, 15'000};
        orrery::core::TickReport news, quiet, backlog;
        news.events = {QStringLiteral("trial 0 completed")};
        backlog.moreToRead = true;
        int quietTicks = 7;
        QCOMPARE(orrery::core::nextTickIntervalMs(backlog, pace, quietTicks), 0);
        QCOMPARE(orrery::core::nextTickIntervalMs(news, pace, quietTicks), 1000);
        QCOMPARE(orrery::core::nextTickIntervalMs(quiet, pace, quietTicks), 1414);
        QCOMPARE(orrery::core::nextTickIntervalMs(quiet, pace, quietTicks), 2000);
        for (int i = 0; i < 20; ++i)
            orrery::core::nextTickIntervalMs(quiet, pace, quietTicks);
        QCOMPARE(orrery::core::nextTickIntervalMs(quiet, pace, quietTicks), 15'000);
        QCOMPARE(orrery::core::nextTickIntervalMs(news, pace, quietTicks), 1000);
        // Points stored without events (trials logging): never slower than 4 fast intervals.
        orrery::core::TickReport logging;
        logging.points = 10;
        for (int i = 0; i < 20; ++i)
            orrery::core::nextTickIntervalMs(quiet, pace, quietTicks);
        QCOMPARE(orrery::core::nextTickIntervalMs(logging, pace, quietTicks), 4000);
        QCOMPARE(orrery::core::nextTickIntervalMs(logging, pace, quietTicks), 4000);
    }

    // sweep watch's status block: steps from the trials' configs, rates from two samples a known
    // time apart, ETAs from those; an unsubmitted trial counts the typical total.
    void progressCountsStepsRatesAndEta()
    {
        using namespace orrery::core;
        Sweep sw;
        sw.trialCount = 4;
        sw.metricName = QStringLiteral("eval/loss");
        auto trial = [](qint64 id, int index, TrialState state, qint64 step, qint64 total) {
            TrialSummary t;
            t.trial.id = id;
            t.trial.index = index;
            t.trial.setState(state);
            t.trial.config = QStringLiteral("train:\n  batch_size: 8\n  steps: %1\n").arg(total);
            t.step = step;
            t.latest = 0.5;
            return t;
        };
        SweepProgressTracker tracker;
        QList<TrialSummary> rows{trial(1, 0, TrialState::Completed, 100, 100),
                                 trial(2, 1, TrialState::Running, 10, 100),
                                 trial(3, 2, TrialState::Queued, -1, 100)};
        SweepProgress p = tracker.update(sw, rows, std::nullopt, 1'000'000);
        QCOMPARE(p.planned, 4);
        QCOMPARE(p.counts.done, 1);
        QCOMPARE(p.counts.running, 1);
        QCOMPARE(p.counts.queued, 1);
        QCOMPARE(p.stepsDone, 110);
        QCOMPARE(p.stepsTotal, 400);  // the fourth, not submitted yet, counts 100
        QVERIFY(!p.etaMs);  // one sample: no rate yet
        QCOMPARE(p.active.size(), 2);
        rows[1].step = 30;  // 20 steps in 10 s
        p = tracker.update(sw, rows, std::nullopt, 1'010'000);
        QCOMPARE(p.active[0].stepsPerSecond, 2.0);
        QCOMPARE(*p.active[0].etaMs, qint64(35'000));  // 70 steps at 2/s
        QCOMPARE(*p.etaMs, qint64(135'000));  // 70 + 100 + 100 steps at the one running rate
        rows[1].trial.setState(TrialState::Stopped);  // stopped early: its total is what it ran
        p = tracker.update(sw, rows, std::nullopt, 1'020'000);
        QCOMPARE(p.counts.stopped, 1);
        QCOMPARE(p.stepsTotal, 100 + 30 + 100 + 100);
        QVERIFY(!p.etaMs);  // nothing runs: no rate to go by
        // Issue 41: the ETA counts what a trial spends besides training steps. The first trial
        // took 200 s for its 100 steps (evaluation and samples); the second trains at 2 steps/s
        // in the last minute but has run 60 s for its 30 steps: the last minute's rate alone said
        // 135 s to go.
        rows[0].trial.startedMs = 600'000;
        rows[0].trial.endedMs = 800'000;
        rows[1].trial.setState(TrialState::Running);
        rows[1].trial.startedMs = 1'010'000 - 60'000;
        SweepProgressTracker timed;
        rows[1].step = 10;
        timed.update(sw, rows, std::nullopt, 1'000'000);
        rows[1].step = 30;
        p = timed.update(sw, rows, std::nullopt, 1'010'000);
        QCOMPARE(p.active[0].stepsPerSecond, 2.0);
        // 100 steps at 2 s a step, less the 60 s it has run: 140 s; then 200 steps at 2 s a step.
        QCOMPARE(*p.active[0].etaMs, qint64(140'000));
        QCOMPARE(*p.etaMs, qint64(140'000 + 400'000));
        // No trial completed yet: its own 60 s for 30 steps (2 s a step, evaluations included)
        // beats the last minute's 0.5 s a step.
        rows[0].trial.setState(TrialState::Queued);
        rows[0].step = -1;
        SweepProgressTracker early;
        rows[1].step = 10;
        early.update(sw, rows, std::nullopt, 1'000'000);
        rows[1].step = 30;
        p = early.update(sw, rows, std::nullopt, 1'010'000);
        QCOMPARE(p.active[1].index, 1);
        QVERIFY(!p.active[0].etaMs);  // queued
        QCOMPARE(*p.active[1].etaMs, qint64(70 * 2000));
        QCOMPARE(*p.etaMs, qint64(70 * 2000 + 300 * 2000));  // trials 0, 2 and the unsubmitted one
        QCOMPARE(configuredSteps(QStringLiteral("train: {steps: 80}")), std::optional<qint64>(80));
        QCOMPARE(configuredSteps(QStringLiteral("train: [")), std::nullopt);
        QCOMPARE(formatDuration(3'725'000), QStringLiteral("1h02m"));
        QCOMPARE(formatDuration(65'000), QStringLiteral("1m05s"));
    }

    void trialStates_data()
    {
        QTest::addColumn<TrialState>("state");
        QTest::addColumn<QString>("text");
        QTest::addColumn<Phase>("phase");
        QTest::addColumn<bool>("active");
        QTest::addColumn<bool>("ended");
        QTest::newRow("pending") << TrialState::Pending << QStringLiteral("pending") << Phase::Queued << false
                                 << false;
        QTest::newRow("queued") << TrialState::Queued << QStringLiteral("queued") << Phase::Queued << true
                                << false;
        QTest::newRow("running") << TrialState::Running << QStringLiteral("running") << Phase::Running << true
                                 << false;
        QTest::newRow("stopping") << TrialState::Stopping << QStringLiteral("stopping") << Phase::Running
                                  << true << false;
        QTest::newRow("cancelling") << TrialState::Cancelling << QStringLiteral("cancelling")
                                    << Phase::Running << true << false;
        QTest::newRow("completed") << TrialState::Completed << QStringLiteral("completed") << Phase::Done
                                   << false << true;
        QTest::newRow("failed") << TrialState::Failed << QStringLiteral("failed") << Phase::Failed << false
                                << true;
        QTest::newRow("preempted") << TrialState::Preempted << QStringLiteral("preempted") << Phase::Queued
                                   << false << true;
        QTest::newRow("stopped") << TrialState::Stopped << QStringLiteral("stopped") << Phase::Stopped
                                 << false << true;
        QTest::newRow("cancelled") << TrialState::Cancelled << QStringLiteral("cancelled") << Phase::Stopped
                                   << false << true;
        QTest::newRow("lost") << TrialState::Lost << QStringLiteral("lost") << Phase::Failed << false << true;
    }

    void trialStates()
    {
        QFETCH(TrialState, state);
        QFETCH(QString, text);
        QFETCH(Phase, phase);
        QFETCH(bool, active);
        QFETCH(bool, ended);
        QCOMPARE(toText(state), text);
        QCOMPARE(trialStateFromText(text), state);
        QCOMPARE(phaseOf(state), phase);
        QCOMPARE(isActive(state), active);
        QCOMPARE(hasEnded(state), ended);
        Trial t;
        t.setState(state);
        QCOMPARE(t.state, text);
        QCOMPARE(t.trialState(), state);
        QCOMPARE(t.isActive(), active);
    }

    void sweepStates()
    {
        const QList<std::tuple<SweepState, const char *, bool>> rows{
            {SweepState::Pending, "pending", true},       {SweepState::Running, "running", true},
            {SweepState::Cancelling, "cancelling", true}, {SweepState::Finished, "finished", false},
            {SweepState::Failed, "failed", false},        {SweepState::Cancelled, "cancelled", false}};
        for (const auto &[state, text, active] : rows) {
            QCOMPARE(toText(state), QString::fromLatin1(text));
            QCOMPARE(sweepStateFromText(QString::fromLatin1(text)), state);
            QCOMPARE(isActive(state), active);
        }
    }

    // A word this version never writes (a newer Orrery's store, another tool's) is Unknown: not
    // active, not ended, counted as queued; and "unknown" itself is not a stored word.
    void unknownWords()
    {
        for (const char *word : {"RUNNING", "pruned", "", "unknown", "done"}) {
            QCOMPARE(trialStateFromText(QString::fromLatin1(word)), TrialState::Unknown);
            QCOMPARE(sweepStateFromText(QString::fromLatin1(word)), SweepState::Unknown);
        }
        QVERIFY(!isActive(TrialState::Unknown));
        QVERIFY(!hasEnded(TrialState::Unknown));
        QCOMPARE(phaseOf(TrialState::Unknown), Phase::Queued);
        QVERIFY(!isActive(SweepState::Unknown));
    }
};

ORRERY_TEST_MAIN(TestStates, QCoreApplication)
#include "tst_states.moc"
