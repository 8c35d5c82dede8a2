// SPDX-License-Identifier: GPL-3.0-or-later
// The helpers both faces link (app/common): the periodic worker (runs at once, on its interval,
// on wake, a wake during a run kept for after it, stops promptly), the mailbox (the newest value,
// taken once, across threads) and the log tailer (the tail, then only what is new, a rewrite read
// again) over a real local executor.
#include "logtailer.h"
#include "mailbox.h"
#include "periodicworker.h"
#include "testsupport.h"

#include "orrery/core/localexecutor.h"
#include "orrery/core/runfiles.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QThread>

#include <atomic>
#include <functional>
#include <thread>

using namespace orrery::appcommon;

namespace {

// Waits until `done` holds, at most `ms`.
bool waitFor(const std::function<bool()> &done, int ms = 10'000)
{
    QDeadlineTimer deadline(ms);
    while (!deadline.hasExpired()) {
        if (done())
            return true;
        QThread::msleep(5);
    }
    return done();
}

}  // namespace

class TestAppCommon : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void periodicWorker_runsAtOnceThenOnItsInterval()
    {
        std::atomic<int> runs{0};
        PeriodicWorker worker(std::chrono::milliseconds(20), [&] { ++runs; });
        QVERIFY(waitFor([&] { return runs.load() >= 1; }));
        QVERIFY(waitFor([&] { return runs.load() >= 4; }));  // on its own, every 20 ms
    }

    void periodicWorker_wakeRunsAgainAtOnce()
    {
        std::atomic<int> runs{0};
        PeriodicWorker worker(std::chrono::hours(1), [&] { ++runs; });
        QVERIFY(waitFor([&] { return runs.load() == 1; }));
        QThread::msleep(50);
        QCOMPARE(runs.load(), 1);  // the interval is an hour
        worker.wake();
        QVERIFY(waitFor([&] { return runs.load() == 2; }));
        worker.wake();
        QVERIFY(waitFor([&] { return runs.load() == 3; }));
    }

    void periodicWorker_wakeDuringARunIsKept()
    {
        std::atomic<bool> inRun{false}, release{false};
        std::atomic<int> runs{0};
        PeriodicWorker worker(std::chrono::hours(1), [&] {
            ++runs;
            inRun = true;
            while (runs.load() == 1 && !release.load())
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            inRun = false;
        });
        QVERIFY(waitFor([&] { return inRun.load(); }));
        worker.wake();  // while the first run is still going
        release = true;
        QVERIFY(waitFor([&] { return runs.load() == 2; }));  // not an hour later
    }

    void periodicWorker_stopsWithoutWaitingForTheInterval()
    {
        std::atomic<int> runs{0};
        QElapsedTimer timer;
        {
            PeriodicWorker worker(std::chrono::hours(1), [&] { ++runs; });
            QVERIFY(waitFor([&] { return runs.load() == 1; }));
            timer.start();
        }  // the destructor stops and joins
        QVERIFY2(timer.elapsed() < 5'000, qPrintable(QString::number(timer.elapsed())));
        QCOMPARE(runs.load(), 1);

        // requestStop() alone: the thread runs no more, and the destructor still joins.
        std::atomic<int> later{0};
        PeriodicWorker worker(std::chrono::milliseconds(1), [&] { ++later; });
        QVERIFY(waitFor([&] { return later.load() >= 1; }));
        worker.requestStop();
        QThread::msleep(20);
        const int stoppedAt = later.load();
        QThread::msleep(50);
        QCOMPARE(later.load(), stoppedAt);
    }

    void mailbox_keepsTheNewestValueForOneTake()
    {
        Mailbox<QString> box;
        QVERIFY(!box.take());
        box.put(QStringLiteral("first"));
        box.put(QStringLiteral("second"));
        QCOMPARE(box.take(), std::optional<QString>(QStringLiteral("second")));
        QVERIFY(!box.take());  // taken once

        // Across threads: whatever the consumer takes, values only go forward, and the last one
        // put is the last one taken.
        Mailbox<int> numbers;
        constexpr int kLast = 20'000;
        std::thread producer([&] {
            for (int i = 1; i <= kLast; ++i)
                numbers.put(i);
        });
        int seen = 0;
        bool forward = true;
        QDeadlineTimer deadline(10'000);
        while (seen != kLast && !deadline.hasExpired())
            if (const std::optional<int> v = numbers.take()) {
                forward = forward && *v > seen;
                seen = *v;
            }
        producer.join();
        QVERIFY(forward);
        QCOMPARE(seen, kLast);
    }

    void logTailer_readsTheTailThenWhatIsNew()
    {
        QTemporaryDir dir;
        orrery::core::LocalExecutor executor(QStringLiteral("/nonexistent/trainer"),
                                             QStringLiteral("/nonexistent/orrery"), dir.path());
        orrery::core::Sweep sweep;
        sweep.id = 1;
        sweep.rootDir = dir.path();
        orrery::core::Trial trial;
        trial.index = 0;
        trial.attempt = 0;
        trial.state = QStringLiteral("running");
        trial.runDir = dir.filePath(QStringLiteral("run0"));
        QVERIFY(QDir().mkpath(trial.runDir));
        LogTailer tailer;
        LogTail t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.of, (LogRequest{1, 0}));
        QCOMPARE(t.state, QStringLiteral("running"));
        QCOMPARE(t.files.size(), 2);
        QVERIFY(!t.files[0].exists && t.files[0].lines.isEmpty());

        // More than a tail's worth: the last lines only, none cut at the front.
        QFile out(dir.filePath(QStringLiteral("run0/stdout.log")));
        QVERIFY(out.open(QIODevice::WriteOnly));
        for (int i = 0; i < 20'000; ++i)
            out.write(QStringLiteral("line %1\n").arg(i).toUtf8());
        out.flush();
        t = tailer.read(executor, sweep, trial);
        QVERIFY(t.files[0].exists);
        QCOMPARE(t.files[0].lines.back(), QStringLiteral("line 19999"));
        QVERIFY(t.files[0].lines.size() <= LogTailer::kMaxLines);
        QVERIFY(t.files[0].lines.front().startsWith(QLatin1String("line ")));
        QVERIFY(!t.files[1].exists);
        // What is appended arrives, an unfinished line included.
        out.write("line 20000\npartial");
        out.flush();
        t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.files[0].lines.back(), QStringLiteral("partial"));
        QCOMPARE(t.files[0].lines[t.files[0].lines.size() - 2], QStringLiteral("line 20000"));
        // Rewritten shorter (a new attempt's log): read again from its start.
        out.close();
        QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
        out.write("fresh\n");
        out.close();
        t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.files[0].lines, QStringList{QStringLiteral("fresh")});
    }

