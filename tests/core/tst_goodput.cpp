// SPDX-License-Identifier: GPL-3.0-or-later
// Goodput (goodput.h) as a table: a run's attempts and its trainer processes' phase records in,
// where the wall time went out — queue, start-up, training, checkpoints, evaluation and samples,
// work lost to a kill or a preemption (steps redone after a resume), the rest — and that the parts
// add up to the wall time.
#include "testsupport.h"

#include "orrery/core/goodput.h"

#include <QCoreApplication>

#include <cmath>

using namespace orrery::core;

namespace {

// Times in the table are seconds after an arbitrary unix time (0 means "unknown" in the store).
qint64 ms(double s)
{
    return qint64(std::llround((1.7e9 + s) * 1000.0));
}

Trial attempt(int n, const char *state, double submitted, double started, double ended)
{
    Trial t;
    t.runId = 7;
    t.index = 3;
    t.attempt = n;
    t.state = QString::fromLatin1(state);
    t.submittedMs = ms(submitted);
    t.startedMs = started > 0 ? ms(started) : 0;
    t.endedMs = ended > 0 ? ms(ended) : 0;
    return t;
}

struct Proc {
    double start, updated;
    qint64 step, resume, checkpoint;
    double startup, train, ckpt = 0, eval = 0, sample = 0, other = 0;
};

ProcessPhases process(const Proc &p)
{
    ProcessPhases r;
    r.processStartMs = ms(p.start);
    r.updatedMs = ms(p.updated);
    r.step = p.step;
    r.resumeStep = p.resume;
    r.checkpointStep = p.checkpoint;
    r.startupS = p.startup;
    r.trainS = p.train;
    r.checkpointS = p.ckpt;
    r.evalS = p.eval;
    r.sampleS = p.sample;
    r.otherS = p.other;
    return r;
}

struct Expect {
    double queue, startup, training, checkpoint, evalAndSamples, lost, rest;
    qint64 lostSteps;
    double overrun = 0;
};

}  // namespace

Q_DECLARE_METATYPE(QList<Trial>)
Q_DECLARE_METATYPE(QList<ProcessPhases>)
Q_DECLARE_METATYPE(Expect)

