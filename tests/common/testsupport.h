// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Shared by every Qt Test executable: a test main that makes GUI tests headless and keeps tests
// out of the user's real files, and access to the local cluster fixture.

#include <QByteArray>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QList>
#include <QProcess>
#include <QStandardPaths>
#include <QString>
#include <QTest>

namespace orrery::test {

// Prepares the process before Q*Application exists: offscreen platform unless the caller chose
// one (QT_QPA_PLATFORM=xcb under Xvfb), and QStandardPaths test mode (~/.qttest/...), so tests
// never read or write the user's database or cluster profiles.
inline void prepareTestProcess()
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QStandardPaths::setTestModeEnabled(true);
}

// A file of the source tree, e.g. sourceFile("tests/data/micro.yaml"). CTest sets
// ORRERY_SOURCE_DIR; the path is not compiled in (nor found from __FILE__), so a new clone's
// build reuses ccache's objects of another clone's (scripts/lib.sh).
inline QString sourceFile(const QString &relative)
{
    const QString root = qEnvironmentVariable("ORRERY_SOURCE_DIR");
    if (root.isEmpty())
        qFatal("ORRERY_SOURCE_DIR is not set: run the tests through ctest, or export it (the repository)");
    return root + QLatin1Char('/') + relative;
}

// The project's Python (scripts/setup's .venv: torch, tensorboard, tensorboardX, wandb), which
// the tests of users' own scripts run.
inline QString venvPython()
{
    return sourceFile(QStringLiteral(".venv/bin/python"));
}

// A YAML double-quoted scalar of any text (paths written into a test's spec may hold anything).
inline QByteArray yamlQuoted(const QString &s)
{
    QByteArray out = "\"";
    for (const char c : s.toUtf8()) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + '"';
}

// What a program run to its end printed, and its exit code (-1: it crashed or ran past the
// timeout and was killed).
struct Ran {
    int code = -1;
    QString out, err;
};

// Runs `program` with `input` on its stdin (then closed: nothing may prompt) and waits for it.
inline Ran runProcess(const QString &program, const QStringList &args, const QByteArray &input = {},
                      const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment(),
                      int timeoutMs = 30'000)
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

// tests/data/micro.yaml: the end-to-end tests' trainer workload (see the file). Sweep specs name
// it as their base config and set train.steps among their parameters.
inline QString microConfigPath()
{
    return sourceFile(QStringLiteral("tests/data/micro.yaml"));
}

// The same workload as a trial.yaml of `steps` steps (a top-level dotted key is a key of the
// trainer's config like any other).
inline QByteArray microConfig(qint64 steps)
{
    QFile f(microConfigPath());
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(f.fileName()));
    return f.readAll() + "train.steps: " + QByteArray::number(steps) + '\n';
}

// For a test function that needs the real orrery-train (to train, or to refuse a config), in an
// executable whose other functions do not: orrery_add_qtest(... TRAINER_FUNCTIONS ...) names it, and
// CTest runs it alone as NAME.trainer where the trainer is built. In NAME it skips, in every build,
// so NAME is the same test with or without the trainer (the asan preset builds none: there
// ORRERY_TEST_NO_TRAINER is set and ORRERY_TRAINER names a stand-in that only answers questions,
// tests/fixture/trainer_standin.sh.in). A function that skips but is not on the list
// (ORRERY_TEST_TRAINER_FUNCTIONS) fails instead: no test would run it.
#define ORRERY_SKIP_WITHOUT_TRAINER()                                                                        \
    do {                                                                                                     \
        if (qEnvironmentVariableIsSet("ORRERY_TEST_TRAINER_FUNCTIONS") ||                                    \
            qEnvironmentVariableIsSet("ORRERY_TEST_NO_TRAINER")) {                                           \
            if (!qEnvironmentVariable("ORRERY_TEST_TRAINER_FUNCTIONS")                                       \
                     .split(u',')                                                                            \
                     .contains(QLatin1StringView(QTest::currentTestFunction())))                             \
                QFAIL("this function needs orrery-train: name it in orrery_add_qtest's TRAINER_FUNCTIONS");  \
            QSKIP("needs orrery-train: runs as this test's NAME.trainer, where the trainer is built");       \
        }                                                                                                    \
    } while (false)

// For a test function that needs the cluster fixture, in an executable whose other functions do
// not (orrery_add_qtest's CLUSTER_FUNCTIONS): CTest runs it alone in NAME.cluster, which holds the
// fixture, and the rest in NAME with no cluster, where it skips.
#define ORRERY_SKIP_WITHOUT_CLUSTER(cluster)                                                                 \
    do {                                                                                                     \
        if (qEnvironmentVariableIsEmpty("ORRERY_TEST_CLUSTER_ENV"))                                          \
            QSKIP("no cluster fixture here: CTest runs this function as its own test, with the fixture");    \
        QVERIFY2((cluster).error().isEmpty(), qPrintable((cluster).error()));                                \
    } while (false)

