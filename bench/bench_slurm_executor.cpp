// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Slurm executor at sweep scale, against the local test cluster's real Slurm over loopback
// SSH (bench/RESULTS.md "Sweeps: Slurm executor"):
//   (a) submitting a 1,000-trial sweep: remote commands counted and wall time, against the peer
//       of uploading each trial.yaml over SFTP and then running sbatch (ARCHITECTURE.md's first
//       sketch of the walk);
//   (b) one monitor tick for 1,000 active trials: one poll of 1,000 task ids plus reading 1,000
//       events.jsonl files from their offsets, each with a new line since the last tick; the
//       batch reader (one perl) against the per-file SFTP fallback as the peer.
//
//   bench_slurm_executor [--trials N] [--ticks N] [--sftp-ticks N] [--submits N] [--env FILE]
//
// Without --env it starts its own fixture with tests/fixture/localcluster.py and stops it after.
// The trials' trainer is /bin/true and the arrays are held or cancelled at once: only Orrery's
// side is measured, not Slurm running 1,000 tasks.
#include "benchsupport.h"
#include "orrery/core/store.h"
#include "orrery/core/sweeprunner.h"
#include "orrery/remote/connection.h"
#include "orrery/remote/shell.h"
#include "orrery/remote/slurmexecutor.h"
#include "orrery/remote/tar.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QThread>
#include <QUuid>

#include <cstdio>
#include <stdexcept>

using orrery::bench::msSince;
using orrery::bench::Stats;
using orrery::bench::stats;
using orrery::core::FileRead;
using orrery::core::LaunchBatch;
using orrery::core::TaskLaunch;
using orrery::remote::commandLine;
using orrery::remote::Connection;
using orrery::remote::SlurmExecutor;