class TestGoodput : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void runBreakdown_data()
    {
        QTest::addColumn<QList<Trial>>("attempts");
        QTest::addColumn<QList<ProcessPhases>>("processes");
        QTest::addColumn<double>("runEnd");  // the run's end (exit.json), for runs without trials
        QTest::addColumn<double>("now");
        QTest::addColumn<Expect>("expect");

        // Submitted at 0, the job started at 10, the process at 11 (srun, setup lines): 1 s of
        // start-up before the trainer's own 5; the trainer's 0.5 s after its loop and the 1 s
        // until the executor saw the end are the rest.
        QTest::newRow("completed in one attempt")
            << QList<Trial>{attempt(0, "completed", 0, 10, 123.5)}
            << QList<ProcessPhases>{process({11, 122.5, 100, 0, 100, 5, 100, 3, 2, 1, 0.5})} << 0.0 << 200.0
            << Expect{10, 6, 100, 3, 3, 0, 1.5, 0};

        QTest::newRow("cancelled while queued")
            << QList<Trial>{attempt(0, "cancelled", 0, 0, 30)} << QList<ProcessPhases>{} << 0.0 << 200.0
            << Expect{30, 0, 0, 0, 0, 0, 0, 0};

        // Killed at step 25 (its newest checkpoint: 20) at 1 s a step; the retry resumes from 20,
        // trains 30 steps in 60 s (2 s a step), of which 5 are redone: 10 s lost, on the retry.
        QTest::newRow("killed, retried from the checkpoint")
            << QList<Trial>{attempt(0, "failed", 0, 2, 40), attempt(1, "completed", 41, 43, 120)}
            << QList<ProcessPhases>{process({2, 30, 25, 0, 20, 3, 25, 1}),
                                    process({43, 119, 50, 20, 50, 4, 60, 2, 0, 0, 1})}
            << 0.0 << 200.0 << Expect{4, 7, 75, 3, 0, 10, 40 + 79 - (4 + 7 + 75 + 3 + 10), 5};

        // Preempted: the trainer checkpointed at the step it stopped at, so nothing is redone.
        QTest::newRow("preempted, resumed where it stopped")
            << QList<Trial>{attempt(0, "preempted", 0, 1, 31), attempt(1, "completed", 31, 33, 62)}
            << QList<ProcessPhases>{process({1, 30.5, 20, 0, 20, 2, 26, 1}),
                                    process({33, 61.5, 40, 20, 40, 2, 25, 1})}
            << 0.0 << 200.0 << Expect{3, 4, 51, 2, 0, 0, 62 - 60, 0};

        // The last attempt failed and nobody retried it: the 5 steps after its checkpoint are
        // lost on it (1 s each).
        QTest::newRow("failed for good after its checkpoint")
            << QList<Trial>{attempt(0, "failed", 0, 1, 40)}
            << QList<ProcessPhases>{process({1, 35, 25, 0, 20, 3, 25, 2})} << 0.0 << 200.0
            << Expect{1, 3, 20, 2, 0, 5, 40 - 31, 5};

        // Still running: the wall runs to now, and steps past the checkpoint are not lost (yet).
        QTest::newRow("running") << QList<Trial>{attempt(0, "running", 0, 5, 0)}
                                 << QList<ProcessPhases>{process({5, 50, 42, 0, 40, 2, 40, 1})} << 0.0 << 60.0
                                 << Expect{5, 2, 40, 1, 0, 0, 60 - 48, 0};

        // A retry killed again before it got back to where the first attempt was: every step it
        // trained was a redo (3 of them, 3 s), and the third attempt redoes 5 (at 2 s a step).
        QTest::newRow("killed twice")
            << QList<Trial>{attempt(0, "failed", 0, 1, 40), attempt(1, "failed", 41, 42, 50),
                            attempt(2, "completed", 51, 52, 100)}
            << QList<ProcessPhases>{process({1, 30, 25, 0, 20, 2, 25}), process({42, 48, 23, 20, 20, 2, 3}),
                                    process({52, 99, 40, 20, 40, 2, 40})}
            << 0.0 << 200.0 << Expect{3, 6, 55, 0, 0, 3 + 10, 40 + 9 + 49 - 77, 8};

        // The trainer's events run past the recorded end (Slurm's end in whole seconds, or the
        // trainer's clock ahead): the attempt lasted at least until its last event.
        QTest::newRow("events past the recorded end")
            << QList<Trial>{attempt(0, "completed", 0, 1, 20)}
            << QList<ProcessPhases>{process({1, 25, 10, 0, 10, 4, 20})} << 0.0 << 200.0
            << Expect{1, 4, 20, 0, 0, 0, 0, 0, 0};

        // The trainer's clock behind this machine's: its process "started" 5 s before the attempt
        // was submitted. The parts then exceed the wall; rest is 0 and the overrun says by how much.
        QTest::newRow("process before its submission")
            << QList<Trial>{attempt(0, "completed", 10, 0, 20)}
            << QList<ProcessPhases>{process({5, 20, 10, 0, 10, 4, 11})} << 0.0 << 200.0
            << Expect{0, 4, 11, 0, 0, 0, 0, 0, 5};

        // An excess within the clocks' resolution (10 ms) is rounding: rest 0, no overrun.
        QTest::newRow("rounding within 10 ms") << QList<Trial>{attempt(0, "completed", 0, 1, 20)}
                                               << QList<ProcessPhases>{process({1, 20, 10, 0, 10, 4, 15.005})}
                                               << 0.0 << 200.0 << Expect{1, 4, 15.005, 0, 0, 0, 0, 0, 0};

        // An ingested run with no sweep: each process is an attempt of its own, from its start to
        // its last event; the run's end (exit.json) closes the last one. Resumed locally from 10
        // after reaching 14: 4 steps redone, at the second process's 0.75 s a step.
        QTest::newRow("no trials: processes only")
            << QList<Trial>{}
            << QList<ProcessPhases>{process({100, 120, 14, 0, 10, 2, 14, 1}),
                                    process({130, 150, 30, 10, 30, 2, 15, 2, 0, 1})}
            << 151.0 << 200.0 << Expect{0, 4, 26, 3, 1, 3, 41 - 37, 4};
    }

    void runBreakdown()
    {
        QFETCH(QList<Trial>, attempts);
        QFETCH(QList<ProcessPhases>, processes);
        QFETCH(double, runEnd);
        QFETCH(double, now);
        QFETCH(Expect, expect);
        const RunGoodput r = computeRunGoodput(attempts, processes, runEnd > 0 ? ms(runEnd) : 0, ms(now));
        const GoodputParts &g = r.total;
        auto near = [](double a, double b) { return std::abs(a - b) < 1e-6; };
        const QString got = QStringLiteral("queue %1 startup %2 training %3 checkpoint %4 eval+samples %5 "
                                           "lost %6 rest %7 lost steps %8 overrun %9 wall %10")
                                .arg(g.queueS)
                                .arg(g.startupS)
                                .arg(g.trainingS)
                                .arg(g.checkpointS)
                                .arg(g.evalS + g.sampleS)
                                .arg(g.lostS)
                                .arg(g.restS)
                                .arg(g.lostSteps)
                                .arg(g.overrunS)
                                .arg(g.wallS);
        QVERIFY2(near(g.queueS, expect.queue), qPrintable(got));
        QVERIFY2(near(g.startupS, expect.startup), qPrintable(got));
        QVERIFY2(near(g.trainingS, expect.training), qPrintable(got));
        QVERIFY2(near(g.checkpointS, expect.checkpoint), qPrintable(got));
        QVERIFY2(near(g.evalS + g.sampleS, expect.evalAndSamples), qPrintable(got));
        QVERIFY2(near(g.lostS, expect.lost), qPrintable(got));
        QVERIFY2(near(g.restS, expect.rest), qPrintable(got));
        QCOMPARE(g.lostSteps, expect.lostSteps);
        QVERIFY2(near(g.overrunS, expect.overrun), qPrintable(got));
        // The parts add up to the wall time (within the clocks' 10 ms), less what overran it; so
        // does each attempt.
        auto addsUp = [](const GoodputParts &p) {
            return std::abs(p.sumOfParts() - p.overrunS - p.wallS) <= 0.01 + 1e-9;
        };
        QVERIFY2(addsUp(g), qPrintable(got));
        QCOMPARE(r.attempts.size(), attempts.isEmpty() ? processes.size() : attempts.size());
        for (const AttemptGoodput &a : r.attempts) {
            QVERIFY(a.parts.restS >= 0);
            QVERIFY(addsUp(a.parts));
        }
        if (g.wallS > 0)
            QVERIFY(near(g.goodput(), g.trainingS / g.wallS));
    }

    // The lost work sits on the attempt that redid it, with that attempt's time per step.
    void lostWorkIsOnTheAttemptThatRedidIt()
    {
        const RunGoodput r = computeRunGoodput(
            {attempt(0, "failed", 0, 2, 40), attempt(1, "completed", 41, 43, 120)},
            {process({2, 30, 25, 0, 20, 3, 25}), process({43, 119, 50, 20, 50, 4, 60})}, 0, ms(200));
        QCOMPARE(r.attempts.size(), 2);
        QCOMPARE(r.attempts[0].parts.lostSteps, 0);
        QCOMPARE(r.attempts[0].lastStep, 25);
        QCOMPARE(r.attempts[1].parts.lostSteps, 5);
        QCOMPARE(r.attempts[1].resumeStep, 20);
        QCOMPARE(r.attempts[1].trainedSteps, 30);
        QCOMPARE(r.attempts[1].parts.lostS, 10.0);
        QCOMPARE(r.trialIndex, 3);
        QCOMPARE(r.run, 7);
    }

    // A hung attempt (docs/sweeps.md "Hangs"): from its last progress to its end is its own part,
    // out of rest; the parts still add up to the wall; an attempt that was not hung has none.
    void timeLostToAHangIsItsOwnPart()
    {
        Trial hung = attempt(0, "failed", 0, 2, 100);
        hung.exitReason = QStringLiteral("hung: no progress for 1m05s (hang_timeout 1m00s)");
        hung.progressMs = ms(30);
        const RunGoodput r = computeRunGoodput(
            {hung, attempt(1, "completed", 101, 103, 150)},
            {process({2, 30, 25, 0, 20, 3, 25}), process({103, 149, 50, 20, 50, 4, 40})}, 0, ms(200));
        QCOMPARE(r.attempts.size(), 2);
        const GoodputParts &g = r.attempts[0].parts;
        QCOMPARE(g.hungS, 70.0);  // 30 → 100
        QCOMPARE(g.restS, 98.0 - 3 - 25 - 70.0);  // the wall less queue, start-up and training
        QVERIFY(std::abs(g.sumOfParts() - g.wallS) < 1e-9);
        QCOMPARE(r.attempts[1].parts.hungS, 0.0);
        QCOMPARE(r.total.hungS, 70.0);
        QCOMPARE(labelledParts(r.total)[7].label, QStringLiteral("hung"));
        QCOMPARE(labelledParts(r.total)[7].seconds, 70.0);
        // Never seen progressing: hung from its start.
        hung.progressMs = 0;
        const RunGoodput never = computeRunGoodput({hung}, {}, 0, ms(200));
        QCOMPARE(never.attempts[0].parts.hungS, 98.0);
        QCOMPARE(never.attempts[0].parts.restS, 0.0);
    }

    // A process belongs to the attempt its life overlaps most, not to the order the records come
    // in, nor to a retry submitted seconds after a short attempt's process started.
    void processesGoToTheirAttempts()
    {
        const RunGoodput r = computeRunGoodput(
            {attempt(1, "completed", 41, 43, 120), attempt(0, "failed", 0, 2, 40)},
            {process({44, 119, 50, 20, 50, 4, 60}), process({2, 30, 25, 0, 20, 3, 25})}, 0, ms(200));
        QCOMPARE(r.attempts.size(), 2);
        QCOMPARE(r.attempts[0].attempt, 0);
        QCOMPARE(r.attempts[0].processes, 1);
        QCOMPARE(r.attempts[0].lastStep, 25);
        QCOMPARE(r.attempts[1].processes, 1);
        QCOMPARE(r.attempts[1].lastStep, 50);
        // A short attempt (3 s) whose retry was submitted 4 s after its process started.
        const RunGoodput quick = computeRunGoodput(
            {attempt(0, "failed", 0, 0.5, 3.5), attempt(1, "completed", 4.5, 5, 20)},
            {process({0.5, 3, 6, 0, 5, 1, 1.5}), process({5, 19.5, 20, 5, 20, 1, 13})}, 0, ms(200));
        QCOMPARE(quick.attempts[0].processes, 1);
        QCOMPARE(quick.attempts[0].lastStep, 6);
        QCOMPARE(quick.attempts[1].processes, 1);
        QCOMPARE(quick.total.lostSteps, 1);
        // A process whose clock is 2 s behind this machine's still belongs to the retry.
        const RunGoodput skewed = computeRunGoodput(
            {attempt(0, "failed", 0, 2, 40), attempt(1, "completed", 41, 0, 120)},
            {process({2, 30, 25, 0, 20, 3, 25}), process({39, 119, 50, 20, 50, 4, 60})}, 0, ms(200));
        QCOMPARE(skewed.attempts[1].processes, 1);
        QCOMPARE(skewed.attempts[1].parts.queueS, 0.0);
    }

    void sumsAddUp()
    {
        GoodputParts a, b;
        a.queueS = 1;
        a.trainingS = 3;
        a.wallS = 4;
        a.lostSteps = 2;
        b.restS = 2;
        b.trainingS = 2;
        b.wallS = 4;
        b.lostSteps = 1;
        a += b;
        QCOMPARE(a.wallS, 8.0);
        QCOMPARE(a.sumOfParts(), 8.0);
        QCOMPARE(a.lostSteps, 3);
        QCOMPARE(a.goodput(), 5.0 / 8.0);
        QCOMPARE(GoodputParts{}.goodput(), 0.0);
    }
};

ORRERY_TEST_MAIN(TestGoodput, QCoreApplication)
#include "tst_goodput.moc"
