// SPDX-License-Identifier: GPL-3.0-or-later
// The one table of trial and sweep states (core/states.h): the text stored for each, its phase and
// whether it is active. The stored words are a format (the store outlives versions): pinned here.
#include "testsupport.h"

#include "orrery/core/states.h"
#include "orrery/core/store.h"
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
