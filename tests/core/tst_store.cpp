// SPDX-License-Identifier: GPL-3.0-or-later
// The tracking store against real SQLite files: schema and migrations, params/tags/metrics,
// queries, histories with spike-keeping downsampling, and events.jsonl ingest edge cases.
#include "testsupport.h"

#include "orrery/core/events.h"
#include "orrery/core/goodput.h"
#include "orrery/core/historycache.h"
#include "orrery/core/metricseries.h"
#include "orrery/core/runfiles.h"
#include "orrery/core/store.h"
#include "orrery/core/sweeprunner.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSysInfo>
#include <QTemporaryDir>

#include <sqlite3.h>

#include <cmath>
#include <csignal>
#include <limits>
#include <thread>

using namespace orrery::core;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

QByteArray metricsLine(qint64 step, const QList<std::pair<QByteArray, QByteArray>> &values,
                       double t = 1700000000.0)
{
    QByteArray line = "{\"v\":1,\"t\":" + QByteArray::number(t + double(step), 'f', 3) +
        ",\"kind\":\"metrics\",\"step\":" + QByteArray::number(step) + ",\"values\":{";
    for (qsizetype i = 0; i < values.size(); ++i)
        line += (i ? "," : "") + ("\"" + values[i].first + "\":" + values[i].second);
    return line + "}}\n";
}

// Runs the SQL script of a fixture file through SQLite itself.
void loadSqlFixture(const QString &sqlPath, const QString &dbPath)
{
    QFile f(sqlPath);
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(sqlPath));
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(dbPath.toUtf8().constData(), &db), SQLITE_OK);
    char *error = nullptr;
    const int rc = sqlite3_exec(db, f.readAll().constData(), nullptr, nullptr, &error);
    const QString message = QString::fromUtf8(error ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
    QVERIFY2(rc == SQLITE_OK, qPrintable(message));
}

}  // namespace

class TestStore : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    int m_count = 0;
    QString freshPath() { return m_dir.filePath(QStringLiteral("db%1.sqlite").arg(++m_count)); }

