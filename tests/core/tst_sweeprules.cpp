// SPDX-License-Identifier: GPL-3.0-or-later
// The sweep runner's rules (sweeprules.h) as tables, one row per case the runner meets: how an
// attempt ended (exit.json, else the exit status or Slurm's word, else lost; a stop or cancel of
// ours settles it), its span, whether it is resubmitted (retries, preemptions, a user's retry, the
// budget), which trials early stopping stops, and how a sweep ends. The end-to-end sweep tests
// (tst_sweep_local, tst_sweep_cluster, tst_sweep_slurm, tst_sweep_command) meet each case once,
// slowly; here each is pinned on its own.
#include "testsupport.h"

#include "orrery/core/notice.h"
#include "orrery/core/sweeprules.h"
#include "orrery/core/sweeprunner.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>
#include <limits>

#include <optional>

using namespace orrery::core;

using MetricHistories = QHash<int, QList<std::pair<qint64, double>>>;

Q_DECLARE_METATYPE(AttemptOutcome)
Q_DECLARE_METATYPE(TaskStatus)
Q_DECLARE_METATYPE(Trial)
Q_DECLARE_METATYPE(QList<Trial>)
Q_DECLARE_METATYPE(QList<ProcessPhases>)
Q_DECLARE_METATYPE(SweepSpec)
Q_DECLARE_METATYPE(MetricHistories)
Q_DECLARE_METATYPE(std::optional<qint64>)

namespace {

constexpr qint64 kNow = 1'700'000'000'000;  // unix ms
constexpr qint64 kHour = 3'600'000;

// What the executor says of a task that ended: its detail and, where it knows it, the exit status.
TaskStatus ended(const char *detail, std::optional<int> exitCode = std::nullopt)
{
    TaskStatus st;
    st.state = TaskStatus::State::Ended;
    st.detail = QString::fromLatin1(detail);
    st.exitCode = exitCode;
    return st;
}

// A task the executor has no record of (Slurm forgot it and there is no accounting).
TaskStatus unknownTask()
{
    TaskStatus st;
    st.state = TaskStatus::State::Unknown;
    st.detail = QStringLiteral("not in Slurm's queue");
    return st;
}

TaskStatus live(TaskStatus::State state, const char *detail, std::optional<qint64> elapsedMs = std::nullopt)
{
    TaskStatus st;
    st.state = state;
    st.detail = QString::fromLatin1(detail);
    st.elapsedMs = elapsedMs;
    return st;
}

AttemptOutcome outcome(const TaskStatus &status, std::optional<QByteArray> exitJson = std::nullopt,
                       TrialState before = TrialState::Running, bool readAnswered = true)
{
    AttemptOutcome o;
    o.status = status;
    o.exitJson = std::move(exitJson);
    o.before = before;
    o.readAnswered = readAnswered;
    return o;
}

// Attempt `attempt` of trial `index` (ids unique per trial and attempt, as in the store).
Trial attempt(int attempt, TrialState state, const QString &reason = {}, bool userRetry = false,
              int index = 3)
{
    Trial t;
    t.id = 1000 * index + attempt + 1;
    t.sweepId = 1;
    t.index = index;
    t.attempt = attempt;
    t.runId = 50 + index;
    t.runDir = QStringLiteral("/runs/exp/sweep/%1").arg(index);
    t.params = QStringLiteral("{\"optim.lr\":0.001}");
    t.config = QStringLiteral("optim:\n  lr: 0.001\n");
    t.task = QStringLiteral("123_%1").arg(index);
    t.slurmJobId = QStringLiteral("123");
    t.slurmTaskId = QString::number(index);
    t.setState(state);
    t.exitReason = reason;
    t.userRetry = userRetry;
    t.submittedMs = kNow - kHour;
    t.startedMs = kNow - kHour + 1000;
    t.endedMs = hasEnded(state) ? kNow - 1000 : 0;
    t.gpus = 1;
    t.cpus = 8;
    return t;
}

// `n` preempted attempts of trial 3, from attempt `first` on.
QList<Trial> preempted(int n, int first = 0)
{
    QList<Trial> out;
    for (int i = 0; i < n; ++i)
        out << attempt(first + i, TrialState::Preempted, QStringLiteral("preempted (step %1)").arg(10 * i));
    return out;
}

ProcessPhases process(qint64 startMs, qint64 updatedMs)
{
    ProcessPhases p;
    p.processStartMs = startMs;
    p.updatedMs = updatedMs;
    return p;
}

SweepSpec hyperbandSpec()
{
    SweepSpec spec;
    spec.metricName = QStringLiteral("eval/loss");
    spec.goal = Goal::Minimize;
    EarlyTerminate rule;
    rule.minIter = 2;
    rule.eta = 3;
    spec.earlyTerminate = rule;
    return spec;
}

// The latest attempt of trials 1, 2, 3 (running unless said otherwise), and their metric at
// steps 10, 20: trial 1 the best, 2 the worst.
QList<Trial> threeTrials(TrialState two = TrialState::Running, TrialState three = TrialState::Running)
{
    return {attempt(0, TrialState::Running, {}, false, 1), attempt(0, two, {}, false, 2),
            attempt(0, three, {}, false, 3)};
}
MetricHistories threeHistories()
{
    return {{1, {{10, 1.0}, {20, 0.5}}}, {2, {{10, 1.0}, {20, 0.9}}}, {3, {{10, 1.0}, {20, 0.7}}}};
}

QMap<int, Trial> byIndex(const QList<Trial> &attempts)
{
    QMap<int, Trial> out;
    for (const Trial &t : latestAttempts(attempts))
        out.insert(t.index, t);
    return out;
}

QString text(TrialState s)
{
    return toText(s);
}

}  // namespace

