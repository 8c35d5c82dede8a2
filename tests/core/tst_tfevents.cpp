// SPDX-License-Identifier: GPL-3.0-or-later
// TensorBoard event files (tfevents.h) and the files of a run found by listing (runfiles.h): the
// protobuf wire reader and CRC-32C they stand on, files written by the real writers
// (torch.utils.tensorboard and tensorboardX from the repo's .venv, tests/data/tb_write.py),
// every cut of a file mid-record, corrupt CRCs, an unknown plugin, and the ingest into a store;
// W&B offline runs written by the real wandb package (tests/data/wandb_offline.py), read by
// `runs ingest` with TensorBoard log directories.
#include "testsupport.h"

#include "orrery/core/executor.h"
#include "orrery/core/protowire.h"
#include "orrery/core/runfiles.h"
#include "orrery/core/store.h"
#include "orrery/core/sweepspec.h"
#include "orrery/core/tfevents.h"
#include "orrery/core/wandbrun.h"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#if ORRERY_TEST_MEDIA
#include "clipdecoder.h"
#endif

using namespace orrery::core;

namespace {

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The one event file under `dir`.
QString eventFileIn(const QString &dir)
{
    QDirIterator it(dir, {QStringLiteral("*tfevents*")}, QDir::Files, QDirIterator::Subdirectories);
    return it.hasNext() ? it.next() : QString();
}

QByteArray varint(quint64 v)
{
    QByteArray out;
    do {
        char b = char(v & 0x7f);
        v >>= 7;
        if (v)
            b = char(b | 0x80);
        out += b;
    } while (v);
    return out;
}
QByteArray bytesField(int number, const QByteArray &payload)
{
    return varint(quint64(number) << 3 | 2) + varint(quint64(payload.size())) + payload;
}

// An Event at `step` whose summary holds one value: a float tensor under `plugin`.
QByteArray tensorEvent(qint64 step, const QByteArray &tag, const QByteArray &plugin, float value)
{
    QByteArray tensor = varint(1 << 3) + varint(1);  // dtype DT_FLOAT
    QByteArray f(4, 0);
    std::memcpy(f.data(), &value, 4);
    tensor += varint(5 << 3 | 5) + f;  // float_val
    const QByteArray meta = bytesField(1, bytesField(1, plugin));
    const QByteArray value_ = bytesField(1, tag) + bytesField(8, tensor) + bytesField(9, meta);
    return varint(2 << 3) + varint(quint64(step)) + bytesField(5, bytesField(1, value_));
}

QMap<QString, QList<std::pair<qint64, double>>> series(const QList<std::pair<QString, MetricPoint>> &points)
{
    QMap<QString, QList<std::pair<qint64, double>>> out;
    for (const auto &[tag, p] : points)
        out[tag].append({p.step, p.value});
    return out;
}

}  // namespace

class TestTfEvents : public QObject {
    Q_OBJECT

