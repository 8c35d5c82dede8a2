// SPDX-License-Identifier: GPL-3.0-or-later
// Sharded data parallel (dist.shard, ZeRO stages 1, 2 and 3; trainer/src/shard.h) with real
// orrery-train ranks (--nproc, Gloo on CPU) on the small test model: a sharded run must train
// exactly as the unsharded one, keep ~1/N of the optimizer state per rank, and write checkpoints
// that resume at another world size and sharding.
#include "testsupport.h"
#include "trainersupport.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonObject>
#include <QTemporaryDir>

#include <cmath>

using namespace orrery::test;

namespace {

// The losses of two runs agree at every logged step from `from` to `to`, to `tolerance` relative.
QString lossMismatch(const QMap<qint64, double> &a, const QMap<qint64, double> &b, qint64 from, qint64 to,
                     double tolerance = 1e-5)
{
    for (qint64 s = from; s <= to; ++s) {
        if (!a.contains(s) || !b.contains(s))
            return QStringLiteral("step %1 missing (%2 and %3 steps logged)")
                .arg(s)
                .arg(a.size())
                .arg(b.size());
        if (std::abs(a[s] - b[s]) > tolerance * std::max(1.0, std::abs(a[s])))
            return QStringLiteral("step %1: %2 vs %3").arg(s).arg(a[s], 0, 'g', 10).arg(b[s], 0, 'g', 10);
    }
    return {};
}

// Two checkpoints (--inspect) agree on every tensor under `prefix`: the norms to 1e-5 relative,
// the sums to 1e-5 of the largest a sum could be (norm x sqrt(elements)). A sum alone is no
// measure here: attention key biases get gradients of rounding noise, which AdamW scales up to
// steps of the learning rate's size, so their near-zero sums differ in the 4th digit between any
// two summation orders (measured: the fused kernel's vector and scalar paths), their norms do not.
QString checkpointMismatch(const QJsonObject &a, const QJsonObject &b, const QString &prefix)
{
    const QList<TensorPair> pairs = tensorPairs(a, b, prefix);
    for (const TensorPair &t : pairs) {
        if (t.b.isEmpty())
            return t.key + QStringLiteral(" is missing");
        double elements = 1;
        for (const QJsonValue &d : t.a[QLatin1String("shape")].toArray())
            elements *= d.toDouble();
        const double normA = t.a[QLatin1String("norm")].toDouble(),
                     normB = t.b[QLatin1String("norm")].toDouble();
        const double sumA = t.a[QLatin1String("sum")].toDouble(), sumB = t.b[QLatin1String("sum")].toDouble();
        if (std::abs(normA - normB) > 1e-5 * std::max(normA, 1e-6) ||
            std::abs(sumA - sumB) > 1e-5 * std::max(normA * std::sqrt(elements), 1e-6))
            return QStringLiteral("%1: norm %2 vs %3, sum %4 vs %5")
                .arg(t.key)
                .arg(normA, 0, 'g', 10)
                .arg(normB, 0, 'g', 10)
                .arg(sumA, 0, 'g', 10)
                .arg(sumB, 0, 'g', 10);
    }
    return pairs.isEmpty() ? QStringLiteral("no tensor under ") + prefix : QString();
}

QList<double> bytesPerRank(const QString &runDir, const char *key)
{
    QList<double> out;
    const QList<QJsonObject> ev = events(runDir);
    if (ev.isEmpty())
        return out;
    for (const QJsonValue &v : ev.first()[QLatin1String("run")][QLatin1String(key)].toArray())
        out.push_back(v.toDouble());
    return out;
}
QList<double> stateBytesPerRank(const QString &runDir)
{
    return bytesPerRank(runDir, "optimizer_state_bytes_per_rank");
}

// Each rank's `part` is `whole` / world, to 3% (padding under world size elements per bucket, a
// step count per bucket instead of per parameter); empty when so.
QString notOneNth(const QList<double> &whole, const QList<double> &parts, int world)
{
    if (whole.size() != world || parts.size() != world)
        return QStringLiteral("%1 and %2 ranks reported").arg(whole.size()).arg(parts.size());
    for (int r = 0; r < world; ++r) {
        const double ratio = parts[r] / (whole[r] / world);
        if (ratio < 0.97 || ratio > 1.03)
            return QStringLiteral("rank %1: %2 bytes, unsharded %3").arg(r).arg(parts[r]).arg(whole[r]);
    }
    return {};
}

}  // namespace

