// SPDX-License-Identifier: GPL-3.0-or-later
// The trainer as a cluster with only PyTorch builds it, without FFmpeg's development files (the
// GPU machine is such a place): its samples are Y4M. The binary is the one `tst_cluster_deploy`
// made (CTest fixture `trainer_standalone`, ORRERY_TRAINER_Y4M names it). Checked: the file is a
// valid 4:4:4 Y4M of the configured frames and size that FFmpeg decodes (the app plays it), the
// contact sheet is written beside it, the artifact event names it, the store records it, and
// the app's decoder reads exactly the file's frames.
#include "testsupport.h"

#include "clipdecoder.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

class TestTrainerY4m : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trainer;

    static QByteArray run(const QString &program, const QStringList &args, int *code)
    {
        QProcess p;
        p.start(program, args);
        if (!p.waitForFinished(120'000))
            p.kill();
        p.waitForFinished();
        *code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
        if (*code != 0)
            qWarning("%s: %s", qPrintable(program), p.readAllStandardError().constData());
        return p.readAllStandardOutput();
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_trainer = qEnvironmentVariable("ORRERY_TRAINER_Y4M");
        QVERIFY2(QFileInfo(m_trainer).isExecutable(),
                 "ORRERY_TRAINER_Y4M must name the standalone orrery-train (run through ctest: the "
                 "tst_cluster_deploy test builds it)");
        int code = 0;
        const QByteArray version = run(m_trainer, {QStringLiteral("--version")}, &code);
        QCOMPARE(code, 0);
        QVERIFY2(version.contains("samples as Y4M"), version.constData());
    }

    void aFolderOfY4mClipsTrainsWithoutFfmpeg()
    {
        // data.kind=folder on a machine without FFmpeg's libraries (the GPU machine was one): the
        // trainer's own Y4M reader; a corrupt clip is skipped with a warning; MP4s are not counted.
        const QString ffmpeg = QStandardPaths::findExecutable(QStringLiteral("ffmpeg"));
        QVERIFY2(!ffmpeg.isEmpty(), "ffmpeg (Debian: ffmpeg) is needed");
        const QString clips = m_dir.filePath(QStringLiteral("clips"));
        int code = 0;
        for (const auto &[sub, source] :
             {std::pair{QStringLiteral("a"), QStringLiteral("testsrc=size=48x32:rate=8")},
              std::pair{QStringLiteral("b"), QStringLiteral("mandelbrot=size=32x32:rate=8")}}) {
            QVERIFY(QDir().mkpath(clips + QLatin1Char('/') + sub));
            run(ffmpeg,
                {QStringLiteral("-v"), QStringLiteral("error"), QStringLiteral("-y"), QStringLiteral("-f"),
                 QStringLiteral("lavfi"), QStringLiteral("-i"), source, QStringLiteral("-frames:v"),
                 QStringLiteral("16"), QStringLiteral("-pix_fmt"), QStringLiteral("yuv420p"),
                 clips + QLatin1Char('/') + sub + QStringLiteral("/clip.y4m")},
                &code);
            QCOMPARE(code, 0);
        }
        QFile broken(clips + QStringLiteral("/b/broken.y4m"));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("YUV4MPEG2 W32 H32 F8:1 C420jpeg\nFRAME\n\x10\x20");
        broken.close();
        QFile mp4(clips + QStringLiteral("/a/ignored.mp4"));
        QVERIFY(mp4.open(QIODevice::WriteOnly));
        mp4.write("not read by this build");
        mp4.close();

        QFile config(m_dir.filePath(QStringLiteral("folder.yaml")));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(orrery::test::microConfig(3));
        config.close();
        const QString runDir = m_dir.filePath(QStringLiteral("folder run"));
        run(m_trainer,
            {QStringLiteral("--config"), config.fileName(), QStringLiteral("--run-dir"), runDir,
             QStringLiteral("--set"), QStringLiteral("data.kind=folder"), QStringLiteral("--set"),
             QStringLiteral("data.path=") + clips, QStringLiteral("--set"), QStringLiteral("data.classes=2"),
             QStringLiteral("--set"), QStringLiteral("data.workers=1")},
            &code);
        QCOMPARE(code, 0);
        QFile events(runDir + QStringLiteral("/events.jsonl"));
        QVERIFY(events.open(QIODevice::ReadOnly));
        int losses = 0;
        QString warnings;
        for (const QByteArray &line : events.readAll().split('\n')) {
            const QJsonObject e = QJsonDocument::fromJson(line).object();
            if (e[QLatin1String("kind")].toString() == QLatin1String("warning"))
                warnings += e[QLatin1String("message")].toString() + QLatin1Char('\n');
            if (e[QLatin1String("values")].toObject().contains(QLatin1String("train/loss")))
                ++losses;
        }
        QVERIFY(losses >= 1);
        QVERIFY2(warnings.contains(QStringLiteral("broken.y4m")), qPrintable(warnings));
        QVERIFY2(!warnings.contains(QStringLiteral("ignored.mp4")), qPrintable(warnings));

        // A folder with only MP4s says why nothing is read.
        const QString onlyMp4 = m_dir.filePath(QStringLiteral("only-mp4"));
        QVERIFY(QDir().mkpath(onlyMp4));
        QVERIFY(QFile::copy(mp4.fileName(), onlyMp4 + QStringLiteral("/x.mp4")));
        QProcess p;
        p.start(m_trainer,
                {QStringLiteral("--config"), config.fileName(), QStringLiteral("--run-dir"),
                 m_dir.filePath(QStringLiteral("mp4 run")), QStringLiteral("--set"),
                 QStringLiteral("data.kind=folder"), QStringLiteral("--set"),
                 QStringLiteral("data.path=") + onlyMp4});
        QVERIFY(p.waitForFinished(60'000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY2(p.readAllStandardError().contains("reads .y4m files only"), "the reason must be given");
    }

    void samplesAreY4mThatFfmpegDecodesAndTheStoreRecords()
    {
        // micro.yaml: clips of 4 frames of 16x16; one clip per sample, upscaled by sample.scale.
        const QString runDir = m_dir.filePath(QStringLiteral("y4m run"));
        QFile config(m_dir.filePath(QStringLiteral("trial.yaml")));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(orrery::test::microConfig(4));
        config.close();
        int code = 0;
        run(m_trainer, {QStringLiteral("--config"), config.fileName(), QStringLiteral("--run-dir"), runDir},
            &code);
        QCOMPARE(code, 0);

        const QString video = runDir + QStringLiteral("/samples/step-4.y4m");
        QFile y4m(video);
        QVERIFY2(y4m.open(QIODevice::ReadOnly), qPrintable(video));
        const QByteArray data = y4m.readAll();
        const QByteArray header = data.left(data.indexOf('\n'));
        const QList<QByteArray> fields = header.split(' ');
        QCOMPARE(fields.value(0), QByteArray("YUV4MPEG2"));
        int width = 0, height = 0;
        for (const QByteArray &f : fields) {
            if (f.startsWith('W'))
                width = f.mid(1).toInt();
            if (f.startsWith('H'))
                height = f.mid(1).toInt();
        }
        QVERIFY2(fields.contains("C444") && fields.contains("F8:1"), header.constData());
        QVERIFY2(width > 0 && height > 0 && width % 16 == 0 && width == height, header.constData());
        // Every frame: "FRAME\n" and three full planes; nothing after the 4th.
        const qsizetype frameBytes = 6 + qsizetype(width) * height * 3;
        QCOMPARE(data.size(), header.size() + 1 + 4 * frameBytes);
        for (int t = 0; t < 4; ++t)
            QCOMPARE(data.mid(header.size() + 1 + t * frameBytes, 6), QByteArray("FRAME\n"));

        // FFmpeg (what the app plays samples with) decodes all four frames at that size.
        const QString ffprobe = QStandardPaths::findExecutable(QStringLiteral("ffprobe"));
        QVERIFY2(!ffprobe.isEmpty(), "ffprobe (Debian: ffmpeg) is needed");
        const QJsonObject stream = QJsonDocument::fromJson(run(
            ffprobe,
            {QStringLiteral("-v"), QStringLiteral("error"), QStringLiteral("-count_frames"),
             QStringLiteral("-show_entries"), QStringLiteral("stream=codec_name,width,height,nb_read_frames"),
             QStringLiteral("-of"), QStringLiteral("json"), video},
            &code))[QLatin1String("streams")][0]
                                       .toObject();
        QCOMPARE(code, 0);
        QCOMPARE(stream[QLatin1String("codec_name")].toString(), QStringLiteral("rawvideo"));
        QCOMPARE(stream[QLatin1String("nb_read_frames")].toString(), QStringLiteral("4"));
        QCOMPARE(stream[QLatin1String("width")].toInt(), width);
        QCOMPARE(stream[QLatin1String("height")].toInt(), height);

        // The app's decoder (app/media): the same four frames, each equal to the file's own
        // planes, in any order of access, and the RGB it paints equal to `ffmpeg -pix_fmt bgra`'s.
        auto clip = orrery::media::ClipDecoder::open(video);
        QCOMPARE(clip->info().frameCount, 4);
        QCOMPARE(clip->info().width, width);
        QCOMPARE(clip->info().container, QStringLiteral("yuv4mpegpipe"));
        const QByteArray bgra = run(QStandardPaths::findExecutable(QStringLiteral("ffmpeg")),
                                    {QStringLiteral("-v"), QStringLiteral("error"), QStringLiteral("-i"),
                                     video, QStringLiteral("-f"), QStringLiteral("rawvideo"),
                                     QStringLiteral("-pix_fmt"), QStringLiteral("bgra"), QStringLiteral("-")},
                                    &code);
        QCOMPARE(code, 0);
        const qsizetype rgbBytes = qsizetype(width) * height * 4;
        for (int t : {3, 1, 0, 2}) {
            QString format;
            QVERIFY(clip->rawFrame(t, &format) ==
                    data.mid(header.size() + 1 + t * frameBytes + 6, frameBytes - 6));
            QCOMPARE(format, QStringLiteral("yuv444p"));
            const QImage image = clip->frame(t);
            QByteArray pixels;
            for (int y = 0; y < image.height(); ++y)
                pixels.append(reinterpret_cast<const char *>(image.constScanLine(y)), image.width() * 4);
            QVERIFY2(pixels == bgra.mid(t * rgbBytes, rgbBytes),
                     qPrintable(QStringLiteral("frame %1").arg(t)));
        }

        QFile png(runDir + QStringLiteral("/samples/step-4.png"));
        QVERIFY(png.open(QIODevice::ReadOnly));
        QVERIFY(png.read(8) == QByteArray("\x89PNG\r\n\x1a\n"));

        // The store takes the Y4M as the run's video, as it takes an MP4.
        const QString db = m_dir.filePath(QStringLiteral("store.sqlite"));
        auto runs = [&](const QStringList &args) {  // `orrery --db DB runs ARGS... --json`
            return QJsonDocument::fromJson(
                run(qEnvironmentVariable("ORRERY_CLI"),
                    QStringList{QStringLiteral("--db"), db, QStringLiteral("runs")} + args +
                        QStringList{QStringLiteral("--json")},
                    &code));
        };
        const QJsonArray ingested = runs({QStringLiteral("ingest"), runDir}).array();
        QCOMPARE(code, 0);
        const QString runId = QString::number(ingested.first()[QLatin1String("run_id")].toInteger());
        const QJsonObject shown = runs({QStringLiteral("show"), runId}).object();
        QCOMPARE(code, 0);
        bool recorded = false;
        for (const QJsonValue a : shown[QLatin1String("artifacts")].toArray())
            recorded |= a[QLatin1String("path")].toString() == QLatin1String("samples/step-4.y4m") &&
                a[QLatin1String("kind")].toString() == QLatin1String("video") &&
                a[QLatin1String("step")].toInteger() == 4;
        QVERIFY2(recorded, QJsonDocument(shown[QLatin1String("artifacts")].toArray()).toJson().constData());
    }
};

ORRERY_TEST_MAIN(TestTrainerY4m, QCoreApplication)
#include "tst_trainer_y4m.moc"
