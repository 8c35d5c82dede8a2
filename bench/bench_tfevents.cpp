// SPDX-License-Identifier: GPL-3.0-or-later
//
// TensorBoard ingest catch-up (RESULTS.md "TensorBoard ingest"): `bench_tfevents FILE [ROUNDS]`
// reads one event file from offset 0 into a fresh store, as `orrery runs ingest` and the follower
// do (runfiles.h ingestTfEventsChunk: 32 MiB reads, the points and the offset in one transaction
// per read), and, apart, only parses it (tfevents.h). Prints one JSON object: points, seconds and
// points per second (medians over ROUNDS), run by bench/tensorboard_ingest.py beside
// TensorBoard's own EventAccumulator.
#include "orrery/core/runfiles.h"
#include "orrery/core/store.h"
#include "orrery/core/tfevents.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace orrery::core;

namespace {

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() < 2) {
        std::fprintf(stderr, "usage: bench_tfevents FILE [ROUNDS]\n");
        return 2;
    }
    const QString path = args[1];
    const int rounds = args.size() > 2 ? args[2].toInt() : 5;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "cannot read %s\n", qPrintable(path));
        return 1;
    }
    const QByteArray bytes = file.readAll();
    std::vector<double> parseS, ingestS;
    qint64 points = 0, stored = 0;
    for (int round = 0; round < rounds; ++round) {
        QElapsedTimer clock;
        clock.start();
        const TfEventsChunk c = parseTfEvents(bytes);
        parseS.push_back(double(clock.nsecsElapsed()) / 1e9);
        points = c.points.size();

        QTemporaryDir dir;
        qputenv("ORRERY_CACHE_DIR", dir.filePath(QStringLiteral("cache")).toUtf8());
        auto store = TrackingStore::open(dir.filePath(QStringLiteral("bench.sqlite")));
        const RunId run =
            store->createRun(store->ensureExperiment(QStringLiteral("bench")), QStringLiteral("r"));
        clock.restart();
        // From the file, as the catch-up reads it: 32 MiB at a time from the stored offset.
        QFile f(path);
        f.open(QIODevice::ReadOnly);
        const QString media = tensorboardMediaDir(store->run(run)->uuid);
        stored = 0;
        for (;;) {
            const qint64 offset = store->ingestState(run, QStringLiteral("events")).offset;
            f.seek(offset);
            const QByteArray data = f.read(32 << 20);
            if (data.isEmpty())
                break;
            const TfIngest r =
                ingestTfEventsChunk(*store, run, QStringLiteral("events"), offset, data, media);
            stored += r.points;
            if (r.consumed == 0)
                break;
        }
        ingestS.push_back(double(clock.nsecsElapsed()) / 1e9);
    }
    const QJsonObject out{{QStringLiteral("file_bytes"), qint64(bytes.size())},
                          {QStringLiteral("points"), points},
                          {QStringLiteral("stored"), stored},
                          {QStringLiteral("parse_s"), median(parseS)},
                          {QStringLiteral("parse_points_per_s"), double(points) / median(parseS)},
                          {QStringLiteral("ingest_s"), median(ingestS)},
                          {QStringLiteral("ingest_points_per_s"), double(stored) / median(ingestS)},
                          {QStringLiteral("rounds"), rounds}};
    std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
    return 0;
}
