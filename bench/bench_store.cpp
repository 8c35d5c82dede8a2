// SPDX-License-Identifier: GPL-3.0-or-later
//
// The tracking store's figures (issue: Tracking store; results in bench/RESULTS.md):
//   ingest    events.jsonl of R runs x K keys x S steps, one metrics line per step as the trainer
//             writes them, ingested run dir by run dir (1 MB per transaction) → points/s;
//   ticks     the same stream arriving live: every run gets T new lines per monitor tick, one
//             transaction per run and tick → points/s;
//   history   a 1M-point metric downsampled to 2,000 min/max buckets → ms (median of 21);
//   list      the run list with every latest metric over 10,000 runs → ms (median of 11);
//   size      database bytes per million points.
// Usage: bench_store [--runs R] [--keys K] [--steps S] [--dir DIR] [--keep]
// It writes the generated events under DIR (default: a temp dir) so the MLflow peer
// (bench/peers/mlflow_store.py) can ingest the very same files; bench/store.sh runs both.
#include "orrery/core/store.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <random>
#include <vector>

using namespace orrery::core;

namespace {

const char *const kKeyNames[] = {
    "train/loss",
    "train/lr",
    "train/grad_norm",
    "train/loss_ema",
    "train/v_mse",
    "train/param_norm",
    "perf/samples_per_s",
    "perf/step_time",
    "perf/data_wait",
    "perf/gpu_mem_gb",
    "eval/loss",
    "eval/fvd",
    "eval/psnr",
    "eval/ssim",
    "eval/lpips",
    "train/loss_t0_250",
    "train/loss_t250_500",
    "train/loss_t500_750",
    "train/loss_t750_1000",
    "train/clip_frac",
};

std::string keyName(int k)
{
    if (k < int(std::size(kKeyNames)))
        return kKeyNames[k];
    return "extra/k" + std::to_string(k);
}

// Writes one run's events.jsonl: a start line, then `steps` metrics lines of `keys` values
// printed as Python's json does (17 significant digits).
void writeEvents(const QString &dir, int run, int keys, int steps)
{
    QDir().mkpath(dir);
    std::FILE *f =
        std::fopen(QDir(dir).filePath(QStringLiteral("events.jsonl")).toLocal8Bit().constData(), "wb");
    std::mt19937_64 rng(std::uint64_t(run) * 7919u + 1);
    std::uniform_real_distribution<double> noise(0.9, 1.1);
    std::fprintf(
        f,
        "{\"v\":1,\"t\":1700000000.0,\"kind\":\"start\",\"run\":{\"world_size\":8,\"device\":\"cuda\","
        "\"params\":{\"optim\":{\"lr\":%g},\"seed\":%d}}}\n",
        1e-4 * (1 + run % 10), run);
    std::string line;
    char buf[256];
    for (int s = 0; s < steps; ++s) {
        line.clear();
        std::snprintf(buf, sizeof buf, "{\"v\":1,\"t\":%.3f,\"kind\":\"metrics\",\"step\":%d,\"values\":{",
                      1700000000.0 + s * 0.8, s);
        line += buf;
        for (int k = 0; k < keys; ++k) {
            line += k ? ",\"" : "\"";
            line += keyName(k);
            std::snprintf(buf, sizeof buf, "\":%.17g", (k + 1.0) / (1.0 + s * 0.01) * noise(rng));
            line += buf;
        }
        line += "}}\n";
        std::fwrite(line.data(), 1, line.size(), f);
    }
    std::fclose(f);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

qint64 databaseBytes(const QString &path)
{
    return QFileInfo(path).size() + QFileInfo(path + QStringLiteral("-wal")).size();
}

}  // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser p;
    p.addHelpOption();
    QCommandLineOption runsOpt(QStringLiteral("runs"), QStringLiteral("runs"), QStringLiteral("R"),
                               QStringLiteral("1000"));
    QCommandLineOption keysOpt(QStringLiteral("keys"), QStringLiteral("metric keys"), QStringLiteral("K"),
                               QStringLiteral("20"));
    QCommandLineOption stepsOpt(QStringLiteral("steps"), QStringLiteral("steps"), QStringLiteral("S"),
                                QStringLiteral("5000"));
    QCommandLineOption dirOpt(QStringLiteral("dir"), QStringLiteral("work directory"), QStringLiteral("DIR"));
    QCommandLineOption tickOpt(QStringLiteral("tick-lines"), QStringLiteral("lines per run per tick"),
                               QStringLiteral("T"), QStringLiteral("50"));
    QCommandLineOption tickRunsOpt(QStringLiteral("tick-runs"), QStringLiteral("runs in the live-tick test"),
                                   QStringLiteral("N"), QStringLiteral("100"));
    QCommandLineOption onlyOpt(QStringLiteral("only"),
                               QStringLiteral("one part: ingest, ticks, history or list"),
                               QStringLiteral("PART"));
    p.addOptions({runsOpt, keysOpt, stepsOpt, dirOpt, tickOpt, tickRunsOpt, onlyOpt});
    p.process(app);
    const int runs = p.value(runsOpt).toInt(), keys = p.value(keysOpt).toInt(),
              steps = p.value(stepsOpt).toInt();
    const int tickLines = p.value(tickOpt).toInt(), tickRuns = std::min(runs, p.value(tickRunsOpt).toInt());
    const QString only = p.value(onlyOpt);
    auto part = [&](const char *name) { return only.isEmpty() || only == QLatin1String(name); };
    QTemporaryDir tmp;
    const QString work = p.isSet(dirOpt) ? p.value(dirOpt) : tmp.path();
    QDir().mkpath(work);
    const QString runsDir = QDir(work).filePath(QStringLiteral("runs"));