    // Another attempt of the trial starts over: its state, its files read from their tails.
    void logTailer_anotherAttemptStartsOver()
    {
        QTemporaryDir dir;
        orrery::core::LocalExecutor executor(QStringLiteral("/nonexistent/trainer"),
                                             QStringLiteral("/nonexistent/orrery"), dir.path());
        orrery::core::Sweep sweep;
        sweep.id = 3;
        sweep.rootDir = dir.path();
        orrery::core::Trial trial;
        trial.index = 2;
        trial.state = QStringLiteral("running");
        trial.runDir = dir.filePath(QStringLiteral("run2"));
        QVERIFY(QDir().mkpath(trial.runDir));
        QFile err(dir.filePath(QStringLiteral("run2/stderr.log")));
        QVERIFY(err.open(QIODevice::WriteOnly));
        err.write("attempt 0 failed\n");
        err.close();
        LogTailer tailer;
        LogTail t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.files.size(), 2);
        QCOMPARE(t.files[1].lines, QStringList{QStringLiteral("attempt 0 failed")});

        trial.attempt = 1;
        trial.state = QStringLiteral("queued");
        t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.attempt, 1);
        QCOMPARE(t.state, QStringLiteral("queued"));
        QCOMPARE(t.files[1].lines, QStringList{QStringLiteral("attempt 0 failed")});  // from its tail

        // The local executor appends a retry to the same files, after its marker (issue 41:
        // "stderr of attempt 1" held both attempts' output): each attempt reads its own part.
        QVERIFY(err.open(QIODevice::Append));
        err.write(orrery::core::attemptMarker(1, QStringLiteral("0.2"), QDateTime::currentDateTimeUtc()));
        err.write("Traceback (most recent call last):\nValueError: lr must be positive\n");
        err.close();
        t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.files[1].lines,
                 (QStringList{QStringLiteral("Traceback (most recent call last):"),
                              QStringLiteral("ValueError: lr must be positive")}));
        trial.attempt = 0;
        t = tailer.read(executor, sweep, trial);
        QCOMPARE(t.files[1].lines, QStringList{QStringLiteral("attempt 0 failed")});
        trial.attempt = 2;  // queued, nothing written yet: none of the others' lines
        t = tailer.read(executor, sweep, trial);
        QVERIFY(t.files[1].lines.isEmpty());
    }

    // The line that says why a process failed, where one does (the Details dock shows it first).
    void errorLineOfFailedOutput()
    {
        using orrery::core::errorLineOf;
        QCOMPARE(
            errorLineOf({QStringLiteral("usage: tb_train.py [-h] [--lr LR]"),
                         QStringLiteral("tb_train.py: error: argument --lr: invalid float value: 'oops'")}),
            QStringLiteral("tb_train.py: error: argument --lr: invalid float value: 'oops'"));
        QCOMPARE(errorLineOf(
                     {QStringLiteral("Traceback (most recent call last):"),
                      QStringLiteral("  File \"train.py\", line 3, in <module>"),
                      QStringLiteral("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB"),
                      QStringLiteral("wandb: Synced 1 run")}),
                 QStringLiteral("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB"));
        QCOMPARE(errorLineOf({QStringLiteral("terminate called after throwing an instance of 'c10::Error'"),
                              QStringLiteral("  what():  shape mismatch")}),
                 QStringLiteral("what():  shape mismatch"));
        QCOMPARE(errorLineOf({QStringLiteral("ValueError: lr must be positive"),
                              QStringLiteral("srun: error: node1: task 0: Exited with exit code 3")}),
                 QStringLiteral("ValueError: lr must be positive"));
        QCOMPARE(errorLineOf({QStringLiteral("srun: error: node1: task 0: Exited with exit code 3")}),
                 QStringLiteral("srun: error: node1: task 0: Exited with exit code 3"));
        QCOMPARE(errorLineOf({QStringLiteral("step 10 loss 0.3"), QStringLiteral("done")}), QString());
    }
};

ORRERY_TEST_MAIN(TestAppCommon, QCoreApplication)
#include "tst_appcommon.moc"