    QTemporaryDir m_written;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFileInfo(orrery::test::venvPython()).isExecutable(),
                 qPrintable(orrery::test::venvPython() +
                            QStringLiteral(" is missing: scripts/setup makes the .venv")));
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(orrery::test::venvPython(),
                {qEnvironmentVariable("ORRERY_SOURCE_DIR") + QStringLiteral("/tests/data/tb_write.py"),
                 m_written.path()});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAll().constData());
        QVERIFY(!eventFileIn(m_written.filePath(QStringLiteral("torch"))).isEmpty());
        QVERIFY(!eventFileIn(m_written.filePath(QStringLiteral("tbx"))).isEmpty());
    }

    // --- the wire format -----------------------------------------------------------------------
    void varints_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<quint64>("value");
        QTest::newRow("one-byte") << QByteArray("\x01", 1) << true << quint64(1);
        QTest::newRow("zero") << QByteArray("\x00", 1) << true << quint64(0);
        QTest::newRow("three-hundred") << QByteArray("\xac\x02") << true << quint64(300);
        QTest::newRow("max") << QByteArray(9, '\xff') + '\x01' << true << ~quint64(0);
        QTest::newRow("negative-int64") << varint(quint64(-2)) << true << quint64(-2);
        QTest::newRow("truncated") << QByteArray("\x80") << false << quint64(0);
        QTest::newRow("empty") << QByteArray() << false << quint64(0);
        QTest::newRow("eleven-bytes") << QByteArray(10, '\x80') + '\x01' << false << quint64(0);
    }
    void varints()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(bool, ok);
        QFETCH(quint64, value);
        qsizetype at = 0;
        std::uint64_t v = 0;
        QCOMPARE(proto::readVarint(bytes, &at, &v), ok);
        if (ok) {
            QCOMPARE(quint64(v), value);
            QCOMPARE(at, bytes.size());
        }
    }

    void readerWalksEveryWireType()
    {
        QByteArray m = QByteArray("\x08\x96\x01", 3);  // 1: varint 150
        m += bytesField(2, "testing");
        m += QByteArray("\x1d", 1) + QByteArray("\x00\x00\x80\x3f", 4);  // 3: fixed32 1.0f
        m += QByteArray("\x21", 1) + QByteArray("\x00\x00\x00\x00\x00\x00\x04\x40", 8);  // 4: fixed64 2.5
        proto::Reader r(m);
        proto::Field f;
        QVERIFY(r.next(f));
        QCOMPARE(f.number, 1u);
        QCOMPARE(f.varint, 150u);
        QVERIFY(r.next(f));
        QCOMPARE(f.bytes, QByteArrayView("testing"));
        QVERIFY(r.next(f));
        QCOMPARE(f.asFloat(), 1.0f);
        QVERIFY(r.next(f));
        QCOMPARE(f.asDouble(), 2.5);
        QVERIFY(!r.next(f));
        QVERIFY(!r.malformed());
    }

    void readerRefusesTruncatedFields_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::newRow("bytes-past-the-end") << QByteArray("\x12\x05"
                                                          "abc");
        QTest::newRow("fixed64-cut") << QByteArray("\x21\x00\x00", 3);
        QTest::newRow("fixed32-cut") << QByteArray("\x1d\x00", 2);
        QTest::newRow("group") << QByteArray("\x0b", 1);
        QTest::newRow("wire-type-7") << QByteArray("\x0f", 1);
        QTest::newRow("field-zero") << QByteArray("\x00\x01", 2);
    }
    void readerRefusesTruncatedFields()
    {
        QFETCH(QByteArray, bytes);
        proto::Reader r(bytes);
        proto::Field f;
        while (r.next(f)) { }
        QVERIFY(r.malformed());
    }

    void crc32cKnownAnswers()
    {
        QCOMPARE(proto::crc32c("123456789"), 0xe3069283u);  // RFC 3720's check value
        QCOMPARE(proto::crc32c(""), 0u);
        QCOMPARE(proto::crc32c(QByteArray(32, '\0')), 0x8a9136aau);  // RFC 3720 B.4
        // Continuing a CRC over a split equals the CRC of the whole.
        const QByteArray text = "The quick brown fox jumps over the lazy dog, twice over.";
        QCOMPARE(proto::crc32c(text.mid(13), proto::crc32c(text.left(13))), proto::crc32c(text));
        QCOMPARE(proto::crc32ieee("123456789"), 0xcbf43926u);  // zlib's crc32
        QCOMPARE(proto::crc32ieee(text.mid(7), proto::crc32ieee(text.left(7))), proto::crc32ieee(text));
    }

    // --- files of the real writers --------------------------------------------------------------
    void torchWriter()
    {
        const QByteArray file = readAll(eventFileIn(m_written.filePath(QStringLiteral("torch"))));
        const TfEventsChunk c = parseTfEvents(file);
        QCOMPARE(c.consumed, file.size());
        QVERIFY2(c.problems.isEmpty(), qPrintable(c.problems.keys().join(QLatin1Char(','))));
        const auto s = series(c.points);
        QCOMPARE(s.value(QStringLiteral("train/loss")).size(), 10);
        for (const auto &[step, value] : s.value(QStringLiteral("train/loss")))
            QCOMPARE(float(value), float(1.0 / double(step + 1)));
        // add_scalar(new_style=True): a tensor under the "scalars" plugin, float and double.
        QCOMPARE(s.value(QStringLiteral("new/loss")).size(), 5);
        QCOMPARE(float(s.value(QStringLiteral("new/loss"))[3].second), 0.3f);
        QCOMPARE(s.value(QStringLiteral("new/double")),
                 (QList<std::pair<qint64, double>>{{0, 0.5}, {1, 1.5}, {2, 2.5}}));
        for (const auto &[tag, p] : c.points)
            QVERIFY(p.timeMs > 1'600'000'000'000);
        QCOMPARE(c.media.size(), 2);
        QCOMPARE(c.media[0].tag, QStringLiteral("sample/img"));
        QCOMPARE(c.media[0].kind, QStringLiteral("image"));
        QCOMPARE(c.media[0].step, 5);
        QVERIFY(c.media[0].data.startsWith("\x89PNG"));
        QCOMPARE(c.media[1].tag, QStringLiteral("sample/video"));
        QCOMPARE(c.media[1].kind, QStringLiteral("video"));
        QCOMPARE(c.media[1].extension, QStringLiteral("gif"));
        QCOMPARE(c.media[1].step, 7);
        QVERIFY(c.media[1].data.startsWith("GIF8"));
        QCOMPARE(c.ignored.value(QStringLiteral("histogram")), 1);
    }

    void tensorboardXWriter()
    {
        const QByteArray file = readAll(eventFileIn(m_written.filePath(QStringLiteral("tbx"))));
        const TfEventsChunk c = parseTfEvents(file);
        QCOMPARE(c.consumed, file.size());
        QVERIFY2(c.problems.isEmpty(), qPrintable(c.problems.keys().join(QLatin1Char(','))));
        const auto s = series(c.points);
        QCOMPARE(s.keys(), QStringList{QStringLiteral("train/loss")});
        QCOMPARE(s.value(QStringLiteral("train/loss")).size(), 10);
        QCOMPARE(s.value(QStringLiteral("train/loss"))[9], (std::pair<qint64, double>{9, 18.0}));
        QCOMPARE(c.media.size(), 2);
        QCOMPARE(c.media[0].kind, QStringLiteral("image"));
        QCOMPARE(c.media[1].kind, QStringLiteral("video"));
        QCOMPARE(c.media[1].step, 4);
        QCOMPARE(c.ignored.value(QStringLiteral("text")), 1);
    }

    // A file cut anywhere: nothing past the last whole record is read, and reading on from
    // `consumed` with the rest gives exactly what the whole file gives.
    void everyCutMidRecordWaitsForTheRest()
    {
        const QByteArray file = readAll(eventFileIn(m_written.filePath(QStringLiteral("torch"))));
        const TfEventsChunk whole = parseTfEvents(file);
        for (qsizetype cut = 0; cut <= file.size(); ++cut) {
            const TfEventsChunk head = parseTfEvents(QByteArrayView(file).first(cut));
            QVERIFY(head.consumed <= cut);
            QVERIFY2(head.problems.isEmpty(), qPrintable(QString::number(cut)));
            if (head.consumed < cut)
                QVERIFY(head.needBytes > cut - head.consumed || cut - head.consumed < 12);
            const TfEventsChunk tail = parseTfEvents(QByteArrayView(file).sliced(head.consumed));
            QCOMPARE(head.consumed + tail.consumed, file.size());
            QCOMPARE(head.points + tail.points, whole.points);
            QCOMPARE(head.media.size() + tail.media.size(), whole.media.size());
        }
    }

    void corruptDataCrcSkipsOneRecord()
    {
        const QByteArray file = readAll(eventFileIn(m_written.filePath(QStringLiteral("tbx"))));
        const TfEventsChunk whole = parseTfEvents(file);
        // The second record's payload (a scalar) gets one byte flipped.
        QByteArray bad = file;
        const qint64 first = qint64(proto::readLe64(file, 0)) + 16;
        bad[first + 12 + 2] = char(bad[first + 12 + 2] ^ 0x40);
        const TfEventsChunk c = parseTfEvents(bad);
        QCOMPARE(c.consumed, bad.size());
        QCOMPARE(c.records, whole.records);
        QCOMPARE(c.problems.value(QStringLiteral("corrupt record (data CRC)")), 1);
        QCOMPARE(c.points.size(), whole.points.size() - 1);
        QCOMPARE(c.media.size(), whole.media.size());
    }

    void corruptLengthFindsTheNextRecord()
    {
        const QByteArray file = readAll(eventFileIn(m_written.filePath(QStringLiteral("tbx"))));
        const TfEventsChunk whole = parseTfEvents(file);
        QByteArray bad = file;
        const qint64 first = qint64(proto::readLe64(file, 0)) + 16;
        bad[first] = char(bad[first] ^ 0x01);  // the second record's length
        const TfEventsChunk c = parseTfEvents(bad);
        QCOMPARE(c.consumed, bad.size());
        QVERIFY(c.problems.value(QStringLiteral("corrupt record header (bytes skipped)")) > 0);
        QCOMPARE(c.points.size(), whole.points.size() - 1);  // only the broken record is lost
        QCOMPARE(c.media.size(), whole.media.size());
    }

    void unknownPluginIsAProblemScalarsPluginIsNot()
    {
        const QByteArray data = QByteArray() + tfRecord(tensorEvent(3, "a", "scalars", 1.5f)) +
            tfRecord(tensorEvent(4, "b", "mystery_plugin", 2.0f)) + tfRecord(tensorEvent(5, "a", "", 2.5f));
        const TfEventsChunk c = parseTfEvents(data);
        QCOMPARE(c.consumed, data.size());
        QCOMPARE(c.points.size(), 2);
        QCOMPARE(c.points[1].second, (MetricPoint{5, 0, 2.5}));
        QCOMPARE(c.problems.value(QStringLiteral("unknown plugin 'mystery_plugin'")), 1);
    }

