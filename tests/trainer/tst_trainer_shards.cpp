// SPDX-License-Identifier: GPL-3.0-or-later
// Streamed WebDataset shards (trainer/src/shards.h): data.path as a URL list with brace expansion
// and pipe: sources, read by real orrery-train processes (Gloo ranks through --nproc) from real
// pipes of real shell commands, shards of Y4M clips made by `tar`. No mocks: a failing source is
// `false` or a missing file, a stalled one is `sleep`, a slow one waits for a file the test makes.
#include "trainersupport.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>

#include <csignal>

using namespace orrery::test;

namespace {

QStringList eventTexts(const QString &runDir, const QString &kind)
{
    QStringList out;
    for (const QJsonObject &e : events(runDir))
        if (e[QLatin1String("kind")].toString() == kind)
            out << e[QLatin1String("message")].toString();
    return out;
}

int stepsLogged(const QString &runDir)
{
    int n = 0;
    for (const QJsonObject &e : events(runDir))
        n += e[QLatin1String("kind")].toString() == QLatin1String("metrics") &&
            e[QLatin1String("values")].toObject().contains(QLatin1String("train/loss"));
    return n;
}

// An 8-frame 32x32 4:2:0 Y4M clip (the test config's data.frames and data.size) of one grey level.
QByteArray y4mClip(int level)
{
    QByteArray out("YUV4MPEG2 W32 H32 F8:1 Ip A1:1 C420jpeg\n");
    for (int t = 0; t < 8; ++t)
        out += "FRAME\n" + QByteArray(32 * 32, char(level + 4 * t)) + QByteArray(2 * 16 * 16, char(128));
    return out;
}

// Processes whose command line is exactly `words` (a marker the test chose): left-overs.
int processesRunning(const QStringList &words)
{
    int n = 0;
    for (const QString &pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        QFile f(QStringLiteral("/proc/") + pid + QStringLiteral("/cmdline"));
        if (f.open(QIODevice::ReadOnly) &&
            QString::fromUtf8(f.readAll()).split(QChar(0), Qt::SkipEmptyParts) == words)
            ++n;
    }
    return n;
}

}  // namespace

