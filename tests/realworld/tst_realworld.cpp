// SPDX-License-Identifier: GPL-3.0-or-later
// Public training code nobody on this project wrote, swept unchanged as a user would, with its own
// logging on (docs/sweeps.md "Real training code"), here and on the fixture's two-node Slurm:
// - nanoGPT's train.py (karpathy/nanoGPT, MIT) from a W&B sweep file with W&B's default command
//   (`python train.py --learning_rate=0.001 ...`), wandb_log=True in offline mode: it takes a set
//   RANK as "torchrun started me", writes out/ckpt.pt relative to its directory and reads
//   data/<dataset>/*.bin, a git-ignored dataset the test makes;
// - Lightning's bug-report script (Lightning-AI/pytorch-lightning, Apache-2.0), no arguments, its
//   default logger writing lightning_logs/version_N under the working directory.
// Two trials run at once, and a third starts after the script on disk was broken. Every trial must
// complete, its metrics be in the store at the script's own steps, its files be its own (each
// trial's out/ckpt.pt, wandb/ and lightning_logs/), and the project stay untouched.
//
// The code comes from snapshots of the repositories (tests/realworld/corpus.json names each
// repository, commit and licence), read at test time from $ORRERY_REALWORLD_MIRROR (bare git
// mirrors, <owner>+<name>/repo) and never committed here; a repository that is not there is
// skipped with the reason.
#include "remotesupport.h"

#include "orrery/core/store.h"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QUuid>

using namespace orrery::core;

