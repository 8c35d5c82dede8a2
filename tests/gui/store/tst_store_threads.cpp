// SPDX-License-Identifier: GPL-3.0-or-later
// The window's store threads (app/gui/store) on a real SQLite file: a result whose receiver is
// destroyed while it is on its way is dropped, never delivered to the dead receiver.
//
// Found by CI (tst_launcher_checks, a SIGSEGV in QApplicationPrivate::notify_helper): the store
// thread looked at the receiver's QPointer and then posted the result to the receiver itself; a
// dialog the UI thread deleted between the two got an event it could no longer take. The window
// cannot be made to stop at that instant, so this test makes the instant likely: thousands of
// reads, each receiver deleted on the UI thread the moment the store thread has computed its
// result, at delays spread over the few microseconds that follow. The old code crashed here
// under AddressSanitizer within the first few thousand.
#include "testsupport.h"

#include "storereader.h"
#include "storewriter.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <atomic>
#include <thread>

using orrery::core::TrackingStore;
using orrery::gui::StoreReader;
using orrery::gui::StoreWriter;

class TestStoreThreads : public QObject {
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

ORRERY_TEST_MAIN(TestStoreThreads, QApplication)
#include "tst_store_threads.moc"