class TestTrainerShards : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString dir(const QString &name) const { return m_dir.filePath(name); }

    QStringList args(const QString &runDir, const QString &path, const QStringList &sets) const
    {
        QStringList a{
            QStringLiteral("--config"),  orrery::test::sourceFile(QStringLiteral("tests/trainer/test.yaml")),
            QStringLiteral("--run-dir"), runDir,
            QStringLiteral("--set"),     QStringLiteral("data.kind=shards"),
            QStringLiteral("--set"),     QStringLiteral("data.path=") + path};
        for (const QString &s : sets)
            a << QStringLiteral("--set") << s;
        return a;
    }

    // A shard `name` of `count` samples (key.y4m + key.json) made by tar; its size in bytes.
    qint64 makeShard(const QString &name, int first, int count, const QString &extra = {})
    {
        const QString work = dir(name + QStringLiteral(".d"));
        QDir().mkpath(work);
        QStringList members;
        for (int k = first; k < first + count; ++k) {
            const QString key = QStringLiteral("clip%1").arg(k, 4, 10, QLatin1Char('0'));
            QFile clip(work + QLatin1Char('/') + key + QStringLiteral(".y4m"));
            QFile label(work + QLatin1Char('/') + key + QStringLiteral(".json"));
            if (!clip.open(QIODevice::WriteOnly) || !label.open(QIODevice::WriteOnly))
                return -1;
            clip.write(y4mClip(20 + 10 * k));
            label.write(QStringLiteral(R"({"label": %1})").arg(k % 8).toUtf8());
            members << key + QStringLiteral(".y4m") << key + QStringLiteral(".json");
        }
        if (!extra.isEmpty())
            members << extra;
        QProcess tar;
        tar.setWorkingDirectory(work);
        tar.start(QStringLiteral("tar"), QStringList{QStringLiteral("-cf"), dir(name)} + members);
        if (!tar.waitForFinished(60'000) || tar.exitCode() != 0)
            return -1;
        return QFileInfo(dir(name)).size();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFileInfo(trainer()).isExecutable(), "ORRERY_TRAINER must name orrery-train");
        QVERIFY(m_dir.isValid());
        for (int s = 0; s < 4; ++s)
            QVERIFY(makeShard(QStringLiteral("s-%1.tar").arg(s), 10 * s, 3) > 0);
    }

    void bracesExpandAndShardsSplitByRankThenWorker()
    {
        // Zero padding kept, a countdown, a list, two braces, `::` between patterns, and a shell
        // variable of a pipe: command left alone.
        const QString path =
            QStringLiteral("shards/train-{000008..000011}.tar::pipe:curl -s ${HOST}/x-{a,b}{1..0}.tar");
        const Result r = train(
            {QStringLiteral("--inspect-data"), QStringLiteral("--nproc"), QStringLiteral("2"),
             QStringLiteral("--set"), QStringLiteral("data.kind=shards"), QStringLiteral("--set"),
             QStringLiteral("data.path=") + path, QStringLiteral("--set"), QStringLiteral("data.workers=2")});
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        QStringList sources;
        for (const QJsonValue &v : j[QLatin1String("sources")].toArray())
            sources << v.toString();
        const QStringList expected{
            QStringLiteral("shards/train-000008.tar"),       QStringLiteral("shards/train-000009.tar"),
            QStringLiteral("shards/train-000010.tar"),       QStringLiteral("shards/train-000011.tar"),
            QStringLiteral("pipe:curl -s ${HOST}/x-a1.tar"), QStringLiteral("pipe:curl -s ${HOST}/x-a0.tar"),
            QStringLiteral("pipe:curl -s ${HOST}/x-b1.tar"), QStringLiteral("pipe:curl -s ${HOST}/x-b0.tar")};
        QCOMPARE(sources, expected);
        // Shard i → rank i mod 2; the rank's j-th shard → worker j mod 2. Every shard exactly once.
        QList<int> seen(sources.size(), 0);
        const QJsonArray ranks = j[QLatin1String("ranks")].toArray();
        QCOMPARE(ranks.size(), 2);
        for (const QJsonValue &rv : ranks) {
            const int rank = rv[QLatin1String("rank")].toInt();
            const QJsonArray workers = rv[QLatin1String("workers")].toArray();
            QCOMPARE(workers.size(), 2);
            for (int w = 0; w < 2; ++w) {
                const QJsonArray shards = workers[w].toArray();
                QCOMPARE(shards.size(), 2);
                for (int k = 0; k < shards.size(); ++k) {
                    const int i = shards[k].toInt();
                    QCOMPARE(i % 2, rank);
                    QCOMPARE((i / 2) % 2, w);
                    ++seen[i];
                }
            }
        }
        QCOMPARE(seen, QList<int>(sources.size(), 1));

        // Bad lists: a clear config error naming the key, before any work.
        for (const QString &bad :
             {QStringLiteral("s-{0..3.tar"), QStringLiteral("s-{x}.tar"),
              QStringLiteral("https://host/s-{0..3}.tar"), QStringLiteral("s-{0..99999999}.tar")}) {
            const Result e = train({QStringLiteral("--inspect-data"), QStringLiteral("--set"),
                                    QStringLiteral("data.kind=shards"), QStringLiteral("--set"),
                                    QStringLiteral("data.path=") + bad});
            QVERIFY2(e.code == 2, qPrintable(bad));
            QVERIFY2(e.err.contains("data.path: "), e.err.constData());
        }
    }

    void twoRanksStreamDisjointPipeShards()
    {
        // Each source notes which rank ran it ($RANK, set by --nproc) before it streams its shard.
        const QString log = dir(QStringLiteral("opened.log"));
        const QString path =
            QStringLiteral("pipe:n={0..3}; echo $n $RANK >> '%1'; cat '%2/s-'$n.tar").arg(log, m_dir.path());
        const QString runDir = dir(QStringLiteral("two-ranks"));
        const Result r = train(args(runDir, path,
                                    {QStringLiteral("train.steps=4"), QStringLiteral("train.log_every=2"),
                                     QStringLiteral("data.workers=2")}) +
                               QStringList{QStringLiteral("--nproc"), QStringLiteral("2")});
        QVERIFY2(r.code == 0, r.err.constData());
        QCOMPARE(stepsLogged(runDir), 2);
        QVERIFY2(eventTexts(runDir, QStringLiteral("warning")).isEmpty(),
                 qPrintable(eventTexts(runDir, QStringLiteral("warning")).join(QLatin1Char('\n'))));
        QFile f(log);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QMap<int, QSet<int>> ranksOfShard;
        for (const QByteArray &line : f.readAll().split('\n')) {
            const QList<QByteArray> w = line.simplified().split(' ');
            if (w.size() == 2)
                ranksOfShard[w[0].toInt()].insert(w[1].toInt());
        }
        // Every shard was read (each rank has one per worker), and only by its own rank.
        QCOMPARE(ranksOfShard.size(), 4);
        for (auto it = ranksOfShard.begin(); it != ranksOfShard.end(); ++it)
            QCOMPARE(it.value(), QSet<int>{it.key() % 2});
    }

    void failedAndStalledSourcesAreRetriedThenSkipped()
    {
        // A good shard among a failing command, a missing file, a stalled command and a truncated
        // stream: each is tried twice, skipped with a warning, and training completes.
        const QString m = m_dir.path();
        const QString path =
            QStringLiteral("pipe:cat '%1/s-0.tar'::pipe:false::%1/missing.tar::pipe:sleep 613::"
                           "pipe:head -c 3000 '%1/s-1.tar'")
                .arg(m);
        const QString runDir = dir(QStringLiteral("skips"));
        const Result r =
            train(args(runDir, path,
                       {QStringLiteral("train.steps=3"), QStringLiteral("train.log_every=1"),
                        QStringLiteral("data.workers=1"), QStringLiteral("data.read_ahead=1"),
                        QStringLiteral("data.source_retries=1"), QStringLiteral("data.source_timeout_s=1")}));
        QVERIFY2(r.code == 0, r.err.constData());
        QCOMPARE(stepsLogged(runDir), 3);
        const QString warnings = eventTexts(runDir, QStringLiteral("warning")).join(QLatin1Char('\n'));
        QVERIFY2(warnings.contains(QStringLiteral("skipped pipe:false: exit status 1 after 2 tries")),
                 qPrintable(warnings));
        QVERIFY2(
            warnings.contains(
                QStringLiteral("skipped %1/missing.tar: cannot open: No such file or directory after 2 tries")
                    .arg(m)),
            qPrintable(warnings));
        QVERIFY2(warnings.contains(QStringLiteral("skipped pipe:sleep 613: no bytes for 1s after 2 tries")),
                 qPrintable(warnings));
        QVERIFY2(warnings.contains(QStringLiteral("s-1.tar': truncated tar")), qPrintable(warnings));
        QVERIFY2(!warnings.contains(QStringLiteral("s-0.tar")), qPrintable(warnings));
        // The stalled command was killed, not left behind.
        QCOMPARE(processesRunning({QStringLiteral("sleep"), QStringLiteral("613")}), 0);

        // Nothing readable at all: a clear error, not a hang.
        const Result none =
            train(args(dir(QStringLiteral("none")), QStringLiteral("pipe:false::%1/missing.tar").arg(m),
                       {QStringLiteral("data.source_retries=0")}));
        QCOMPARE(none.code, 1);
        QVERIFY2(none.err.contains("every source failed"), none.err.constData());
    }

    void trainingStartsBeforeASlowSourceHasFinished()
    {
        // One shard of 12 samples; the source sends the bytes of the first 6 and then waits for a
        // file the test makes only after training has logged its first step.
        const qint64 size = makeShard(QStringLiteral("slow.tar"), 100, 12);
        QVERIFY(size > 0);
        const qint64 half = 6 * (512 + 12'800 + 512 + 512);  // a header and padded data per member
        const QString go = dir(QStringLiteral("go"));
        const QString path = QStringLiteral("pipe:head -c %1 '%2'; while [ ! -e '%3' ]; do sleep 0.1; done; "
                                            "tail -c +%4 '%2'")
                                 .arg(half)
                                 .arg(dir(QStringLiteral("slow.tar")), go)
                                 .arg(half + 1);
        const QString runDir = dir(QStringLiteral("slow"));
        QProcess p;
        p.start(trainer(),
                args(runDir, path,
                     {QStringLiteral("train.steps=4"), QStringLiteral("train.log_every=1"),
                      QStringLiteral("data.workers=1"), QStringLiteral("data.source_timeout_s=120")}));
        QVERIFY(p.waitForStarted());
        bool stepped = false;
        for (int i = 0; i < 1200 && !stepped && p.state() == QProcess::Running; ++i) {
            QThread::msleep(100);
            stepped = stepsLogged(runDir) > 0;
        }
        const bool finishedEarly = QFileInfo::exists(go);
        QFile(go).open(QIODevice::WriteOnly);
        QVERIFY(p.waitForFinished(180'000));
        QVERIFY2(stepped, p.readAllStandardError().constData());
        QVERIFY(!finishedEarly);
        QCOMPARE(p.exitCode(), 0);
        QCOMPARE(stepsLogged(runDir), 4);
    }

    void anMp4MemberDecodesFromMemory()
    {
        const QString ffmpeg = QStandardPaths::findExecutable(QStringLiteral("ffmpeg"));
        const Result version = train({QStringLiteral("--version")});
        if (ffmpeg.isEmpty() || version.out.contains("samples as Y4M"))
            QSKIP("needs the ffmpeg CLI and an orrery-train built with FFmpeg");
        const QString work = dir(QStringLiteral("mp4.tar.d"));
        QDir().mkpath(work);
        QProcess enc;
        enc.start(ffmpeg,
                  {QStringLiteral("-v"), QStringLiteral("error"), QStringLiteral("-y"), QStringLiteral("-f"),
                   QStringLiteral("lavfi"), QStringLiteral("-i"), QStringLiteral("testsrc=size=64x64:rate=8"),
                   QStringLiteral("-frames:v"), QStringLiteral("16"), QStringLiteral("-pix_fmt"),
                   QStringLiteral("yuv420p"), work + QStringLiteral("/movie.mp4")});
        QVERIFY(enc.waitForFinished(60'000) && enc.exitCode() == 0);
        QVERIFY(makeShard(QStringLiteral("mp4.tar"), 200, 1, QStringLiteral("movie.mp4")) > 0);
        const QString runDir = dir(QStringLiteral("mp4"));
        // Samples alternate between the Y4M clip and the mp4; an mp4 that FFmpeg could not read
        // from memory would be skipped with a warning naming it.
        const Result r =
            train(args(runDir, QStringLiteral("pipe:cat '%1'").arg(dir(QStringLiteral("mp4.tar"))),
                       {QStringLiteral("train.steps=2"), QStringLiteral("train.log_every=1"),
                        QStringLiteral("data.workers=1")}));
        QVERIFY2(r.code == 0, r.err.constData());
        QCOMPARE(stepsLogged(runDir), 2);
        const QString warnings = eventTexts(runDir, QStringLiteral("warning")).join(QLatin1Char('\n'));
        QVERIFY2(!warnings.contains(QStringLiteral("movie")), qPrintable(warnings));
    }
};

QTEST_GUILESS_MAIN(TestTrainerShards)
#include "tst_trainer_shards.moc"
