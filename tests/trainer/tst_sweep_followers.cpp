// SPDX-License-Identifier: GPL-3.0-or-later
// Several followers of one sweep (docs/sweeps.md "One follower acts"): the GUI, a `sweep watch`
// and the monitor may all follow it, and only the holder of the sweep's lease acts. A local
// sweep with retries, the real trainer on the micro workload (tests/data/micro.yaml), a real
// SQLite store opened twice, the trainer SIGKILLed for real: the failed attempt is resubmitted
// exactly once, however the two followers' ticks interleave. Then the holder "crashes" (stops
// ticking without giving its lease back) and the other takes over when the lease expires; and
// a real `orrery sweep watch` says who acts while another holds the lease, then takes over.
#include "sweeptest.h"
#include "testsupport.h"

#include "orrery/core/localexecutor.h"
#include "orrery/core/store.h"
#include "orrery/core/sweeprunner.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

#include <condition_variable>
#include <csignal>
#include <functional>
#include <mutex>
#include <thread>

using namespace orrery::core;

namespace {

using orrery::test::cli;
using orrery::test::trainer;

// Long enough to catch the trial running past its first checkpoint (step 10) and kill it: ~6 s
// at micro.yaml's 40 ms a step, against ticks every 250 ms.
constexpr qint64 kSteps = 150;
// The followers' lease here: short, so the takeover after a "crash" comes within the test, and
// still twelve of the test's ticks.
constexpr qint64 kTtlMs = 3000;

// Where two followers' polls meet. While armed, each poll waits until `parties` polls have
// arrived (at most 30 s), so every follower has read the trials before any decides: the
// interleaving that two real followers hit only now and then, made certain.
class PollGate {
public:
    void arm(int parties)
    {
        std::lock_guard lock(m_mutex);
        m_parties = parties;
        m_arrived = 0;
    }
    // True when every party arrived (always true while not armed).
    bool wait()
    {
        std::unique_lock lock(m_mutex);
        if (m_parties == 0)
            return true;
        ++m_arrived;
        m_cv.notify_all();
        return m_cv.wait_for(lock, std::chrono::seconds(30), [&] { return m_arrived >= m_parties; });
    }
    void disarm()
    {
        std::lock_guard lock(m_mutex);
        m_parties = 0;
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_cv;
    int m_parties = 0, m_arrived = 0;
};

// A LocalExecutor that meets the other follower at the gate before each poll and counts the
// attempts it launches (one count per task: a resubmission is one).
class GatedExecutor : public Executor {
public:
    GatedExecutor(const QString &root, PollGate &gate, std::atomic<int> &launches,
                  std::atomic<int> &gateMisses)
        : m_local(trainer(), cli(), root), m_gate(gate), m_launches(launches), m_gateMisses(gateMisses)
    { }

    QString name() const override { return m_local.name(); }
    QString defaultRoot() override { return m_local.defaultRoot(); }
    QByteArray describe(const LaunchBatch &batch) override { return m_local.describe(batch); }
    Launched launch(const LaunchBatch &batch) override
    {
        m_launches += int(batch.tasks.size());
        return m_local.launch(batch);
    }
    CodeSnapshot snapshotCode(const QString &sweepDir, const RenderedCommand &command) override
    {
        return m_local.snapshotCode(sweepDir, command);
    }
    QHash<QString, TaskStatus> poll(const QStringList &taskIds) override
    {
        if (!m_gate.wait())
            ++m_gateMisses;
        return m_local.poll(taskIds);
    }
    void cancel(const QStringList &taskIds) override { m_local.cancel(taskIds); }
    QList<FileChunk> readFiles(const QList<FileRead> &reads) override { return m_local.readFiles(reads); }
    QStringList logPaths(const QString &sweepDir, const QString &taskId, const QString &runDir) override
    {
        return m_local.logPaths(sweepDir, taskId, runDir);
    }

private:
    LocalExecutor m_local;
    PollGate &m_gate;
    std::atomic<int> &m_launches;
    std::atomic<int> &m_gateMisses;
};

class TestSweepFollowers : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::optional<TrainerSchema> m_schema;

    QString db() const { return m_dir.filePath(QStringLiteral("orrery.sqlite")); }
    QString root() const { return m_dir.filePath(QStringLiteral("runs")); }

    SubmitPlan plan(const QString &name, const QByteArray &body)
    {
        const QString path = m_dir.filePath(name + QStringLiteral(".yaml"));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return {};
        f.write("trainer: {config: " + orrery::test::microConfigPath().toUtf8() +
                "}\nname: " + name.toUtf8() + "\n" + body);
        f.close();
        SubmitPlan p;
        const SpecParse parsed = loadSweepSpec(path, *m_schema);
        if (!parsed.spec) {
            for (const SpecError &e : parsed.errors)
                qWarning("%s", qPrintable(e.toString()));
            return p;
        }
        p.spec = *parsed.spec;
        QFile spec(path), base(p.spec.trainerConfig);
        if (spec.open(QIODevice::ReadOnly))
            p.specYaml = spec.readAll();
        if (base.open(QIODevice::ReadOnly))
            p.baseConfig = base.readAll();
        return p;
    }