class TestSweepRules : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // --- an attempt's verdict ----------------------------------------------------------------

    void attemptVerdict_data()
    {
        QTest::addColumn<AttemptOutcome>("outcome");
        QTest::addColumn<bool>("decided");
        QTest::addColumn<QString>("ended");  // how the task ended
        QTest::addColumn<QString>("state");  // what the attempt is recorded as
        QTest::addColumn<QString>("exitReason");  // a trailing '*': starts with
        QTest::addColumn<QString>("runEnd");  // "": none (exit.json records the run's end)
        QTest::addColumn<qint64>("exitMs");  // 0: none

        const QString completed = text(TrialState::Completed), failed = text(TrialState::Failed),
                      preempted = text(TrialState::Preempted), lost = text(TrialState::Lost),
                      stopped = text(TrialState::Stopped), cancelled = text(TrialState::Cancelled);
        const QString finished = toString(RunStatus::Finished), killed = toString(RunStatus::Killed),
                      runFailed = toString(RunStatus::Failed);

        // exit.json decides where the trainer wrote it.
        QTest::newRow("exit-json-completed")
            << outcome(ended("COMPLETED", 0),
                       R"({"state":"completed","reason":"","step":300,"t":1700000000.5})")
            << true << completed << completed << "step 300"
            << "" << qint64(1'700'000'000'500);
        QTest::newRow("exit-json-failed-with-reason-and-step")
            << outcome(ended("FAILED (exit 1)", 1), R"({"state":"failed","reason":"loss is nan","step":120})")
            << true << failed << failed << "loss is nan (step 120)"
            << "" << qint64(0);
        QTest::newRow("exit-json-preempted-exit-75")
            << outcome(ended("", 75), R"({"state":"preempted","reason":"SIGTERM: checkpointed","step":50})")
            << true << preempted << preempted << "SIGTERM: checkpointed (step 50)"
            << "" << qint64(0);
        QTest::newRow("exit-json-preempted-before-slurm-timeout")
            << outcome(ended("TIMEOUT"), R"({"state":"preempted","reason":"pre-timeout signal","step":80})")
            << true << preempted << preempted << "pre-timeout signal (step 80)"
            << "" << qint64(0);
        QTest::newRow("exit-json-completed-wins-over-exit-status-1")
            << outcome(ended("FAILED (exit 1)", 1), R"({"state":"completed","step":9})") << true << completed
            << completed << "step 9"
            << "" << qint64(0);
        QTest::newRow("exit-json-with-reason-and-no-step")
            << outcome(ended("FAILED (exit 1)", 1), R"({"state":"failed","reason":"CUDA out of memory"})")
            << true << failed << failed << "CUDA out of memory"
            << "" << qint64(0);
        QTest::newRow("exit-json-unknown-state-word-is-failed")
            << outcome(ended("", 0), R"({"state":"exploded","reason":"?"})") << true << failed << failed
            << "?"
            << "" << qint64(0);
        QTest::newRow("exit-json-stopped-word-from-a-trainer-is-failed")
            << outcome(ended("", 0), R"({"state":"stopped"})") << true << failed << failed << ""
            << "" << qint64(0);
        QTest::newRow("exit-json-torn-is-unreadable-and-failed")
            << outcome(ended("", 0), R"({"state":"compl)") << true << failed << failed
            << "unreadable exit.json: *"
            << "" << qint64(0);
        QTest::newRow("exit-json-empty-is-unreadable-and-failed")
            << outcome(ended("", 0), QByteArray("")) << true << failed << failed << "unreadable exit.json: *"
            << "" << qint64(0);
        QTest::newRow("exit-json-without-state-is-unreadable-keeps-step")
            << outcome(ended("", 0), R"({"reason":"x","step":5})") << true << failed << failed
            << "unreadable exit.json: no \"state\" (step 5)"
            << "" << qint64(0);
        QTest::newRow("exit-json-not-an-object-is-unreadable")
            << outcome(ended("", 0), "[1,2]") << true << failed << failed
            << "unreadable exit.json: no \"state\""
            << "" << qint64(0);
        QTest::newRow("exit-json-of-a-task-slurm-forgot")
            << outcome(unknownTask(), R"({"state":"completed","step":40})") << true << completed << completed
            << "step 40"
            << "" << qint64(0);
        QTest::newRow("exit-json-nonpositive-time-is-none")
            << outcome(ended("", 0), R"({"state":"completed","t":0})") << true << completed << completed << ""
            << "" << qint64(0);

        // No exit.json (a command of the user's need not write one): the exit status decides.
        QTest::newRow("no-exit-json-exit-0-is-completed")
            << outcome(ended("", 0)) << true << completed << completed << "" << finished << qint64(0);
        QTest::newRow("no-exit-json-exit-75-is-preempted")
            << outcome(ended("", 75)) << true << preempted << preempted << "ended without exit.json" << killed
            << qint64(0);
        QTest::newRow("no-exit-json-exit-1-is-failed")
            << outcome(ended("FAILED (exit 1)", 1)) << true << failed << failed
            << "FAILED (exit 1) (no exit.json)" << runFailed << qint64(0);
        QTest::newRow("no-exit-json-killed-by-a-signal-is-failed")
            << outcome(ended("signal 9")) << true << failed << failed << "signal 9 (no exit.json)"
            << runFailed << qint64(0);
        QTest::newRow("no-exit-json-no-status-no-detail-is-failed")
            << outcome(ended("")) << true << failed << failed << "ended without exit.json" << runFailed
            << qint64(0);

        // Slurm's states, where the executor reports them (squeue: no exit status).
        QTest::newRow("slurm-preempted-is-preempted")
            << outcome(ended("PREEMPTED")) << true << preempted << preempted << "PREEMPTED (no exit.json)"
            << killed << qint64(0);
        QTest::newRow("slurm-node-fail-is-failed") << outcome(ended("NODE_FAIL")) << true << failed << failed
                                                   << "NODE_FAIL (no exit.json)" << runFailed << qint64(0);
        QTest::newRow("slurm-timeout-is-failed") << outcome(ended("TIMEOUT")) << true << failed << failed
                                                 << "TIMEOUT (no exit.json)" << runFailed << qint64(0);
        QTest::newRow("slurm-cancelled-by-someone-else-is-failed")
            << outcome(ended("CANCELLED")) << true << failed << failed << "CANCELLED (no exit.json)"
            << runFailed << qint64(0);
        QTest::newRow("slurm-out-of-memory-is-failed")
            << outcome(ended("OUT_OF_MEMORY")) << true << failed << failed << "OUT_OF_MEMORY (no exit.json)"
            << runFailed << qint64(0);
        QTest::newRow("slurm-completed-without-exit-json-or-status-is-failed")
            << outcome(ended("COMPLETED")) << true << failed << failed << "COMPLETED (no exit.json)"
            << runFailed << qint64(0);
        QTest::newRow("sacct-failed-with-exit-75-is-preempted")
            << outcome(ended("FAILED (exit 75)", 75)) << true << preempted << preempted
            << "FAILED (exit 75) (no exit.json)" << killed << qint64(0);

        // The executor has no record of the task.
        QTest::newRow("unknown-task-without-exit-json-is-lost")
            << outcome(unknownTask()) << true << lost << lost
            << "the executor has no record of the task and it left no exit.json" << runFailed << qint64(0);
        QTest::newRow("unknown-task-and-read-failed-is-undecided")
            << outcome(unknownTask(), std::nullopt, TrialState::Running, false) << false << ""
            << ""
            << ""
            << "" << qint64(0);
        QTest::newRow("ended-task-and-read-failed-exit-status-decides")
            << outcome(ended("", 0), std::nullopt, TrialState::Running, false) << true << completed
            << completed << "" << finished << qint64(0);

        // A stop or cancel of ours settles the attempt, however the task ended.
        QTest::newRow("stopping-attempt-exit-json-preempted-settles-stopped")
            << outcome(ended("", 75), R"({"state":"preempted","reason":"SIGTERM","step":60})",
                       TrialState::Stopping)
            << true << preempted << stopped << "SIGTERM (step 60)"
            << "" << qint64(0);
        QTest::newRow("stopping-attempt-exit-75-settles-stopped")
            << outcome(ended("", 75), std::nullopt, TrialState::Stopping) << true << preempted << stopped
            << "ended without exit.json" << killed << qint64(0);
        QTest::newRow("stopping-attempt-that-completed-anyway-settles-stopped")
            << outcome(ended("", 0), R"({"state":"completed"})", TrialState::Stopping) << true << completed
            << stopped << ""
            << "" << qint64(0);
        QTest::newRow("cancelling-attempt-slurm-cancelled-settles-cancelled")
            << outcome(ended("CANCELLED"), std::nullopt, TrialState::Cancelling) << true << failed
            << cancelled << "CANCELLED (no exit.json)" << runFailed << qint64(0);
        QTest::newRow("cancelling-attempt-forgotten-by-the-executor-settles-cancelled")
            << outcome(unknownTask(), std::nullopt, TrialState::Cancelling) << true << lost << cancelled
            << "the executor has no record of the task and it left no exit.json" << runFailed << qint64(0);
        QTest::newRow("stopping-attempt-unknown-and-read-failed-is-undecided")
            << outcome(unknownTask(), std::nullopt, TrialState::Stopping, false) << false << ""
            << ""
            << ""
            << "" << qint64(0);
    }
    void attemptVerdict()
    {
        QFETCH(AttemptOutcome, outcome);
        QFETCH(bool, decided);
        QFETCH(QString, ended);
        QFETCH(QString, state);
        QFETCH(QString, exitReason);
        QFETCH(QString, runEnd);
        QFETCH(qint64, exitMs);
        const std::optional<AttemptVerdict> v = orrery::core::attemptVerdict(outcome);
        QCOMPARE(v.has_value(), decided);
        if (!v)
            return;
        QCOMPARE(text(v->ended), ended);
        QCOMPARE(text(v->state), state);
        QCOMPARE(v->settled(), state != ended);
        if (exitReason.endsWith(QLatin1Char('*')))
            QVERIFY2(v->exitReason().startsWith(exitReason.chopped(1)) &&
                         v->exitReason().size() >= exitReason.size(),
                     qPrintable(v->exitReason()));
        else
            QCOMPARE(v->exitReason(), exitReason);
        QCOMPARE(v->runEnd ? toString(*v->runEnd) : QString(), runEnd);
        QCOMPARE(v->exitMs.value_or(0), exitMs);
    }

    // --- an attempt's time span --------------------------------------------------------------

    void runningAttemptStart_data()
    {
        QTest::addColumn<qint64>("submittedMs");
        QTest::addColumn<qint64>("elapsedMs");  // -1: the executor cannot say
        QTest::addColumn<qint64>("startedMs");
        QTest::newRow("running-start-is-now-minus-elapsed")
            << kNow - 10 * kHour << 3 * kHour << kNow - 3 * kHour;
        QTest::newRow("running-start-no-earlier-than-submission")
            << kNow - 2000 << qint64(5000) << kNow - 2000;  // elapsed in whole seconds, from the last poll
        QTest::newRow("running-start-without-elapsed-is-now") << kNow - kHour << qint64(-1) << kNow;
        QTest::newRow("running-start-submitted-in-the-future-is-now") << kNow + 5000 << qint64(0) << kNow;
    }
    void runningAttemptStart()
    {
        QFETCH(qint64, submittedMs);
        QFETCH(qint64, elapsedMs);
        QFETCH(qint64, startedMs);
        QCOMPARE(
            runningAttemptStartMs(submittedMs, elapsedMs < 0 ? std::nullopt : std::optional(elapsedMs), kNow),
            startedMs);
    }

    void liveAttempt_data()
    {
        QTest::addColumn<Trial>("read");
        QTest::addColumn<TaskStatus>("status");
        QTest::addColumn<QString>("state");
        QTest::addColumn<qint64>("startedMs");
        QTest::addColumn<QString>("detail");
        QTest::addColumn<bool>("startedRunning");
        QTest::addColumn<bool>("changed");

        Trial queued = attempt(0, TrialState::Queued);
        queued.startedMs = 0;
        queued.detail = QStringLiteral("PENDING (Priority)");
        Trial running = attempt(0, TrialState::Running);
        running.detail = QStringLiteral("RUNNING");
        Trial stopping = attempt(0, TrialState::Stopping);
        stopping.startedMs = 0;
        const qint64 start = running.startedMs;

        QTest::newRow("queued-becomes-running-dated-by-elapsed")
            << queued << live(TaskStatus::State::Running, "RUNNING", 60'000) << text(TrialState::Running)
            << kNow - 60'000 << "RUNNING" << true << true;
        QTest::newRow("queued-still-waiting-with-a-new-reason")
            << queued << live(TaskStatus::State::Queued, "PENDING (Resources)") << text(TrialState::Queued)
            << qint64(0) << "PENDING (Resources)" << false << true;
        QTest::newRow("queued-still-waiting-nothing-new")
            << queued << live(TaskStatus::State::Queued, "") << text(TrialState::Queued) << qint64(0)
            << "PENDING (Priority)" << false << false;
        QTest::newRow("running-keeps-its-first-start")
            << running << live(TaskStatus::State::Running, "RUNNING", 3 * kHour) << text(TrialState::Running)
            << start << "RUNNING" << false << false;
        QTest::newRow("stopping-attempt-stays-stopping-but-is-dated")
            << stopping << live(TaskStatus::State::Running, "pid 42", 1000) << text(TrialState::Stopping)
            << kNow - 1000 << "pid 42" << false << true;
    }
    void liveAttempt()
    {
        QFETCH(Trial, read);
        QFETCH(TaskStatus, status);
        QFETCH(QString, state);
        QFETCH(qint64, startedMs);
        QFETCH(QString, detail);
        QFETCH(bool, startedRunning);
        QFETCH(bool, changed);
        const LiveAttempt l = orrery::core::liveAttempt(read, status, kNow);
        QCOMPARE(l.trial.state, state);
        QCOMPARE(l.trial.startedMs, startedMs);
        QCOMPARE(l.trial.detail, detail);
        QCOMPARE(l.startedRunning, startedRunning);
        QCOMPARE(l.changed, changed);
        QCOMPARE(l.trial.exitReason, read.exitReason);
    }

    // The nodes of an attempt come from the executor's poll; a running attempt the scheduler
    // queued again (Slurm's --requeue after a node failure) says where it was requeued from, once.
    void liveAttemptNodes()
    {
        Trial queued = attempt(0, TrialState::Queued);
        queued.startedMs = 0;
        TaskStatus st = live(TaskStatus::State::Running, "RUNNING", 1000);
        st.nodes = QStringList{QStringLiteral("node1"), QStringLiteral("node2")};
        LiveAttempt l = orrery::core::liveAttempt(queued, st, kNow);
        QCOMPARE(l.trial.nodes, QStringLiteral("node1,node2"));
        QVERIFY(l.requeuedFrom.isEmpty());
        // The same nodes again: nothing new to write.
        Trial running = l.trial;
        QVERIFY(!orrery::core::liveAttempt(running, st, kNow).changed);
        // Requeued: queued again with no nodes.
        l = orrery::core::liveAttempt(running, live(TaskStatus::State::Queued, "PENDING (BeginTime)"), kNow);
        QCOMPARE(l.requeuedFrom, (QStringList{QStringLiteral("node1"), QStringLiteral("node2")}));
        QVERIFY(l.changed);
        QCOMPARE(l.trial.nodes, QString());
        QCOMPARE(l.trial.detail,
                 QStringLiteral("requeued by the scheduler from node1,node2; PENDING (BeginTime)"));
        QCOMPARE(l.trial.state, text(TrialState::Running));
        // The next poll, still pending: asked once only.
        QVERIFY(
            orrery::core::liveAttempt(l.trial, live(TaskStatus::State::Queued, "PENDING (BeginTime)"), kNow)
                .requeuedFrom.isEmpty());
        // A queued attempt that is still queued was never requeued.
        QVERIFY(orrery::core::liveAttempt(queued, live(TaskStatus::State::Queued, "PENDING"), kNow)
                    .requeuedFrom.isEmpty());
    }

    void endedSpan_data()
    {
        QTest::addColumn<qint64>("startedMs");  // 0: never seen running
        QTest::addColumn<qint64>("submittedMs");
        QTest::addColumn<qint64>("elapsedMs");  // -1: none
        QTest::addColumn<qint64>("exitMs");  // -1: no exit.json time
        QTest::addColumn<QList<ProcessPhases>>("phases");
        QTest::addColumn<qint64>("spanStart");
        QTest::addColumn<qint64>("spanEnd");

        const qint64 t0 = kNow - 3 * kHour;  // seen running at t0, submitted a minute before
        const qint64 sub = t0 - 60'000;
        const QList<ProcessPhases> none;
        QTest::newRow("ended-at-start-plus-elapsed")
            << t0 << sub << 2 * kHour << qint64(-1) << none << t0 << t0 + 2 * kHour;
        QTest::newRow("ended-at-exit-json-time-without-elapsed")
            << t0 << sub << qint64(-1) << t0 + kHour << none << t0 << t0 + kHour;
        QTest::newRow("exit-json-time-after-now-is-ignored")
            << t0 << sub << qint64(-1) << kNow + kHour << none << t0 << kNow;
        QTest::newRow("exit-json-time-before-start-is-ignored")
            << t0 << sub << qint64(-1) << t0 - kHour << none << t0 << kNow;
        QTest::newRow("never-seen-running-starts-elapsed-before-its-end")
            << qint64(0) << kNow - 2 * kHour << kHour << kNow - kHour / 2 << none << kNow - kHour / 2 - kHour
            << kNow - kHour / 2;
        QTest::newRow("never-seen-running-without-elapsed-counts-nothing")
            << qint64(0) << sub << qint64(-1) << qint64(-1) << none << qint64(0) << kNow;
        QTest::newRow("ends-no-earlier-than-the-trainers-last-event")  // Slurm's elapsed: whole seconds
            << t0 << sub << qint64(3000) << qint64(-1) << QList<ProcessPhases>{process(t0 + 100, t0 + 3800)}
            << t0 << t0 + 3800;
        QTest::newRow("an-earlier-attempts-last-event-is-not-this-ones")
            << t0 << sub << qint64(3000) << qint64(-1)
            << QList<ProcessPhases>{process(sub - kHour, t0 + 9000)} << t0 << t0 + 3000;
        QTest::newRow("a-last-event-after-now-is-ignored")
            << t0 << sub << qint64(3000) << qint64(-1) << QList<ProcessPhases>{process(t0, kNow + 1000)} << t0
            << t0 + 3000;
        QTest::newRow("the-newest-of-this-attempts-processes-counts")
            << t0 << sub << qint64(3000) << qint64(-1)
            << QList<ProcessPhases>{process(t0, t0 + 2000), process(t0 + 2500, t0 + 4200),
                                    process(t0 + 10, t0 + 3100)}
            << t0 << t0 + 4200;
        QTest::newRow("starts-no-earlier-than-its-submission")
            << sub - 400 << sub << qint64(3000) << qint64(-1) << none << sub << sub - 400 + 3000;
        QTest::newRow("never-seen-running-starts-no-earlier-than-its-submission")
            << qint64(0) << kNow - kHour / 2 << kHour << qint64(-1) << none << kNow - kHour / 2 << kNow;
    }
    void endedSpan()
    {
        QFETCH(qint64, startedMs);
        QFETCH(qint64, submittedMs);
        QFETCH(qint64, elapsedMs);
        QFETCH(qint64, exitMs);
        QFETCH(QList<ProcessPhases>, phases);
        QFETCH(qint64, spanStart);
        QFETCH(qint64, spanEnd);
        const AttemptSpan span = orrery::core::endedSpan(
            startedMs, submittedMs, elapsedMs < 0 ? std::nullopt : std::optional(elapsedMs),
            exitMs < 0 ? std::nullopt : std::optional(exitMs), phases, kNow);
        QCOMPARE(span.startedMs, spanStart);
        QCOMPARE(span.endedMs, spanEnd);
    }

    // --- resubmission ------------------------------------------------------------------------

    void resubmission_data()
    {
        QTest::addColumn<QList<Trial>>("earlier");  // the sweep's other attempts
        QTest::addColumn<Trial>("ended");  // recorded with its verdict and reason
        QTest::addColumn<int>("retries");
        QTest::addColumn<int>("budgetRoom");
        QTest::addColumn<int>("action");  // Resubmit
        QTest::addColumn<QString>("why");
        QTest::addColumn<QString>("state");
        QTest::addColumn<QString>("exitReason");
        QTest::addColumn<int>("nextAttempt");  // -1: none

        const int yes = int(Resubmit::Yes), givenUp = int(Resubmit::GivenUp),
                  overBudget = int(Resubmit::OverBudget);
        const int room = 1'000'000;  // no budget
        const QString failed = text(TrialState::Failed), lost = text(TrialState::Lost),
                      preemptedState = text(TrialState::Preempted);
        const QString boom = QStringLiteral("loss is nan (step 10)");
        const QString overBudgetReason = QStringLiteral("; not resubmitted: the budget could be exceeded");

        QTest::newRow("first-failure-is-resubmitted")
            << QList<Trial>{} << attempt(0, TrialState::Failed, boom) << 2 << room << yes << "" << failed
            << boom << 1;
        QTest::newRow("lost-attempt-is-resubmitted")
            << QList<Trial>{} << attempt(0, TrialState::Lost, QStringLiteral("no record")) << 1 << room << yes
            << "" << lost << "no record" << 1;
        QTest::newRow("no-retries-failure-is-not-resubmitted")
            << QList<Trial>{} << attempt(0, TrialState::Failed, boom) << 0 << room << givenUp
            << "no retries (retries: 0)" << failed << boom << -1;
        QTest::newRow("retries-exhausted")
            << QList<Trial>{attempt(0, TrialState::Failed, QStringLiteral("a")),
                            attempt(1, TrialState::Failed, QStringLiteral("b"))}
            << attempt(2, TrialState::Failed, QStringLiteral("c")) << 2 << room << givenUp << "failed 3 times"
            << failed << "c" << -1;
        QTest::newRow("last-retry-is-still-resubmitted")
            << QList<Trial>{attempt(0, TrialState::Failed, QStringLiteral("a"))}
            << attempt(1, TrialState::Failed, QStringLiteral("b")) << 2 << room << yes << "" << failed << "b"
            << 2;
        QTest::newRow("failed-the-same-way-twice-is-not-retried-again")
            << QList<Trial>{attempt(0, TrialState::Failed, boom)} << attempt(1, TrialState::Failed, boom) << 5
            << room << givenUp << "failed the same way twice (same reason, same step): not retried again"
            << failed << boom << -1;
        // Two bare exit statuses (no exit.json) are no evidence of one cause: a full disk at the
        // start and a crash read alike (bench/chaos.py lost trials to this). `retries` bounds them.
        const QString bare = QStringLiteral("FAILED (NonZeroExitCode) (no exit.json)");
        QTest::newRow("two-bare-exit-statuses-are-retried")
            << QList<Trial>{attempt(0, TrialState::Failed, bare)} << attempt(1, TrialState::Failed, bare) << 5
            << room << yes << "" << failed << bare << 2;
        QTest::newRow("failed-differently-is-retried")
            << QList<Trial>{attempt(0, TrialState::Failed, boom)}
            << attempt(1, TrialState::Failed, QStringLiteral("loss is nan (step 20)")) << 5 << room << yes
            << "" << failed << "loss is nan (step 20)" << 2;
        QTest::newRow("lost-after-a-failure-uses-the-retry-budget")
            << QList<Trial>{attempt(0, TrialState::Failed, QStringLiteral("a"))}
            << attempt(1, TrialState::Lost, QStringLiteral("b")) << 1 << room << givenUp << "failed 2 times"
            << lost << "b" << -1;
        QTest::newRow("preemption-does-not-use-retries")
            << QList<Trial>{} << attempt(0, TrialState::Preempted, QStringLiteral("SIGTERM")) << 0 << room
            << yes << "" << preemptedState << "SIGTERM" << 1;
        QTest::newRow("preemptions-do-not-count-as-failures")
            << preempted(3) << attempt(3, TrialState::Failed, boom) << 1 << room << yes << "" << failed
            << boom << 4;
        QTest::newRow("preemption-limit-reached-ends-the-trial-failed")
            << preempted(kMaxPreemptions)
            << attempt(kMaxPreemptions, TrialState::Preempted, QStringLiteral("p")) << 2 << room << givenUp
            << QStringLiteral("preempted %1 times").arg(kMaxPreemptions + 1) << failed << "p" << -1;
        QTest::newRow("preemption-under-the-limit-is-resubmitted")
            << preempted(kMaxPreemptions - 1)
            << attempt(kMaxPreemptions - 1, TrialState::Preempted, QStringLiteral("p")) << 0 << room << yes
            << "" << preemptedState << "p" << kMaxPreemptions;
        QTest::newRow("user-retry-restarts-the-retry-budget")
            << QList<Trial>{attempt(0, TrialState::Failed, QStringLiteral("a")),
                            attempt(1, TrialState::Failed, QStringLiteral("b"))}
            << attempt(2, TrialState::Failed, QStringLiteral("c"), true) << 1 << room << yes << "" << failed
            << "c" << 3;
        QTest::newRow("user-retry-restarts-the-preemption-count")
            << preempted(kMaxPreemptions)
            << attempt(kMaxPreemptions, TrialState::Preempted, QStringLiteral("p"), true) << 0 << room << yes
            << "" << preemptedState << "p" << kMaxPreemptions + 1;
        QTest::newRow("user-retry-with-no-retries-is-not-resubmitted")
            << QList<Trial>{attempt(0, TrialState::Failed, QStringLiteral("a"))}
            << attempt(1, TrialState::Failed, QStringLiteral("b"), true) << 0 << room << givenUp
            << "no retries (retries: 0)" << failed << "b" << -1;
        QTest::newRow("user-retry-same-reason-as-before-it-is-not-twice")
            << QList<Trial>{attempt(0, TrialState::Failed, boom)}
            << attempt(1, TrialState::Failed, boom, true) << 2 << room << yes << "" << failed << boom << 2;
        QTest::newRow("retries-count-from-the-latest-user-retry")
            << QList<Trial>{attempt(0, TrialState::Failed, QStringLiteral("a")),
                            attempt(1, TrialState::Failed, QStringLiteral("x"), true)}
            << attempt(2, TrialState::Failed, QStringLiteral("y")) << 1 << room << givenUp << "failed 2 times"
            << failed << "y" << -1;
        QTest::newRow("other-trials-attempts-do-not-count")
            << QList<Trial>{attempt(0, TrialState::Failed, QStringLiteral("a"), false, 4),
                            attempt(1, TrialState::Failed, QStringLiteral("a"), false, 4)}
            << attempt(0, TrialState::Failed, QStringLiteral("a")) << 1 << room << yes << "" << failed << "a"
            << 1;
        QTest::newRow("over-budget-failure-is-not-resubmitted")
            << QList<Trial>{} << attempt(0, TrialState::Failed, boom) << 2 << 0 << overBudget << "" << failed
            << QString(boom + overBudgetReason) << -1;
        QTest::newRow("over-budget-preemption-ends-the-trial-failed")
            << QList<Trial>{} << attempt(0, TrialState::Preempted, QStringLiteral("p")) << 2 << 0
            << overBudget << "" << failed << QString(QStringLiteral("p") + overBudgetReason) << -1;
        QTest::newRow("budget-room-for-one-is-resubmitted")
            << QList<Trial>{} << attempt(0, TrialState::Failed, boom) << 2 << 1 << yes << "" << failed << boom
            << 1;
        QTest::newRow("given-up-is-said-before-over-budget")
            << QList<Trial>{} << attempt(0, TrialState::Failed, boom) << 0 << 0 << givenUp
            << "no retries (retries: 0)" << failed << boom << -1;
    }
    void resubmission()
    {
        QFETCH(QList<Trial>, earlier);
        QFETCH(Trial, ended);
        QFETCH(int, retries);
        QFETCH(int, budgetRoom);
        QFETCH(int, action);
        QFETCH(QString, why);
        QFETCH(QString, state);
        QFETCH(QString, exitReason);
        QFETCH(int, nextAttempt);
        // As the runner reads them: the ended attempt is still running in the list.
        Trial asRead = ended;
        asRead.setState(TrialState::Running);
        asRead.exitReason.clear();
        const QList<Trial> attempts = earlier + QList<Trial>{asRead};
        const ResubmitDecision r = decideResubmission(attempts, ended, retries, budgetRoom);
        QCOMPARE(int(r.action), action);
        QCOMPARE(r.why, why);
        QCOMPARE(text(r.state), state);
        QCOMPARE(r.exitReason, exitReason);
        if (nextAttempt < 0)
            return;
        QCOMPARE(r.next.attempt, nextAttempt);
        QCOMPARE(r.next.index, ended.index);
        QVERIFY(!r.next.userRetry);
        QVERIFY(r.next.state.isEmpty());
    }

    void nextAttemptKeepsTheRunDirAndForgetsHowItWent()
    {
        Trial t = attempt(2, TrialState::Failed, QStringLiteral("boom"), true);
        t.detail = QStringLiteral("FAILED (exit 1)");
        const Trial next = orrery::core::nextAttempt(t);
        QCOMPARE(next.id, qint64(0));
        QCOMPARE(next.attempt, 3);
        QCOMPARE(next.index, t.index);
        QCOMPARE(next.runId, t.runId);
        QCOMPARE(next.runDir, t.runDir);
        QCOMPARE(next.params, t.params);
        QCOMPARE(next.config, t.config);
        QVERIFY(next.state.isEmpty() && next.exitReason.isEmpty() && next.detail.isEmpty() &&
                next.task.isEmpty());
        QVERIFY(next.slurmJobId.isEmpty() && next.slurmTaskId.isEmpty());
        QCOMPARE(next.submittedMs, qint64(0));
        QCOMPARE(next.startedMs, qint64(0));
        QCOMPARE(next.endedMs, qint64(0));
        QVERIFY(!next.userRetry);
    }

    void runnerResubmits_data()
    {
        QTest::addColumn<QList<Trial>>("earlier");
        QTest::addColumn<Trial>("latest");
        QTest::addColumn<int>("retries");
        QTest::addColumn<bool>("resubmits");
        Trial neverLaunched =
            attempt(0, TrialState::Failed, QStringLiteral("could not be submitted: refused"));
        neverLaunched.task.clear();
        QTest::newRow("failed-with-retries-left-the-runner-resubmits")
            << QList<Trial>{} << attempt(0, TrialState::Failed, QStringLiteral("a")) << 1 << true;
        QTest::newRow("lost-with-retries-left-the-runner-resubmits")
            << QList<Trial>{} << attempt(0, TrialState::Lost, QStringLiteral("a")) << 1 << true;
        QTest::newRow("never-launched-is-the-users-to-retry")
            << QList<Trial>{} << neverLaunched << 1 << false;
        QTest::newRow("retries-used-up-is-the-users-to-retry")
            << QList<Trial>{attempt(0, TrialState::Failed, QStringLiteral("a"))}
            << attempt(1, TrialState::Failed, QStringLiteral("b")) << 1 << false;
        QTest::newRow("preempted-under-the-limit-the-runner-resubmits")
            << QList<Trial>{} << attempt(0, TrialState::Preempted) << 0 << true;
        QTest::newRow("stored-failed-after-the-preemption-limit-is-the-users-to-retry")
            << preempted(kMaxPreemptions) << attempt(kMaxPreemptions, TrialState::Failed, QStringLiteral("p"))
            << 5 << false;
        QTest::newRow("stopped-is-the-users-to-retry")
            << QList<Trial>{} << attempt(0, TrialState::Stopped) << 5 << false;
        QTest::newRow("cancelled-is-the-users-to-retry")
            << QList<Trial>{} << attempt(0, TrialState::Cancelled) << 5 << false;
    }
    void runnerResubmits()
    {
        QFETCH(QList<Trial>, earlier);
        QFETCH(Trial, latest);
        QFETCH(int, retries);
        QFETCH(bool, resubmits);
        QCOMPARE(orrery::core::runnerResubmits(earlier + QList<Trial>{latest}, latest, retries), resubmits);
    }

    // --- early stopping ----------------------------------------------------------------------

    void earlyStops_data()
    {
        QTest::addColumn<SweepSpec>("spec");
        QTest::addColumn<QList<Trial>>("attempts");
        QTest::addColumn<MetricHistories>("points");
        QTest::addColumn<QList<int>>("stopped");

        SweepSpec noRule = hyperbandSpec();
        noRule.earlyTerminate.reset();
        SweepSpec noMetric = hyperbandSpec();
        noMetric.metricName.clear();
        MetricHistories twoWithPoints = threeHistories();
        twoWithPoints.remove(3);

        QTest::newRow("hyperband-stops-the-worst-running-trials")
            << hyperbandSpec() << threeTrials() << threeHistories() << QList<int>{2, 3};
        QTest::newRow("no-early-terminate-stops-nothing")
            << noRule << threeTrials() << threeHistories() << QList<int>{};
        QTest::newRow("no-metric-stops-nothing")
            << noMetric << threeTrials() << threeHistories() << QList<int>{};
        QTest::newRow("user-retried-trial-counts-but-is-not-stopped")
            << hyperbandSpec()
            << QList<Trial>{attempt(0, TrialState::Running, {}, false, 1),
                            attempt(0, TrialState::Stopped, QStringLiteral("stopped early: x"), false, 2),
                            attempt(1, TrialState::Running, {}, true, 2),
                            attempt(0, TrialState::Running, {}, false, 3)}
            << threeHistories() << QList<int>{3};
        QTest::newRow("user-retry-of-an-earlier-attempt-still-protects-the-trial")
            << hyperbandSpec()
            << QList<Trial>{attempt(0, TrialState::Running, {}, false, 1),
                            attempt(0, TrialState::Failed, QStringLiteral("a"), false, 2),
                            attempt(1, TrialState::Failed, QStringLiteral("b"), true, 2),
                            attempt(2, TrialState::Running, {}, false, 2),
                            attempt(0, TrialState::Running, {}, false, 3)}
            << threeHistories() << QList<int>{3};
        QTest::newRow("only-running-trials-are-stopped")
            << hyperbandSpec() << threeTrials(TrialState::Stopping, TrialState::Completed) << threeHistories()
            << QList<int>{};
        QTest::newRow("trial-without-points-is-left-out")
            << hyperbandSpec() << threeTrials() << twoWithPoints << QList<int>{};
    }
    void earlyStops()
    {
        QFETCH(SweepSpec, spec);
        QFETCH(QList<Trial>, attempts);
        QFETCH(MetricHistories, points);
        QFETCH(QList<int>, stopped);
        const QList<EarlyStop> stops = orrery::core::earlyStops(spec, byIndex(attempts), attempts, points);
        QList<int> trials;
        for (const EarlyStop &s : stops) {
            trials << s.trial;
            QVERIFY(!s.reason.isEmpty());
            QCOMPARE(s.exitReason, QString(QStringLiteral("stopped early: ") + s.reason));
        }
        QCOMPARE(trials, stopped);
        QCOMPARE(stopsEarly(spec), spec.earlyTerminate.has_value() && !spec.metricName.isEmpty());
    }

    // --- the sweep's verdict -----------------------------------------------------------------

    // A queued attempt keeps Slurm's latest expected start; a start Slurm no longer gives is
    // forgotten, not kept stale.
    void liveAttemptKeepsTheExpectedStart()
    {
        Trial queued = attempt(0, TrialState::Queued);
        queued.detail = QStringLiteral("PENDING (Resources)");
        TaskStatus st = live(TaskStatus::State::Queued, "PENDING (Resources)");
        st.expectedStartMs = kNow + 14 * 60'000;
        LiveAttempt l = orrery::core::liveAttempt(queued, st, kNow);
        QCOMPARE(l.trial.expectedStartMs, kNow + 14 * 60'000);
        QVERIFY(l.changed);
        l = orrery::core::liveAttempt(l.trial, st, kNow);
        QVERIFY(!l.changed);
        st.expectedStartMs.reset();
        l = orrery::core::liveAttempt(l.trial, st, kNow);
        QCOMPARE(l.trial.expectedStartMs, 0);
        QVERIFY(l.changed);
    }

    // How many attempts one launch hands the executor under its limits.
    void submitRoom_data()
    {
        QTest::addColumn<int>("maxArraySize");
        QTest::addColumn<int>("maxJobCount");
        QTest::addColumn<int>("maxSubmitJobs");
        QTest::addColumn<int>("active");
        QTest::addColumn<int>("waiting");
        QTest::addColumn<int>("room");
        QTest::addColumn<QString>("why");  // a word of the binding limit; empty: all fit
        QTest::newRow("no-limits-all") << 0 << 0 << 0 << 0 << 1200 << 1200 << "";
        // Slurm's default MaxArraySize 1001: indices 0-1000, so 1001 tasks fit in one array.
        QTest::newRow("default-array-size-fits-1001") << 1001 << 10000 << 0 << 0 << 1001 << 1001 << "";
        QTest::newRow("1200-trials-first-chunk") << 1001 << 10000 << 0 << 0 << 1200 << 1001 << "MaxArraySize";
        QTest::newRow("submit-limit-counts-active")
            << 1001 << 10000 << 100 << 70 << 50 << 30 << "MaxSubmitJobs";
        QTest::newRow("submit-limit-reached") << 1001 << 10000 << 100 << 100 << 5 << 0 << "MaxSubmitJobs";
        QTest::newRow("over-the-submit-limit-is-zero-not-negative")
            << 1001 << 10000 << 100 << 120 << 5 << 0 << "MaxSubmitJobs";
        QTest::newRow("job-count-counts-active") << 1001 << 60 << 0 << 50 << 40 << 10 << "MaxJobCount";
        QTest::newRow("tightest-wins") << 50 << 60 << 0 << 0 << 120 << 50 << "MaxArraySize";
        QTest::newRow("nothing-waiting") << 50 << 0 << 0 << 0 << 0 << 0 << "";
    }
    void submitRoom()
    {
        QFETCH(int, maxArraySize);
        QFETCH(int, maxJobCount);
        QFETCH(int, maxSubmitJobs);
        QFETCH(int, active);
        QFETCH(int, waiting);
        QFETCH(int, room);
        QFETCH(QString, why);
        QString said;
        QCOMPARE(orrery::core::submitRoom({maxArraySize, maxJobCount, maxSubmitJobs}, active, waiting, &said),
                 room);
        QCOMPARE(said.isEmpty(), why.isEmpty());
        QVERIFY2(said.contains(why), qPrintable(said));
    }

    // Later batches top the sweep's active tasks up to max_concurrent, so the arrays of several
    // batches (each with %max_concurrent) never run more than max_concurrent at once together.
    void laterBatchRoom_data()
    {
        QTest::addColumn<int>("maxConcurrent");
        QTest::addColumn<int>("active");
        QTest::addColumn<int>("budgetRoom");
        QTest::addColumn<int>("maxArraySize");
        QTest::addColumn<int>("waiting");
        QTest::addColumn<int>("room");
        constexpr int kAny = std::numeric_limits<int>::max();
        QTest::newRow("tops-up-to-max-concurrent") << 4 << 1 << kAny << 1001 << 100 << 3;
        QTest::newRow("full-waits") << 4 << 4 << kAny << 1001 << 100 << 0;
        QTest::newRow("first-chunk-still-queued-waits") << 4 << 1001 << kAny << 1001 << 199 << 0;
        QTest::newRow("only-what-waits") << 200 << 50 << kAny << 50 << 20 << 20;
        QTest::newRow("array-size-caps-the-top-up") << 200 << 50 << kAny << 50 << 70 << 50;
        QTest::newRow("budget-caps") << 8 << 0 << 2 << 1001 << 100 << 2;
        QTest::newRow("no-budget-left") << 8 << 0 << 0 << 1001 << 100 << 0;
    }
    void laterBatchRoom()
    {
        QFETCH(int, maxConcurrent);
        QFETCH(int, active);
        QFETCH(int, budgetRoom);
        QFETCH(int, maxArraySize);
        QFETCH(int, waiting);
        QFETCH(int, room);
        QCOMPARE(
            orrery::core::laterBatchRoom(maxConcurrent, active, budgetRoom, {maxArraySize, 0, 0}, waiting),
            room);
    }

    // Pending attempts (held by the executor's limits) keep a sweep going until they are
    // launched; a cancelled sweep, a budget or a reached target ends it all the same.
    void pendingKeepsTheSweepGoing()
    {
        QMap<int, Trial> latest;
        latest.insert(0, attempt(0, TrialState::Completed, {}, false, 0));
        latest.insert(1, attempt(0, TrialState::Pending, {}, false, 1));
        const SweepTally c = tallyTrials(latest);
        QCOMPARE(c.pending, 1);
        QCOMPARE(c.failed, 0);
        QCOMPARE(c.active, 0);
        const SweepSpec grid;
        QVERIFY(!orrery::core::sweepVerdict(c, grid, SweepState::Running, 2));
        const auto cancelled = orrery::core::sweepVerdict(c, grid, SweepState::Cancelling, 2);
        QVERIFY(cancelled);
        QCOMPARE(cancelled->state, SweepState::Cancelled);
        QVERIFY(orrery::core::sweepVerdict(c, grid, SweepState::Running, 2, {},
                                           QStringLiteral("target reached")));
        latest[1] = attempt(0, TrialState::Completed, {}, false, 1);
        QVERIFY(orrery::core::sweepVerdict(tallyTrials(latest), grid, SweepState::Running, 2));
    }

    void sweepVerdict_data()
    {
        QTest::addColumn<QList<int>>("states");  // TrialState of each trial's latest attempt
        QTest::addColumn<SweepSpec>("spec");
        QTest::addColumn<QString>("now");  // the sweep's state
        QTest::addColumn<int>("planned");
        QTest::addColumn<QString>("budgetStop");
        QTest::addColumn<QList<int>>("tally");  // active, running, completed, failed, stopped, cancelled
        QTest::addColumn<bool>("decided");
        QTest::addColumn<QString>("state");
        QTest::addColumn<QString>("message");

        using S = TrialState;
        auto states = [](std::initializer_list<S> s) {
            QList<int> out;
            for (S x : s)
                out << int(x);
            return out;
        };
        const SweepSpec grid;
        SweepSpec bayes;
        bayes.method = SearchMethod::Bayes;
        bayes.runCap = 4;
        SweepSpec budget;
        budget.budgetGpuHours = 10;
        const QString running = toText(SweepState::Running), cancelling = toText(SweepState::Cancelling);
        const QString finished = toText(SweepState::Finished), failedSweep = toText(SweepState::Failed),
                      cancelled = toText(SweepState::Cancelled);

        QTest::newRow("still-running-while-a-trial-runs")
            << states({S::Completed, S::Running}) << grid << running << 0 << ""
            << QList<int>{1, 1, 1, 0, 0, 0} << false << ""
            << "";
        QTest::newRow("still-running-while-a-trial-is-stopping")
            << states({S::Completed, S::Stopping}) << grid << running << 0 << ""
            << QList<int>{1, 0, 1, 0, 0, 0} << false << ""
            << "";
        QTest::newRow("still-running-while-a-resubmission-is-queued")
            << states({S::Completed, S::Queued}) << grid << running << 0 << "" << QList<int>{1, 0, 1, 0, 0, 0}
            << false << ""
            << "";
        QTest::newRow("all-completed-finishes")
            << states({S::Completed, S::Completed}) << grid << running << 0 << ""
            << QList<int>{0, 0, 2, 0, 0, 0} << true << finished << "2 completed, 0 stopped early, 0 failed";
        QTest::newRow("none-completed-fails") << states({S::Failed, S::Lost, S::Preempted}) << grid << running
                                              << 0 << "" << QList<int>{0, 0, 0, 3, 0, 0} << true
                                              << failedSweep << "0 completed, 0 stopped early, 3 failed";
        QTest::newRow("some-failed-still-finishes")
            << states({S::Completed, S::Failed}) << grid << running << 0 << "" << QList<int>{0, 0, 1, 1, 0, 0}
            << true << finished << "1 completed, 0 stopped early, 1 failed";
        QTest::newRow("stopped-early-counts-for-finished")
            << states({S::Stopped, S::Failed}) << grid << running << 0 << "" << QList<int>{0, 0, 0, 1, 1, 0}
            << true << finished << "0 completed, 1 stopped early, 1 failed";
        QTest::newRow("cancelled-sweep-ends-cancelled")
            << states({S::Cancelled, S::Completed}) << grid << cancelling << 0 << ""
            << QList<int>{0, 0, 1, 0, 0, 1} << true << cancelled
            << "1 completed, 0 stopped early, 0 failed, 1 cancelled";
        QTest::newRow("cancelled-sweep-waits-for-its-cancelling-trials")
            << states({S::Cancelling, S::Cancelled}) << grid << cancelling << 0 << ""
            << QList<int>{1, 0, 0, 0, 0, 1} << false << ""
            << "";
        QTest::newRow("cancelled-sweep-with-nothing-completed-ends-cancelled")
            << states({S::Cancelled, S::Cancelled}) << grid << cancelling << 0 << ""
            << QList<int>{0, 0, 0, 0, 0, 2} << true << cancelled
            << "0 completed, 0 stopped early, 0 failed, 2 cancelled";
        QTest::newRow("a-cancelled-trial-is-said-in-a-finished-sweep")
            << states({S::Cancelled, S::Completed}) << grid << running << 0 << ""
            << QList<int>{0, 0, 1, 0, 0, 1} << true << finished
            << "1 completed, 0 stopped early, 0 failed, 1 cancelled";
        QTest::newRow("bayes-under-its-run-cap-goes-on")
            << states({S::Completed, S::Completed}) << bayes << running << 0 << ""
            << QList<int>{0, 0, 2, 0, 0, 0} << false << ""
            << "";
        QTest::newRow("bayes-at-its-run-cap-finishes")
            << states({S::Completed, S::Completed, S::Failed, S::Completed}) << bayes << running << 0 << ""
            << QList<int>{0, 0, 3, 1, 0, 0} << true << finished << "3 completed, 0 stopped early, 1 failed";
        QTest::newRow("bayes-with-a-cancelled-trial-suggests-no-more")
            << states({S::Cancelled, S::Completed}) << bayes << running << 0 << ""
            << QList<int>{0, 0, 1, 0, 0, 1} << true << finished
            << "1 completed, 0 stopped early, 0 failed, 1 cancelled";
        QTest::newRow("budget-with-room-waits-for-held-back-trials")
            << states({S::Completed, S::Completed}) << budget << running << 4 << ""
            << QList<int>{0, 0, 2, 0, 0, 0} << false << ""
            << "";
        QTest::newRow("stopped-by-its-budget")
            << states({S::Completed, S::Completed}) << budget << running << 4 << "6 of 10 GPU-hours used"
            << QList<int>{0, 0, 2, 0, 0, 0} << true << finished
            << "stopped by its budget: 6 of 10 GPU-hours used; 2 of 4 trials not launched; 2 completed, 0 "
               "stopped early, 0 failed";
        QTest::newRow("without-a-budget-planned-trials-are-all-launched")
            << states({S::Completed, S::Completed}) << grid << running << 4 << ""
            << QList<int>{0, 0, 2, 0, 0, 0} << true << finished << "2 completed, 0 stopped early, 0 failed";
    }
    void sweepVerdict()
    {
        QFETCH(QList<int>, states);
        QFETCH(SweepSpec, spec);
        QFETCH(QString, now);
        QFETCH(int, planned);
        QFETCH(QString, budgetStop);
        QFETCH(QList<int>, tally);
        QFETCH(bool, decided);
        QFETCH(QString, state);
        QFETCH(QString, message);
        QMap<int, Trial> latest;
        for (qsizetype i = 0; i < states.size(); ++i)
            latest.insert(int(i), attempt(0, TrialState(states[i]), {}, false, int(i)));
        const SweepTally c = tallyTrials(latest);
        QCOMPARE((QList<int>{c.active, c.running, c.completed, c.failed, c.stopped, c.cancelled}), tally);
        QCOMPARE(c.trials, states.size());
        const auto v = orrery::core::sweepVerdict(c, spec, sweepStateFromText(now), planned, budgetStop);
        QCOMPARE(v.has_value(), decided);
        if (!v)
            return;
        QCOMPARE(toText(v->state), state);
        QCOMPARE(v->message, message);
    }
    // W&B's metric.target: reached by a completed trial's last value (at or below when
    // minimizing, at or above when maximizing); running trials and failed ones do not count.
    void targetReached_data()
    {
        QTest::addColumn<QList<int>>("states");  // TrialState of trials 0, 1, ...
        QTest::addColumn<QList<double>>("values");  // their last metric values (NaN: none)
        QTest::addColumn<int>("goal");  // 0 minimize, 1 maximize
        QTest::addColumn<double>("target");  // NaN: the spec has none
        QTest::addColumn<int>("hit");  // the trial, -1: not reached
        QTest::addColumn<QString>("message");
        using S = TrialState;
        const double nan = std::nan("");
        const auto st = [](std::initializer_list<S> s) {
            QList<int> out;
            for (S x : s)
                out << int(x);
            return out;
        };
        QTest::newRow("no-target") << st({S::Completed}) << QList<double>{0.0} << 0 << nan << -1 << "";
        QTest::newRow("minimize-not-yet")
            << st({S::Completed, S::Completed}) << QList<double>{0.3, 0.2} << 0 << 0.1 << -1 << "";
        QTest::newRow("minimize-reached-exactly")
            << st({S::Completed, S::Completed}) << QList<double>{0.3, 0.1} << 0 << 0.1 << 1
            << "metric.target reached: trial 1 completed with loss 0.1 (target <= 0.1)";
        QTest::newRow("maximize-reached")
            << st({S::Completed, S::Completed}) << QList<double>{0.97, 0.99} << 1 << 0.95 << 0
            << "metric.target reached: trial 0 completed with loss 0.97 (target >= 0.95)";
        QTest::newRow("running-trial-does-not-count")
            << st({S::Running}) << QList<double>{0.01} << 0 << 0.1 << -1 << "";
        QTest::newRow("failed-trial-does-not-count")
            << st({S::Failed}) << QList<double>{0.01} << 0 << 0.1 << -1 << "";
        QTest::newRow("stopped-trial-does-not-count")
            << st({S::Stopped}) << QList<double>{0.01} << 0 << 0.1 << -1 << "";
        QTest::newRow("nan-does-not-count")
            << st({S::Completed}) << QList<double>{nan} << 0 << 0.1 << -1 << "";
    }
    void targetReached()
    {
        QFETCH(QList<int>, states);
        QFETCH(QList<double>, values);
        QFETCH(int, goal);
        QFETCH(double, target);
        QFETCH(int, hit);
        QFETCH(QString, message);
        SweepSpec spec;
        spec.metricName = QStringLiteral("loss");
        spec.goal = goal ? Goal::Maximize : Goal::Minimize;
        if (!std::isnan(target))
            spec.metricTarget = target;
        QMap<int, Trial> latest;
        QHash<int, double> last;
        for (qsizetype i = 0; i < states.size(); ++i) {
            latest.insert(int(i), attempt(0, TrialState(states[i]), {}, false, int(i)));
            last.insert(int(i), values[i]);
        }
        const auto h = orrery::core::targetReached(spec, latest, last);
        QCOMPARE(h ? h->trial : -1, hit);
        if (h)
            QCOMPARE(h->message, message);
    }

    // A reached target: what waits is stopped, nothing more launches, and the verdict says why.
    void targetStopsWhatWaits()
    {
        QMap<int, Trial> latest;
        latest.insert(0, attempt(0, TrialState::Completed, {}, false, 0));
        latest.insert(1, attempt(0, TrialState::Queued, {}, false, 1));
        latest.insert(2, attempt(0, TrialState::Running, {}, false, 2));
        Trial pending = attempt(0, TrialState::Queued, {}, false, 3);
        pending.task.clear();  // not handed to the executor: nothing to stop
        latest.insert(3, pending);
        QCOMPARE(notStartedTrials(latest), QList<int>{1});

        SweepSpec bayes;
        bayes.method = SearchMethod::Bayes;
        bayes.runCap = 10;
        QMap<int, Trial> ended;
        ended.insert(0, attempt(0, TrialState::Completed, {}, false, 0));
        ended.insert(1, attempt(0, TrialState::Stopped, {}, false, 1));
        const SweepTally c = tallyTrials(ended);
        // Without the target a bayes sweep of run_cap 10 goes on; with it, it ends.
        QVERIFY(!orrery::core::sweepVerdict(c, bayes, SweepState::Running));
        const QString why =
            QStringLiteral("metric.target reached: trial 0 completed with loss 0.1 (target <= 0.2)");
        const auto v = orrery::core::sweepVerdict(c, bayes, SweepState::Running, 0, {}, why);
        QVERIFY(v);
        QCOMPARE(v->state, SweepState::Finished);
        QCOMPARE(v->message,
                 why +
                     QStringLiteral("; 8 of 10 trials not launched; 1 completed, 1 stopped early, 0 failed"));
        const auto g = orrery::core::sweepVerdict(c, SweepSpec(), SweepState::Running, 0, {}, why);
        QVERIFY(g);
        QCOMPARE(g->message, why + QStringLiteral("; 1 completed, 1 stopped early, 0 failed"));
    }

    // --- bad nodes ---------------------------------------------------------------------------

    void nodeFault_data()
    {
        QTest::addColumn<AttemptOutcome>("outcome");
        QTest::addColumn<QStringList>("nodes");  // blamed; empty: not a node fault
        QTest::addColumn<QString>("cause");
        QTest::addColumn<QString>("reason");

        const auto withExit = [](const char *json, QStringList nodes = {}) {
            AttemptOutcome o;
            o.status = ended("COMPLETED", 0);
            o.exitJson = QByteArray(json);
            o.nodes = std::move(nodes);
            return o;
        };
        const auto slurmSays = [](const char *detail, QStringList nodes) {
            AttemptOutcome o;
            o.status = ended(detail);
            o.nodes = std::move(nodes);
            return o;
        };
        const QStringList two{QStringLiteral("node1"), QStringLiteral("node2")};
        const QStringList one{QStringLiteral("node2")};
        QTest::newRow("health-check-names-its-node")
            << withExit(R"({"state":"failed","reason":"health check failed on node2: matmul","node":"node2",)"
                        R"("cause":"health","t":5})",
                        two)
            << one << "health"
            << "health check failed on node2: matmul";
        QTest::newRow("rank-cuda-error-names-its-node")
            << withExit(R"({"state":"failed","reason":"CUDA error","node":"gpu07","cause":"node"})", two)
            << QStringList{QStringLiteral("gpu07")} << "node"
            << "CUDA error";
        QTest::newRow("cause-without-node-blames-a-one-node-attempt")
            << withExit(R"({"state":"failed","cause":"node"})", one) << one << "node"
            << "node-level failure";
        QTest::newRow("cause-without-node-on-two-nodes-blames-nobody")
            << withExit(R"({"state":"failed","cause":"health"})", two) << QStringList() << ""
            << "";
        QTest::newRow("ordinary-failure-is-the-trials")
            << withExit(R"({"state":"failed","reason":"loss is nan","node":"node2"})", one) << QStringList()
            << ""
            << "";
        QTest::newRow("unknown-cause-is-the-trials")
            << withExit(R"({"state":"failed","cause":"user","node":"node2"})", one) << QStringList() << ""
            << "";
        QTest::newRow("preempted-with-a-cause-is-not-a-fault")
            << withExit(R"({"state":"preempted","cause":"node","node":"node2"})", one) << QStringList() << ""
            << "";
        // The bundled trainer writes the exception's text: CUDA's and NCCL's words for a broken
        // GPU blame a one-node attempt's node; a model too large or a bug does not.
        QTest::newRow("ecc-error-blames-the-one-node")
            << withExit(R"({"state":"failed","reason":"CUDA error: uncorrectable ECC error encountered"})",
                        one)
            << one << "device"
            << "CUDA error: uncorrectable ECC error encountered";
        QTest::newRow("nccl-cuda-error-names-its-node")
            << withExit(R"({"state":"failed","reason":"NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled )"
                        R"(cuda error","node":"gpu07"})",
                        two)
            << QStringList{QStringLiteral("gpu07")} << "device"
            << "NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error";
        // Since it names the first rank that failed (faults.h): its cause, and that rank's node.
        QTest::newRow("trainers-cuda-cause-with-device-words-blames-the-failing-ranks-node")
            << withExit(
                   "{\"state\":\"failed\",\"reason\":\"rank 1 on node2: CUDA error: uncorrectable ECC error "
                   "encountered\",\"cause\":\"cuda\",\"node\":\"node2\",\"rank\":1,\"ranks_failed\":2}",
                   two)
            << one << "device"
            << "rank 1 on node2: CUDA error: uncorrectable ECC error encountered";
        QTest::newRow("trainers-nccl-cause-with-device-words-blames-the-failing-ranks-node")
            << withExit("{\"state\":\"failed\",\"reason\":\"rank 3 on node2: NCCL error: unhandled system "
                        "error\",\"cause\":\"nccl\",\"node\":\"node2\",\"rank\":3}",
                        two)
            << one << "device"
            << "rank 3 on node2: NCCL error: unhandled system error";
        QTest::newRow("trainers-cuda-bug-is-the-trials")
            << withExit(
                   "{\"state\":\"failed\",\"reason\":\"rank 1 on node2: CUDA error: an illegal memory access "
                   "was encountered\",\"cause\":\"cuda\",\"node\":\"node2\",\"rank\":1}",
                   one)
            << QStringList() << ""
            << "";
        for (const char *cause : {"comm", "crash", "oom", "data", "config", "error"}) {
            const QByteArray json =
                QByteArray("{\"state\":\"failed\",\"reason\":\"rank 0 on node1: x\",\"cause\":\"") + cause +
                "\",\"node\":\"node1\",\"rank\":0}";
            QTest::addRow("trainers-%s-cause-is-the-trials", cause)
                << withExit(json.constData(), one) << QStringList() << ""
                << "";
        }
        QTest::newRow("device-fault-over-two-nodes-blames-nobody")
            << withExit(R"({"state":"failed","reason":"CUDA error: unspecified launch failure"})", two)
            << QStringList() << ""
            << "";
        QTest::newRow("cuda-oom-is-the-trials")
            << withExit(R"({"state":"failed","reason":"CUDA out of memory. Tried to allocate 2.00 GiB"})",
                        one)
            << QStringList() << ""
            << "";
        QTest::newRow("illegal-memory-access-is-the-trials")
            << withExit(
                   R"({"state":"failed","reason":"CUDA error: an illegal memory access was encountered"})",
                   one)
            << QStringList() << ""
            << "";
        QTest::newRow("unreadable-exit-json") << withExit("{oops", one) << QStringList() << ""
                                              << "";
        QTest::newRow("slurm-node-fail-blames-the-attempts-nodes")
            << slurmSays("NODE_FAIL", two) << two << "node-fail"
            << "Slurm reported NODE_FAIL";
        QTest::newRow("slurm-node-fail-without-nodes-blames-nobody")
            << slurmSays("NODE_FAIL", {}) << QStringList() << ""
            << "";
        QTest::newRow("oom-on-one-node-blames-it") << slurmSays("OUT_OF_MEMORY", one) << one << "oom"
                                                   << "Slurm reported OUT_OF_MEMORY";
        QTest::newRow("oom-over-two-nodes-blames-nobody")
            << slurmSays("OUT_OF_MEMORY", two) << QStringList() << ""
            << "";
        QTest::newRow("failed-exit-status-is-the-trials")
            << slurmSays("FAILED (exit 1)", one) << QStringList() << ""
            << "";
        AttemptOutcome stopping = slurmSays("NODE_FAIL", one);
        stopping.before = TrialState::Stopping;
        QTest::newRow("stopped-by-us-is-not-a-fault") << stopping << QStringList() << ""
                                                      << "";
        AttemptOutcome unknown;
        unknown.status = unknownTask();
        unknown.nodes = one;
        QTest::newRow("unknown-task-is-lost-not-a-fault") << unknown << QStringList() << ""
                                                          << "";
    }
    void nodeFault()
    {
        QFETCH(AttemptOutcome, outcome);
        QFETCH(QStringList, nodes);
        QFETCH(QString, cause);
        QFETCH(QString, reason);
        const std::optional<NodeFault> f = orrery::core::nodeFault(outcome);
        QCOMPARE(f.has_value(), !nodes.isEmpty());
        if (!f)
            return;
        QCOMPARE(f->nodes, nodes);
        QCOMPARE(f->cause, cause);
        QCOMPARE(f->reason, reason);
        // The stored reason is recognised as a node fault, and an ordinary one is not.
        Trial t = attempt(0, TrialState::Failed, nodeFaultReason(*f) + QStringLiteral(" (step 4)"));
        QVERIFY(isNodeFault(t));
        QVERIFY(!isNodeFault(attempt(0, TrialState::Failed, reason)));
        t.setState(TrialState::Stopped);
        QVERIFY(!isNodeFault(t));
    }

    void deviceFaultWords_data()
    {
        QTest::addColumn<QString>("reason");
        QTest::addColumn<QString>("words");
        QTest::newRow("ecc") << "CUDA error: uncorrectable ECC error encountered"
                             << "uncorrectable ECC error";
        QTest::newRow("launch") << "CUDA error: unspecified launch failure"
                                << "unspecified launch failure";
        QTest::newRow("bus") << "GPU 3 has fallen off the bus"
                             << "fallen off the bus";
        QTest::newRow("busy") << "CUDA error: all CUDA-capable devices are busy or unavailable"
                              << "devices are busy or unavailable";
        QTest::newRow("none") << "CUDA error: no CUDA-capable device is detected"
                              << "no CUDA-capable device";
        QTest::newRow("nccl-system") << "NCCL error: unhandled system error (run with NCCL_DEBUG=INFO)"
                                     << "unhandled system error";
        QTest::newRow("xid") << "NVRM: Xid 79 on GPU 0"
                             << "Xid";
        QTest::newRow("oom") << "CUDA out of memory"
                             << "";
        QTest::newRow("illegal") << "CUDA error: an illegal memory access was encountered"
                                 << "";
        QTest::newRow("xidden-word") << "xidden loss"
                                     << "";
        QTest::newRow("nan") << "loss is nan at step 40"
                             << "";
    }
    void deviceFaultWords()
    {
        QFETCH(QString, reason);
        QTEST(orrery::core::deviceFaultWords(reason), "words");
    }

    // A failure on a bad node does not use up `retries` (retries: 0 still resubmits), is bounded
    // like preemptions, and does not count towards "failed the same way twice".
    void nodeFaultsDoNotUseRetries()
    {
        const NodeFault f{
            {QStringLiteral("node2")}, QStringLiteral("node-fail"), QStringLiteral("NODE_FAIL")};
        const QString bad = nodeFaultReason(f);
        QCOMPARE(bad, QStringLiteral("node fault on node2 (node-fail): NODE_FAIL"));
        const auto decide = [](QList<Trial> earlier, const Trial &ended, int retries) {
            Trial asRead = ended;
            asRead.setState(TrialState::Running);
            earlier << asRead;
            return decideResubmission(earlier, ended, retries, 1'000'000);
        };
        ResubmitDecision r = decide({}, attempt(0, TrialState::Failed, bad), 0);
        QCOMPARE(int(r.action), int(Resubmit::Yes));
        QCOMPARE(r.next.attempt, 1);
        QVERIFY(orrery::core::runnerResubmits({attempt(0, TrialState::Failed, bad)},
                                              attempt(0, TrialState::Failed, bad), 0));
        // Twice the same node fault is still the node's, not the trial's.
        r = decide({attempt(0, TrialState::Failed, bad)}, attempt(1, TrialState::Failed, bad), 0);
        QCOMPARE(int(r.action), int(Resubmit::Yes));
        // Node faults before an ordinary failure leave its `retries` whole.
        QList<Trial> faults;
        for (int i = 0; i < 3; ++i)
            faults << attempt(i, TrialState::Failed, bad);
        r = decide(faults, attempt(3, TrialState::Failed, QStringLiteral("loss is nan")), 1);
        QCOMPARE(int(r.action), int(Resubmit::Yes));
        r = decide(faults, attempt(3, TrialState::Failed, QStringLiteral("loss is nan")), 0);
        QCOMPARE(r.why, QStringLiteral("no retries (retries: 0)"));
        // Bounded: past kMaxNodeFaults a node fault is an ordinary failure (here: no retries).
        faults.clear();
        for (int i = 0; i < kMaxNodeFaults; ++i)
            faults << attempt(i, TrialState::Failed, bad);
        r = decide(faults, attempt(kMaxNodeFaults, TrialState::Failed, bad), 0);
        QCOMPARE(int(r.action), int(Resubmit::GivenUp));
        QCOMPARE(r.why, QStringLiteral("no retries (retries: 0)"));
        faults.removeLast();
        r = decide(faults, attempt(kMaxNodeFaults - 1, TrialState::Failed, bad), 0);
        QCOMPARE(int(r.action), int(Resubmit::Yes));
    }

    void excludedNodes_data()
    {
        QTest::addColumn<QStringList>("suspects");  // oldest first
        QTest::addColumn<QStringList>("schedulable");
        QTest::addColumn<int>("needed");
        QTest::addColumn<QStringList>("exclude");
        QTest::addColumn<QStringList>("dropped");
        const QStringList n12{QStringLiteral("node1"), QStringLiteral("node2")};
        const QStringList n1234 = n12 + QStringList{QStringLiteral("node3"), QStringLiteral("node4")};
        QTest::newRow("none") << QStringList() << n12 << 1 << QStringList() << QStringList();
        QTest::newRow("one-of-two-leaves-room") << QStringList{QStringLiteral("node2")} << n12 << 1
                                                << QStringList{QStringLiteral("node2")} << QStringList();
        QTest::newRow("all-of-two-keeps-the-newest-out")
            << n12 << n12 << 1 << QStringList{QStringLiteral("node2")}
            << QStringList{QStringLiteral("node1")};
        QTest::newRow("two-node-trial-on-two-nodes-excludes-nothing")
            << QStringList{QStringLiteral("node2")} << n12 << 2 << QStringList()
            << QStringList{QStringLiteral("node2")};
        QTest::newRow("oldest-dropped-first")
            << QStringList{QStringLiteral("node3"), QStringLiteral("node1"), QStringLiteral("node4")} << n1234
            << 2 << QStringList{QStringLiteral("node1"), QStringLiteral("node4")}
            << QStringList{QStringLiteral("node3")};
        QTest::newRow("outside-the-partition-is-not-passed")
            << QStringList{QStringLiteral("gpu9"), QStringLiteral("node2")} << n12 << 1
            << QStringList{QStringLiteral("node2")} << QStringList();
        QTest::newRow("partition-unknown-excludes-every-suspect")
            << n12 << QStringList() << 1 << n12 << QStringList();
        QTest::newRow("zero-nodes-counts-as-one") << n12 << n12 << 0 << QStringList{QStringLiteral("node2")}
                                                  << QStringList{QStringLiteral("node1")};
    }
    void excludedNodes()
    {
        QFETCH(QStringList, suspects);
        QFETCH(QStringList, schedulable);
        QFETCH(int, needed);
        QFETCH(QStringList, exclude);
        QFETCH(QStringList, dropped);
        QList<SuspectNode> list;
        for (const QString &n : suspects)
            list << SuspectNode{QStringLiteral("c"), n, QStringLiteral("r"), QStringLiteral("node"), 1, 0};
        const Exclusion e = orrery::core::excludedNodes(list, schedulable, needed);
        QCOMPARE(e.exclude, exclude);
        QCOMPARE(e.dropped, dropped);
        QCOMPARE(e.note.isEmpty(), dropped.isEmpty());
        if (!dropped.isEmpty())
            QVERIFY2(e.note.contains(dropped.join(QStringLiteral(", "))) &&
                         e.note.contains(QLatin1String("too few")),
                     qPrintable(e.note));
    }

    // --- hangs (docs/sweeps.md "Hangs") ---

    void hangLimits_data()
    {
        QTest::addColumn<std::optional<qint64>>("timeout");
        QTest::addColumn<qint64>("gap");
        QTest::addColumn<qint64>("progress");
        QTest::addColumn<qint64>("startup");
        QTest::addColumn<QString>("rule");
        constexpr qint64 kMin = 60000;
        QTest::newRow("explicit: the gap and twice it before the first progress")
            << std::optional<qint64>(10 * kMin) << qint64(0) << 10 * kMin << 20 * kMin
            << QStringLiteral("hang_timeout 10m00s");
        QTest::newRow("explicit wins over the pace")
            << std::optional<qint64>(20000) << 30 * kMin << qint64(20000) << qint64(40000)
            << QStringLiteral("hang_timeout 20s");
        QTest::newRow("auto, no gap seen: the floor")
            << std::optional<qint64>() << qint64(0) << kHangFloorMs << kAutoStartupGraceMs
            << QStringLiteral("hang_timeout auto: 5m00s");
        QTest::newRow("auto, a short gap: still the floor")
            << std::optional<qint64>() << qint64(30000) << kHangFloorMs << kAutoStartupGraceMs
            << QStringLiteral("hang_timeout auto: 5m00s");
        QTest::newRow("auto, a 2-minute evaluation: 5 x it")
            << std::optional<qint64>() << 2 * kMin << 10 * kMin << kAutoStartupGraceMs
            << QStringLiteral("hang_timeout auto: 10m00s, 5 × the longest gap seen, 2m00s");
    }
    void hangLimits()
    {
        QFETCH(std::optional<qint64>, timeout);
        QFETCH(qint64, gap);
        const HangLimits l = orrery::core::hangLimits(timeout, gap);
        QTEST(l.progressMs, "progress");
        QTEST(l.startupMs, "startup");
        QTEST(l.rule, "rule");
    }

    void hungAttempts_data()
    {
        QTest::addColumn<Trial>("t");
        QTest::addColumn<std::optional<qint64>>("timeout");
        QTest::addColumn<qint64>("gap");
        QTest::addColumn<int>("action");  // -1 none, 0 End, 1 Kill
        QTest::addColumn<QString>("message");
        constexpr qint64 kMin = 60000;
        auto running = [](qint64 startedAgo, qint64 progressAgo) {
            Trial t = attempt(0, TrialState::Running);
            t.startedMs = kNow - startedAgo;
            t.progressMs = progressAgo < 0 ? 0 : kNow - progressAgo;
            return t;
        };
        const std::optional<qint64> tenMin(10 * kMin);
        QTest::newRow("progress 9 minutes ago: not hung")
            << running(kHour, 9 * kMin) << tenMin << qint64(0) << -1 << QString();
        QTest::newRow("no progress for 12m: hung")
            << running(kHour, 12 * kMin) << tenMin << qint64(0) << 0
            << QStringLiteral("no progress for 12m00s (hang_timeout 10m00s)");
        QTest::newRow("before its first progress, within the startup grace")
            << running(15 * kMin, -1) << tenMin << qint64(0) << -1 << QString();
        QTest::newRow("before its first progress, past the startup grace")
            << running(25 * kMin, -1) << tenMin << qint64(0) << 0
            << QStringLiteral(
                   "no progress in the 25m00s since it started (hang_timeout 10m00s; 20m00s allowed "
                   "before the first)");
        // progressMs of an earlier attempt (before this one started) is not this attempt's.
        Trial stale = running(3 * kMin, 30 * kMin);
        QTest::newRow("an earlier attempt's progress is not this one's")
            << stale << tenMin << qint64(0) << -1 << QString();
        Trial queued = running(kHour, 30 * kMin);
        queued.setState(TrialState::Queued);
        QTest::newRow("queued: never judged") << queued << tenMin << qint64(0) << -1 << QString();
        Trial notStarted = running(kHour, 30 * kMin);
        notStarted.startedMs = 0;
        QTest::newRow("running without a start: not judged")
            << notStarted << tenMin << qint64(0) << -1 << QString();
        QTest::newRow("auto: the floor")
            << running(kHour, 6 * kMin) << std::optional<qint64>() << qint64(0) << 0
            << QStringLiteral("no progress for 6m00s (hang_timeout auto: 5m00s)");
        QTest::newRow("auto: a slow pace allows more")
            << running(kHour, 6 * kMin) << std::optional<qint64>() << 2 * kMin << -1 << QString();
        Trial marked = running(kHour, 10 * kMin + 10000);
        marked.exitReason = QStringLiteral("hung: no progress for 10m (hang_timeout 10m)");
        QTest::newRow("marked, within the kill grace: left to end")
            << marked << tenMin << qint64(0) << -1 << QString();
        marked.progressMs = kNow - 10 * kMin - kHangKillGraceMs - 1;
        QTest::newRow("marked, past the kill grace: killed")
            << marked << tenMin << qint64(0) << 1 << marked.exitReason;
    }
    void hungAttempts()
    {
        QFETCH(Trial, t);
        QFETCH(std::optional<qint64>, timeout);
        QFETCH(qint64, gap);
        QFETCH(int, action);
        QMap<int, Trial> latest;
        latest.insert(t.index, t);
        const QList<Hang> hangs = orrery::core::hungAttempts(latest, timeout, {{t.index, gap}}, kNow);
        QCOMPARE(hangs.size(), action < 0 ? 0 : 1);
        if (action < 0)
            return;
        QCOMPARE(hangs.front().trial, t.index);
        QCOMPARE(int(hangs.front().action), action);
        QTEST(hangs.front().message, "message");
    }

    // A hang does not use up `retries` (even 0), but a trial that hangs kMaxHangs times is given up.
    void hangsHaveTheirOwnBound()
    {
        const QString hung = QStringLiteral("hung: no progress for 12m (hang_timeout 10m)");
        QList<Trial> attempts;
        for (int i = 0; i < kMaxHangs; ++i) {
            attempts << attempt(i, TrialState::Failed, hung);
            const ResubmitDecision r = decideResubmission(attempts, attempts.back(), 0, 100);
            QCOMPARE(r.action, Resubmit::Yes);
            QCOMPARE(r.next.progressMs, qint64(0));
        }
        attempts << attempt(kMaxHangs, TrialState::Failed, hung);
        const ResubmitDecision r = decideResubmission(attempts, attempts.back(), 0, 100);
        QCOMPARE(r.action, Resubmit::GivenUp);
        QCOMPARE(r.why, QStringLiteral("hung %1 times").arg(kMaxHangs + 1));
        // Hangs before a failure do not count against retries: one retry left after three hangs.
        QList<Trial> mixed = attempts.mid(0, 2);
        mixed << attempt(2, TrialState::Failed, QStringLiteral("exit 1"));
        QCOMPARE(decideResubmission(mixed, mixed.back(), 1, 100).action, Resubmit::Yes);
        QCOMPARE(decideResubmission(mixed, mixed.back(), 0, 100).action, Resubmit::GivenUp);
    }

    void noticeJson()
    {
        Notice n;
        n.kind = Notice::Kind::TrialHung;
        n.sweepId = 4;
        n.sweep = QStringLiteral("tiny \"lr\"");
        n.state = QStringLiteral("failed");
        n.trial = 3;
        n.message = QStringLiteral("trial 3 hung: no progress for 12m");
        n.timeMs = 1795654923500;
        const QByteArray json = toJson(n);
        QVERIFY(!json.contains('\n'));  // one line
        const QJsonObject o = QJsonDocument::fromJson(json).object();
        QCOMPARE(o.value(QStringLiteral("v")).toInt(), 1);
        QCOMPARE(o.value(QStringLiteral("kind")).toString(), QStringLiteral("trial_hung"));
        QCOMPARE(o.value(QStringLiteral("sweep_id")).toInteger(), 4);
        QCOMPARE(o.value(QStringLiteral("sweep")).toString(), n.sweep);
        QCOMPARE(o.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        QCOMPARE(o.value(QStringLiteral("trial")).toInt(), 3);
        QCOMPARE(o.value(QStringLiteral("message")).toString(), n.message);
        QCOMPARE(o.value(QStringLiteral("time")).toString(), QStringLiteral("2026-11-26T01:02:03.500Z"));
        QCOMPARE(o.value(QStringLiteral("t")).toDouble(), 1795654923.5);
        n.kind = Notice::Kind::SweepEnded;
        n.trial.reset();
        QVERIFY(!toJson(n).contains("\"trial\""));
        QVERIFY(toJson(n).contains("\"kind\":\"sweep_ended\""));
    }
};

ORRERY_TEST_MAIN(TestSweepRules, QCoreApplication)
#include "tst_sweeprules.moc"