class TestTrainerZero : public QObject {
    Q_OBJECT
    // Every run trains kSteps; a resumed one stops at kStop first. Ten steps show a sharded run
    // equal to the unsharded one at every step, as twenty did, in half the time.
    static constexpr int kSteps = 10, kStop = 5;
    QTemporaryDir m_dir;
    // Completed runs by what they were asked (settings, world size, arguments): a row that needs a
    // run another row already made reuses it (the 4-rank stage 2 run is the unsharded reference's
    // partner, the uninterrupted run a resume is held against, and accumulation's control).
    QHash<QString, QString> m_runs;

    QString dir(const QString &name) { return m_dir.filePath(name); }

    // Settings every run here shares: the test model at half its width on clips of 4 frames of
    // 16x16 (what is compared, losses and checkpoints, does not depend on the size, and a 4-rank run
    // takes 3.6 CPU-seconds instead of 8.4), and small buckets, so a sharded run has several
    // (the UNet 23, the DiT 3), each split between the ranks (and stage 2 has more buckets than
    // it keeps in flight).
    static QStringList common(const QString &arch, qint64 steps)
    {
        return {QStringLiteral("model.arch=") + arch,
                QStringLiteral("train.steps=%1").arg(steps),
                QStringLiteral("train.log_every=1"),
                QStringLiteral("train.sample_every=0"),
                QStringLiteral("train.eval_every=0"),
                QStringLiteral("dist.bucket_mb=0.0125"),
                QStringLiteral("train.keep_checkpoints=5"),
                QStringLiteral("model.channels=8"),
                QStringLiteral("data.size=16"),
                QStringLiteral("data.frames=4")};
    }

    // A run of `world` ranks to its end; its run dir. A run asked for before (the same settings,
    // world size and arguments, under any name) that completed is not trained again.
    QString run(const QString &name, const QStringList &sets, int world, const QStringList &extra = {})
    {
        QStringList sorted = sets;
        sorted.sort();
        const QString key = sorted.join(QLatin1Char('\n')) + QStringLiteral("\nworld=%1\n").arg(world) +
            extra.join(QLatin1Char('\n'));
        if (const QString done = m_runs.value(key); !done.isEmpty() &&
            exitJson(done)[QLatin1String("state")].toString() == QLatin1String("completed"))
            return done;
        const QString runDir = dir(name);
        QDir(runDir).removeRecursively();
        const Result r = train(runArgs(runDir, sets) +
                               QStringList{QStringLiteral("--nproc"), QString::number(world)} + extra);
        if (r.code != 0 && r.code != 75)
            qWarning("%s failed (%d): %s", qPrintable(name), r.code, r.err.constData());
        m_runs.insert(key, runDir);
        return runDir;
    }

    // `sets` + `four` on 4 ranks to --stop-at-step kStop, then `sets` + `two` on 2 ranks, resumed,
    // in `resumed`: empty, or what failed.
    QString stopAtHalfResumeAtTwo(const QString &resumed, const QStringList &sets, const QStringList &four,
                                  const QStringList &two)
    {
        QDir(resumed).removeRecursively();
        const Result first = train(runArgs(resumed, sets + four) +
                                   QStringList{QStringLiteral("--nproc"), QStringLiteral("4"),
                                               QStringLiteral("--stop-at-step"), QString::number(kStop)});
        if (first.code != 75)
            return QStringLiteral("4 ranks: exit %1: %2").arg(first.code).arg(QString::fromUtf8(first.err));
        const Result second = train(runArgs(resumed, sets + two) +
                                    QStringList{QStringLiteral("--nproc"), QStringLiteral("2"),
                                                QStringLiteral("--resume"), QStringLiteral("auto")});
        if (second.code != 0)
            return QStringLiteral("2 ranks: exit %1: %2").arg(second.code).arg(QString::fromUtf8(second.err));
        return {};
    }

