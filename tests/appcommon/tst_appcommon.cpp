// SPDX-License-Identifier: GPL-3.0-or-later
// The helpers both faces link (app/common): the periodic worker (runs at once, on its interval,
// on wake, a wake during a run kept for after it, stops promptly) and the mailbox (the newest
// value, taken once, across threads).
#include "mailbox.h"
#include "periodicworker.h"
#include "testsupport.h"

#include "orrery/core/runfiles.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QElapsedTimer>
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
