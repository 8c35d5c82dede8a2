// SPDX-License-Identifier: GPL-3.0-or-later
// The local cluster fixture through libssh: a real sshd with a verified host key, a real Slurm
// (slurmctld + two slurmd) behind it, output read back over SFTP. Fails if either is down.
#include "remotesupport.h"

#include "orrery/remote/session.h"
#include "orrery/remote/shell.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QThread>

#include <optional>

using orrery::remote::commandLine;
using orrery::remote::Endpoint;
using orrery::remote::RemoteError;
using orrery::remote::Session;
using orrery::test::refusal;

class TestClusterSsh : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;

    Endpoint endpoint(const char *knownHostsKey = "ORRERY_TEST_SSH_KNOWN_HOSTS") const
    {
        return orrery::test::clusterEndpoint(m_cluster, knownHostsKey);
    }

    // Connects or fails the test with the error and where the cluster's logs are.
    bool connectOrFail(Session &session)
    {
        try {
            session.connect();
            return true;
        } catch (const RemoteError &e) {
            QTest::qFail(qPrintable(e.message() + QStringLiteral("\n") + m_cluster.logsHint()), __FILE__,
                         __LINE__);
            return false;
        }
    }

    // `ssh-keygen -l` of the fixture's host key: OpenSSH's own view of the fingerprint.
    QString openSshFingerprint() const
    {
        QProcess keygen;
        keygen.start(QStringLiteral("ssh-keygen"),
                     {QStringLiteral("-l"), QStringLiteral("-E"), QStringLiteral("sha256"),
                      QStringLiteral("-f"), m_cluster.value("ORRERY_TEST_SSH_HOST_KEY_PUB")});
        keygen.waitForFinished(10'000);
        return QString::fromUtf8(keygen.readAllStandardOutput()).section(QLatin1Char(' '), 1, 1);
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error())); }

    void connectsWithVerifiedHostKeyAndRunsSinfo()
    {
        Session session(endpoint());
        if (!connectOrFail(session))
            return;
        QCOMPARE(session.serverFingerprint(), openSshFingerprint());

        // The fixture's two partitions; two nodes with four fake GPUs each, idle. A job another
        // test left (cancelled at its end) can keep a node PLANNED for a moment: ask again for
        // up to 15 s before judging.
        const QRegularExpression bothIdle(QStringLiteral("^gpu\\* up 2 idle gpu:4"),
                                          QRegularExpression::MultilineOption);
        QString text;
        for (int attempt = 0; attempt < 15; ++attempt) {
            const auto r = session.exec(
                commandLine(QStringList{QStringLiteral("sinfo"), QStringLiteral("-h"), QStringLiteral("-o"),
                                        QStringLiteral("%P %a %D %T %G")}));
            QVERIFY2(r.exitStatus == 0, qPrintable(QString::fromUtf8(r.err) + m_cluster.logsHint()));
            text = QString::fromUtf8(r.out);
            if (text.contains(bothIdle))
                break;
            QThread::sleep(1);
        }
        QVERIFY2(text.contains(QRegularExpression(QStringLiteral("^gpu\\* up 2 idle gpu:4"),
                                                  QRegularExpression::MultilineOption)),
                 qPrintable(text));
        QVERIFY2(text.contains(QRegularExpression(QStringLiteral("^debug up 1 idle gpu:4"),
                                                  QRegularExpression::MultilineOption)),
                 qPrintable(text));
    }

    void submitsAJobAndReadsItsOutputOverSftp()
    {
        Session session(endpoint());
        if (!connectOrFail(session))
            return;
        const QString jobsDir = m_cluster.value("ORRERY_TEST_JOBS_DIR");
        const auto submit = session.exec(commandLine(QStringList{
            QStringLiteral("sbatch"), QStringLiteral("--parsable"), QStringLiteral("--job-name=orrery-smoke"),
            QStringLiteral("--output=%1/%j.out").arg(jobsDir), QStringLiteral("--wrap"),
            QStringLiteral("hostname")}));
        QVERIFY2(submit.exitStatus == 0, qPrintable(QString::fromUtf8(submit.err) + m_cluster.logsHint()));
        const QString jobId = QString::fromUtf8(submit.out).trimmed().section(QLatin1Char(';'), 0, 0);
        QVERIFY2(QRegularExpression(QStringLiteral("^\\d+$")).match(jobId).hasMatch(), qPrintable(jobId));

        // No accounting in the fixture (as on many clusters): scontrol keeps a finished job for
        // MinJobAge seconds, long enough to see it complete.
        QString state;
        QDeadlineTimer deadline(60'000);
        while (!deadline.hasExpired()) {
            const auto show =
                session.exec(commandLine(QStringList{QStringLiteral("scontrol"), QStringLiteral("show"),
                                                     QStringLiteral("job"), QStringLiteral("-o"), jobId}));
            QCOMPARE(show.exitStatus, 0);
            state = QRegularExpression(QStringLiteral("JobState=(\\S+)"))
                        .match(QString::fromUtf8(show.out))
                        .captured(1);
            if (state == QLatin1String("COMPLETED") || state == QLatin1String("FAILED") ||
                state == QLatin1String("CANCELLED"))
                break;
            QThread::msleep(200);
        }
        QVERIFY2(state == QLatin1String("COMPLETED"),
                 qPrintable(QStringLiteral("job %1 ended %2; %3").arg(jobId, state, m_cluster.logsHint())));

        const QByteArray hostname = session.exec("hostname").out;
        QVERIFY(!hostname.isEmpty());
        const QString outPath = QStringLiteral("%1/%2.out").arg(jobsDir, jobId);
        QCOMPARE(session.readFile(outPath), hostname);
        // From a byte offset, as the monitor tails events.jsonl.
        QCOMPARE(session.readFile(outPath, 1), hostname.mid(1));
        QCOMPARE(session.readFile(outPath, 0, 2), hostname.left(2));
        QVERIFY_THROWS_EXCEPTION(RemoteError, session.readFile(jobsDir + QStringLiteral("/no-such-file")));
    }

    void wrongHostKeyIsRefused()
    {
        Session session(endpoint("ORRERY_TEST_SSH_KNOWN_HOSTS_WRONG"));
        const auto e = refusal(session);
        QVERIFY2(e, "connected to a host whose key does not match known_hosts");
        QCOMPARE(e->kind(), RemoteError::Kind::HostKeyChanged);
        // Both fingerprints are shown: the offered one and the one on file.
        QVERIFY2(e->message().contains(openSshFingerprint()), qPrintable(e->message()));
        QVERIFY2(e->message().count(QStringLiteral("SHA256:")) == 2, qPrintable(e->message()));
        QVERIFY(!session.isConnected());
    }

    void unknownHostIsNotTrustedSilently()
    {
        QTemporaryDir dir;
        const QString empty = dir.filePath(QStringLiteral("known_hosts"));
        QFile(empty).open(QIODevice::WriteOnly);
        Endpoint e = endpoint();
        e.knownHostsFile = empty;
        Session session(e);
        const auto err = refusal(session);
        QVERIFY2(err, "connected to a host that is not in known_hosts");
        QCOMPARE(err->kind(), RemoteError::Kind::HostKeyUnknown);
        QVERIFY(err->message().contains(openSshFingerprint()));
    }

    void strangerKeyIsRefused()
    {
        QTemporaryDir dir;
        const QString key = dir.filePath(QStringLiteral("stranger"));
        QCOMPARE(QProcess::execute(QStringLiteral("ssh-keygen"),
                                   {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                                    QStringLiteral("-N"), QString(), QStringLiteral("-f"), key}),
                 0);
        Endpoint e = endpoint();
        e.identityFile = key;
        Session session(e);
        const auto err = refusal(session);
        QVERIFY2(err, "a key that is not in authorized_keys was accepted");
        QCOMPARE(err->kind(), RemoteError::Kind::Auth);
    }

    void commandThatHangsTimesOut()
    {
        Session session(endpoint());
        if (!connectOrFail(session))
            return;
        QVERIFY_THROWS_EXCEPTION(RemoteError, session.exec("sleep 30", std::chrono::milliseconds(500)));
        // The session is still usable for the next command.
        QCOMPARE(session.exec("echo alive").out, QByteArray("alive\n"));
    }

    void hostileArgumentsReachTheRemoteProgramIntact()
    {
        Session session(endpoint());
        if (!connectOrFail(session))
            return;
        const QList<QByteArray> hostile = orrery::test::hostileArguments();
        QList<QByteArray> argv{QByteArray("printf"), QByteArray("[%s]\\0")};
        argv += hostile;
        const auto r = session.exec(commandLine(argv));
        QCOMPARE(r.exitStatus, 0);
        QList<QByteArray> got = r.out.split('\0');
        QCOMPARE(got.takeLast(), QByteArray());
        QCOMPARE(got.size(), hostile.size());
        for (qsizetype i = 0; i < hostile.size(); ++i)
            QCOMPARE(got[i], QByteArray('[' + hostile[i] + ']'));
        QCOMPARE(session.exec("test -e /tmp/orrery-pwned; echo $?").out, QByteArray("1\n"));
    }
};

ORRERY_TEST_MAIN(TestClusterSsh, QCoreApplication)
#include "tst_cluster_ssh.moc"