    // The sharded run completed with `shard`, its losses those of `none` to 1e-5 at every step, and
    // its last checkpoint the same (model, EMA, the consolidated optimizer state): empty, or what
    // differs.
    static QString trainsAs(const QString &none, const QString &sharded, const QString &shard, int steps)
    {
        if (exitJson(sharded)[QLatin1String("state")].toString() != QLatin1String("completed"))
            return sharded + QStringLiteral(" did not complete");
        if (events(sharded).first()[QLatin1String("run")][QLatin1String("shard")].toString() != shard)
            return QStringLiteral("the run's shard is not ") + shard;
        const QString mismatch = lossMismatch(losses(none), losses(sharded), 1, steps);
        if (!mismatch.isEmpty())
            return mismatch;
        const QString ckpt = QStringLiteral("/checkpoints/step-%1.ckpt").arg(steps);
        const QJsonObject a = inspect(none + ckpt), b = inspect(sharded + ckpt);
        for (const char *prefix : {"model/", "ema/", "optim/exp_avg/", "optim/exp_avg_sq/", "optim/step/"})
            if (const QString diff = checkpointMismatch(a, b, QString::fromLatin1(prefix)); !diff.isEmpty())
                return diff;
        return {};
    }

    // Stage 3's settings (the DiT as dit-tiny has it: x0, local mixing in its blocks, the pixel head
    // outside them; its blocks recomputed, samples at kStop) and `extra`.
    static QStringList stage3(const QString &extra = {})
    {
        QStringList sets = common(QStringLiteral("dit"), kSteps) +
            QStringList{QStringLiteral("train.activation_checkpointing=true"),
                        QStringLiteral("train.sample_every=%1").arg(kStop),
                        QStringLiteral("model.prediction=x0"), QStringLiteral("model.local_mixing=true"),
                        QStringLiteral("model.pixel_head=true")};
        if (!extra.isEmpty())
            sets.append(extra);
        return sets;
    }