private Q_SLOTS:
    // --- metric series, pure functions --------------------------------------------------------
    void chunkRoundTripKeepsNaNInfAndExtremes()
    {
        const std::vector<MetricPoint> points{
            {0, 1700000000000, 1.5},
            {1, 1700000000100, kNaN},
            {2, 1700000000200, kInf},
            {10, 1700000000150, -kInf},
            {11, 0, -0.0},
            {std::numeric_limits<std::int64_t>::max(), -5, 1e308},
        };
        const std::string bytes = encodeChunk(points);
        std::vector<MetricPoint> back;
        QVERIFY(decodeChunk(bytes, back));
        QCOMPARE(back.size(), points.size());
        for (std::size_t i = 0; i < points.size(); ++i) {
            QCOMPARE(back[i].step, points[i].step);
            QCOMPARE(back[i].timeMs, points[i].timeMs);
            QVERIFY(std::memcmp(&back[i].value, &points[i].value, 8) == 0);  // bit-exact, NaN included
        }
    }

    void corruptChunkIsRejected()
    {
        std::string bytes = encodeChunk(std::vector<MetricPoint>{{1, 2, 3.0}, {2, 3, 4.0}});
        std::vector<MetricPoint> out;
        QVERIFY(!decodeChunk(bytes.substr(0, bytes.size() - 3), out));
        bytes[0] = 'X';
        QVERIFY(!decodeChunk(bytes, out));
        QVERIFY(!decodeChunk({}, out));
        QVERIFY(!decodeChunk(std::string("P\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12), out));
    }

    void mergeReplacesRelLoggedSteps()
    {
        std::vector<MetricPoint> series{{1, 0, 1}, {2, 0, 2}, {3, 0, 3}};
        mergeSeries(series, {{2, 5, 20}, {5, 5, 50}, {2, 6, 21}, {0, 5, 0}});
        const std::vector<MetricPoint> expected{{0, 5, 0}, {1, 0, 1}, {2, 6, 21}, {3, 0, 3}, {5, 5, 50}};
        QCOMPARE(series, expected);
    }

    void downsamplingKeepsEverySpike()
    {
        MinMaxBucketer b(0, 999'999, 2000);
        for (qint64 s = 0; s < 1'000'000; ++s) {
            double v = 1.0;
            if (s == 123'457)
                v = 1000.0;  // one spike up
            if (s == 876'543)
                v = -1000.0;  // one spike down
            if (s == 500'000)
                v = kNaN;
            b.add(MetricPoint{s, s, v});
        }
        const auto buckets = b.finish();
        QCOMPARE(buckets.size(), std::size_t(2000));
        const auto points = flatten(buckets);
        QVERIFY(points.size() <= 8000);
        bool up = false, down = false;
        for (const MetricPoint &p : points) {
            up |= p.step == 123'457 && p.value == 1000.0;
            down |= p.step == 876'543 && p.value == -1000.0;
        }
        QVERIFY(up);
        QVERIFY(down);
        for (const HistoryBucket &bucket : buckets) {
            QVERIFY(!std::isnan(bucket.min.value));
            QVERIFY(!std::isnan(bucket.max.value));
        }
        for (std::size_t i = 1; i < points.size(); ++i)
            QVERIFY(points[i - 1].step < points[i].step);
    }

    // --- the event parser ---------------------------------------------------------------------
    void parserReadsEveryKind_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("error");
        QTest::newRow("metrics") << QByteArray(
                                        R"({"v":1,"t":1.5,"kind":"metrics","step":3,"values":{"a":1}})")
                                 << int(EventKind::Metrics) << QString();
        QTest::newRow("fields in any order")
            << QByteArray(R"({"values":{"a":1},"step":3,"kind":"metrics","t":1.5,"v":1,"extra":[1,{"x":2}]})")
            << int(EventKind::Metrics) << QString();
        QTest::newRow("phases")
            << QByteArray(
                   R"({"v":1,"t":9.5,"kind":"phases","step":4,"values":{"process_start":1.25,"train_s":3}})")
            << int(EventKind::Phases) << QString();
        QTest::newRow("unknown kind kept apart") << QByteArray(R"({"v":1,"t":1,"kind":"gradients","x":1})")
                                                 << int(EventKind::Unknown) << QString();
        QTest::newRow("metrics without step")
            << QByteArray(R"({"v":1,"t":1,"kind":"metrics","values":{}})") << int(EventKind::Metrics)
            << QStringLiteral("without \"step\"");
        QTest::newRow("future version")
            << QByteArray(R"({"v":2,"t":1,"kind":"metrics","step":1,"values":{}})") << int(EventKind::Unknown)
            << QStringLiteral("unsupported");
        QTest::newRow("truncated") << QByteArray(R"({"v":1,"t":1,"kind":"metrics","step":1,"values":{"a":)")
                                   << int(EventKind::Unknown) << QStringLiteral("not");
        QTest::newRow("not an object")
            << QByteArray("[1,2,3]") << int(EventKind::Unknown) << QStringLiteral("not a JSON object");
        QTest::newRow("binary garbage")
            << QByteArray("\x00\xff\xfe{", 4) << int(EventKind::Unknown) << QStringLiteral("not");
        QTest::newRow("step beyond int64 (fuzz_events)")
            << QByteArray(R"({"v":1,"t":1,"kind":"metrics","step":87597999191148261672,"values":{}})")
            << int(EventKind::Metrics) << QStringLiteral("is not an integer");
        QTest::newRow("values not an object")
            << QByteArray(R"({"v":1,"t":1,"kind":"metrics","step":1,"values":7})") << int(EventKind::Metrics)
            << QStringLiteral("\"values\" is not an object");
    }

    void parserReadsEveryKind()
    {
        QFETCH(QByteArray, line);
        QFETCH(int, kind);
        QFETCH(QString, error);
        QByteArray padded = line + QByteArray(EventParser::kPadding, ' ');
        EventParser parser;
        Event ev;
        const QString got = QString::fromStdString(parser.parse(
            std::string_view(padded.constData(), std::size_t(line.size())), std::size_t(padded.size()), ev));
        if (error.isEmpty()) {
            QVERIFY2(got.isEmpty(), qPrintable(got));
            QCOMPARE(int(ev.kind), kind);
        } else {
            QVERIFY2(got.contains(error), qPrintable(got));
        }
    }

    void parserReadsNonFiniteValuesAndBadOnes()
    {
        const QByteArray line =
            R"({"v":1,"t":2,"kind":"metrics","step":9,"values":{"n":"nan","p":"inf","m":"-inf","x":"oops","b":true,"ok":0.5}})";
        const QByteArray padded = line + QByteArray(EventParser::kPadding, ' ');
        EventParser parser;
        Event ev;
        QVERIFY(parser
                    .parse(std::string_view(padded.constData(), std::size_t(line.size())),
                           std::size_t(padded.size()), ev)
                    .empty());
        QCOMPARE(ev.values.size(), std::size_t(4));
        QVERIFY(std::isnan(ev.values[0].second));
        QCOMPARE(ev.values[1].second, kInf);
        QCOMPARE(ev.values[2].second, -kInf);
        QCOMPARE(ev.values[3].second, 0.5);
        QCOMPARE(ev.badValues.size(), std::size_t(2));
    }

    // --- the store ----------------------------------------------------------------------------
    // Issue 41: a run's samples in series (media keys) as the writers that made them name them.
    void mediaKeysNameEachSeries_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<qint64>("step");
        QTest::addColumn<QString>("key");
        QTest::newRow("trainer") << QStringLiteral("samples/step-40.mp4") << qint64(40)
                                 << QStringLiteral("samples");
        QTest::newRow("trainer grid")
            << QStringLiteral("samples/step-40.png") << qint64(40) << QStringLiteral("samples (image)");
        QTest::newRow("tensorboard") << QStringLiteral("tensorboard/val_video/step-40.gif") << qint64(40)
                                     << QStringLiteral("val_video");
        QTest::newRow("wandb") << QStringLiteral("files/media/videos/samples_40_3f2a1b9c0d.mp4") << qint64(40)
                               << QStringLiteral("samples");
        QTest::newRow("wandb nested") << QStringLiteral("files/media/videos/val/clip_7_a1b2c3d4.gif")
                                      << qint64(7) << QStringLiteral("val/clip");
        QTest::newRow("mlflow") << QStringLiteral("images/grid%step%40%timestamp%1700000%abc.png")
                                << qint64(40) << QStringLiteral("grid (image)");
        QTest::newRow("padded") << QStringLiteral("out/sample_000040_fixed.mp4") << qint64(40)
                                << QStringLiteral("out/sample_*_fixed");
        QTest::newRow("step zero") << QStringLiteral("samples/step-0.mp4") << qint64(0)
                                   << QStringLiteral("samples");
        QTest::newRow("a number not the step")
            << QStringLiteral("v2/step-40.mp4") << qint64(40) << QStringLiteral("v2");
        QTest::newRow("no step in the name")
            << QStringLiteral("out/final.mp4") << qint64(40) << QStringLiteral("out/final");
    }
    void mediaKeysNameEachSeries()
    {
        QFETCH(QString, path);
        QFETCH(qint64, step);
        QFETCH(QString, key);
        Artifact a;
        a.path = path;
        a.step = step;
        a.kind = sampleKindOf(path);
        QCOMPARE(mediaKey(a), key);
    }
    void mediaKeysAreOrderedForTheVideoTab()
    {
        auto sample = [](const QString &path, qint64 step) {
            Artifact a;
            a.path = path;
            a.step = step;
            a.kind = sampleKindOf(path);
            return a;
        };
        // Two runs with the trainer's mp4s, one also with a TensorBoard GIF and an image series.
        const QList<Artifact> a{sample(QStringLiteral("samples/step-20.mp4"), 20),
                                sample(QStringLiteral("tensorboard/gen/step-20.gif"), 20),
                                sample(QStringLiteral("tensorboard/grid/step-20.png"), 20)};
        const QList<Artifact> b{sample(QStringLiteral("samples/step-20.mp4"), 20),
                                sample(QStringLiteral("samples/step-40.mp4"), 40)};
        QCOMPARE(
            mediaKeys({a, b}),
            (QStringList{QStringLiteral("samples"), QStringLiteral("gen"), QStringLiteral("grid (image)")}));
        QVERIFY(sampleAt(b, 40) && !sampleAt(b, 30));
        QVERIFY(mediaKeys({}).isEmpty());
    }

    void nearestSampleAndSteps_data()
    {
        QTest::addColumn<qint64>("step");
        QTest::addColumn<qint64>("expected");
        QTest::newRow("exact") << qint64(40) << qint64(40);
        QTest::newRow("below the first") << qint64(0) << qint64(20);
        QTest::newRow("past the last") << qint64(999) << qint64(80);
        QTest::newRow("between, nearer the later") << qint64(75) << qint64(80);
        QTest::newRow("a tie takes the earlier") << qint64(60) << qint64(40);
    }
    void nearestSampleAndSteps()
    {
        QFETCH(qint64, step);
        QFETCH(qint64, expected);
        QTemporaryDir dir;
        auto store = TrackingStore::open(dir.filePath(QStringLiteral("s.sqlite")));
        const RunId run = store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("r"));
        for (qint64 s : {80, 20, 40})  // announced out of order
            store->addArtifact(run,
                               {QStringLiteral("samples/step-%1.mp4").arg(s),
                                QStringLiteral("video"),
                                s,
                                QStringLiteral("/r/samples/step-%1.mp4").arg(s),
                                {},
                                -1});
        store->addArtifact(run,
                           {QStringLiteral("samples/step-60.png"), QStringLiteral("image"), 60, {}, {}, -1});
        store->addArtifact(
            run, {QStringLiteral("checkpoints/last.pt"), QStringLiteral("checkpoint"), -1, {}, {}, -1});
        const QList<Artifact> videos = store->samples(run);
        QCOMPARE(videos.size(), 3);
        QCOMPARE(videos.first().step, qint64(20));  // by step
        // The pure function and the store's query agree.
        QCOMPARE(nearestSample(videos, step)->step, expected);
        QCOMPARE(store->sampleNear(run, step)->step, expected);
        QCOMPARE(store->sampleNear(run, step, QStringLiteral("image"))->step, qint64(60));
        QCOMPARE(sampleSteps({videos, store->samples(run, QStringLiteral("image"))}),
                 (QList<qint64>{20, 40, 60, 80}));
        QVERIFY(!nearestSample({}, step));
        // The local copy of a fetched sample; an unknown path is said, not invented.
        QVERIFY(store->setArtifactLocalCopy(run, QStringLiteral("samples/step-40.mp4"),
                                            QStringLiteral("/cache/x.mp4"), 123));
        QVERIFY(
            !store->setArtifactLocalCopy(run, QStringLiteral("samples/nope.mp4"), QStringLiteral("/c"), 1));
        const Artifact copied = *store->sampleNear(run, 40);
        QCOMPARE(copied.localPath, QStringLiteral("/cache/x.mp4"));
        QCOMPARE(copied.size, qint64(123));
        QCOMPARE(store->clusterOf(run), QString());  // no sweep: this machine
    }

    void createsSchemaInWalMode()
    {
        const QString path = m_dir.filePath(QStringLiteral("nested/dir/new.sqlite"));
        auto store = TrackingStore::open(path);
        QCOMPARE(store->schemaVersion(), TrackingStore::currentSchemaVersion());
        QVERIFY(!store->isReadOnly());
        store->ensureExperiment(QStringLiteral("e"));
        QVERIFY(QFile::exists(path + QStringLiteral("-wal")));
    }

    void paramsAreImmutableTagsOverwrite()
    {
        auto store = TrackingStore::open(freshPath());
        const RunId run = store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("r"));
        store->logParams(run, {{QStringLiteral("optim.lr"), QStringLiteral("0.001")}});
        store->logParams(run, {{QStringLiteral("optim.lr"), QStringLiteral("0.001")}});  // same value: fine
        QVERIFY_THROWS_EXCEPTION(
            StoreError, store->logParams(run, {{QStringLiteral("optim.lr"), QStringLiteral("0.1")}}));
        store->setTags(run, {{QStringLiteral("t"), QStringLiteral("1")}});
        store->setTags(run, {{QStringLiteral("t"), QStringLiteral("2")}});
        const RunDetails d = store->details(run);
        QCOMPARE(d.params.value(QStringLiteral("optim.lr")), QStringLiteral("0.001"));
        QCOMPARE(d.tags.value(QStringLiteral("t")), QStringLiteral("2"));
    }

    void metricsKeepNaNAndInfAndLatestIsByStep()
    {
        auto store = TrackingStore::open(freshPath());
        const RunId run = store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("r"));
        const QString k = QStringLiteral("train/loss");
        store->logMetrics(run, {{k, {5, 5000, 0.5}}, {k, {1, 1000, kNaN}}, {k, {3, 3000, kInf}}});
        store->logMetrics(run, {{k, {2, 2000, -2.0}}});  // out of order: merged, not latest
        const auto pts = store->allPoints(run, k);
        QCOMPARE(pts.size(), std::size_t(4));
        QVERIFY(std::isnan(pts[0].value));
        QCOMPARE(pts[1].value, -2.0);
        QCOMPARE(pts[2].value, kInf);
        const RunDetails d = store->details(run);
        QCOMPARE(d.metrics.size(), 1);
        QCOMPARE(d.metrics[0].last.step, 5);
        QCOMPARE(d.metrics[0].last.value, 0.5);
        QCOMPARE(d.metrics[0].min, -2.0);
        QCOMPARE(d.metrics[0].max, kInf);
        QCOMPARE(d.metrics[0].count, 4);
    }

    void resumedRunReplacesRelLoggedSteps()
    {
        auto store = TrackingStore::open(freshPath());
        const RunId run = store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("r"));
        const QString k = QStringLiteral("loss");
        QList<std::pair<QString, MetricPoint>> first, again;
        for (qint64 s = 0; s < 1000; ++s)
            first.push_back({k, {s, s, 1.0}});
        store->logMetrics(run, first);
        for (qint64 s = 600; s < 1200; ++s)  // resumed from the checkpoint at 600
            again.push_back({k, {s, s, 2.0}});
        store->logMetrics(run, again);
        const auto pts = store->allPoints(run, k);
        QCOMPARE(pts.size(), std::size_t(1200));
        QCOMPARE(pts[599].value, 1.0);
        QCOMPARE(pts[600].value, 2.0);
        QCOMPARE(store->pointCount(run), 1200);
    }

    void historyDownsamplesAndZoomsAtFullFidelity()
    {
        auto store = TrackingStore::open(freshPath());
        const RunId run = store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("r"));
        QList<std::pair<QString, MetricPoint>> pts;
        for (qint64 s = 0; s < 100'000; ++s)
            pts.push_back({QStringLiteral("m"), {s, s, s == 77'777 ? 50.0 : std::sin(double(s) / 1000)}});
        store->logMetrics(run, pts);
        const MetricHistory all = store->history(run, QStringLiteral("m"), {.buckets = 500});
        QVERIFY(all.downsampled);
        QCOMPARE(all.pointsInRange, 100'000);
        QVERIFY(all.points.size() <= 2000);
        QVERIFY(std::any_of(all.points.begin(), all.points.end(),
                            [](const MetricPoint &p) { return p.value == 50.0; }));
        const MetricHistory zoom =
            store->history(run, QStringLiteral("m"), {.from = 77'700, .to = 77'899, .buckets = 500});
        QVERIFY(!zoom.downsampled);
        QCOMPARE(zoom.points.size(), std::size_t(200));
        QCOMPARE(zoom.points.front().step, 77'700);
        QCOMPARE(zoom.points[77].value, 50.0);
    }

    // What a zooming chart reads: the pyramid answers wide ranges with the same extremes as
    // decoding every point would, narrow ones come from the store's points, and a series that
    // grew is summarised again.
    void historyCacheKeepsSpikesAndFollowsGrowth()
    {
        auto store = TrackingStore::open(freshPath());
        const RunId run = store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("r"));
        const QString k = QStringLiteral("m");
        QList<std::pair<QString, MetricPoint>> pts;
        for (qint64 s = 0; s < 200'000; ++s)
            pts.push_back({k, {s, s, s % 9'973 == 0 ? 10.0 + double(s) / 1e5 : std::sin(double(s) / 500)}});
        store->logMetrics(run, pts);
        HistoryCache cache;
        const std::pair<qint64, qint64> ranges[] = {
            {0, 199'999}, {12'345, 150'000}, {99'000, 101'000}, {149'500, 149'900}, {-50, 70'000}};
        for (const auto &[from, to] : ranges) {
            const HistoryQuery q{.from = from, .to = to, .buckets = 500};
            const MetricHistory cached = cache.history(*store, run, k, q);
            const MetricHistory exact = store->history(run, k, q);
            auto maxOf = [](const MetricHistory &h) {
                double m = -INFINITY;
                for (const MetricPoint &p : h.points)
                    m = std::max(m, p.value);
                return m;
            };
            QCOMPARE(maxOf(cached), maxOf(exact));  // every spike in the range, at every width
            QVERIFY(cached.points.size() <= 4 * 500);
            // The pyramid's buckets at the edges may reach a bucket width past the range.
            QVERIFY(std::abs(cached.pointsInRange - exact.pointsInRange) <= 2 * ((to - from) / 500 + 1));
        }
        QVERIFY(cache.hits() >= 3);  // built once, then read from memory
        QVERIFY(cache.bytes() > 0);
        // The run goes on: a spike after the old end shows in the next read.
        store->logMetrics(run, {{k, {250'000, 250'000, 99.0}}});
        const MetricHistory grown = cache.history(*store, run, k, {.from = 0, .to = 300'000, .buckets = 500});
        QVERIFY(std::any_of(grown.points.begin(), grown.points.end(),
                            [](const MetricPoint &p) { return p.value == 99.0; }));
    }

    // The compare view's x axes: wall time (the point's own time) and time since the run's
    // start; a spike survives bucketing on either, and a time window is a window of points.
    void historyByWallAndRelativeTime()
    {
        auto store = TrackingStore::open(freshPath());
        const qint64 start = 1'700'000'000'000;
        const RunId run =
            store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("r"), start);
        QList<std::pair<QString, MetricPoint>> pts;
        for (qint64 s = 0; s < 10'000; ++s)  // one step every 2 s, starting 5 s after the run
            pts.push_back({QStringLiteral("m"), {s, start + 5'000 + 2'000 * s, s == 4'321 ? -9.0 : 1.0}});
        store->logMetrics(run, pts);

        const MetricHistory window = store->history(run, QStringLiteral("m"),
                                                    {.from = start + 5'000 + 2'000 * 100,
                                                     .to = start + 5'000 + 2'000 * 199,
                                                     .buckets = 0,
                                                     .axis = XAxis::WallTime});
        QCOMPARE(window.points.size(), std::size_t(100));
        QCOMPARE(window.points.front().step, 100);
        QCOMPARE(window.points.back().step, 199);

        const MetricHistory relative =
            store->history(run, QStringLiteral("m"),
                           {.from = 0, .to = 5'000 + 2'000 * 9, .buckets = 0, .axis = XAxis::RelativeTime});
        QCOMPARE(relative.origin, start);
        QCOMPARE(relative.points.size(), std::size_t(10));  // steps 0..9

        const MetricHistory all =
            store->history(run, QStringLiteral("m"), {.buckets = 100, .axis = XAxis::RelativeTime});
        QVERIFY(all.downsampled);
        QCOMPARE(all.pointsInRange, 10'000);
        QVERIFY(all.points.size() <= 400);
        QVERIFY(std::any_of(all.points.begin(), all.points.end(),
                            [](const MetricPoint &p) { return p.step == 4'321 && p.value == -9.0; }));
    }

    void queriesReturnChosenParamsAndTags_data()
    {
        QTest::addColumn<int>("runs");
        QTest::newRow("few runs (lookup per run)") << 5;
        QTest::newRow("many runs (one scan per key)") << 200;
    }

    void queriesReturnChosenParamsAndTags()
    {
        QFETCH(int, runs);
        auto store = TrackingStore::open(freshPath());
        const ExperimentId e = store->ensureExperiment(QStringLiteral("e"));
        for (int i = 0; i < runs; ++i) {
            const RunId r = store->createRun(e, QStringLiteral("run%1").arg(i), 1000 + i);
            store->logParams(r,
                             {{QStringLiteral("optim.lr"), QString::number(i)},
                              {QStringLiteral("seed"), QString::number(i % 3)}});
            if (i % 2)
                store->logParams(r, {{QStringLiteral("model.width"), QStringLiteral("64")}});
            store->setTags(r, {{QStringLiteral("group"), QStringLiteral("g%1").arg(i % 4)}});
        }
        RunQuery q;
        q.params = {QStringLiteral("optim.lr"), QStringLiteral("model.width")};
        q.tags = {QStringLiteral("group")};
        const QList<RunRow> rows = store->queryRuns(q);
        QCOMPARE(rows.size(), runs);
        for (const RunRow &row : rows) {
            const int i = row.run.name.mid(3).toInt();
            QCOMPARE(row.params.value(QStringLiteral("optim.lr")), QString::number(i));
            QCOMPARE(row.params.contains(QStringLiteral("model.width")), bool(i % 2));
            QVERIFY(!row.params.contains(QStringLiteral("seed")));  // not chosen
            QCOMPARE(row.tags,
                     (QMap<QString, QString>{{QStringLiteral("group"), QStringLiteral("g%1").arg(i % 4)}}));
        }
        QCOMPARE(
            store->paramKeys(),
            (QStringList{QStringLiteral("model.width"), QStringLiteral("optim.lr"), QStringLiteral("seed")}));
    }

    void filterTextIsTermsJoinedByAnd()
    {
        const auto terms = parseRunFilter(QStringLiteral(
            "params.optim.lr >= 3e-4 AND tags.note = 'salt and pepper' and metrics.eval/loss < 0.2"));
        QVERIFY2(terms, qPrintable(terms.problem()));
        QCOMPARE(terms->size(), 3);
        QCOMPARE(terms->at(1).value, QStringLiteral("salt and pepper"));
        QCOMPARE(terms->at(2).key, QStringLiteral("eval/loss"));
        QVERIFY(parseRunFilter(QStringLiteral("  "))->isEmpty());
        QVERIFY(!parseRunFilter(QStringLiteral("params.a = 1 and")));
        const auto refused = parseRunFilter(QStringLiteral("lr = 1"));
        QVERIFY(!refused);
        QVERIFY(refused.problem().contains(QStringLiteral("lr = 1")));
    }

    void queriesFilterAndSort()
    {
        auto store = TrackingStore::open(freshPath());
        const ExperimentId e = store->ensureExperiment(QStringLiteral("e"));
        const ExperimentId other = store->ensureExperiment(QStringLiteral("other"));
        const double lrs[] = {1e-4, 3e-4, 1e-3, 3e-3};
        QList<RunId> ids;
        for (int i = 0; i < 4; ++i) {
            const RunId r = store->createRun(i == 3 ? other : e, QStringLiteral("run%1").arg(i));
            ids.push_back(r);
            store->logParams(r, {{QStringLiteral("optim.lr"), QString::number(lrs[i])}});
            store->setTags(
                r, {{QStringLiteral("size"), i % 2 ? QStringLiteral("small") : QStringLiteral("tiny")}});
            store->logMetrics(r, {{QStringLiteral("eval/loss"), {10, 0, 1.0 - 0.2 * i}}});
        }
        store->endRun(ids[0], RunStatus::Failed);
        auto names = [](const QList<RunRow> &rows) {
            QStringList n;
            for (const RunRow &r : rows)
                n.push_back(r.run.name);
            return n;
        };
        auto cond = [](const char *text) {
            auto c = parseRunCondition(QString::fromUtf8(text));
            if (!c)
                qFatal("%s", qPrintable(c.problem()));
            return *c;
        };
        RunQuery q;
        q.conditions = {cond("params.optim.lr >= 3e-4")};
        q.orderByMetric = QStringLiteral("eval/loss");
        QCOMPARE(names(store->queryRuns(q)),
                 (QStringList{QStringLiteral("run3"), QStringLiteral("run2"), QStringLiteral("run1")}));
        q.descending = true;
        q.experiment = QStringLiteral("e");
        QCOMPARE(names(store->queryRuns(q)), (QStringList{QStringLiteral("run1"), QStringLiteral("run2")}));
        RunQuery m;
        m.conditions = {cond("metrics.eval/loss < 0.7"), cond("tags.size = small")};
        QCOMPARE(names(store->queryRuns(m)), QStringList{QStringLiteral("run3")});
        RunQuery s;
        s.conditions = {cond("attributes.status = failed")};
        QCOMPARE(names(store->queryRuns(s)), QStringList{QStringLiteral("run0")});
        RunQuery like;
        like.conditions = {cond("attributes.name LIKE 'run%'")};
        like.limit = 2;
        QCOMPARE(store->queryRuns(like).size(), 2);
        QVERIFY(!parseRunCondition(QStringLiteral("metrics.x < abc")));
        const auto unscoped = parseRunCondition(QStringLiteral("lr = 3"));
        QVERIFY(!unscoped);
        QVERIFY(unscoped.problem().contains(QStringLiteral("SCOPE.KEY")));
        // Hostile values are bound, never pasted into SQL.
        RunQuery hostile;
        hostile.conditions = {cond("params.optim.lr = '; DROP TABLE runs; --")};
        QCOMPARE(store->queryRuns(hostile).size(), 0);
        QCOMPARE(store->queryRuns({}).size(), 4);
    }

    void bestRunOfASweepFollowsItsGoal()
    {
        auto store = TrackingStore::open(freshPath());
        const ExperimentId e = store->ensureExperiment(QStringLiteral("e"));
        Sweep sw;
        sw.name = QStringLiteral("s");
        sw.experimentId = e;
        sw.spec = QStringLiteral("method: grid\n");
        sw.method = QStringLiteral("grid");
        sw.metricName = QStringLiteral("eval/acc");
        sw.metricGoal = Goal::Maximize;
        const SweepId id = store->createSweep(sw);
        for (int i = 0; i < 3; ++i) {
            const RunId r = store->createRun(e, QStringLiteral("t%1").arg(i));
            store->logMetrics(r, {{QStringLiteral("eval/acc"), {1, 0, i == 1 ? 0.9 : 0.5}}});
            Trial t;
            t.sweepId = id;
            t.index = i;
            t.runId = r;
            t.state = QStringLiteral("completed");
            store->addTrial(t);
        }
        const RunId outside = store->createRun(e, QStringLiteral("outside"));
        store->logMetrics(outside, {{QStringLiteral("eval/acc"), {1, 0, 0.99}}});
        // Stopped early and failed trials are out of contention, however good their last value.
        QList<RunId> out;
        for (const RunStatus status : {RunStatus::Killed, RunStatus::Failed}) {
            const RunId r = store->createRun(e, QStringLiteral("out-%1").arg(toString(status)));
            store->logMetrics(
                r, {{QStringLiteral("eval/acc"), {1, 0, status == RunStatus::Killed ? 0.95 : 0.94}}});
            store->endRun(r, status);
            Trial t;
            t.sweepId = id;
            t.index = 3 + int(out.size());
            t.runId = r;
            t.state = status == RunStatus::Killed ? QStringLiteral("stopped") : QStringLiteral("failed");
            store->addTrial(t);
            out << r;
        }
        auto best = store->bestRun(id);
        QVERIFY(best);
        QCOMPARE(best->run.name, QStringLiteral("t1"));
        QCOMPARE(store->trials(id).size(), 5);
        // Where no run in contention has the metric, the best of all.
        for (const Trial &t : store->trials(id))
            if (!out.contains(t.runId))
                store->endRun(t.runId, RunStatus::Killed);
        best = store->bestRun(id);
        QVERIFY(best);
        QCOMPARE(best->run.name, QStringLiteral("out-KILLED"));
        QCOMPARE(store->findSweep(QStringLiteral("s"))->id, id);
    }

    // What the sweep runner keeps to pick a sweep up again (schema v5) comes back as written.
    void sweepAndTrialRecordsRoundTrip()
    {
        auto store = TrackingStore::open(freshPath());
        Sweep sw;
        sw.name = QStringLiteral("s 'q' $(x)");
        sw.experimentId = store->ensureExperiment(QStringLiteral("e"));
        sw.spec = QStringLiteral("method: grid\n");
        sw.method = QStringLiteral("grid");
        sw.specFile = QStringLiteral("/specs/s.yaml");
        sw.baseConfig = QStringLiteral("model: {channels: 16}\n");
        sw.rootDir = QStringLiteral("/scratch/e/s-20261121-000000");
        sw.trialCount = 12;
        const SweepId id = store->createSweep(sw);
        store->setSweepMessage(id, QStringLiteral("3 completed"));
        const auto back = store->sweep(id);
        QVERIFY(back);
        QCOMPARE(back->specFile, sw.specFile);
        QCOMPARE(back->baseConfig, sw.baseConfig);
        QCOMPARE(back->rootDir, sw.rootDir);
        QCOMPARE(back->trialCount, 12);
        QCOMPARE(back->message, QStringLiteral("3 completed"));

        Trial t;
        t.sweepId = id;
        t.index = 4;
        t.attempt = 1;
        t.state = QStringLiteral("running");
        t.params = QStringLiteral(R"({"optim.lr":0.001})");
        t.config = QStringLiteral("optim: {lr: 0.001}\n");
        t.task = QStringLiteral("123_4");
        t.detail = QStringLiteral("RUNNING");
        t.submittedMs = 1234;
        t.expectedStartMs = 4321;
        t.id = store->addTrial(t);
        QCOMPARE(store->trials(id).front().expectedStartMs, 4321);
        t.state = QStringLiteral("failed");
        t.endedMs = 5678;
        t.exitReason = QStringLiteral("OUT_OF_MEMORY");
        t.nodes = QStringLiteral("node1,node2");
        t.health = QStringLiteral(R"({"node2":{"ok":false}})");
        t.progressMs = 5000;
        store->updateTrial(t);
        const QList<Trial> trials = store->trials(id);
        QCOMPARE(trials.size(), 1);
        const Trial &r = trials.front();
        QCOMPARE(r.params, t.params);
        QCOMPARE(r.config, t.config);
        QCOMPARE(r.task, t.task);
        QCOMPARE(r.detail, t.detail);
        QCOMPARE(r.submittedMs, 1234);
        QCOMPARE(r.endedMs, 5678);
        QCOMPARE(r.state, QStringLiteral("failed"));
        QVERIFY(!r.isActive());
        QCOMPARE(r.exitReason, QStringLiteral("OUT_OF_MEMORY"));
        QCOMPARE(r.nodes, t.nodes);
        QCOMPARE(r.health, t.health);
        QCOMPARE(r.progressMs, 5000);
        QCOMPARE(r.expectedStartMs, 4321);
    }

    // A user's retry is marked on its attempt (schema v7), and a follower's write of an attempt
    // it read as running lands only while it is still running: a user's stop in between wins.
    void trialUpdateIfIsACompareAndSwap()
    {
        auto store = TrackingStore::open(freshPath());
        Sweep sw;
        sw.name = QStringLiteral("s");
        sw.experimentId = store->ensureExperiment(QStringLiteral("e"));
        sw.method = QStringLiteral("grid");
        const SweepId id = store->createSweep(sw);
        Trial t;
        t.sweepId = id;
        t.attempt = 2;
        t.state = QStringLiteral("running");
        t.userRetry = true;
        t.id = store->addTrial(t);
        QVERIFY(store->trials(id).front().userRetry);

        Trial user = t;  // the user's stop, written over the state it read
        user.state = QStringLiteral("stopping");
        QVERIFY(store->updateTrialIf(QStringLiteral("running"), user));
        Trial follower = t;  // the follower's verdict on the attempt it read as running
        follower.state = QStringLiteral("preempted");
        QVERIFY(!store->updateTrialIf(QStringLiteral("running"), follower));
        QCOMPARE(store->trials(id).front().state, QStringLiteral("stopping"));
        follower.state = QStringLiteral("stopped");
        follower.userRetry = false;
        QVERIFY(store->updateTrialIf(QStringLiteral("stopping"), follower));
        const Trial back = store->trials(id).front();
        QCOMPARE(back.state, QStringLiteral("stopped"));
        QVERIFY(!back.userRetry);
    }

    // One row per trial: its latest attempt, how many there were, the run's step and the
    // sweep's metric (best by the goal).
    void trialSummariesTakeTheLatestAttempt()
    {
        auto store = TrackingStore::open(freshPath());
        Sweep sw;
        sw.name = QStringLiteral("s");
        sw.experimentId = store->ensureExperiment(QStringLiteral("e"));
        sw.spec = QStringLiteral("method: grid\n");
        sw.method = QStringLiteral("grid");
        sw.metricName = QStringLiteral("eval/acc");
        sw.metricGoal = Goal::Maximize;
        const SweepId id = store->createSweep(sw);
        const RunId r0 = store->createRun(sw.experimentId, QStringLiteral("t0"));
        const RunId r1 = store->createRun(sw.experimentId, QStringLiteral("t1"));
        store->logMetrics(r0,
                          {{QStringLiteral("eval/acc"), {10, 0, 0.7}},
                           {QStringLiteral("eval/acc"), {20, 0, 0.6}},
                           {QStringLiteral("train/loss"), {25, 0, 0.1}}});
        for (const auto &[index, attempt, run, state] :
             {std::tuple{1, 0, r1, "queued"}, std::tuple{0, 0, r0, "failed"},
              std::tuple{0, 1, r0, "running"}}) {
            Trial t;
            t.sweepId = id;
            t.index = index;
            t.attempt = attempt;
            t.runId = run;
            t.state = QString::fromLatin1(state);
            store->addTrial(t);
        }
        const QList<Trial> latest = latestAttempts(store->trials(id));
        QCOMPARE(latest.size(), 2);
        QCOMPARE(latest[0].attempt, 1);
        const QList<TrialSummary> rows = store->trialSummaries(id);
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[0].trial.index, 0);
        QCOMPARE(rows[0].trial.state, QStringLiteral("running"));
        QCOMPARE(rows[0].attempts, 2);
        QCOMPARE(rows[0].step, 25);
        QCOMPARE(rows[0].latest, std::optional<double>(0.6));
        QCOMPARE(rows[0].best, std::optional<double>(0.7));  // maximize
        QCOMPARE(rows[1].attempts, 1);
        QCOMPARE(rows[1].step, -1);
        QVERIFY(!rows[1].latest && !rows[1].best);
    }

    // exit.json's own time is the run's end, not the moment a follower read it.
    void exitJsonEndsTheRunAtItsOwnTime()
    {
        auto store = TrackingStore::open(freshPath());
        const RunId run = store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("r"));
        QString problem;
        QCOMPARE(store->applyExit(run, R"({"state":"completed","reason":"","step":9,"t":1700000000.5})", 42,
                                  &problem),
                 std::optional<QString>(QStringLiteral("completed")));
        QCOMPARE(store->run(run)->endTimeMs, 1700000000500);
        QCOMPARE(toString(store->run(run)->status), QStringLiteral("FINISHED"));
        QVERIFY(!store->applyExit(run, "{not json", 42, &problem));
        QVERIFY(!problem.isEmpty());
        QVERIFY(!store->applyExit(run, R"({"reason":"no state"})", 42, &problem));
    }

    void unicodeAndVeryLongNames()
    {
        auto store = TrackingStore::open(freshPath());
        const QString exp = QStringLiteral("実験 🚀 ünïcödé");
        const QString longKey = QString(5000, QLatin1Char('k'));
        const QString longValue = QString(1 << 20, QChar(0x4e2d));  // 1M CJK characters
        const RunId run =
            store->createRun(store->ensureExperiment(exp), QStringLiteral("\"; rm -rf ~ `x` $(y)"));
        store->logParams(run, {{longKey, longValue}, {QStringLiteral("損失"), QStringLiteral("値")}});
        store->logMetrics(run, {{QStringLiteral("损失/loss ✓"), {1, 1, 0.25}}, {longKey, {1, 1, 1.0}}});
        const RunDetails d = store->details(run);
        QCOMPARE(d.run.experimentName, exp);
        QCOMPARE(d.params.value(longKey), longValue);
        QCOMPARE(store->history(run, QStringLiteral("损失/loss ✓")).points.size(), std::size_t(1));
        QCOMPARE(store->findRun(QStringLiteral("\"; rm -rf ~ `x` $(y)"))->id, run);
        QCOMPARE(store->findRun(d.run.uuid.left(8))->id, run);
    }

    // --- suspect nodes: per cluster, with reason, source, since and expiry ----------------------
    void suspectNodesPerClusterExpireAndClear()
    {
        auto s = TrackingStore::open(freshPath());
        const QString c = QStringLiteral("gpu-cluster");
        QVERIFY(s->suspectNodes(c).isEmpty());
        const SuspectNode auto2{
            c, QStringLiteral("node2"), QStringLiteral("NODE_FAIL"), QStringLiteral("node-fail"), 1000, 5000};
        const SuspectNode user7{
            c, QStringLiteral("node7"), QStringLiteral("bad fan"), QStringLiteral("user"), 2000, 0};
        s->addSuspectNode(user7);
        s->addSuspectNode(auto2);
        s->addSuspectNode(SuspectNode{QStringLiteral("other"), QStringLiteral("node2"), QStringLiteral("x"),
                                      QStringLiteral("user"), 1500, 0});
        // Oldest first, this cluster only; the automatic entry until it expires, the user's for good.
        QCOMPARE(s->suspectNodes(c, 4999), (QList<SuspectNode>{auto2, user7}));
        QCOMPARE(s->suspectNodes(c, 5000), QList<SuspectNode>{user7});
        // A node that fails again: the newer entry replaces the older.
        const SuspectNode again{c,
                                QStringLiteral("node2"),
                                QStringLiteral("health check failed on node2"),
                                QStringLiteral("health"),
                                6000,
                                9000};
        s->addSuspectNode(again);
        QCOMPARE(s->suspectNodes(c, 6000), (QList<SuspectNode>{user7, again}));
        // Clearing one, then all; another cluster's list is left alone.
        QCOMPARE(s->clearSuspectNodes(c, QStringLiteral("node7"), 6000), 1);
        QCOMPARE(s->suspectNodes(c, 6000), QList<SuspectNode>{again});
        QCOMPARE(s->clearSuspectNodes(c, QStringLiteral("node7"), 6000), 0);
        QCOMPARE(s->clearSuspectNodes(c, {}, 6000), 1);
        QVERIFY(s->suspectNodes(c, 6000).isEmpty());
        QCOMPARE(s->suspectNodes(QStringLiteral("other"), 6000).size(), 1);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 s->addSuspectNode(SuspectNode{c, QString(), {}, {}, 1, 0}));
    }

    // --- sweep leases: one follower acts on a sweep at a time ----------------------------------
    void sweepLeaseOneHolderAtATime()
    {
        const QString path = freshPath();
        auto a = TrackingStore::open(path);
        auto b = TrackingStore::open(path);  // another process, as it were
        Sweep sw;
        sw.name = QStringLiteral("s");
        sw.experimentId = a->ensureExperiment(QStringLiteral("e"));
        sw.method = QStringLiteral("grid");
        const SweepId id = a->createSweep(sw);
        const QString fa = QStringLiteral("host:100:aaaaaaaa"), fb = QStringLiteral("host:200:bbbbbbbb");
        QVERIFY(!a->sweepLease(id));

        // Acquire.
        SweepLease l = a->acquireSweepLease(id, fa, 1000, 10'000);
        QVERIFY(l.heldBy(fa));
        QCOMPARE(l.sweep, id);
        QCOMPARE(l.acquiredMs, 10'000);
        QCOMPARE(l.expiresMs, 11'000);
        // A second follower is refused, and told who holds it until when.
        l = b->acquireSweepLease(id, fb, 1000, 10'500);
        QVERIFY(!l.heldBy(fb));
        QVERIFY(l.heldBy(fa));
        QCOMPARE(l.expiresMs, 11'000);
        // The holder renews: its hold is unbroken (acquiredMs kept), the expiry moves on.
        l = a->acquireSweepLease(id, fa, 1000, 10'900);
        QVERIFY(l.heldBy(fa));
        QCOMPARE(l.acquiredMs, 10'000);
        QCOMPARE(l.expiresMs, 11'900);
        QVERIFY(!b->acquireSweepLease(id, fb, 1000, 11'899).heldBy(fb));
        // Expiry: the holder stopped renewing (it crashed); the other takes over.
        l = b->acquireSweepLease(id, fb, 1000, 11'900);
        QVERIFY(l.heldBy(fb));
        QCOMPARE(l.acquiredMs, 11'900);
        QCOMPARE(b->sweepLease(id)->holder, fb);
        // The old holder, back, is refused now.
        QVERIFY(a->acquireSweepLease(id, fa, 1000, 12'000).heldBy(fb));
        // Release: only the holder's own lease goes.
        QCOMPARE(a->releaseSweepLeases(fa, id), 0);
        QVERIFY(a->sweepLease(id));
        QCOMPARE(b->releaseSweepLeases(fb), 1);
        QVERIFY(!a->sweepLease(id));
        // Released: the next follower gets it at once, long before the old lease would expire.
        l = a->acquireSweepLease(id, fa, 1000, 12'100);
        QVERIFY(l.heldBy(fa));
        QCOMPARE(l.acquiredMs, 12'100);
        // A holder whose own lease lapsed takes it anew: a new acquiredMs, so it can tell that
        // someone else may have acted in between (the runner's fence).
        l = a->acquireSweepLease(id, fa, 1000, 13'100);
        QVERIFY(l.heldBy(fa));
        QCOMPARE(l.acquiredMs, 13'100);
        // The real clock by default.
        const qint64 before = QDateTime::currentMSecsSinceEpoch();
        l = b->acquireSweepLease(id, fb, 60'000);
        QVERIFY(l.heldBy(fb));
        QVERIFY(l.expiresMs >= before + 60'000);
        // A lease needs its sweep, and a follower an id.
        QVERIFY_THROWS_EXCEPTION(StoreError, a->acquireSweepLease(id + 100, fa, 1000));
        QVERIFY_THROWS_EXCEPTION(StoreError, a->acquireSweepLease(id, QString(), 1000));
    }

    // A follower killed on this machine (bench/chaos.py's follower-kill) is known to be gone: its
    // lease ends at once instead of after its TTL. A stopped one (a closed lid) and another
    // machine's are not gone; a lease another follower took since is left alone.
    void aDeadFollowersLeaseEndsAtOnce()
    {
        const QString path = freshPath();
        auto store = TrackingStore::open(path);
        Sweep sw;
        sw.name = QStringLiteral("s");
        sw.experimentId = store->ensureExperiment(QStringLiteral("e"));
        sw.method = QStringLiteral("grid");
        const SweepId id = store->createSweep(sw);
        const auto idOf = [](qint64 pid) {
            return QStringLiteral("%1:%2:0badcafe").arg(QSysInfo::machineHostName()).arg(pid);
        };
        QProcess ended;
        ended.start(QStringLiteral("true"));
        QVERIFY(ended.waitForStarted());
        const qint64 endedPid = ended.processId();
        QVERIFY(ended.waitForFinished());
        const QString dead = idOf(endedPid);
        QVERIFY(orrery::core::followerIsGone(dead));
        QProcess stopped;
        stopped.start(QStringLiteral("sleep"), {QStringLiteral("30")});
        QVERIFY(stopped.waitForStarted());
        ::kill(pid_t(stopped.processId()), SIGSTOP);
        QVERIFY(!orrery::core::followerIsGone(idOf(stopped.processId())));
        ::kill(pid_t(stopped.processId()), SIGKILL);
        stopped.waitForFinished();
        QVERIFY(!orrery::core::followerIsGone(QStringLiteral("elsewhere:%1:0badcafe").arg(endedPid)));
        QVERIFY(!orrery::core::followerIsGone(orrery::core::processFollowerId()));
        QVERIFY(!orrery::core::followerIsGone(QStringLiteral("not an id")));

        QVERIFY(store->acquireSweepLease(id, dead, 600'000).heldBy(dead));
        const QString me = QStringLiteral("host:1:aaaaaaaa");
        QVERIFY(!store->acquireSweepLease(id, me, 600'000).heldBy(me));
        QVERIFY(!store->expireSweepLease(id, QStringLiteral("someone else")));
        QVERIFY(store->expireSweepLease(id, dead));
        QVERIFY(store->acquireSweepLease(id, me, 600'000).heldBy(me));
        QVERIFY(!store->expireSweepLease(id, dead));  // taken since: left alone
        QCOMPARE(store->sweepLease(id)->holder, me);
    }

    // Two connections racing for the leases of many sweeps at the same instant: each sweep gets
    // exactly one holder (the grant is one write transaction).
    void sweepLeaseRaceHasOneWinner()
    {
        const QString path = freshPath();
        QList<SweepId> ids;
        {
            auto store = TrackingStore::open(path);
            Sweep sw;
            sw.name = QStringLiteral("race");
            sw.experimentId = store->ensureExperiment(QStringLiteral("e"));
            sw.method = QStringLiteral("grid");
            for (int i = 0; i < 100; ++i)
                ids << store->createSweep(sw);
        }
        QHash<SweepId, int> granted[2];
        std::thread threads[2];
        for (int t = 0; t < 2; ++t)
            threads[t] = std::thread([&, t] {
                auto store = TrackingStore::open(path);
                const QString me = QStringLiteral("follower-%1").arg(t);
                for (SweepId id : ids)
                    granted[t][id] = store->acquireSweepLease(id, me, 60'000, 1'000'000).heldBy(me) ? 1 : 0;
            });
        for (std::thread &t : threads)
            t.join();
        for (SweepId id : ids)
            QCOMPARE(granted[0].value(id) + granted[1].value(id), 1);
    }

    // --- migrations and versions --------------------------------------------------------------
    void migratesAVersion1File()
    {
        const QString path = freshPath();
        loadSqlFixture(orrery::test::sourceFile(QStringLiteral("tests/data/store-v1.sql")), path);
        auto store = TrackingStore::open(path);
        QCOMPARE(store->schemaVersion(), TrackingStore::currentSchemaVersion());
        const auto run = store->findRun(QStringLiteral("0123456789abcdef"));
        QVERIFY(run);
        QCOMPARE(toString(run->status), toString(RunStatus::Finished));
        const auto pts = store->allPoints(run->id, QStringLiteral("train/loss"));
        QCOMPARE(pts.size(), std::size_t(300));
        QCOMPARE(pts.back().value, 1.0 / 300);
        QCOMPARE(store->ingestState(run->id, QStringLiteral("events.jsonl")).offset, 12345);
        // Version 4 derived every run's latest metrics for the run list from version 1's rows.
        const QList<RunRow> rows = store->queryRuns({});
        QCOMPARE(rows.size(), 1);
        QVERIFY(rows.front().metric(QStringLiteral("train/loss")));
        QCOMPARE(rows.front().metric(QStringLiteral("train/loss"))->last.step, 300);
        QCOMPARE(rows.front().metric(QStringLiteral("train/loss"))->count, 300);
        // The tables of later versions exist and work.
        store->addArtifact(
            run->id, {QStringLiteral("samples/step-300.mp4"), QStringLiteral("video"), 300, {}, {}, -1});
        QCOMPARE(store->details(run->id).artifacts.size(), 1);
        Sweep sw;
        sw.name = QStringLiteral("after-migration");
        sw.experimentId = run->experimentId;
        sw.method = QStringLiteral("grid");
        const SweepId sweep = store->createSweep(sw);
        QVERIFY(store->acquireSweepLease(sweep, QStringLiteral("f"), 1000).heldBy(QStringLiteral("f")));
        store.reset();
        // Opening again is a no-op.
        QCOMPARE(TrackingStore::open(path)->schemaVersion(), TrackingStore::currentSchemaVersion());
    }

    void newerDatabaseOpensReadOnly()
    {
        const QString path = freshPath();
        TrackingStore::open(path)->ensureExperiment(QStringLiteral("kept"));
        sqlite3 *db = nullptr;
        QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
        const QByteArray bump =
            "PRAGMA user_version = " + QByteArray::number(TrackingStore::currentSchemaVersion() + 5);
        QCOMPARE(sqlite3_exec(db, bump.constData(), nullptr, nullptr, nullptr), SQLITE_OK);
        sqlite3_close(db);
        auto store = TrackingStore::open(path);
        QVERIFY(store->isReadOnly());
        QVERIFY(store->readOnlyReason().contains(QStringLiteral("newer Orrery")));
        QCOMPARE(store->experiments().size(), 1);  // still readable
        QVERIFY_THROWS_EXCEPTION(StoreError, store->ensureExperiment(QStringLiteral("new")));
    }

    void corruptFileIsAClearError()
    {
        const QString path = freshPath();
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(8192, 'x'));
        f.close();
        try {
            TrackingStore::open(path);
            QFAIL("opened a corrupt file");
        } catch (const StoreError &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(path), e.what());
        }
        QCOMPARE(f.size(), 8192);  // and left it alone
    }

    // --- ingest -------------------------------------------------------------------------------
    void ingestSkipsMalformedLinesWithTheirNumbers()
    {
        auto store = TrackingStore::open(freshPath());
        const RunId run = store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("r"));
        QByteArray data =
            R"({"v":1,"t":1700000000,"kind":"start","run":{"world_size":2,"params":{"optim":{"lr":0.001},"tags":["a","b"]}}})"
            "\n";
        data += metricsLine(1, {{"loss", "1.0"}});
        data += "this is not json\n";
        data += metricsLine(2, {{"loss", "\"nan\""}});
        data += "\n";
        data += R"({"v":1,"t":1,"kind":"gradients","norms":[1,2]})"
                "\n";
        data += metricsLine(3, {{"loss", "\"bogus\""}, {"acc", "0.5"}});
        data += R"({"v":1,"t":1,"kind":"metrics","step":4,"values":{"loss":)"
                "\n";  // truncated mid-line by a crash, then the writer went on
        data += metricsLine(5, {{"loss", "0.25"}});
        data +=
            R"({"v":1,"t":1700000009,"kind":"artifact","step":5,"path":"samples/step-5.mp4","type":"video"})"
            "\n";
        data += R"({"v":1,"t":1700000010,"kind":"status","state":"failed","message":"CUDA OOM"})"
                "\n";
        const qsizetype complete = data.size();
        data += metricsLine(6, {{"loss", "0.125"}}).chopped(5);  // still being written

        const IngestResult r = store->ingestEvents(run, QStringLiteral("events.jsonl"), 0, data);
        QVERIFY(r.applied);
        QCOMPARE(r.newOffset, complete);
        QCOMPARE(r.lines, 11);
        QCOMPARE(r.malformed, 2);
        QCOMPARE(r.unknownKinds, 1);
        QCOMPARE(r.points, 4);  // loss 1, nan, 0.25 and acc 0.5; "bogus" skipped
        QList<qint64> lines;
        for (const IngestIssue &i : r.issues)
            lines.push_back(i.line);
        QCOMPARE(lines, (QList<qint64>{3, 7, 8}));
        const RunDetails d = store->details(run);
        QCOMPARE(toString(d.run.status), toString(RunStatus::Failed));
        QCOMPARE(d.params.value(QStringLiteral("optim.lr")), QStringLiteral("0.001"));
        QCOMPARE(d.params.value(QStringLiteral("tags")), QStringLiteral("[\"a\",\"b\"]"));
        QCOMPARE(d.tags.value(QStringLiteral("orrery.world_size")), QStringLiteral("2"));
        QCOMPARE(d.tags.value(QStringLiteral("orrery.message")), QStringLiteral("CUDA OOM"));
        QCOMPARE(d.artifacts.size(), 1);
        QCOMPARE(d.artifacts[0].step, 5);
        QCOMPARE(store->allPoints(run, QStringLiteral("loss")).size(), std::size_t(3));

        // The next call starts at the stored offset; line numbers continue.
        QByteArray more = data.mid(complete) + "5}}\n" + "garbage\n";
        const IngestResult r2 = store->ingestEvents(run, QStringLiteral("events.jsonl"), complete, more);
        QCOMPARE(r2.lines, 2);
        QCOMPARE(r2.issues.value(0).line, 13);
        QCOMPARE(store->allPoints(run, QStringLiteral("loss")).back().step, 6);
        const IngestState st = store->ingestState(run, QStringLiteral("events.jsonl"));
        QCOMPARE(st.lines, 13);
        QCOMPARE(st.malformed, 3);
    }

    // `phases` events (docs/trainer.md) are kept per trainer process, the newest of each; they
    // are not metric points. Two processes of one run: the first killed at step 25 after its
    // checkpoint at 20, the second resumed from 20 and completed at 50.
    void ingestKeepsEachProcesssNewestPhases()
    {
        auto store = TrackingStore::open(freshPath());
        const RunId run = store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("r"));
        auto phases = [](double t, qint64 step, double start, qint64 resume, qint64 ckpt, double startup,
                         double train) -> QByteArray {
            return "{\"v\":1,\"t\":" + QByteArray::number(1700000000.0 + t, 'f', 3) +
                ",\"kind\":\"phases\",\"step\":" + QByteArray::number(step) +
                ",\"values\":{\"process_start\":" + QByteArray::number(1700000000.0 + start, 'f', 3) +
                ",\"resume_step\":" + QByteArray::number(resume) +
                ",\"checkpoint_step\":" + QByteArray::number(ckpt) +
                ",\"startup_s\":" + QByteArray::number(startup) +
                ",\"train_s\":" + QByteArray::number(train) +
                ",\"checkpoint_s\":0.5,\"eval_s\":0,\"sample_s\":0,\"other_s\":0}}\n";
        };
        QByteArray data = phases(3, 0, 0, 0, 0, 3, 0);
        data += metricsLine(10, {{"train/loss", "1"}});
        data += phases(13, 10, 0, 0, 0, 3, 10);
        data += phases(25, 20, 0, 0, 20, 3, 21.5);
        data += phases(28, 25, 0, 0, 20, 3, 24.5);
        data += phases(14, 10, 0, 0, 0, 3, 10);  // an older event of the same process: ignored
        data += R"({"v":1,"t":1700000029,"kind":"phases","step":25,"values":{"train_s":99}})"
                "\n";  // no process_start: nobody's record
        const IngestResult r = store->ingestEvents(run, QStringLiteral("events.jsonl"), 0, data);
        QVERIFY(r.applied);
        QCOMPARE(r.malformed, 0);
        QCOMPARE(r.unknownKinds, 0);
        QCOMPARE(r.points, 1);
        QCOMPARE(store->metricKeys(run), QStringList{QStringLiteral("train/loss")});
        // The second process, in a later transaction.
        const QByteArray more = phases(34, 20, 30, 20, 20, 4, 0) + phases(95, 50, 30, 20, 50, 4, 60);
        QVERIFY(store->ingestEvents(run, QStringLiteral("events.jsonl"), data.size(), more).applied);

        const QList<ProcessPhases> p = store->runPhases(run);
        QCOMPARE(p.size(), 2);
        QCOMPARE(p[0].processStartMs, 1700000000000);
        QCOMPARE(p[0].updatedMs, 1700000028000);
        QCOMPARE(p[0].step, 25);
        QCOMPARE(p[0].checkpointStep, 20);
        QCOMPARE(p[0].trainS, 24.5);
        QCOMPARE(p[0].checkpointS, 0.5);
        QCOMPARE(p[1].processStartMs, 1700000030000);
        QCOMPARE(p[1].resumeStep, 20);
        QCOMPARE(p[1].step, 50);
        QCOMPARE(p[1].trainS, 60.0);
        QVERIFY(store->runPhases(run + 1).isEmpty());

        // Read back through the store: 5 steps redone by the second process at 2 s a step.
        const RunGoodput g = runGoodput(*store, run, 1700000100000);
        QCOMPARE(g.attempts.size(), 2);
        QCOMPARE(g.total.lostSteps, 5);
        QCOMPARE(g.total.lostS, 10.0);
        QCOMPARE(g.total.trainingS, 24.5 + 50.0);
        QCOMPARE(g.total.overrunS, 0.0);
        QCOMPARE(g.total.sumOfParts(), g.total.wallS);
    }

    void ingestFromAStaleOffsetAppliesNothing()
    {
        auto store = TrackingStore::open(freshPath());
        const RunId run = store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("r"));
        const QByteArray data = metricsLine(1, {{"loss", "1"}});
        QVERIFY(store->ingestEvents(run, QStringLiteral("events.jsonl"), 0, data).applied);
        const IngestResult again = store->ingestEvents(run, QStringLiteral("events.jsonl"), 0, data);
        QVERIFY(!again.applied);
        QCOMPARE(again.newOffset, data.size());
        QCOMPARE(store->pointCount(run), 1);
    }

    void ingestRunDirectoryIsIncrementalAndReadsExitJson()
    {
        auto store = TrackingStore::open(freshPath());
        const QString dir = m_dir.filePath(QStringLiteral("runs/exp/sweep/0"));
        QVERIFY(QDir().mkpath(dir));
        QFile events(dir + QStringLiteral("/events.jsonl"));
        QVERIFY(events.open(QIODevice::WriteOnly | QIODevice::Unbuffered));
        for (qint64 s = 1; s <= 100; ++s)
            events.write(metricsLine(s, {{"a", "1"}, {"b", "2"}}));
        auto r = store->ingestRunDirectory(dir, QStringLiteral("exp"));
        QVERIFY(r.created);
        QCOMPARE(r.events.points, 200);
        QVERIFY(!r.exited);
        QCOMPARE(toString(store->run(r.run)->status), toString(RunStatus::Running));
        for (qint64 s = 101; s <= 150; ++s)
            events.write(metricsLine(s, {{"a", "1"}, {"b", "2"}}));
        QFile exitJson(dir + QStringLiteral("/exit.json"));
        QVERIFY(exitJson.open(QIODevice::WriteOnly));
        exitJson.write(R"({"state":"preempted","reason":"SIGUSR1 before the time limit","step":150})");
        exitJson.close();
        r = store->ingestRunDirectory(dir, QStringLiteral("exp"));
        QVERIFY(!r.created);
        QCOMPARE(r.events.points, 100);
        QVERIFY(r.exited);
        const RunDetails d = store->details(r.run);
        QCOMPARE(toString(d.run.status), toString(RunStatus::Killed));
        QCOMPARE(d.tags.value(QStringLiteral("orrery.exit_state")), QStringLiteral("preempted"));
        QCOMPARE(store->pointCount(r.run), 300);
        // A file replaced by a shorter one is an error, not silent data loss.
        events.close();
        QVERIFY(events.open(QIODevice::WriteOnly | QIODevice::Truncate));
        events.write(metricsLine(1, {{"a", "1"}}));
        events.close();
        QVERIFY_THROWS_EXCEPTION(StoreError, store->ingestRunDirectory(dir, QStringLiteral("exp")));
        QCOMPARE(store->pointCount(r.run), 300);
    }
};

ORRERY_TEST_MAIN(TestStore, QCoreApplication)
#include "tst_store.moc"
