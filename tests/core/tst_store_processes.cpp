// SPDX-License-Identifier: GPL-3.0-or-later
// The store across processes, as users run it: `orrery runs ingest` killed with SIGKILL at random
// instants (nothing lost, nothing doubled), two writer processes on the same database (never
// "database is locked"), and a reader in this process while they write.
#include "testsupport.h"

#include "orrery/core/store.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QThread>

#include <atomic>
#include <thread>

using namespace orrery::core;

namespace {

QString cli()
{
    return qEnvironmentVariable("ORRERY_CLI");
}

// A run dir whose events.jsonl has `steps` metrics lines of `keys` values each (+ a start line).
qint64 writeRunDirectory(const QString &dir, int steps, int keys)
{
    QDir().mkpath(dir);
    QFile f(dir + QStringLiteral("/events.jsonl"));
    if (!f.open(QIODevice::WriteOnly))
        return -1;
    QByteArray buffer =
        R"({"v":1,"t":1700000000.0,"kind":"start","run":{"world_size":1,"params":{"seed":7}}})"
        "\n";
    for (int s = 0; s < steps; ++s) {
        buffer += "{\"v\":1,\"t\":" + QByteArray::number(1700000000.0 + s * 0.5, 'f', 3) +
            ",\"kind\":\"metrics\",\"step\":" + QByteArray::number(s) + ",\"values\":{";
        for (int k = 0; k < keys; ++k)
            buffer += (k ? ",\"m" : "\"m") + QByteArray::number(k) +
                "\":" + QByteArray::number(s * 0.001 + k, 'g', 10);
        buffer += "}}\n";
        if (buffer.size() > (1 << 20)) {
            f.write(buffer);
            buffer.clear();
        }
    }
    f.write(buffer);
    return f.size();
}

QProcess *startIngest(const QString &db, const QString &dir, QObject *parent)
{
    auto *p = new QProcess(parent);
    p->setProgram(cli());
    p->setArguments({QStringLiteral("--db"), db, QStringLiteral("runs"), QStringLiteral("ingest"), dir,
                     QStringLiteral("--experiment"), QStringLiteral("crash")});
    p->setProcessChannelMode(QProcess::SeparateChannels);
    p->start();
    return p;
}

}  // namespace