    static void archRows()
    {
        QTest::addColumn<QString>("arch");
        for (const char *arch : {"unet", "dit"})
            QTest::newRow(arch) << QString::fromLatin1(arch);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFileInfo(trainer()).isExecutable(), "ORRERY_TRAINER must name orrery-train");
    }

    void shardedTrainsAsUnsharded_data()
    {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<int>("world");
        QTest::addColumn<QString>("shard");
        for (const char *arch : {"unet", "dit"})
            for (int world : {2, 4})
                for (const char *shard : {"optimizer", "gradients"})
                    QTest::addRow("%s %d ranks %s", arch, world, shard)
                        << QString::fromLatin1(arch) << world << QString::fromLatin1(shard);
    }

    // kSteps of each stage at 2 and 4 ranks: the losses of dist.shard none at the same world
    // size to 1e-5, the same final checkpoint (model, EMA and the consolidated optimizer state),
    // and each rank's optimizer state ~1/N of the unsharded one, as the ranks report it.
    void shardedTrainsAsUnsharded()
    {
        QFETCH(QString, arch);
        QFETCH(int, world);
        QFETCH(QString, shard);
        const QStringList sets = common(arch, kSteps) + QStringList{QStringLiteral("train.batch_size=2")};
        const QString none = run(QStringLiteral("%1-%2-none").arg(arch).arg(world), sets, world);
        const QString sharded = run(QStringLiteral("%1-%2-%3").arg(arch).arg(world).arg(shard),
                                    sets + QStringList{QStringLiteral("dist.shard=") + shard}, world);
        const QString differs = trainsAs(none, sharded, shard, kSteps);
        QVERIFY2(differs.isEmpty(), qPrintable(differs));

        const QString bytes = notOneNth(stateBytesPerRank(none), stateBytesPerRank(sharded), world);
        QVERIFY2(bytes.isEmpty(), qPrintable(bytes));
    }

    void parameterShardingTrainsAsUnsharded_data()
    {
        QTest::addColumn<int>("world");
        QTest::newRow("2 ranks") << 2;
        QTest::newRow("4 ranks") << 4;
    }

    // Stage 3 (the DiT, its blocks recomputed): kSteps, with samples at step kStop (the EMA made
    // whole for them), train as dist.shard none does to 1e-5, write the same checkpoint, and each
    // rank keeps ~1/N of the parameters, gradients, optimizer state and EMA between steps.
    void parameterShardingTrainsAsUnsharded()
    {
        QFETCH(int, world);
        const QStringList sets = stage3(QStringLiteral("train.batch_size=2"));
        const QString none = run(QStringLiteral("stage3-%1-none").arg(world), sets, world);
        const QString sharded = run(QStringLiteral("stage3-%1-parameters").arg(world),
                                    sets + QStringList{QStringLiteral("dist.shard=parameters")}, world);
        const QString differs = trainsAs(none, sharded, QStringLiteral("parameters"), kSteps);
        QVERIFY2(differs.isEmpty(), qPrintable(differs));
        QVERIFY(QFileInfo(sharded + QStringLiteral("/samples/step-%1.png").arg(kStop)).size() > 0);
        const QString bytes = notOneNth(bytesPerRank(none, "model_state_bytes_per_rank"),
                                        bytesPerRank(sharded, "model_state_bytes_per_rank"), world);
        QVERIFY2(bytes.isEmpty(), qPrintable(bytes));
    }

    void parameterShardingResumesAtAnotherWorldSize_data()
    {
        QTest::addColumn<QString>("then");
        QTest::newRow("stage 3 at 2 ranks") << QStringLiteral("parameters");
        QTest::newRow("unsharded at 2 ranks") << QStringLiteral("none");
    }

    // Written by 4 ranks with stage 3, resumed by 2 (the same global batch) with stage 3 or none:
    // the loss curve goes on as the uninterrupted 4-rank run's does.
    void parameterShardingResumesAtAnotherWorldSize()
    {
        QFETCH(QString, then);
        const QStringList sets = stage3();
        const QStringList four{QStringLiteral("train.batch_size=2"), QStringLiteral("dist.shard=parameters")};
        const QString straight = run(QStringLiteral("stage3-straight-4"), sets + four, 4);
        const QString resumed = dir(QStringLiteral("stage3-resumed-") + then);
        const QString failed = stopAtHalfResumeAtTwo(
            resumed, sets, four,
            {QStringLiteral("train.batch_size=4"), QStringLiteral("dist.shard=") + then});
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
        const QString mismatch = lossMismatch(losses(straight), losses(resumed), kStop + 1, kSteps, 1e-4);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    // train.grad_accum=2 with stage 3 (each micro-step reduce-scatters into the slices) trains as
    // the unsharded run with the same accumulation.
    void gradientAccumulationWithParameterSharding()
    {
        const QStringList sets = common(QStringLiteral("dit"), kSteps) +
            QStringList{QStringLiteral("train.batch_size=2"), QStringLiteral("train.grad_accum=2"),
                        QStringLiteral("train.activation_checkpointing=true")};
        const QString none = run(QStringLiteral("stage3-accum-none"), sets, 2);
        const QString sharded = run(QStringLiteral("stage3-accum"),
                                    sets + QStringList{QStringLiteral("dist.shard=parameters")}, 2);
        QCOMPARE(exitJson(sharded)[QLatin1String("state")].toString(), QStringLiteral("completed"));
        const QString mismatch = lossMismatch(losses(none), losses(sharded), 1, kSteps);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void resumeAtTwoRanksFromAShardedCheckpointOfFour_data() { archRows(); }

    // Written by 4 ranks with stage 2, resumed by 2 ranks with stage 1 (the same global batch:
    // 4 x 2 = 2 x 4 samples): the loss curve goes on as the uninterrupted 4-rank run's does.
    void resumeAtTwoRanksFromAShardedCheckpointOfFour()
    {
        QFETCH(QString, arch);
        const QStringList sets = common(arch, kSteps);
        const QStringList four{QStringLiteral("train.batch_size=2"), QStringLiteral("dist.shard=gradients")};
        const QString straight = run(arch + QStringLiteral("-straight-4"), sets + four, 4);
        const QString resumed = dir(arch + QStringLiteral("-resumed-2"));
        const QString failed = stopAtHalfResumeAtTwo(
            resumed, sets, four,
            {QStringLiteral("train.batch_size=4"), QStringLiteral("dist.shard=optimizer")});
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
        const QList<QJsonObject> ev = events(resumed);
        bool resumedAtTwo = false;
        for (const QJsonObject &e : ev)
            resumedAtTwo |= e[QLatin1String("run")][QLatin1String("resumed_from")].toString() ==
                    QStringLiteral("step-%1.ckpt").arg(kStop) &&
                e[QLatin1String("run")][QLatin1String("world_size")].toInt() == 2;
        QVERIFY(resumedAtTwo);
        // Another world size sums the gradients in another order: 1e-4, as tst_trainer's 2 ranks
        // against 1.
        const QString mismatch = lossMismatch(losses(straight), losses(resumed), kStop + 1, kSteps, 1e-4);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        // The 4-rank sharded checkpoint is consolidated in the unsharded layout: a moment of
        // every parameter, the step count kStop.
        const QJsonObject t = inspect(resumed + QStringLiteral("/checkpoints/step-%1.ckpt").arg(kStop));
        int params = 0, moments = 0;
        for (auto it = t.begin(); it != t.end(); ++it) {
            params += it.key().startsWith(QLatin1String("model/"));
            moments += it.key().startsWith(QLatin1String("optim/exp_avg_sq/"));
        }
        QVERIFY(params > 0);
        QCOMPARE(moments, params);
        QCOMPARE(t[QLatin1String("optim/step/0")][QLatin1String("sum")].toDouble(), double(kStop));
    }

    void gradientAccumulationWithSharding_data() { archRows(); }

    // train.grad_accum=2 with stage 2 (the micro-step accumulates the full gradients locally,
    // the last one reduce-scatters them) trains as the unsharded run with the same accumulation.
    void gradientAccumulationWithSharding()
    {
        QFETCH(QString, arch);
        const QStringList sets = common(arch, kSteps) +
            QStringList{QStringLiteral("train.batch_size=2"), QStringLiteral("train.grad_accum=2")};
        const QString none = run(arch + QStringLiteral("-accum-none"), sets, 2);
        const QString sharded = run(arch + QStringLiteral("-accum-gradients"),
                                    sets + QStringList{QStringLiteral("dist.shard=gradients")}, 2);
        QCOMPARE(exitJson(sharded)[QLatin1String("state")].toString(), QStringLiteral("completed"));
        const QString mismatch = lossMismatch(losses(none), losses(sharded), 1, kSteps);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        // Accumulation matters here: without it (one micro-step of the same batch) the curve differs.
        const QString single =
            run(arch + QStringLiteral("-accum-off"),
                common(arch, kSteps) +
                    QStringList{QStringLiteral("train.batch_size=2"), QStringLiteral("dist.shard=gradients")},
                2);
        QVERIFY(!lossMismatch(losses(none), losses(single), 2, kSteps).isEmpty());
    }

    // Stage 3 gathers each block around its forward and its recomputed backward: without blocks
    // recomputed (or with the UNet, whose blocks are not units) a clear config error, before any
    // work.
    void parameterShardingNeedsRecomputedBlocks_data()
    {
        QTest::addColumn<QStringList>("sets");
        QTest::newRow("unet") << QStringList{QStringLiteral("model.arch=unet"),
                                             QStringLiteral("train.activation_checkpointing=true")};
        QTest::newRow("dit without recompute") << QStringList{QStringLiteral("model.arch=dit")};
    }
    void parameterShardingNeedsRecomputedBlocks()
    {
        QFETCH(QStringList, sets);
        const QString runDir = dir(QStringLiteral("stage3-refused"));
        const Result r = train(runArgs(runDir, sets + QStringList{QStringLiteral("dist.shard=parameters")}));
        QCOMPARE(r.code, 2);
        QVERIFY2(QString::fromUtf8(r.err).contains(
                     QLatin1String("it needs model.arch dit and train.activation_checkpointing: true")),
                 r.err.constData());
        QVERIFY(!QFileInfo::exists(runDir));
    }
};

QTEST_GUILESS_MAIN(TestTrainerZero)
#include "tst_trainer_zero.moc"