#if ORRERY_TEST_MEDIA
    // The Video tab's decoder (app/media) plays add_video's animated GIF, frame by frame.
    void theVideoTabDecodesAddVideosGif()
    {
        const TfEventsChunk c =
            parseTfEvents(readAll(eventFileIn(m_written.filePath(QStringLiteral("torch")))));
        QCOMPARE(c.media.size(), 2);
        QTemporaryDir dir;
        const QString gif = dir.filePath(QStringLiteral("step-7.gif"));
        QFile f(gif);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(c.media[1].data);
        f.close();
        auto clip = orrery::media::ClipDecoder::open(gif);
        QCOMPARE(clip->info().frameCount, 3);
        QCOMPARE(clip->info().width, 8);
        QCOMPARE(clip->frame(2).size(), QSize(8, 8));
    }
#endif

    // --- the store -----------------------------------------------------------------------------
    void ingestIntoTheStoreInPieces()
    {
        QTemporaryDir dir;
        qputenv("ORRERY_CACHE_DIR", dir.filePath(QStringLiteral("cache")).toUtf8());
        auto store = TrackingStore::open(dir.filePath(QStringLiteral("s.sqlite")));
        const RunId run =
            store->createRun(store->ensureExperiment(QStringLiteral("tb")), QStringLiteral("r"));
        const QByteArray file = readAll(eventFileIn(m_written.filePath(QStringLiteral("torch"))));
        const QString media = tensorboardMediaDir(store->run(run)->uuid);
        // Three reads, the first two ending mid-record.
        qint64 offset = 0;
        for (const qsizetype end : {qsizetype(100), file.size() / 2, file.size()}) {
            const TfIngest r = ingestTfEventsChunk(*store, run, QStringLiteral("tb/ev.tfevents"), offset,
                                                   QByteArrayView(file).first(end).sliced(offset), media);
            QVERIFY(r.applied);
            offset += r.consumed;
            QCOMPARE(store->ingestState(run, QStringLiteral("tb/ev.tfevents")).offset, offset);
        }
        QCOMPARE(offset, file.size());
        // Reading from a stale offset applies nothing.
        QVERIFY(!ingestTfEventsChunk(*store, run, QStringLiteral("tb/ev.tfevents"), 0, file, media).applied);
        QCOMPARE(store->allPoints(run, QStringLiteral("train/loss")).size(), size_t(10));
        QCOMPARE(store->allPoints(run, QStringLiteral("new/loss")).size(), size_t(5));
        const QList<Artifact> videos = store->samples(run, QStringLiteral("video"));
        QCOMPARE(videos.size(), 1);
        QCOMPARE(videos[0].step, 7);
        QCOMPARE(videos[0].path, QStringLiteral("tensorboard/sample_video/step-7.gif"));
        QVERIFY(readAll(videos[0].localPath).startsWith("GIF8"));
        QCOMPARE(QFileInfo(videos[0].localPath).size(), videos[0].size);
        QCOMPARE(store->samples(run, QStringLiteral("image")).size(), 1);
        QVERIFY(!store->details(run).tags.contains(QLatin1String(kTensorBoardWarningTag)));

        // A corrupt record: skipped, one warning tag, nothing else lost; a second one keeps the first
        // warning.
        QByteArray bad = tfRecord(tensorEvent(20, "train/loss", "scalars", 0.25f));
        bad[14] = char(bad[14] ^ 0x10);
        bad += tfRecord(tensorEvent(21, "train/loss", "scalars", 0.125f));
        const TfIngest r = ingestTfEventsChunk(*store, run, QStringLiteral("tb/ev.tfevents"), offset,
                                               QByteArray(bad + bad), media);
        QCOMPARE(r.consumed, 2 * bad.size());
        QCOMPARE(store->allPoints(run, QStringLiteral("train/loss")).size(), size_t(11));
        const QString warning = store->details(run).tags.value(QLatin1String(kTensorBoardWarningTag));
        QVERIFY2(warning.contains(QStringLiteral("2 × corrupt record (data CRC)")), qPrintable(warning));
        ingestTfEventsChunk(*store, run, QStringLiteral("tb/ev.tfevents"), offset + r.consumed, bad, media);
        QCOMPARE(store->details(run).tags.value(QLatin1String(kTensorBoardWarningTag)), warning);
        qunsetenv("ORRERY_CACHE_DIR");
    }

    // --- W&B offline runs ---------------------------------------------------------------------------
    void wandbOfflineRunFromTheRealPackage()
    {
        // Enough steps for the .wandb file to span four 32 KiB blocks with records split across
        // them, few enough that reading it at every cut below stays quick under the sanitizers
        // (2,000 steps made a 700 KB file and 2,100 cuts: 70 s under ASan).
        constexpr int kSteps = 400;
        QTemporaryDir dir;
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(orrery::test::venvPython(),
                {qEnvironmentVariable("ORRERY_SOURCE_DIR") + QStringLiteral("/tests/data/wandb_offline.py"),
                 dir.path(), QString::number(kSteps)});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAll().constData());
        const QStringList found = findRunDirectories(dir.path());
        QCOMPARE(found.size(), 1);
        QVERIFY(QFileInfo(found[0]).fileName().startsWith(QLatin1String("offline-run-")));
        const QString file = wandbFileIn(found[0]);
        const QByteArray bytes = readAll(file);
        QVERIFY2(bytes.size() > 3 * 32768,
                 qPrintable(QString::number(bytes.size())));  // records cross block boundaries

        const WandbLog log = readWandbLog(bytes, 0);
        QCOMPARE(log.consumed, bytes.size());
        QVERIFY(log.problems.isEmpty());
        WandbRun run;
        for (const QByteArray &r : log.records)
            applyWandbRecord(r, run);
        QVERIFY(run.problems.isEmpty());
        const auto s = series(run.points);
        QCOMPARE(s.value(QStringLiteral("train/loss")).size(), kSteps + 1);
        QCOMPARE(s.value(QStringLiteral("train/loss"))[3], (std::pair<qint64, double>{3, 0.25}));
        QVERIFY(std::isnan(s.value(QStringLiteral("train/loss")).back().second));
        QCOMPARE(s.value(QStringLiteral("acc")).size(), kSteps);
        QCOMPARE(s.value(QStringLiteral("acc"))[kSteps - 1].second, (kSteps - 1) / 1000.0);
        QVERIFY(run.points.front().second.timeMs > 1'600'000'000'000);
        QVERIFY(run.params.contains({QStringLiteral("lr"), QStringLiteral("0.01")}));
        QVERIFY(run.params.contains({QStringLiteral("layers"), QStringLiteral("4")}));
        QVERIFY(run.params.contains({QStringLiteral("opt.name"), QStringLiteral("adam")}));
        QCOMPARE(run.media.size(), 2);
        for (const Artifact &a : run.media) {
            QCOMPARE(a.step, kSteps);
            QVERIFY2(QFileInfo::exists(QDir(found[0]).filePath(a.path)), qPrintable(a.path));
        }
        QCOMPARE(run.media[0].kind, QStringLiteral("image"));
        QCOMPARE(run.media[1].kind, QStringLiteral("video"));
        QVERIFY(run.media[1].path.endsWith(QLatin1String(".gif")));
        QCOMPARE(run.ignored.value(QStringLiteral("histogram")), 1);
        QCOMPARE(run.ignored.value(QStringLiteral("table-file")), 1);
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.summary.contains({QStringLiteral("best"), QStringLiteral("0.125")}));
        QVERIFY(!run.runId.isEmpty());
        QCOMPARE(run.project, QStringLiteral("orrery-test"));

        // Cut anywhere: whole records only, and reading on from `consumed` gives the rest.
        for (qsizetype cut = 0; cut <= bytes.size(); cut += 331) {
            const WandbLog head = readWandbLog(QByteArrayView(bytes).first(cut), 0);
            QVERIFY(head.problems.isEmpty());
            const WandbLog tail = readWandbLog(QByteArrayView(bytes).sliced(head.consumed), head.consumed);
            QVERIFY2(tail.problems.isEmpty(), qPrintable(QString::number(cut)));
            QCOMPARE(head.consumed + tail.consumed, bytes.size());
            QCOMPARE(head.records.size() + tail.records.size(), log.records.size());
        }
        // A corrupt byte loses at most what LevelDB's log format loses: records of its 32 KB block
        // (one whose CRC fails; where the byte is a length, the rest of the block), nothing
        // before the block or after it. (Where the byte lands depends on the run's random id.)
        QByteArray bad = bytes;
        const qsizetype at = bytes.size() / 2;
        bad[at] = char(bad[at] ^ 0x20);
        const WandbLog damaged = readWandbLog(bad, 0);
        QVERIFY(!damaged.problems.isEmpty());
        QCOMPARE(damaged.consumed, bad.size());
        constexpr qsizetype kBlock = 32768;
        const qsizetype blockStart = at / kBlock * kBlock, nextBlock = blockStart + kBlock;
        const WandbLog before = readWandbLog(QByteArrayView(bytes).first(blockStart), 0);
        QCOMPARE(damaged.records.mid(0, before.records.size()), before.records);
        if (nextBlock < bytes.size()) {
            const WandbLog after = readWandbLog(QByteArrayView(bytes).sliced(nextBlock), nextBlock);
            QVERIFY(!after.records.isEmpty());
            QCOMPARE(damaged.records.mid(damaged.records.size() - after.records.size()), after.records);
        }
        QVERIFY(damaged.records.size() < log.records.size());

        // `runs ingest` of the directory: points, params, tags, samples, the run's end.
        QTemporaryDir dbDir;
        auto store = TrackingStore::open(dbDir.filePath(QStringLiteral("s.sqlite")));
        const auto r = store->ingestRunDirectory(found[0], QStringLiteral("wandb"));
        QCOMPARE(r.filePoints, 2 * kSteps + 1);
        QCOMPARE(r.media, 2);
        QVERIFY(r.exited);
        const RunDetails d = store->details(r.run);
        QCOMPARE(d.params.value(QStringLiteral("opt.name")), QStringLiteral("adam"));
        QCOMPARE(d.tags.value(QStringLiteral("wandb.summary.best")), QStringLiteral("0.125"));
        QCOMPARE(d.tags.value(QStringLiteral("orrery.wandb.ignored")),
                 QStringLiteral("1 × histogram, 1 × table-file"));
        QVERIFY(d.run.status == RunStatus::Finished);
        // Its own start and end: W&B's start_time, plus its runtime.
        QCOMPARE(d.run.startTimeMs, run.startMs);
        QVERIFY(d.run.endTimeMs >= d.run.startTimeMs && d.run.endTimeMs - d.run.startTimeMs < 600'000);
        QCOMPARE(store->samples(r.run, QStringLiteral("video")).size(), 1);
        QVERIFY(QFileInfo::exists(store->samples(r.run, QStringLiteral("video"))[0].remotePath));
        // Again: nothing new.
        QCOMPARE(store->ingestRunDirectory(found[0], QStringLiteral("wandb")).filePoints, 0);
        QCOMPARE(store->allPoints(r.run, QStringLiteral("train/loss")).size(), size_t(kSteps + 1));
    }

    void tensorboardLogDirectoriesAreRuns()
    {
        QTemporaryDir dbDir;
        qputenv("ORRERY_CACHE_DIR", dbDir.filePath(QStringLiteral("cache")).toUtf8());
        const QStringList found = findRunDirectories(m_written.path());
        QCOMPARE(found,
                 (QStringList{m_written.filePath(QStringLiteral("tbx")),
                              m_written.filePath(QStringLiteral("torch"))}));
        auto store = TrackingStore::open(dbDir.filePath(QStringLiteral("s.sqlite")));
        const auto r = store->ingestRunDirectory(found[1], QStringLiteral("tb"));
        QCOMPARE(r.filePoints, 18);  // train/loss 10, new/loss 5, new/double 3
        QCOMPARE(r.media, 2);
        QCOMPARE(store->ingestRunDirectory(found[1], QStringLiteral("tb")).filePoints, 0);
        qunsetenv("ORRERY_CACHE_DIR");
    }

    // --- the spec's `tensorboard` and `artifacts` ------------------------------------------------
    void specRunFiles_data()
    {
        QTest::addColumn<QByteArray>("extra");
        QTest::addColumn<QString>("error");  // empty: accepted
        QTest::newRow("both") << QByteArray("tensorboard: {dir: tb}\nartifacts:\n  - {glob: 'samples/*.mp4', "
                                            "step_regex: 'step_(\\d+)'}\n  - {glob: '*.png'}\n")
                              << QString();
        QTest::newRow("tensorboard-unknown-key")
            << QByteArray("tensorboard: {logdir: tb}\n") << QStringLiteral("logdir");
        QTest::newRow("artifacts-not-a-list")
            << QByteArray("artifacts: {glob: x}\n") << QStringLiteral("expected a list");
        QTest::newRow("artifacts-no-glob")
            << QByteArray("artifacts: [{step_regex: 'step_(\\d+)'}]\n") << QStringLiteral("needs a `glob`");
        QTest::newRow("step-regex-without-group")
            << QByteArray("artifacts: [{glob: '*.mp4', step_regex: 'step_\\d+'}]\n")
            << QStringLiteral("capture group");
        QTest::newRow("step-regex-invalid")
            << QByteArray("artifacts: [{glob: '*.mp4', step_regex: 'step_(\\d+'}]\n")
            << QStringLiteral("capture group");
    }
    void specRunFiles()
    {
        QFETCH(QByteArray, extra);
        QFETCH(QString, error);
        const auto schema = TrainerSchema::fromJson(readAll(
            qEnvironmentVariable("ORRERY_SOURCE_DIR") + QStringLiteral("/tests/data/trainer-schema.json")));
        QVERIFY2(schema, qPrintable(schema.problem()));
        const QByteArray yaml = "name: s\ncommand: [python, train.py, --lr, '{{lr}}']\nmethod: grid\n"
                                "parameters:\n  lr: {values: [0.1]}\n" +
            extra;
        const SpecParse p = parseSweepSpec(yaml, QStringLiteral("s.yaml"), *schema);
        if (error.isEmpty()) {
            QVERIFY2(p.errors.isEmpty(), qPrintable(p.errors.value(0).toString()));
            QCOMPARE(p.spec->command->tensorboardDir, QStringLiteral("tb"));
            QCOMPARE(p.spec->command->artifacts.size(), 2);
            QCOMPARE(p.spec->command->artifacts[0].glob, QStringLiteral("samples/*.mp4"));
            QCOMPARE(p.spec->command->artifacts[0].stepRegex, QStringLiteral("step_(\\d+)"));
            QCOMPARE(p.spec->command->artifacts[0].line, 8);
            return;
        }
        QVERIFY(!p.spec);
        QVERIFY2(!p.errors.isEmpty() && p.errors[0].message.contains(error),
                 qPrintable(p.errors.value(0).toString()));
    }
    void specRunFilesNeedACommand()
    {
        const auto schema = TrainerSchema::fromJson(readAll(
            qEnvironmentVariable("ORRERY_SOURCE_DIR") + QStringLiteral("/tests/data/trainer-schema.json")));
        QVERIFY(schema);
        const SpecParse p = parseSweepSpec("name: s\nmethod: grid\nparameters:\n  seed: {values: [1]}\n"
                                           "artifacts: [{glob: '*.mp4'}]\n",
                                           QStringLiteral("s.yaml"), *schema);
        QVERIFY(!p.errors.isEmpty());
        QVERIFY2(p.errors[0].message.contains(QStringLiteral("goes with a `command`")),
                 qPrintable(p.errors[0].toString()));
    }

    // --- listings and sample rules ----------------------------------------------------------------
    void listingFindsEventFilesAndSamples()
    {
        QTemporaryDir dir;
        const QDir d(dir.path());
        for (const char *f :
             {"tb/events.out.tfevents.1.host", "samples/step_100.mp4", "samples/step_20.mp4",
              "samples/sheet_20.png", "samples/deep/step_5.mp4", "a/b/c/d/e/f/g/h/i/deep.tfevents"}) {
            QVERIFY(d.mkpath(QFileInfo(d.filePath(QString::fromUtf8(f))).path()));
            QFile file(d.filePath(QString::fromUtf8(f)));
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("12345");
        }
        QVERIFY(QFile::link(d.filePath(QStringLiteral("tb")), d.filePath(QStringLiteral("loop"))));
        const FileChunk listing = listDirectory(dir.path());
        QVERIFY(listing.exists);
        QStringList paths;
        for (const FileEntry &e : listing.entries)
            paths << e.path;
        // Sorted, symbolic links not followed, at most 8 levels down.
        QCOMPARE(
            paths,
            (QStringList{QStringLiteral("samples/deep/step_5.mp4"), QStringLiteral("samples/sheet_20.png"),
                         QStringLiteral("samples/step_100.mp4"), QStringLiteral("samples/step_20.mp4"),
                         QStringLiteral("tb/events.out.tfevents.1.host")}));
        QCOMPARE(listing.entries[0].size, 5);
        QCOMPARE(tfEventsFiles(listing.entries, dir.path(), dir.path()),
                 QStringList{QStringLiteral("tb/events.out.tfevents.1.host")});
        QCOMPARE(tfEventsFiles(listDirectory(d.filePath(QStringLiteral("tb"))).entries,
                               d.filePath(QStringLiteral("tb")), dir.path()),
                 QStringList{QStringLiteral("tb/events.out.tfevents.1.host")});
        QVERIFY(!listDirectory(d.filePath(QStringLiteral("missing"))).exists);

        const QList<Artifact> a =
            matchArtifacts({{QStringLiteral("samples/*.mp4"), QStringLiteral("step_(\\d+)"), 1},
                            {QStringLiteral("samples/*.png"), {}, 2}},
                           listing.entries, dir.path());
        QCOMPARE(a.size(), 3);  // `*` stays within one directory: deep/ is not matched
        QCOMPARE(a[0].path, QStringLiteral("samples/sheet_20.png"));
        QCOMPARE(a[0].kind, QStringLiteral("image"));
        QCOMPARE(a[0].step, -1);
        QCOMPARE(a[1].path, QStringLiteral("samples/step_100.mp4"));
        QCOMPARE(a[1].kind, QStringLiteral("video"));
        QCOMPARE(a[1].step, 100);
        QCOMPARE(a[1].remotePath, d.filePath(QStringLiteral("samples/step_100.mp4")));
        QCOMPARE(a[1].size, 5);
        QCOMPARE(a[2].step, 20);
    }
};

ORRERY_TEST_MAIN(TestTfEvents, QCoreApplication)
#include "tst_tfevents.moc"