namespace {

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QString mirrorRoot()
{
    const QString set = qEnvironmentVariable("ORRERY_REALWORLD_MIRROR");
    return set.isEmpty() ? QStringLiteral("/work/.mirror") : set;
}

QJsonObject corpusEntry(const QString &name)
{
    const QJsonObject corpus =
        QJsonDocument::fromJson(
            readAll(orrery::test::sourceFile(QStringLiteral("tests/realworld/corpus.json"))))
            .object();
    for (const QJsonValue v : corpus.value(QStringLiteral("entries")).toArray())
        if (v.toObject().value(QStringLiteral("name")).toString() == name)
            return v.toObject();
    return {};
}

bool run(const QString &program, const QStringList &args, const QString &cwd, QByteArray *output = nullptr)
{
    QProcess p;
    p.setWorkingDirectory(cwd);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    const bool ok = p.waitForFinished(120'000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    const QByteArray out = p.readAll();
    if (output)
        *output = out;
    if (!ok)
        qWarning("%s %s: %s", qPrintable(program), qPrintable(args.join(QLatin1Char(' '))),
                 out.right(2000).constData());
    return ok;
}

}  // namespace

class TestRealWorld : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    orrery::test::CliUser m_user;
    using Result = orrery::test::CliUser::Result;
    Result orrery(const QStringList &args, int timeoutMs = 180'000) { return m_user.run(args, timeoutMs); }
    bool m_clusterAdded = false;

    // The entry's files at its commit, as a user's clone: a git work tree of its own. Empty (and
    // the test skipped) when the snapshot is not on this machine.
    QString checkout(const QString &name, const QString &dirName)
    {
        const QJsonObject e = corpusEntry(name);
        if (e.isEmpty()) {
            QTest::qFail(qPrintable(QStringLiteral("%1 is not in tests/realworld/corpus.json").arg(name)),
                         __FILE__, __LINE__);
            return {};
        }
        const QString repo = e.value(QStringLiteral("repo")).toString();
        const QString gitDir = QDir(mirrorRoot())
                                   .filePath(QString(repo).replace(QLatin1Char('/'), QLatin1Char('+')) +
                                             QStringLiteral("/repo"));
        const QString commit = e.value(QStringLiteral("commit")).toString();
        if (!QFileInfo(gitDir).isDir() ||
            !run(QStringLiteral("git"),
                 {QStringLiteral("--git-dir=") + gitDir, QStringLiteral("cat-file"), QStringLiteral("-e"),
                  commit + QStringLiteral("^{commit}")},
                 QDir::tempPath())) {
            QTest::qSkip(
                qPrintable(QStringLiteral("no snapshot of %1 at %2 in %3 (set ORRERY_REALWORLD_MIRROR to a "
                                          "directory of bare mirrors, <owner>+<name>/repo)")
                               .arg(repo, commit.left(12), mirrorRoot())),
                __FILE__, __LINE__);
            return {};
        }
        const QString dir = m_user.filePath(dirName);
        QDir().mkpath(dir);
        QStringList paths;
        for (const QJsonValue p : e.value(QStringLiteral("paths")).toArray())
            paths << p.toString();
        // File by file (git ls-tree, git cat-file): a mirror may lack blobs the test never needs
        // (a repository's largest files), which `git archive` of the whole tree stops at.
        QByteArray listing;
        if (!run(QStringLiteral("git"),
                 QStringList{QStringLiteral("--git-dir=") + gitDir, QStringLiteral("ls-tree"),
                             QStringLiteral("-r"), QStringLiteral("--name-only"), commit,
                             QStringLiteral("--")} +
                     paths,
                 dir, &listing))
            return {};
        for (const QByteArray &file : listing.split('\n')) {
            if (file.isEmpty())
                continue;
            QProcess cat;
            cat.start(QStringLiteral("git"),
                      {QStringLiteral("--git-dir=") + gitDir, QStringLiteral("cat-file"),
                       QStringLiteral("blob"), commit + QLatin1Char(':') + QString::fromUtf8(file)});
            const QString target = QDir(dir).filePath(QString::fromUtf8(file));
            QDir().mkpath(QFileInfo(target).absolutePath());
            QFile out(target);
            if (!cat.waitForFinished(60'000) || cat.exitCode() != 0 || !out.open(QIODevice::WriteOnly)) {
                QTest::qFail(qPrintable(QStringLiteral("%1: cannot read %2 at %3: %4")
                                            .arg(repo, QString::fromUtf8(file), commit,
                                                 QString::fromUtf8(cat.readAllStandardError()))),
                             __FILE__, __LINE__);
                return {};
            }
            out.write(cat.readAllStandardOutput());
        }
        const QStringList id{QStringLiteral("-c"), QStringLiteral("user.email=t@example.org"),
                             QStringLiteral("-c"), QStringLiteral("user.name=t")};
        if (!run(QStringLiteral("git"), {QStringLiteral("init"), QStringLiteral("-q")}, dir) ||
            !run(QStringLiteral("git"), {QStringLiteral("add"), QStringLiteral(".")}, dir) ||
            !run(QStringLiteral("git"),
                 id +
                     QStringList{QStringLiteral("commit"), QStringLiteral("-q"), QStringLiteral("-m"),
                                 repo + QLatin1Char(' ') + commit},
                 dir))
            return {};
        return dir;
    }

    void addCluster()
    {
        if (m_clusterAdded)
            return;
        const QString root = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/tst_realworld-") +
            QUuid::createUuid().toString(QUuid::Id128);
        // What a user's profile would say: the venv their scripts run in, W&B offline.
        QStringList add = orrery::test::fixtureClusterAdd(m_cluster, QStringLiteral("fixture"), root);
        add << QStringLiteral("--setup")
            << QStringLiteral(
                   "export PATH=%1:\"$PATH\" WANDB_MODE=offline WANDB_SILENT=true WANDB_DISABLE_GIT=true")
                   .arg(QFileInfo(orrery::test::venvPython()).absolutePath());
        const Result r = orrery(add);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        m_clusterAdded = true;
    }

    // Submits `spec` (here or on the fixture), breaks `script` on disk right after, follows the
    // sweep to its end; its trials.
    QList<Trial> sweep(const QString &spec, bool onCluster, const QString &script)
    {
        QString problem;
        const int id = m_user.submitSweep(spec, onCluster ? QStringLiteral("fixture") : QString(), &problem);
        if (id < 0) {
            QTest::qFail(qPrintable(problem), __FILE__, __LINE__);
            return {};
        }
        QFile f(script);
        if (f.open(QIODevice::WriteOnly | QIODevice::Truncate))
            f.write("raise SystemExit('edited after submission: a trial ran the new code')\n");
        f.close();
        const QString watched = m_user.watchSweep(id, 500'000);
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        const QList<Trial> trials = store->trials(id);
        for (const Trial &t : trials)
            if (t.state != QStringLiteral("completed"))
                QTest::qFail(qPrintable(QStringLiteral("trial %1 %2 (%3):\n%4\n%5")
                                            .arg(t.index)
                                            .arg(t.state, t.detail, watched.right(2000),
                                                 QString::fromUtf8(readAll(QDir(t.runDir).filePath(
                                                                               QStringLiteral("stderr.log")))
                                                                       .right(3000)))),
                             __FILE__, __LINE__);
        return trials;
    }

    void nanoGpt(bool onCluster)
    {
        if (onCluster) {
            addCluster();
            if (QTest::currentTestFailed())
                return;
        }
        const QString dir =
            checkout(QStringLiteral("nanogpt"),
                     onCluster ? QStringLiteral("nanogpt-slurm") : QStringLiteral("nanogpt-local"));
        if (dir.isEmpty())
            return;
        // The dataset a user prepares (git-ignored *.bin, *.pkl): uint16 token ids, a vocabulary of 65.
        QByteArray said;
        QVERIFY2(run(orrery::test::venvPython(),
                     {QStringLiteral("-c"),
                      QStringLiteral("import numpy as np, pickle, os\n"
                                     "os.makedirs('data/toy', exist_ok=True)\n"
                                     "r = np.random.default_rng(0)\n"
                                     "for n, k in (('train', 20000), ('val', 4000)):\n"
                                     "    r.integers(0, 65, k, dtype=np.uint16).tofile(f'data/toy/{n}.bin')\n"
                                     "pickle.dump({'vocab_size': 65}, open('data/toy/meta.pkl', 'wb'))\n")},
                     dir, &said),
                 said.constData());
        // W&B's own sweep file: W&B's default command, ${env} ${interpreter} ${program} ${args}.
        QFile spec(dir + QStringLiteral("/sweep.yaml"));
        QVERIFY(spec.open(QIODevice::WriteOnly));
        spec.write("program: train.py\n"
                   "name: nanogpt-lr\n"
                   "method: grid\n"
                   "metric: {name: val/loss, goal: minimize}\n"
                   "parameters:\n"
                   "  learning_rate: {values: [0.001, 0.002, 0.004]}\n"
                   "  dataset: {value: toy}\n  device: {value: cpu}\n  compile: {value: false}\n"
                   "  dtype: {value: float32}\n  n_layer: {value: 2}\n  n_head: {value: 2}\n"
                   "  n_embd: {value: 32}\n  block_size: {value: 32}\n  batch_size: {value: 8}\n"
                   "  gradient_accumulation_steps: {value: 1}\n  max_iters: {value: 20}\n"
                   "  lr_decay_iters: {value: 20}\n  warmup_iters: {value: 2}\n  eval_interval: {value: 10}\n"
                   "  eval_iters: {value: 5}\n  log_interval: {value: 1}\n  dropout: {value: 0.0}\n"
                   "  wandb_log: {value: true}\n" +
                   (onCluster ? "workdir: " + orrery::test::yamlQuoted(dir) + "\n" : QByteArray()) +
                   "max_concurrent: 2\n"
                   "resources: {cpus_per_task: 1, time: \"00:10:00\"}\n");
        spec.close();
        const QList<Trial> trials = sweep(spec.fileName(), onCluster, dir + QStringLiteral("/train.py"));
        QCOMPARE(trials.size(), 3);
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        QSet<QString> checkpoints;
        for (const Trial &t : trials) {
            // wandb.log at each eval (iter 0, 10, 20): W&B's steps 0, 1, 2, with nanoGPT's own iter.
            QList<qint64> steps;
            QList<double> iters;
            for (const MetricPoint &p : store->allPoints(t.runId, QStringLiteral("val/loss")))
                steps << p.step;
            for (const MetricPoint &p : store->allPoints(t.runId, QStringLiteral("iter")))
                iters << p.value;
            QCOMPARE(steps, (QList<qint64>{0, 1, 2}));
            QCOMPARE(iters, (QList<double>{0, 10, 20}));
            QCOMPARE(store->allPoints(t.runId, QStringLiteral("train/loss")).size(), std::size_t(3));
            const QString work = QDir(t.runDir).filePath(QStringLiteral("work"));
            QVERIFY(QFileInfo::exists(work + QStringLiteral("/out/ckpt.pt")));
            checkpoints.insert(QFileInfo(work + QStringLiteral("/out/ckpt.pt")).canonicalFilePath());
            QDir wandb(work + QStringLiteral("/wandb"));
            QVERIFY2(!wandb.entryList({QStringLiteral("offline-run-*")}, QDir::Dirs).isEmpty(),
                     qPrintable(work));
            QCOMPARE(store->details(t.runId).params.value(QStringLiteral("learning_rate")).toDouble(),
                     QList<double>({0.001, 0.002, 0.004})[t.index]);
        }
        QCOMPARE(checkpoints.size(), 3);
        QVERIFY(!QFileInfo::exists(dir + QStringLiteral("/out")));
        QVERIFY(!QFileInfo::exists(dir + QStringLiteral("/wandb")));
    }

    void lightning(bool onCluster)
    {
        if (onCluster) {
            addCluster();
            if (QTest::currentTestFailed())
                return;
        }
        const QString dir =
            checkout(QStringLiteral("lightning-bug-report"),
                     onCluster ? QStringLiteral("lightning-slurm") : QStringLiteral("lightning-local"));
        if (dir.isEmpty())
            return;
        QFile spec(dir + QStringLiteral("/sweep.yaml"));
        QVERIFY(spec.open(QIODevice::WriteOnly));
        spec.write("name: boring\n"
                   "command: [python, examples/pytorch/bug_report/bug_report_model.py]\n"
                   "method: grid\n"
                   "metric: {name: valid_loss, goal: minimize}\n"
                   "parameters:\n  repeat: {values: [1, 2, 3]}\n" +
                   (onCluster ? "workdir: " + orrery::test::yamlQuoted(dir) + "\n" : QByteArray()) +
                   "max_concurrent: 2\n"
                   "resources: {cpus_per_task: 1, time: \"00:10:00\"}\n");
        spec.close();
        const QList<Trial> trials =
            sweep(spec.fileName(), onCluster,
                  dir + QStringLiteral("/examples/pytorch/bug_report/bug_report_model.py"));
        QCOMPARE(trials.size(), 3);
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        for (const Trial &t : trials) {
            // Its default logger's event files, found under the trial's own directory.
            QCOMPARE(store->allPoints(t.runId, QStringLiteral("valid_loss")).size(), std::size_t(1));
            QCOMPARE(store->allPoints(t.runId, QStringLiteral("test_loss")).size(), std::size_t(1));
            const QString logs = QDir(t.runDir).filePath(QStringLiteral("work/lightning_logs"));
            // One version, its own (version_0 here; on Slurm Lightning names it after the job id).
            const QStringList versions = QDir(logs).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
            QCOMPARE(versions.size(), 1);
            if (!onCluster)
                QCOMPARE(versions.front(), QStringLiteral("version_0"));
        }
        QVERIFY(!QFileInfo::exists(dir + QStringLiteral("/lightning_logs")));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error()));
        QVERIFY(m_user.isValid());
        if (qEnvironmentVariableIsEmpty("ORRERY_CLI") || qEnvironmentVariableIsEmpty("ORRERY_SOURCE_DIR"))
            QFAIL("ORRERY_CLI and ORRERY_SOURCE_DIR must be set (CTest sets them)");
        // W&B's default command runs `python`: the venv's, as a user's activated environment.
        qputenv("PATH",
                QFile::encodeName(QFileInfo(orrery::test::venvPython()).absolutePath()) + ':' +
                    qgetenv("PATH"));
        qputenv("WANDB_MODE", "offline");
        qputenv("WANDB_SILENT", "true");
        qputenv("WANDB_DISABLE_GIT", "true");
    }

    void localNanoGpt() { nanoGpt(false); }
    void slurmNanoGpt() { nanoGpt(true); }
    void localLightningDefaultLoggers() { lightning(false); }
    void slurmLightningDefaultLoggers() { lightning(true); }
};

ORRERY_TEST_MAIN(TestRealWorld, QCoreApplication)
#include "tst_realworld.moc"