// The connection details of the running local cluster (tests/fixture/localcluster.py up),
// read from the file ORRERY_TEST_CLUSTER_ENV names. CTest sets that variable for every test
// that requires the `cluster` fixture.
class TestCluster {
public:
    // Empty `error()` when loaded.
    TestCluster()
    {
        const QString path = qEnvironmentVariable("ORRERY_TEST_CLUSTER_ENV");
        if (path.isEmpty()) {
            m_error = QStringLiteral("ORRERY_TEST_CLUSTER_ENV is not set: run this test through ctest "
                                     "(it starts the cluster fixture) or export it yourself");
            return;
        }
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            m_error = QStringLiteral("cannot read %1: is the cluster fixture up?").arg(path);
            return;
        }
        while (!file.atEnd()) {
            const QByteArray line = file.readLine().trimmed();
            const qsizetype eq = line.indexOf('=');
            if (line.startsWith('#') || eq <= 0)
                continue;
            m_values.insert(QString::fromUtf8(line.left(eq)), QString::fromUtf8(line.mid(eq + 1)));
        }
    }

    QString error() const { return m_error; }
    QString value(const char *key) const { return m_values.value(QLatin1String(key)); }

    // For failure messages: where the daemons' logs are (kept after teardown too).
    QString logsHint() const
    {
        return QStringLiteral("cluster logs: %1 (copied next to the fixture's state file on teardown)")
            .arg(value("ORRERY_TEST_CLUSTER_LOGS"));
    }

private:
    QHash<QString, QString> m_values;
    QString m_error;
};

// Strings a user or a cluster might hand us that a shell must never interpret: each must reach
// the program as exactly one argument, byte for byte. Shared by the local and the SSH tests.
// The pids of this machine's processes whose command line (NUL-separated words) starts with the
// word `program` and holds `needle` (e.g. "--run-dir\0<dir>\0"): how tests find the trainer or
// script a sweep started, to signal it as a fault would.
inline QList<qint64> pidsWithCommandLine(const QString &program, const QByteArray &needle)
{
    QList<qint64> pids;
    QDirIterator it(QStringLiteral("/proc"), QDir::Dirs | QDir::NoDotAndDotDot);
    while (it.hasNext()) {
        const QString dir = it.next();
        bool ok = false;
        const qint64 pid = QFileInfo(dir).fileName().toLongLong(&ok);
        if (!ok)
            continue;
        QFile cmdline(dir + QStringLiteral("/cmdline"));
        if (!cmdline.open(QIODevice::ReadOnly))
            continue;
        const QByteArray line = cmdline.readAll();
        if (line.startsWith(QByteArray(program.toUtf8() + '\0')) && line.contains(needle))
            pids << pid;
    }
    return pids;
}

inline QList<QByteArray> hostileArguments()
{
    return {
        QByteArray("plain"),
        QByteArray("with space"),
        QByteArray("single'quote"),
        QByteArray("double\"quote"),
        QByteArray("$(touch /tmp/orrery-pwned)"),
        QByteArray("`touch /tmp/orrery-pwned`"),
        QByteArray("${HOME}"),
        QByteArray("a;touch /tmp/orrery-pwned"),
        QByteArray("a && touch /tmp/orrery-pwned"),
        QByteArray("a | cat"),
        QByteArray("line\nbreak"),
        QByteArray("*"),
        QByteArray("?[a-z]"),
        QByteArray("~root"),
        QByteArray("-rf"),
        QByteArray("--help"),
        QByteArray("back\\slash"),
        QByteArray("'"),
        QByteArray("''"),
        QByteArray(""),
        QByteArray("\xff\xfe not utf-8 \x80"),
        QByteArray("tab\there"),
        QByteArray("!event"),
        QByteArray("#comment"),
        QByteArray("> /tmp/orrery-pwned"),
    };
}

}  // namespace orrery::test

// QTEST_MAIN with prepareTestProcess() first. AppClass: QCoreApplication / QApplication.
#define ORRERY_TEST_MAIN(TestObject, AppClass)                                                               \
    int main(int argc, char **argv)                                                                          \
    {                                                                                                        \
        orrery::test::prepareTestProcess();                                                                  \
        AppClass app(argc, argv);                                                                            \
        app.setAttribute(Qt::AA_Use96Dpi, true);                                                             \
        TestObject tc;                                                                                       \
        QTEST_SET_MAIN_SOURCE_PATH                                                                           \
        return QTest::qExec(&tc, argc, argv);                                                                \
    }