namespace {

// A resolved trial config of realistic size (~700 bytes: the small model plus swept keys).
QByteArray trialConfig(int i)
{
    QByteArray c =
        "model: {channels: 64, channel_mult: [1, 2, 4], patch: 2, attn_levels: [2], temporal_layers: 2, "
        "heads: 4}\noptim: {lr: ";
    c += QByteArray::number(1e-4 * (1 + i % 10)) +
        ", weight_decay: 0.01, warmup_steps: 500, betas: [0.9, 0.99]}\n"
        "train: {batch_size: 16, steps: 20000, log_every: 10, ckpt_every: 1000, sample_every: 2500, "
        "eval_every: "
        "2500, ema_decay: 0.999, grad_accum: 1}\n"
        "sample: {count: 4, steps: 16, guidance: 2.0, fps: 8}\neval: {batches: 2}\n"
        "data: {kind: moving_shapes, frames: 8, size: 32, classes: 8, workers: 4, prefetch: 4}\n"
        "seed: " +
        QByteArray::number(i) + "\n# trial " + QByteArray::number(i) + " of the benchmark sweep\n";
    return c;
}

QByteArray metricsLine(int step)
{
    return R"({"v":1,"t":1795249504.319,"kind":"metrics","step":)" + QByteArray::number(step) +
        R"(,"values":{"train/loss":0.11342,"train/lr":0.0001,"train/grad_norm":0.8812,"perf/samples_per_s":412.5,"perf/step_time_s":0.0388}})"
        "\n";
}

void append(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    if (!f.open(QIODevice::Append) || f.write(bytes) != bytes.size())
        throw std::runtime_error("cannot append to " + path.toStdString());
}

void row(const char *what, const Stats &s, int runs)
{
    std::printf("| %s | %.1f | %.1f | %.1f | %d |\n", what, s.median, s.p90, s.mean, runs);
}

}  // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    int trials = 1000, ticks = 20, sftpTicks = 3, submits = 5;
    const QStringList args = app.arguments();
    for (qsizetype i = 1; i + 1 < args.size(); ++i) {
        const int value = args[i + 1].toInt();
        if (args[i] == QLatin1String("--trials"))
            trials = std::max(1, value);
        else if (args[i] == QLatin1String("--ticks"))
            ticks = std::max(1, value);
        else if (args[i] == QLatin1String("--sftp-ticks"))
            sftpTicks = std::max(1, value);
        else if (args[i] == QLatin1String("--submits"))
            submits = std::max(1, value);
    }
    QTemporaryDir work;
    const orrery::bench::Fixture cluster(args);
    if (!cluster.ok())
        return 1;
    const QHash<QString, QString> env = cluster.env();
    const QString base = env.value(QStringLiteral("ORRERY_TEST_JOBS_DIR")) +
        QStringLiteral("/bench-slurm-executor-") + QUuid::createUuid().toString(QUuid::Id128);
    QStringList arrays;  // to cancel at the end
    int rc = 0;
    try {
        Connection connection(orrery::bench::fixtureEndpoint(env));
        connection.connect().waitForFinished();
        orrery::remote::ClusterProfile profile;
        profile.name = QStringLiteral("fixture");
        profile.remoteRoot = base;
        profile.trainerPath = QStringLiteral("/bin/true");
        SlurmExecutor executor(profile, connection, work.filePath(QStringLiteral("config")));
        orrery::remote::SlurmClient slurm(connection);

        auto batchFor = [&](const QString &sweepDir) {
            LaunchBatch b;
            b.sweepName = QStringLiteral("bench");
            b.sweepDir = sweepDir;
            b.maxConcurrent = 4;
            b.resources.time = QStringLiteral("00:05:00");
            for (int i = 0; i < trials; ++i)
                b.tasks.append(
                    TaskLaunch{QStringLiteral("%1/%2").arg(sweepDir).arg(i), trialConfig(i), {}, {}});
            return b;
        };

        // (a) Submitting: the executor, `submits` times, each a new sweep; the last one's tasks
        // are polled in the ticks below.
        std::vector<double> submitMs;
        quint64 commands = 0;
        QStringList ids;
        QString sweepDir;
        for (int s = 0; s < submits; ++s) {
            sweepDir = QStringLiteral("%1/submit-%2").arg(base).arg(s);
            const LaunchBatch b = batchFor(sweepDir);
            const quint64 before = connection.commandCount();
            QElapsedTimer clock;
            clock.start();
            ids = executor.launch(b).taskIds;
            submitMs.push_back(msSince(clock));
            commands = std::max(commands, connection.commandCount() - before);
            const QString array = ids.front().section(QLatin1Char('_'), 0, 0);
            arrays << array;
            // Held (one update of the array's pending record), not cancelled: cancelling 1,000
            // tasks kept the fixture's slurmctld busy for seconds and the next sbatch waited.
            connection.exec(commandLine(QList<QByteArray>{"scontrol", "hold", array.toUtf8()}))
                .waitForFinished();
            QThread::sleep(1);
        }

        // Where the launch's time goes on the server: `tar -x` of the same archive into a new
        // directory, and sbatch of the same array alone (held, then dropped), each timed there.
        auto remoteMs = [&](const QString &dir, const QList<QByteArray> &command, const QByteArray &input) {
            const QByteArray timer =
                R"(use Time::HiRes "time"; my $t = time; system(@ARGV) == 0 or exit 1; printf STDERR "%.3f", (time - $t) * 1e3)";
            const QByteArray line = commandLine(QList<QByteArray>{"mkdir", "-p", "--", dir.toUtf8()}) +
                " && " + commandLine(QList<QByteArray>{"cd", "--", dir.toUtf8()}) + " && " +
                commandLine(QList<QByteArray>{"perl", "-e", timer} + command);
            const auto r =
                connection.exec(orrery::remote::Session::Command{line, std::chrono::minutes(2), input})
                    .result();
            if (r.exitStatus != 0)
                throw std::runtime_error("timing on the server failed: " + r.err.toStdString());
            return std::make_pair(r.err.toDouble(), r.out);
        };
        QList<orrery::remote::TarFile> files;
        for (const TaskLaunch &t : batchFor(sweepDir).tasks)
            files.append({t.runDir.mid(sweepDir.size() + 1).toUtf8() + "/trial.yaml", t.config, 0600});
        const QByteArray archive = orrery::remote::writeTar(files);
        const double tarMs = remoteMs(base + QStringLiteral("/extract-probe"),
                                      {"tar", "-x", "-m", "--no-same-owner", "-f", "-"}, archive)
                                 .first;
        const auto [sbatchMs, sbatchOut] =
            remoteMs(sweepDir,
                     {"sbatch", "--parsable", "--hold", "--array=0-" + QByteArray::number(trials - 1) + "%4",
                      "batch-0.sbatch"},
                     {});
        arrays << QString::fromUtf8(sbatchOut.trimmed());

        // The peer: every trial.yaml written over SFTP (mkdir -p, then an atomic write), the
        // script likewise, then sbatch: what SlurmClient::submit does for one file, per file.
        const QString peerDir = base + QStringLiteral("/submit-peer");
        const LaunchBatch peerBatch = batchFor(peerDir);
        const quint64 peerBefore = connection.commandCount();
        QElapsedTimer peerClock;
        peerClock.start();
        connection
            .run([&](orrery::remote::Session &session) {
                for (const TaskLaunch &t : peerBatch.tasks) {
                    session.makeDirectories(t.runDir);
                    session.writeFile(t.runDir + QStringLiteral("/trial.yaml"), t.config, 0600);
                }
                session.makeDirectories(peerDir + QStringLiteral("/logs"));
            })
            .waitForFinished();
        orrery::remote::SubmitOptions options;
        options.array = QStringLiteral("0-%1").arg(trials - 1);
        options.throttle = 4;
        const auto peerJob =
            slurm.submit(peerDir + QStringLiteral("/batch-0.sbatch"), executor.describe(peerBatch), options);
        const double peerMs = msSince(peerClock);
        const quint64 peerCommands = connection.commandCount() - peerBefore;
        arrays << peerJob.jobId;
        connection.exec(commandLine(QList<QByteArray>{"scontrol", "hold", peerJob.jobId.toUtf8()}))
            .waitForFinished();

        // (b) Ticks over the held sweep's trials: each file gets a new line, then one poll and
        // one read of every file from its offset.
        QList<FileRead> reads;
        for (int i = 0; i < trials; ++i) {
            const QString path = QStringLiteral("%1/%2/events.jsonl").arg(sweepDir).arg(i);
            append(path,
                   R"({"v":1,"t":1795249500.0,"kind":"start","run":{"world_size":1}})"
                   "\n");
            reads.append(FileRead{path, 0, 4 << 20});
        }
        int step = 0;
        auto tick = [&](std::vector<double> &pollMs, std::vector<double> &readMs, bool timed) {
            ++step;
            const QByteArray line = metricsLine(step);
            for (int i = 0; i < trials; ++i)
                append(reads[i].path, line);
            const quint64 before = connection.commandCount();
            QElapsedTimer clock;
            clock.start();
            const auto statuses = executor.poll(ids);
            const double polled = msSince(clock);
            clock.restart();
            const auto chunks = executor.readFiles(reads);
            const double read = msSince(clock);
            if (statuses.size() != trials || chunks.size() != trials)
                throw std::runtime_error("a tick lost trials");
            for (int i = 0; i < trials; ++i) {
                if (reads[i].offset > 0 && chunks[i].data != line)
                    throw std::runtime_error("a read returned other bytes than were appended");
                reads[i].offset += chunks[i].data.size();
            }
            if (qEnvironmentVariableIsSet("BENCH_VERBOSE"))
                std::fprintf(stderr, "tick %d: poll %.1f ms, read %.1f ms\n", step, polled, read);
            if (timed) {
                pollMs.push_back(polled);
                readMs.push_back(read);
            }
            return connection.commandCount() - before;
        };
        std::vector<double> pollMs, perlMs, sftpPollMs, sftpMs;
        tick(pollMs, perlMs, false);  // warm-up: the whole files, perl found
        quint64 tickCommands = 0;
        for (int t = 0; t < ticks; ++t)
            tickCommands = std::max(tickCommands, tick(pollMs, perlMs, true));
        executor.setUsePerl(false);
        for (int t = 0; t < sftpTicks; ++t)
            tick(sftpPollMs, sftpMs, true);

        // (c) The whole follow step: SweepRunner::tick over a 1,000-trial sweep it submitted
        // (held), each run with a new metrics line per tick: poll, batched read, ingest of every
        // run's lines into the SQLite store, the decisions.
        std::vector<double> runnerMs, ingestMs, restMs;
        executor.setUsePerl(true);  // (b) ended on the SFTP peer
        qint64 runnerPoints = 0;
        {
            QFile schemaFile(QStringLiteral(ORRERY_SOURCE_DIR "/tests/data/trainer-schema.json"));
            if (!schemaFile.open(QIODevice::ReadOnly))
                throw std::runtime_error("cannot read tests/data/trainer-schema.json");
            const auto schema = orrery::core::TrainerSchema::fromJson(schemaFile.readAll());
            if (!schema)
                throw std::runtime_error(schema.problem().toStdString());
            QByteArray yaml =
                "name: bench-runner\nmethod: grid\nmax_concurrent: 4\nparameters:\n  seed: {values: [";
            for (int i = 0; i < trials; ++i)
                yaml += (i ? ", " : "") + QByteArray::number(i);
            yaml += "]}\n";
            const auto parsed = orrery::core::parseSweepSpec(yaml, QStringLiteral("bench.yaml"), *schema);
            if (!parsed.spec)
                throw std::runtime_error("the benchmark's spec does not parse");
            auto store = orrery::core::TrackingStore::open(work.filePath(QStringLiteral("runner.sqlite")));
            orrery::core::SweepRunner runner(*store, executor, *schema);
            const orrery::core::SweepId sweep = runner.submit({*parsed.spec, yaml, {}});
            const QList<orrery::core::Trial> launched = store->trials(sweep);
            const QString array = launched.front().slurmJobId;
            arrays << array;
            connection.exec(commandLine(QList<QByteArray>{"scontrol", "hold", array.toUtf8()}))
                .waitForFinished();
            for (int t = 0; t <= ticks; ++t) {
                const QByteArray line = metricsLine(t + 1);
                for (const orrery::core::Trial &trial : launched)
                    append(trial.runDir + QStringLiteral("/events.jsonl"), line);
                QElapsedTimer clock;
                clock.start();
                const orrery::core::TickReport r = runner.tick({sweep});
                const double ms = msSince(clock);
                if (t > 0) {  // the first tick is the warm-up
                    runnerMs.push_back(ms);
                    ingestMs.push_back(r.ingestMs);
                    restMs.push_back(ms - r.ingestMs);
                }
                if (!r.errors.isEmpty() || r.active != trials)
                    throw std::runtime_error("the runner's tick: " +
                                             r.errors.join(QLatin1Char(' ')).toStdString());
                runnerPoints = r.points;
            }
        }

        std::vector<double> tickMs;
        for (size_t i = 0; i < pollMs.size(); ++i)
            tickMs.push_back(pollMs[i] + perlMs[i]);
        const Stats submit = stats(submitMs), poll = stats(pollMs), perl = stats(perlMs),
                    sftp = stats(sftpMs), total = stats(tickMs);
        std::printf("%d trials; the fixture's Slurm %s over loopback SSH (%s:%d)\n\n", trials,
                    qPrintable(slurm.version()),
                    qPrintable(env.value(QStringLiteral("ORRERY_TEST_SSH_HOST"))),
                    env.value(QStringLiteral("ORRERY_TEST_SSH_PORT")).toInt());
        std::printf("| what | median ms | p90 ms | mean ms | runs |\n|---|---|---|---|---|\n");
        row("submit: SlurmExecutor::launch (tar on stdin + sbatch)", submit, submits);
        std::printf("| submit, on the server: `tar -x` of the %.2f MB archive | %.1f | | | 1 |\n",
                    static_cast<double>(archive.size()) / 1e6, tarMs);
        std::printf("| submit, on the server: `sbatch` of the %d-task array | %.1f | | | 1 |\n", trials,
                    sbatchMs);
        std::printf("| submit, the peer: per-file SFTP upload + sbatch | %.1f | | | 1 |\n", peerMs);
        row("tick: poll of all task ids (one squeue)", poll, ticks);
        row("tick: readFiles, batch reader (one perl)", perl, ticks);
        row("tick: poll + batch read", total, ticks);
        row("tick: readFiles, the peer: per-file SFTP (stat, open, read, close)", sftp, sftpTicks);
        row("SweepRunner::tick: poll + read + ingest into SQLite + decisions", stats(runnerMs), ticks);
        row("... of which the ingest (one transaction, every run's new lines)", stats(ingestMs), ticks);
        row("**SweepRunner::tick without the ingest**", stats(restMs), ticks);
        std::printf("(each runner tick ingested %lld metric points, one line per run)\n",
                    static_cast<long long>(runnerPoints));
        std::printf("\nremote commands: launch %llu (goal <= 3), the SFTP peer %llu commands + %d files; "
                    "a tick %llu (poll 1 + read 1)\n",
                    static_cast<unsigned long long>(commands), static_cast<unsigned long long>(peerCommands),
                    trials, static_cast<unsigned long long>(tickCommands));
        std::printf("submit: peer/executor %.1fx; read: SFTP/perl %.1fx\n", peerMs / submit.median,
                    sftp.median / perl.median);
    } catch (const std::exception &ex) {
        std::fprintf(stderr, "bench_slurm_executor: %s\n", ex.what());
        rc = 1;
    }
    {
        Connection cleanup(orrery::bench::fixtureEndpoint(env));
        for (const QString &array : std::as_const(arrays))
            cleanup.exec(commandLine(QStringList{QStringLiteral("scancel"), array})).waitForFinished();
    }
    QDir(base).removeRecursively();  // the fixture's "shared filesystem" is this machine's
    return rc;
}