    std::printf("# bench_store: %d runs x %d keys x %d steps = %lld points\n", runs, keys, steps,
                (long long)runs * keys * steps);
    QElapsedTimer t;
    t.start();
    qint64 fileBytes = 0;
    for (int r = 0; r < runs; ++r) {
        const QString dir = QDir(runsDir).filePath(QStringLiteral("run-%1").arg(r, 4, 10, QLatin1Char('0')));
        if (!QFileInfo::exists(dir + QStringLiteral("/events.jsonl")))
            writeEvents(dir, r, keys, steps);
        fileBytes += QFileInfo(dir + QStringLiteral("/events.jsonl")).size();
    }
    std::printf("generated %.2f GB of events.jsonl in %.1f s (not timed below)\n", fileBytes / 1e9,
                t.elapsed() / 1e3);

    // --- ingest (catch-up: whole files) ---------------------------------------------------------
    const QString dbPath = QDir(work).filePath(QStringLiteral("bench.sqlite"));
    if (part("ingest")) {
        for (const char *suffix : {"", "-wal", "-shm"})
            QFile::remove(dbPath + QLatin1String(suffix));
        auto store = TrackingStore::open(dbPath);
        qint64 points = 0;
        t.restart();
        for (int r = 0; r < runs; ++r) {
            const auto res = store->ingestRunDirectory(
                QDir(runsDir).filePath(QStringLiteral("run-%1").arg(r, 4, 10, QLatin1Char('0'))),
                QStringLiteral("bench"));
            points += res.events.points;
        }
        const double ingestS = t.elapsed() / 1e3;
        std::printf("ingest: %lld points in %.2f s = %.0f points/s (%.0f MB/s of events)\n",
                    (long long)points, ingestS, points / ingestS, fileBytes / 1e6 / ingestS);
        store.reset();
        {
            // Fold the WAL into the file before measuring its size.
            auto s = TrackingStore::open(dbPath);
            s->writeTransaction([] {});
        }
        const qint64 bytes = databaseBytes(dbPath);
        std::printf("size: %.1f MB for %lld points = %.1f MB per million points (%.1f bytes/point; "
                    "events.jsonl: %.1f)\n",
                    bytes / 1e6, (long long)points, bytes / 1e6 / (points / 1e6),
                    double(bytes) / double(points), double(fileBytes) / double(points));
    }

    // --- live ticks ------------------------------------------------------------------------------
    if (part("ticks") && tickRuns > 0) {
        const QString tickDb = QDir(work).filePath(QStringLiteral("ticks.sqlite"));
        for (const char *suffix : {"", "-wal", "-shm"})
            QFile::remove(tickDb + QLatin1String(suffix));
        auto ts = TrackingStore::open(tickDb);
        std::vector<QByteArray> files;
        std::vector<RunId> ids;
        std::vector<qint64> offsets;
        for (int r = 0; r < tickRuns; ++r) {
            QFile f(QDir(runsDir).filePath(
                QStringLiteral("run-%1/events.jsonl").arg(r, 4, 10, QLatin1Char('0'))));
            f.open(QIODevice::ReadOnly);
            files.push_back(f.readAll());
            ids.push_back(
                ts->createRun(ts->ensureExperiment(QStringLiteral("ticks")), QStringLiteral("r%1").arg(r)));
            offsets.push_back(0);
        }
        qint64 tickPoints = 0;
        int ticks = 0;
        t.restart();
        for (bool more = true; more; ++ticks) {
            more = false;
            for (std::size_t r = 0; r < files.size(); ++r) {
                // The next T lines of this run, as a monitor tick would find them.
                qsizetype end = offsets[r];
                for (int l = 0; l < tickLines && end < files[r].size(); ++l)
                    end = files[r].indexOf('\n', end) + 1;
                if (end <= offsets[r])
                    continue;
                more = true;
                const auto res =
                    ts->ingestEvents(ids[r], QStringLiteral("events.jsonl"), offsets[r],
                                     QByteArrayView(files[r]).sliced(offsets[r], end - offsets[r]));
                offsets[r] = res.newOffset;
                tickPoints += res.points;
            }
        }
        const double tickS = t.elapsed() / 1e3;
        std::printf("ticks: %d runs x %d ticks of %d lines: %lld points in %.2f s = %.0f points/s (%.2f ms "
                    "per run-tick)\n",
                    tickRuns, ticks - 1, tickLines, (long long)tickPoints, tickS, tickPoints / tickS,
                    tickS * 1e3 / (double(ticks - 1) * tickRuns));
    }

