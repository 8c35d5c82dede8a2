// SPDX-License-Identifier: GPL-3.0-or-later
// The code a command sweep runs, frozen at submission (core/codesnapshot.h, resources/sweep/
// orrery-code.sh, docs/sweeps.md "Each trial in its own directory"), through the local executor
// as a submission runs it, on real git repositories and plain directories:
// - what is copied (tracked and untracked files), linked (git-ignored data), left out (outputs of
//   a run; the sweeps' own directory when it is inside the project), the commit, branch, dirty
//   flag and diff recorded;
// - an edit or a deletion of the source after the snapshot changes nothing in it, and a second
//   snapshot of the same sweep is the first one;
// - a trial's directory: real directories, the code hard-linked, the data a symbolic link, the
//   program's writes its own, kept for the next attempt; the run-dir listing leaves the frozen
//   files out and finds what the program wrote;
// - without git: small entries copied, a large one linked.
#include "testsupport.h"

#include "orrery/core/codesnapshot.h"
#include "orrery/core/localexecutor.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>

#include <sys/stat.h>

using namespace orrery::core;

namespace {

void write(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    f.write(data);
}

QByteArray read(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

bool git(const QString &dir, const QStringList &args)
{
    QProcess p;
    p.setWorkingDirectory(dir);
    p.start(QStringLiteral("git"),
            QStringList{QStringLiteral("-c"), QStringLiteral("user.email=t@example.org"),
                        QStringLiteral("-c"), QStringLiteral("user.name=t")} +
                args);
    return p.waitForFinished(30'000) && p.exitCode() == 0;
}

qint64 links(const QString &path)
{
    struct stat st { };
    return ::lstat(QFile::encodeName(path).constData(), &st) == 0 ? qint64(st.st_nlink) : -1;
}

RenderedCommand commandIn(const QString &workdir, const CommandSpec::Code &code = {})
{
    RenderedCommand c;
    c.localWorkdir = workdir;
    c.code = code;
    return c;
}

// Makes <run dir>/work from the snapshot, as the supervisor does before the program starts.
bool makeView(const QString &sweepDir, const QString &runDir)
{
    QProcess p;
    p.start(
        QStringLiteral("bash"),
        {codeScriptPath(sweepDir), QStringLiteral("view"), codeSnapshotDir(sweepDir), trialWorkDir(runDir)});
    return p.waitForFinished(30'000) && p.exitCode() == 0;
}

}  // namespace

class TestCodeSnapshot : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;
    LocalExecutor m_executor{QString(), QString(), m_tmp.filePath(QStringLiteral("runs"))};

    QString path(const QString &name) const { return m_tmp.filePath(name); }

private Q_SLOTS:
    void aGitProjectIsFrozenWithItsCommitAndItsDataLinked()
    {
        const QString project = path(QStringLiteral("nanogpt"));
        write(project + QStringLiteral("/.gitignore"), "out/\n*.bin\nwandb/\n");
        write(project + QStringLiteral("/train.py"), "print('v1')\n");
        write(project + QStringLiteral("/configurator.py"), "pass\n");
        write(project + QStringLiteral("/data/shakespeare/prepare.py"), "pass\n");
        write(project + QStringLiteral("/data/shakespeare/train.bin"), QByteArray(4096, 'x'));
        write(project + QStringLiteral("/out/ckpt.pt"), "someone else's checkpoint");
        write(project + QStringLiteral("/wandb/run-1/files"), "an earlier run");
        write(project + QStringLiteral("/weights/model.safetensors"), "tracked? no: linked on request");
        QVERIFY(git(
            project,
            {QStringLiteral("init"), QStringLiteral("-q"), QStringLiteral("-b"), QStringLiteral("main")}));
        QVERIFY(git(project,
                    {QStringLiteral("add"), QStringLiteral(".gitignore"), QStringLiteral("train.py"),
                     QStringLiteral("configurator.py"), QStringLiteral("data")}));
        QVERIFY(git(
            project,
            {QStringLiteral("commit"), QStringLiteral("-q"), QStringLiteral("-m"), QStringLiteral("init")}));
        write(project + QStringLiteral("/train.py"), "print('v2, not committed')\n");  // dirty
        write(project + QStringLiteral("/notes.md"), "untracked, not ignored: copied\n");

        const QString sweepDir = path(QStringLiteral("runs/exp/sweep-1"));
        CommandSpec::Code code;
        code.link << QStringLiteral("weights");
        code.fresh << QStringLiteral("notes.md");
        const CodeSnapshot s = m_executor.snapshotCode(sweepDir, commandIn(project, code));
        QCOMPARE(s.source, QFileInfo(project).canonicalFilePath());
        QCOMPARE(s.vcs, QStringLiteral("git"));
        QCOMPARE(s.gitBranch, QStringLiteral("main"));
        QCOMPARE(s.gitCommit.size(), 40);
        QVERIFY(s.gitDirty);
        QVERIFY2(read(s.diffPath).contains("+print('v2, not committed')"), qPrintable(s.diffPath));
        QCOMPARE(s.files, 4);  // .gitignore, train.py, configurator.py, prepare.py
        QCOMPARE(s.linked,
                 (QStringList{QStringLiteral("data/shakespeare/train.bin"), QStringLiteral("weights")}));
        const QString code_ = codeSnapshotDir(sweepDir);
        QCOMPARE(read(code_ + QStringLiteral("/train.py")), QByteArray("print('v2, not committed')\n"));
        QVERIFY(!QFileInfo::exists(code_ + QStringLiteral("/out")));  // an output of a run
        QVERIFY(!QFileInfo::exists(code_ + QStringLiteral("/wandb")));
        QVERIFY(!QFileInfo::exists(code_ + QStringLiteral("/notes.md")));  // code.fresh
        QVERIFY(!QFileInfo::exists(code_ + QStringLiteral("/data/shakespeare/train.bin")));
        // Tags: MLflow's names for the commit and branch.
        const auto tags = codeSnapshotTags(s);
        QVERIFY(tags.contains(std::pair{QStringLiteral("mlflow.source.git.commit"), s.gitCommit}));
        QVERIFY(tags.contains(std::pair{QStringLiteral("orrery.code.git_dirty"), QStringLiteral("true")}));

        // Edited and deleted afterwards: the snapshot, and a second snapshot of the sweep, keep v2.
        write(project + QStringLiteral("/train.py"), "print('v3, edited during the sweep')\n");
        QFile::remove(project + QStringLiteral("/configurator.py"));
        const CodeSnapshot again = m_executor.snapshotCode(sweepDir, commandIn(project, code));
        QCOMPARE(again.gitDirty, s.gitDirty);
        QCOMPARE(again.files, s.files);
        QCOMPARE(read(code_ + QStringLiteral("/train.py")), QByteArray("print('v2, not committed')\n"));
        QCOMPARE(read(code_ + QStringLiteral("/configurator.py")), QByteArray("pass\n"));

        // Two trials' directories: the code hard-linked, the data linked, the writes apart.
        const QString run0 = sweepDir + QStringLiteral("/0"), run1 = sweepDir + QStringLiteral("/1");
        QVERIFY(makeView(sweepDir, run0) && makeView(sweepDir, run1));
        const QString work0 = trialWorkDir(run0), work1 = trialWorkDir(run1);
        QCOMPARE(read(work0 + QStringLiteral("/train.py")), QByteArray("print('v2, not committed')\n"));
        QVERIFY(links(work0 + QStringLiteral("/train.py")) >= 3);  // the snapshot's and both trials'
        QVERIFY(QFileInfo(work0 + QStringLiteral("/data/shakespeare/train.bin")).isSymLink());
        QCOMPARE(read(work0 + QStringLiteral("/data/shakespeare/train.bin")).size(), 4096);
        QVERIFY(QFileInfo(work0 + QStringLiteral("/weights")).isSymLink());
        QVERIFY(!QFileInfo(work0 + QStringLiteral("/data")).isSymLink());
        QVERIFY(!QFileInfo::exists(work0 + QStringLiteral("/.orrery-snapshot.json")));
        write(work0 + QStringLiteral("/out/ckpt.pt"), "trial 0");
        write(work0 + QStringLiteral("/data/shakespeare/cache.pt"), "trial 0's cache");
        QVERIFY(!QFileInfo::exists(work1 + QStringLiteral("/out")));
        QVERIFY(!QFileInfo::exists(work1 + QStringLiteral("/data/shakespeare/cache.pt")));
        QCOMPARE(read(project + QStringLiteral("/out/ckpt.pt")), QByteArray("someone else's checkpoint"));
        // The next attempt finds its directory as it was left.
        QVERIFY(makeView(sweepDir, run0));
        QCOMPARE(read(work0 + QStringLiteral("/out/ckpt.pt")), QByteArray("trial 0"));
        // The run dir's listing: what the program wrote, not the frozen code.
        QStringList listed;
        for (const FileEntry &e : listDirectory(run0).entries)
            listed << e.path;
        QCOMPARE(listed,
                 (QStringList{QStringLiteral("work/data/shakespeare/cache.pt"),
                              QStringLiteral("work/out/ckpt.pt")}));
    }

    // What review and real repositories found: git lists an ignored directory and its files, and
    // a sibling name can sort between them (weights/, weights-fp16.bin, weights/shards/a.bin):
    // one link each, none made through another into the source; a submodule is linked (cp would
    // refuse its directory); tracked code in a directory named like an output (src/runs) is
    // copied; a sweep directory with a quote and a semicolon in its name is a path, not code.
    void linksAreOnePerEntryAndNamesAreData()
    {
        const QString project = path(QStringLiteral("tricky"));
        const QString lib = path(QStringLiteral("tricky-lib"));
        write(lib + QStringLiteral("/l.py"), "pass\n");
        QVERIFY(git(lib, {QStringLiteral("init"), QStringLiteral("-q")}));
        QVERIFY(git(lib, {QStringLiteral("add"), QStringLiteral(".")}));
        QVERIFY(
            git(lib,
                {QStringLiteral("commit"), QStringLiteral("-q"), QStringLiteral("-m"), QStringLiteral("l")}));
        write(project + QStringLiteral("/.gitignore"), "*.bin\n");
        write(project + QStringLiteral("/src/runs/__init__.py"), "code\n");
        write(project + QStringLiteral("/weights/shards/a.bin"), "a");
        write(project + QStringLiteral("/weights/model.bin"), "m");
        write(project + QStringLiteral("/weights-fp16.bin"), "w");
        QVERIFY(git(project, {QStringLiteral("init"), QStringLiteral("-q")}));
        QVERIFY(git(project,
                    {QStringLiteral("-c"), QStringLiteral("protocol.file.allow=always"),
                     QStringLiteral("submodule"), QStringLiteral("-q"), QStringLiteral("add"), lib,
                     QStringLiteral("third/lib")}));
        QVERIFY(git(project, {QStringLiteral("add"), QStringLiteral(".gitignore"), QStringLiteral("src")}));
        QVERIFY(
            git(project,
                {QStringLiteral("commit"), QStringLiteral("-q"), QStringLiteral("-m"), QStringLiteral("i")}));
        const QString canary = path(QStringLiteral("PWNED"));
        const QString sweepDir = path(QStringLiteral("runs/exp/it'x; touch %1; '").arg(canary));
        const CodeSnapshot s = m_executor.snapshotCode(sweepDir, commandIn(project));
        QCOMPARE(s.linked,
                 (QStringList{QStringLiteral("third/lib"), QStringLiteral("weights"),
                              QStringLiteral("weights-fp16.bin")}));
        QCOMPARE(read(codeSnapshotDir(sweepDir) + QStringLiteral("/src/runs/__init__.py")),
                 QByteArray("code\n"));
        QVERIFY(makeView(sweepDir, sweepDir + QStringLiteral("/0")));
        const QString work = trialWorkDir(sweepDir + QStringLiteral("/0"));
        QCOMPARE(read(work + QStringLiteral("/weights/shards/a.bin")), QByteArray("a"));
        QVERIFY(QFileInfo(work + QStringLiteral("/third/lib")).isSymLink());
        QCOMPARE(QDir(project + QStringLiteral("/weights/shards"))
                     .entryList(QDir::AllEntries | QDir::NoDotAndDotDot),
                 QStringList{QStringLiteral("a.bin")});  // nothing made inside the source
        QVERIFY(!QFileInfo::exists(canary));
    }

    // Without git: every small entry is copied, a large one (a dataset) is linked; sockets and
    // the sweeps' own directory inside the project are left out.
    void aPlainDirectoryCopiesItsSmallEntriesAndLinksTheLargeOnes()
    {
        const QString project = path(QStringLiteral("plain"));
        write(project + QStringLiteral("/train.py"), "print(1)\n");
        write(project + QStringLiteral("/configs/a.yaml"), "lr: 1\n");
        write(project + QStringLiteral("/__pycache__/train.cpython-311.pyc"), "x");
        QVERIFY(QDir().mkpath(project + QStringLiteral("/data")));
        QFile big(project + QStringLiteral("/data/big.bin"));
        QVERIFY(big.open(QIODevice::WriteOnly) && big.resize(qint64(80) << 20));  // sparse: 80 MiB apparent
        big.close();
        const QString sweepDir = project + QStringLiteral("/sweeps/exp/s1");
        write(project + QStringLiteral("/sweeps/exp/s0/0/events.jsonl"), "an earlier sweep\n");
        const CodeSnapshot s = m_executor.snapshotCode(sweepDir, commandIn(project));
        QCOMPARE(s.vcs, QStringLiteral("none"));
        QVERIFY(s.gitCommit.isEmpty());
        QCOMPARE(s.files, 2);
        QCOMPARE(s.linked, QStringList{QStringLiteral("data")});
        const QString code = codeSnapshotDir(sweepDir);
        QCOMPARE(read(code + QStringLiteral("/configs/a.yaml")), QByteArray("lr: 1\n"));
        QVERIFY(!QFileInfo::exists(code + QStringLiteral("/sweeps")));
        QVERIFY(!QFileInfo::exists(code + QStringLiteral("/__pycache__")));
        const auto tags = codeSnapshotTags(s);
        QVERIFY(tags.contains(
            std::pair{QStringLiteral("orrery.code.git_dirty"), QStringLiteral("unknown (no git)")}));
    }

    // The home directory as workdir (a cluster's default): nothing copied (no dotfiles, no keys),
    // every other entry linked, so the trial's writes are still its own.
    void theHomeDirectoryIsLinkedNotCopied()
    {
        const QString home = path(QStringLiteral("home"));
        write(home + QStringLiteral("/.ssh/id_ed25519"), "secret");
        write(home + QStringLiteral("/train.py"), "print(1)\n");
        write(home + QStringLiteral("/proj/x.py"), "pass\n");
        const QByteArray before = qgetenv("HOME");
        qputenv("HOME", QFile::encodeName(home));
        const QString sweepDir = home + QStringLiteral("/runs/exp/s");
        const CodeSnapshot s = m_executor.snapshotCode(sweepDir, commandIn(home));
        qputenv("HOME", before);
        QCOMPARE(s.vcs, QStringLiteral("home"));
        QCOMPARE(s.files, 0);
        QCOMPARE(s.linked, (QStringList{QStringLiteral("proj"), QStringLiteral("train.py")}));
        QVERIFY(!QFileInfo::exists(codeSnapshotDir(sweepDir) + QStringLiteral("/.ssh")));
        const auto tags = codeSnapshotTags(s);
        QVERIFY(std::any_of(tags.cbegin(), tags.cend(),
                            [](const auto &t) { return t.first == QStringLiteral("orrery.code.frozen"); }));
    }

    // A directory that is not there fails the submission with the reason; nothing is left.
    void aMissingDirectoryIsAClearError()
    {
        const QString sweepDir = path(QStringLiteral("runs/exp/sweep-missing"));
        try {
            m_executor.snapshotCode(sweepDir, commandIn(path(QStringLiteral("nowhere"))));
            QFAIL("froze a directory that is not there");
        } catch (const std::exception &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("not a directory")), e.what());
        }
        QVERIFY(!QFileInfo::exists(codeSnapshotDir(sweepDir)));
    }
};

ORRERY_TEST_MAIN(TestCodeSnapshot, QCoreApplication)
#include "tst_codesnapshot.moc"
