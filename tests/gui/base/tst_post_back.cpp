// SPDX-License-Identifier: GPL-3.0-or-later
// Work handed back from another thread to a GUI object (app/gui/base/postifalive.h): a result
// whose receiver is destroyed while it is on its way is dropped, never delivered to the dead
// receiver. Through the window's store threads on a real SQLite file (StoreReader, StoreWriter),
// and through thenIfAlive() on QtConcurrent's pool.
//
// Found by CI (tst_launcher_checks, a SIGSEGV in QApplicationPrivate::notify_helper): the store
// thread looked at the receiver's QPointer and then posted the result to the receiver itself; a
// dialog the UI thread deleted between the two got an event it could no longer take. The instant
// cannot be stopped at, so this test makes it likely: thousands of jobs, each receiver deleted on
// the UI thread the moment its work has returned, at delays spread over the few microseconds that
// follow. The old store threads crashed here under AddressSanitizer in every run. Qt 6.4's own
// `future.then(receiver, f)`, which thenIfAlive() replaces, crashed in 2 runs of 3 and in the third
// called f for receivers already deleted.
#include "testsupport.h"

#include "postifalive.h"
#include "storereader.h"
#include "storewriter.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtConcurrent>

#include <atomic>
#include <thread>

using orrery::core::TrackingStore;
using orrery::gui::StoreReader;
using orrery::gui::StoreWriter;

class TestPostBack : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

    QString storePath() const { return m_dir.filePath(QStringLiteral("orrery.sqlite")); }

    // `post(receiver, started, done)` hands one job to a store thread; each receiver is deleted as
    // soon as its job has run, then every result still on its way is drained.
    template<class Post>
    void deleteReceiversAsResultsLeave(Post post)
    {
        constexpr int kJobs = 6000;
        int delivered = 0;
        for (int i = 0; i < kJobs; ++i) {
            auto *receiver = new QObject;
            auto started = std::make_shared<std::atomic<bool>>(false);
            post(receiver, started, [&delivered] { ++delivered; });
            while (!started->load(std::memory_order_acquire))
                std::this_thread::yield();
            // 0 to ~3 µs after the job's work returned: across the store thread's check and post.
            for (volatile int spin = 0; spin < (i % 64) * 8; spin = spin + 1) { }
            delete receiver;
            if (i % 256 == 0)
                QCoreApplication::processEvents();
        }
        QTRY_VERIFY(true);  // a turn of the event loop: results posted last are delivered (or not)
        QCoreApplication::sendPostedEvents();
        QCOMPARE(delivered, 0);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        TrackingStore::open(storePath());  // created and migrated, then closed
    }

    void aReadWhoseReceiverIsDeletedIsDropped()
    {
        StoreReader reader;
        QSignalSpy opened(&reader, &StoreReader::opened);
        reader.open(storePath(), TrackingStore::Mode::ReadOnly);
        QVERIFY(opened.wait(10'000));
        deleteReceiversAsResultsLeave([&reader](QObject *receiver, auto started, std::function<void()> done) {
            reader.read<int>(
                receiver,
                [started](const TrackingStore &) {
                    started->store(true, std::memory_order_release);
                    return 1;
                },
                [done](int) { done(); });
        });
    }

    void aWriteWhoseReceiverIsDeletedIsDropped()
    {
        StoreWriter writer;
        QSignalSpy opened(&writer, &StoreWriter::opened);
        writer.open(storePath());
        QVERIFY(opened.wait(10'000));
        deleteReceiversAsResultsLeave([&writer](QObject *receiver, auto started, std::function<void()> done) {
            writer.write<int>(
                receiver,
                [started](TrackingStore &) {
                    started->store(true, std::memory_order_release);
                    return 1;
                },
                [done](int) { done(); });
        });
    }

    void aContinuationWhoseReceiverIsDeletedIsDropped()
    {
        QThreadPool pool;
        deleteReceiversAsResultsLeave([&pool](QObject *receiver, auto started, std::function<void()> done) {
            const QFuture<int> work = QtConcurrent::run(&pool, [started] {
                started->store(true, std::memory_order_release);
                return 1;
            });
            orrery::gui::thenIfAlive(work, receiver, [done](int) { done(); });
        });
        pool.waitForDone();
    }

    // The other half of the contract: a receiver that lives gets every result, in order.
    void aLivingReceiverGetsEveryResultInOrder()
    {
        StoreReader reader;
        QSignalSpy opened(&reader, &StoreReader::opened);
        reader.open(storePath(), TrackingStore::Mode::ReadOnly);
        QVERIFY(opened.wait(10'000));
        QObject receiver;
        QList<int> got;
        for (int i = 0; i < 200; ++i)
            reader.read<int>(
                &receiver, [i](const TrackingStore &) { return i; }, [&got](int v) { got << v; });
        QTRY_COMPARE_WITH_TIMEOUT(got.size(), 200, 10'000);
        for (int i = 0; i < 200; ++i)
            QCOMPARE(got[i], i);
    }
};

ORRERY_TEST_MAIN(TestPostBack, QApplication)
#include "tst_post_back.moc"