    static void say(const TickReport &r)
    {
        for (const QString &e : r.events)
            qInfo("%s", qPrintable(e));
        for (const QString &e : r.errors)
            qWarning("%s", qPrintable(e));
    }

    static QJsonObject taskFile(const Trial &t)
    {
        QFile f(t.task + QStringLiteral(".json"));
        if (!f.open(QIODevice::ReadOnly))
            return {};
        return QJsonDocument::fromJson(f.readAll()).object();
    }

    static qint64 lastStep(TrackingStore &store, RunId run)
    {
        qint64 step = -1;
        for (const LatestMetric &m : store.details(run).metrics)
            step = std::max<qint64>(step, m.last.step);
        return step;
    }

    static bool waitFor(const std::function<bool()> &done, int timeoutMs)
    {
        return orrery::test::waitFor(done, timeoutMs);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        ORRERY_REQUIRE_BUILT_PROGRAMS(m_schema);
    }

    // Two followers, one SIGKILLed trial with a retry left: one resubmission, not two — even when
    // both followers have read the failed attempt before either decides.
    void twoFollowersResubmitAKilledTrialOnce()
    {
        const SubmitPlan p = plan(QStringLiteral("followers"),
                                  "method: grid\n"
                                  "metric: {name: train/loss, goal: minimize}\n"
                                  "parameters:\n"
                                  "  optim.lr: {values: [1e-3]}\n"
                                  "  train.steps: {value: " +
                                      QByteArray::number(kSteps) +
                                      "}\n"
                                      "retries: 2\n");
        QVERIFY(!p.specYaml.isEmpty());
        PollGate gate;
        std::atomic<int> launches = 0, gateMisses = 0;
        GatedExecutor execA(root(), gate, launches, gateMisses), execB(root(), gate, launches, gateMisses);
        // Two connections to one file, as two processes would have.
        auto storeA = TrackingStore::open(db());
        auto storeB = TrackingStore::open(db());
        SweepRunner a(*storeA, execA, *m_schema, {QStringLiteral("follower-a"), kTtlMs});
        SweepRunner b(*storeB, execB, *m_schema, {QStringLiteral("follower-b"), kTtlMs});
        const SweepId id = a.submit(p);
        QCOMPARE(launches.load(), 1);

        // Both follow, A first: A acts, B reads and says who acts.
        bool bSawA = false;
        Trial first;
        QVERIFY2(waitFor(
                     [&] {
                         say(a.tick({id}));
                         const TickReport rb = b.tick({id});
                         say(rb);
                         bSawA |= rb.followedElsewhere.size() == 1 &&
                             rb.followedElsewhere.front().holder == QLatin1String("follower-a");
                         first = latestAttempts(storeB->trials(id)).value(0);
                         return first.state == QLatin1String("running") &&
                             lastStep(*storeB, first.runId) >= 12 &&
                             QFileInfo::exists(first.runDir + QStringLiteral("/checkpoints/latest"));
                     },
                     120'000),
                 "the trial never ran past its first checkpoint");
        QVERIFY(bSawA);
        QCOMPARE(storeB->sweepLease(id)->holder, QStringLiteral("follower-a"));

        // The OOM killer, as it were; wait until the supervisor has recorded the end, so that both
        // followers' next polls see it.
        const qint64 pid = taskFile(first).value(QLatin1String("pid")).toInteger();
        QVERIFY(pid > 0);
        QCOMPARE(::kill(pid_t(pid), SIGKILL), 0);
        QVERIFY(waitFor(
            [&] {
                return taskFile(first).value(QLatin1String("state")).toString() == QLatin1String("ended");
            },
            30'000));

        // One tick each, at once, both past their read of the trials before either decides.
        gate.arm(2);
        TickReport ra, rb;
        std::thread ta([&] { ra = a.tick({id}); });
        std::thread tb([&] { rb = b.tick({id}); });
        ta.join();
        tb.join();
        gate.disarm();
        say(ra);
        say(rb);
        QCOMPARE(gateMisses.load(), 0);  // both polls were in flight together
        QCOMPARE(launches.load(), 2);  // the submission, and ONE resubmission
        QVERIFY2(ra.errors.isEmpty() && rb.errors.isEmpty(), qPrintable((ra.errors + rb.errors).join(u'\n')));
        QList<Trial> all = storeA->trials(id);
        QCOMPARE(all.size(), 2);
        QCOMPARE(all[0].state, QStringLiteral("failed"));
        QVERIFY2(all[0].exitReason.contains(QLatin1String("SIGKILL")), qPrintable(all[0].exitReason));
        QCOMPARE(all[1].attempt, 1);
        QVERIFY(ra.events.join(u'\n').contains(QLatin1String("resubmitted (attempt 2)")));
        QVERIFY(!rb.events.join(u'\n').contains(QLatin1String("resubmitted")));
        QCOMPARE(rb.followedElsewhere.size(), 1);

        // A dies without giving its lease back: B only reads until the lease expires, then acts and
        // finishes the sweep.
        QElapsedTimer sinceCrash;
        sinceCrash.start();
        qint64 tookOverAfterMs = -1;
        QVERIFY2(waitFor(
                     [&] {
                         const TickReport r = b.tick({id});
                         say(r);
                         if (tookOverAfterMs < 0 && r.followedElsewhere.isEmpty())
                             tookOverAfterMs = sinceCrash.elapsed();
                         return b.isDone(id);
                     },
                     120'000),
                 "B never finished the sweep");
        QVERIFY2(tookOverAfterMs >= kTtlMs / 2, qPrintable(QString::number(tookOverAfterMs)));
        all = storeB->trials(id);
        QCOMPARE(all.size(), 2);
        QCOMPARE(all[1].state, QStringLiteral("completed"));
        QCOMPARE(lastStep(*storeB, all[1].runId), kSteps);
        QCOMPARE(launches.load(), 2);
        QCOMPARE(storeB->sweep(id)->state, QStringLiteral("finished"));
        QCOMPARE(storeB->sweepLease(id)->holder, QStringLiteral("follower-b"));
        b.releaseLeases();
        QVERIFY(!storeB->sweepLease(id));
    }

    // A real `sweep watch` while another follower holds the lease: it says who acts, decides
    // nothing, takes over once that follower gives the lease back, and gives its own back on exit.
    void watchSaysWhoActsAndTakesOver()
    {
        const SubmitPlan p = plan(QStringLiteral("watched"),
                                  "method: grid\n"
                                  "parameters:\n"
                                  "  optim.lr: {values: [1e-3]}\n"
                                  "  train.steps: {value: 20}\n");
        QVERIFY(!p.specYaml.isEmpty());
        auto store = TrackingStore::open(db());
        LocalExecutor executor(trainer(), cli(), root());
        SweepRunner runner(*store, executor, *m_schema);
        const SweepId id = runner.submit(p);
        const QString other = QStringLiteral("elsewhere:1:0badcafe");
        QVERIFY(store->acquireSweepLease(id, other, 600'000).heldBy(other));

        QProcess watch;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_dir.filePath(QStringLiteral("data")));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_dir.filePath(QStringLiteral("config")));
        watch.setProcessEnvironment(env);
        watch.start(cli(),
                    {QStringLiteral("--db"), db(), QStringLiteral("sweep"), QStringLiteral("watch"),
                     QString::number(id), QStringLiteral("--pace"), QStringLiteral("0.2,0.5")});
        QVERIFY(watch.waitForStarted());
        const QByteArray followedBy = QByteArray("followed by ") + other.toUtf8();
        QByteArray output;
        const auto read = [&] {
            watch.waitForReadyRead(100);
            output += watch.readAllStandardOutput();
        };
        QVERIFY2(waitFor(
                     [&] {
                         read();
                         return output.contains(followedBy);
                     },
                     60'000),
                 output.constData());
        // While the other holds the lease the trial ends, and nobody records it: the watch only reads.
        QVERIFY(waitFor(
            [&] {
                return QFileInfo::exists(latestAttempts(store->trials(id)).value(0).runDir +
                                         QStringLiteral("/exit.json"));
            },
            120'000));
        QThread::msleep(1500);  // several of the watch's ticks
        read();
        QCOMPARE(latestAttempts(store->trials(id)).value(0).state, QStringLiteral("queued"));
        QVERIFY(watch.state() == QProcess::Running);

        QCOMPARE(store->releaseSweepLeases(other), 1);
        QVERIFY(watch.waitForFinished(120'000));
        output += watch.readAllStandardOutput();
        QVERIFY2(watch.exitCode() == 0, QByteArray(output + watch.readAllStandardError()).constData());
        QVERIFY2(output.contains("this watch acts now"), output.constData());
        QVERIFY2(output.contains("finished (1 completed"), output.constData());
        QCOMPARE(store->sweep(id)->state, QStringLiteral("finished"));
        QVERIFY(!store->sweepLease(id));  // given back on exit
    }
};

}  // namespace

int main(int argc, char **argv)
{
    orrery::test::prepareTestProcess();
    QCoreApplication app(argc, argv);
    TestSweepFollowers test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_sweep_followers.moc"