    // --- history of a 1M-point metric --------------------------------------------------------------
    if (part("history")) {
        auto hs = TrackingStore::open(dbPath);
        const RunId run =
            hs->createRun(hs->ensureExperiment(QStringLiteral("history")), QStringLiteral("1M"));
        QList<std::pair<QString, MetricPoint>> batch;
        std::mt19937_64 rng(1);
        std::normal_distribution<double> n(0, 0.01);
        for (qint64 s = 0; s < 1'000'000; ++s) {
            batch.push_back(
                {QStringLiteral("train/loss"), {s, 1700000000000 + s * 800, 1.0 / (1 + s * 1e-4) + n(rng)}});
            if (batch.size() == 20'000) {
                hs->logMetrics(run, batch);
                batch.clear();
            }
        }
        std::vector<double> ms;
        std::size_t got = 0;
        for (int i = 0; i < 21; ++i) {
            t.restart();
            const MetricHistory h = hs->history(run, QStringLiteral("train/loss"), {.buckets = 2000});
            ms.push_back(double(t.nsecsElapsed()) / 1e6);
            got = h.points.size();
        }
        std::vector<double> zoom;
        for (int i = 0; i < 21; ++i) {
            t.restart();
            hs->history(run, QStringLiteral("train/loss"), {.from = 400'000, .to = 450'000, .buckets = 2000});
            zoom.push_back(double(t.nsecsElapsed()) / 1e6);
        }
        std::printf("history: 1M points -> 2000 buckets (%zu plot points) in %.2f ms median; zoom to 50k "
                    "steps %.2f ms\n",
                    got, median(ms), median(zoom));
    }

    // --- the run list over 10,000 runs ---------------------------------------------------------------
    if (part("list")) {
        const QString listDb = QDir(work).filePath(QStringLiteral("list.sqlite"));
        for (const char *suffix : {"", "-wal", "-shm"})
            QFile::remove(listDb + QLatin1String(suffix));
        auto ls = TrackingStore::open(listDb);
        const ExperimentId e = ls->ensureExperiment(QStringLiteral("list"));
        ls->writeTransaction([&] {
            for (int r = 0; r < 10'000; ++r) {
                const RunId id = ls->createRun(e, QStringLiteral("run-%1").arg(r));
                ls->logParams(id,
                              {{QStringLiteral("optim.lr"), QString::number(1e-4 * (1 + r % 10))},
                               {QStringLiteral("seed"), QString::number(r)}});
                QList<std::pair<QString, MetricPoint>> latest;
                for (int k = 0; k < keys; ++k)
                    latest.push_back(
                        {QString::fromStdString(keyName(k)), {5000, 1700000000000, 1.0 / (k + r + 1)}});
                ls->logMetrics(id, latest);
            }
        });
        std::vector<double> ms, sorted;
        qsizetype n = 0;
        for (int i = 0; i < 11; ++i) {
            t.restart();
            n = ls->queryRuns({}).size();
            ms.push_back(double(t.nsecsElapsed()) / 1e6);
        }
        RunQuery q;
        q.orderByMetric = QStringLiteral("eval/loss");
        q.conditions = {*parseRunCondition(QStringLiteral("params.optim.lr >= 3e-4"))};
        for (int i = 0; i < 11; ++i) {
            t.restart();
            ls->queryRuns(q);
            sorted.push_back(double(t.nsecsElapsed()) / 1e6);
        }
        std::printf("list: %lld runs with %d latest metrics each in %.2f ms median; filtered by a param and "
                    "sorted by "
                    "a metric %.2f ms\n",
                    (long long)n, keys, median(ms), median(sorted));
    }
    return 0;
}