class TestStoreProcesses : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFileInfo(cli()).isExecutable(), "ORRERY_CLI must name the orrery binary");
    }

    void killedWriterLosesAndDuplicatesNothing()
    {
        const int steps = 60'000, keys = 10;  // ~12 MB: a dozen transactions (kIngestBytes)
        const QString dir = m_dir.filePath(QStringLiteral("crash/run"));
        const qint64 size = writeRunDirectory(dir, steps, keys);
        QVERIFY(size > 0);

        // How long one uninterrupted ingest takes here, so the kills land inside it.
        QElapsedTimer timer;
        timer.start();
        QProcess *probe = startIngest(m_dir.filePath(QStringLiteral("probe.sqlite")), dir, this);
        QVERIFY(probe->waitForFinished(120'000));
        QCOMPARE(probe->exitCode(), 0);
        const int fullMs = int(timer.elapsed());

        // Campaigns: on a fresh database, start the writer and SIGKILL it at a random instant
        // within that time, again and again, until a run gets through; then check everything.
        // At least 12 kills in all, and at least 5 that landed after some progress (a kill in
        // the first transaction is a crash too, but exercises less).
        auto *rng = QRandomGenerator::global();
        int kills = 0, killedMidway = 0;
        for (int campaign = 0; campaign < 20 && (kills < 12 || killedMidway < 5); ++campaign) {
            const QString db = m_dir.filePath(QStringLiteral("crash-%1.sqlite").arg(campaign));
            qint64 lastOffset = 0;
            for (int round = 0; round < 50; ++round) {
                QProcess *p = startIngest(db, dir, this);
                QVERIFY(p->waitForStarted());
                QThread::msleep(unsigned(fullMs / 10 + int(rng->bounded(fullMs * 8 / 10 + 1))));
                const bool killed = p->state() == QProcess::Running;
                if (killed) {
                    p->kill();  // SIGKILL
                    ++kills;
                }
                p->waitForFinished();
                p->deleteLater();
                auto store = TrackingStore::open(db, TrackingStore::Mode::ReadOnly);
                const auto run = store->findRun(QStringLiteral("run"));
                if (!run)
                    continue;
                const IngestState st = store->ingestState(run->id, QStringLiteral("events.jsonl"));
                // The offset is always at a line boundary and matches the points stored.
                QCOMPARE(store->pointCount(run->id), qint64(std::max<qint64>(0, st.lines - 1)) * keys);
                QVERIFY(st.offset >= lastOffset);
                if (killed && st.offset > lastOffset && st.offset < size)
                    ++killedMidway;
                lastOffset = st.offset;
                if (!killed || st.offset == size)
                    break;
            }
            QProcess *finish = startIngest(db, dir, this);
            QVERIFY(finish->waitForFinished(120'000));
            QCOMPARE(finish->exitCode(), 0);
            auto store = TrackingStore::open(db, TrackingStore::Mode::ReadOnly);
            const auto run = store->findRun(QStringLiteral("run"));
            QVERIFY(run);
            const IngestState st = store->ingestState(run->id, QStringLiteral("events.jsonl"));
            QCOMPARE(st.offset, size);
            QCOMPARE(st.lines, qint64(steps + 1));  // a duplicated batch would count its lines twice
            QCOMPARE(st.malformed, 0);
            QCOMPARE(store->pointCount(run->id), qint64(steps) * keys);
            QCOMPARE(store->queryRuns({}).size(), 1);
            for (int k = 0; k < keys; k += 3) {
                const auto pts = store->allPoints(run->id, QStringLiteral("m%1").arg(k));
                QCOMPARE(pts.size(), std::size_t(steps));
                for (int s = 0; s < steps; s += 997) {
                    QCOMPARE(pts[std::size_t(s)].step, s);
                    QCOMPARE(pts[std::size_t(s)].value, s * 0.001 + k);
                }
            }
        }
        qInfo("%d kills, %d of them after partial progress (one ingest: %d ms)", kills, killedMidway, fullMs);
        QVERIFY(kills >= 12);
        QVERIFY2(killedMidway >= 5, "too few kills landed mid-ingest; the test did not exercise crashes");
    }

    void twoWritersAndAReaderNeverCollide()
    {
        const int steps = 20'000, keys = 8;
        const QString db = m_dir.filePath(QStringLiteral("concurrent.sqlite"));
        QStringList dirs;
        for (int i = 0; i < 4; ++i) {
            dirs.push_back(m_dir.filePath(QStringLiteral("concurrent/r%1").arg(i)));
            QVERIFY(writeRunDirectory(dirs.back(), steps, keys) > 0);
        }
        TrackingStore::open(db);  // schema first, so the reader below has tables to read

        // A reader (the GUI's role) queries in a loop while two processes write.
        std::atomic<bool> stop{false};
        std::atomic<int> reads{0};
        QString readerError;
        std::thread reader([&] {
            try {
                auto store = TrackingStore::open(db, TrackingStore::Mode::ReadOnly);
                while (!stop.load()) {
                    for (const RunRow &r : store->queryRuns({})) {
                        const auto h = store->history(r.run.id, QStringLiteral("m0"), {.buckets = 100});
                        if (h.pointsInRange > steps)
                            throw std::runtime_error("a reader saw more points than were written");
                    }
                    ++reads;
                }
            } catch (const std::exception &e) {
                readerError = QString::fromUtf8(e.what());
            }
        });
        // Both writers ingest all four run dirs: each run is contended.
        QProcess *a = startIngest(db, m_dir.filePath(QStringLiteral("concurrent")), this);
        QProcess *b = startIngest(db, m_dir.filePath(QStringLiteral("concurrent")), this);
        QVERIFY(a->waitForFinished(180'000));
        QVERIFY(b->waitForFinished(180'000));
        stop = true;
        reader.join();
        const QString errA = QString::fromUtf8(a->readAllStandardError());
        const QString errB = QString::fromUtf8(b->readAllStandardError());
        QVERIFY2(a->exitCode() == 0, qPrintable(errA));
        QVERIFY2(b->exitCode() == 0, qPrintable(errB));
        QVERIFY(!errA.contains(QStringLiteral("locked")) && !errB.contains(QStringLiteral("locked")));
        QVERIFY2(readerError.isEmpty(), qPrintable(readerError));
        QVERIFY(reads.load() > 0);

        auto store = TrackingStore::open(db, TrackingStore::Mode::ReadOnly);
        const QList<RunRow> runs = store->queryRuns({});
        QCOMPARE(runs.size(), 4);  // one run per dir, though two processes met each first
        for (const RunRow &r : runs) {
            QCOMPARE(store->pointCount(r.run.id), qint64(steps) * keys);
            QCOMPARE(store->ingestState(r.run.id, QStringLiteral("events.jsonl")).lines, qint64(steps + 1));
        }
    }
};

ORRERY_TEST_MAIN(TestStoreProcesses, QCoreApplication)
#include "tst_store_processes.moc"
