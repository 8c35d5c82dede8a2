// SPDX-License-Identifier: GPL-3.0-or-later
// The desktop window's clusters on the fixture (offscreen): the SSH questions as dialogs (an
// unknown host key accepted or rejected, a changed one refused, a keyboard-interactive sign-in
// answered through the dialog on the PAM sshd), the Cluster tab's partitions, nodes and queue,
// the status bar's link going lost and coming back by itself when the path to sshd is cut and
// restored (a TCP relay this test owns: the fixture's own sshd serves the other tests meanwhile),
// and a sweep launched from the launcher dialog that runs to completion on Slurm, its hostile
// name kept as data, its trials shown in the tree with their states.
#include "remotesupport.h"
#include "testsupport.h"

#include "clusterhub.h"
#include "clusterview.h"
#include "detailsview.h"
#include "launchdialogs.h"
#include "launcher.h"
#include "logview.h"
#include "mainwindow.h"
#include "runselection.h"
#include "sshprompts.h"
#include "sweepactions.h"
#include "sweeptreemodel.h"

#include "orrery/core/store.h"
#include "orrery/remote/connection.h"
#include "orrery/remote/profile.h"
#include "orrery/remote/shell.h"
#include "orrery/remote/sweepoperations.h"

#include <QApplication>
#include <QComboBox>
#include <QDateTime>
#include <QDeadlineTimer>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QThread>
#include <QTreeView>
#include <QUuid>

#include <memory>

using namespace orrery;
using namespace orrery::gui;
using Link = ClusterHub::Link;

namespace {

// A TCP relay from a loopback port to the fixture's sshd, on a thread of its own. stop() closes
// the port and every relayed connection (what a dropped network or a dead sshd looks like from
// here); start() listens again on the same port.
class TcpRelay : public QObject {
public:
    explicit TcpRelay(quint16 target) : m_target(target)
    {
        moveToThread(&m_thread);
        m_thread.start();
    }
    ~TcpRelay() override
    {
        stop();
        QMetaObject::invokeMethod(
            this, [this] { m_server.reset(); }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }
    quint16 start(quint16 port = 0)
    {
        quint16 got = 0;
        QMetaObject::invokeMethod(
            this,
            [&] {
                if (!m_server) {
                    m_server = std::make_unique<QTcpServer>();
                    QObject::connect(m_server.get(), &QTcpServer::newConnection, this, [this] { accept(); });
                }
                if (m_server->listen(QHostAddress::LocalHost, port))
                    got = m_server->serverPort();
            },
            Qt::BlockingQueuedConnection);
        return got;
    }
    void stop()
    {
        QMetaObject::invokeMethod(
            this,
            [this] {
                if (m_server)
                    m_server->close();
                for (QTcpSocket *s : findChildren<QTcpSocket *>())
                    s->abort();
                qDeleteAll(findChildren<QTcpSocket *>());
            },
            Qt::BlockingQueuedConnection);
    }

private:
    void accept()
    {
        while (QTcpSocket *in = m_server->nextPendingConnection()) {
            in->setParent(this);
            auto *out = new QTcpSocket(this);
            QObject::connect(in, &QTcpSocket::readyRead, out, [in, out] { out->write(in->readAll()); });
            QObject::connect(out, &QTcpSocket::readyRead, in, [in, out] { in->write(out->readAll()); });
            QObject::connect(in, &QTcpSocket::disconnected, out, &QTcpSocket::disconnectFromHost);
            QObject::connect(out, &QTcpSocket::disconnected, in, &QTcpSocket::disconnectFromHost);
            out->connectToHost(QHostAddress::LocalHost, m_target);
        }
    }
    QThread m_thread;
    quint16 m_target;
    std::unique_ptr<QTcpServer> m_server;
};

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The dialog of that name once it shows (the event loop runs meanwhile); nullptr after the time.
template<typename T>
T *waitForDialog(QWidget *window, const QString &name, const QString &cluster, int timeoutMs = 30'000)
{
    QDeadlineTimer deadline(timeoutMs);
    do {
        for (T *d : window->findChildren<T *>())
            if (d->objectName() == name && d->isVisible() && d->windowTitle().contains(cluster))
                return d;
        QTest::qWait(20);
    } while (!deadline.hasExpired());
    return nullptr;
}

}  // namespace

class TestGuiCluster : public QObject {
    Q_OBJECT
    orrery::test::TestCluster m_cluster;
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window;
    QString m_id = QUuid::createUuid().toString(QUuid::Id128).left(8);
    QStringList m_profiles;
    QString m_fingerprint;  // the fixture sshd's, as OpenSSH prints it

    remote::ClusterProfile profile(const QString &prefix)
    {
        remote::ClusterProfile p;
        p.name = prefix + QLatin1Char('-') + m_id;
        p.host = m_cluster.value("ORRERY_TEST_SSH_HOST");
        p.port = m_cluster.value("ORRERY_TEST_SSH_PORT").toInt();
        p.user = m_cluster.value("ORRERY_TEST_SSH_USER");
        p.identityFile = m_cluster.value("ORRERY_TEST_SSH_KEY");
        p.knownHostsFile = m_cluster.value("ORRERY_TEST_SSH_KNOWN_HOSTS");
        p.remoteRoot = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/tst_gui_cluster-") + m_id;
        p.partition = QStringLiteral("gpu");
        m_profiles << p.name;
        return p;
    }
    void save(const remote::ClusterProfile &p)
    {
        remote::ProfileStore().save(p);
        m_window->clusterView()->reloadProfiles();
    }
    ClusterHub *hub() const { return m_window->clusterHub(); }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error()));
        remote::Session session(orrery::test::clusterEndpoint(m_cluster));
        session.connect();
        m_fingerprint = session.serverFingerprint();
        QVERIFY(m_fingerprint.startsWith(QLatin1String("SHA256:")));
        // Profiles an interrupted run of this test left (the test config directory is shared).
        // By file name: one may be broken (emptied by a machine that stopped mid-write). Only an
        // hour old: a run of this test from another clone at the same time uses its own.
        static const QRegularExpression mine(QStringLiteral(
            "^(unknown|changed|pam|relay|fixture|queue|suspects|stderr|broken|whole)-[0-9a-f]{8}\\.json$"));
        const QDir profiles(remote::ProfileStore::defaultDirectory());
        const QDateTime anHourAgo = QDateTime::currentDateTime().addSecs(-3600);
        for (const QFileInfo &file : profiles.entryInfoList({QStringLiteral("*.json")}, QDir::Files))
            if (mine.match(file.fileName()).hasMatch() && file.lastModified() < anHourAgo)
                QFile::remove(file.filePath());
        m_window = std::make_unique<MainWindow>(m_dir.filePath(QStringLiteral("orrery.sqlite")));
        m_window->resize(1300, 850);
        m_window->show();
        hub()->setWatchInterval(200);
        m_window->clusterView()->setPollInterval(500);
    }

    void cleanupTestCase()
    {
        m_window.reset();
        for (const QString &p : std::as_const(m_profiles))
            remote::ProfileStore().remove(p);
    }

    // A broken profile file (emptied by a crash, a full disk) is named on the Cluster tab and in
    // the launcher, and the other profiles are still there to choose: one such file hid them all.
    void aBrokenProfileFileHidesNoOther()
    {
        const remote::ClusterProfile whole = profile(QStringLiteral("whole"));
        const QString brokenName = QStringLiteral("broken-") + m_id;
        m_profiles << brokenName;
        const QString broken = remote::ProfileStore().pathOf(brokenName);
        remote::ProfileStore().save(whole);
        QVERIFY(QFile(broken).open(QIODevice::WriteOnly));
        m_window->clusterView()->reloadProfiles();
        auto *clusters = m_window->clusterView()->findChild<QComboBox *>(QStringLiteral("clusterCombo"));
        QVERIFY(clusters);
        QVERIFY(clusters->findText(whole.name) >= 0);
        QVERIFY2(m_window->clusterView()->noticeLabel()->text().contains(broken),
                 qPrintable(m_window->clusterView()->noticeLabel()->text()));
        QPointer<Launcher> launcher = m_window->launchDialogs()->openLauncher();
        auto closeLauncher = qScopeGuard([&launcher] {
            if (launcher)
                launcher->close();  // deletes it
        });
        auto *target = launcher->findChild<QComboBox *>(QStringLiteral("targetCombo"));
        QVERIFY(target);
        QVERIFY(target->findData(whole.name) >= 0);
        auto *brokenLabel = launcher->findChild<QLabel *>(QStringLiteral("brokenProfiles"));
        QVERIFY(brokenLabel);
        QVERIFY(!brokenLabel->isHidden());
        QVERIFY2(brokenLabel->toolTip().contains(broken), qPrintable(brokenLabel->toolTip()));
        QVERIFY(QFile::exists(broken));  // nothing is removed for the user
        QVERIFY(QFile::remove(broken));
        remote::ProfileStore().remove(whole.name);
        m_window->clusterView()->reloadProfiles();
        QVERIFY(m_window->clusterView()->noticeLabel()->text().isEmpty());
    }

    void anUnknownHostKeyIsAskedRejectWritesNothingAcceptRecordsIt()
    {
        remote::ClusterProfile p = profile(QStringLiteral("unknown"));
        p.knownHostsFile = m_dir.filePath(QStringLiteral("known_hosts.unknown"));
        save(p);
        ClusterView *view = m_window->clusterView();
        m_window->tabs()->setCurrentWidget(view);
        view->setCluster(p.name);

        // The Cluster tab polls: the question comes as a dialog with the server's fingerprint.
        auto *ask = waitForDialog<HostKeyDialog>(m_window.get(), QStringLiteral("hostKeyDialog"), p.name);
        QVERIFY(ask);
        QCOMPARE(ask->fingerprint(), m_fingerprint);
        QVERIFY(ask->findChild<QLabel *>(QStringLiteral("fingerprint"))->text() == m_fingerprint);
        ask->findChild<QPushButton *>(QStringLiteral("reject"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(hub()->status(p.name).link, Link::NeedsYou, 20'000);
        QVERIFY(!QFile::exists(p.knownHostsFile) || readAll(p.knownHostsFile).isEmpty());
        // Declined is remembered: the next polls do not ask again until Connect.
        const int shown = view->pollsShown();
        QTRY_VERIFY_WITH_TIMEOUT(view->pollsShown() >= shown + 2, 10'000);
        QVERIFY(!waitForDialog<HostKeyDialog>(m_window.get(), QStringLiteral("hostKeyDialog"), p.name, 0));
        QCOMPARE(m_window->prompter()->pending(), 0);
        QVERIFY(m_window->clusterStatusLabel()->text().contains(p.name));
        QVERIFY(m_window->clusterStatusLabel()->text().contains(QLatin1String("needs you")));

        // Connect asks again; accepting records the key and the tab fills.
        view->findChild<QPushButton *>(QStringLiteral("connectButton"))->click();
        ask = waitForDialog<HostKeyDialog>(m_window.get(), QStringLiteral("hostKeyDialog"), p.name);
        QVERIFY(ask);
        ask->findChild<QPushButton *>(QStringLiteral("accept"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(hub()->status(p.name).link, Link::Connected, 30'000);
        const QByteArray known = readAll(p.knownHostsFile);
        QVERIFY2(known.contains(QByteArray::number(p.port)) && known.contains("ssh-"), known.constData());
        QTRY_VERIFY_WITH_TIMEOUT(view->partitionsTable()->rowCount() > 0, 30'000);
        QVERIFY(!view->nodeStrip()->nodes().isEmpty());
        for (const auto &n : view->nodeStrip()->nodes())
            QVERIFY2(n.gpusTotal > 0, qPrintable(n.name));  // the fixture's fake GPUs
        QVERIFY(view->linkLabel()->text().contains(QLatin1String("connected")));
    }

    // The store's suspect nodes of the cluster are marked on the node strip, and its context
    // menu clears one (docs/sweeps.md "Bad nodes kept out").
    void suspectNodesAreShownAndClearedFromTheStrip()
    {
        const remote::ClusterProfile p = profile(QStringLiteral("suspects"));
        save(p);
        {
            auto store = core::TrackingStore::open(m_dir.filePath(QStringLiteral("orrery.sqlite")));
            store->addSuspectNode(core::SuspectNode{p.name, QStringLiteral("node2"),
                                                    QStringLiteral("ECC errors"), QStringLiteral("user"),
                                                    1000, 0});
        }
        ClusterView *view = m_window->clusterView();
        m_window->tabs()->setCurrentWidget(view);
        view->setCluster(p.name);
        NodeStrip *strip = view->nodeStrip();
        QTRY_VERIFY_WITH_TIMEOUT(
            strip->suspectOf(QStringLiteral("node2")).has_value() && strip->nodes().size() == 2, 30'000);
        QCOMPARE(strip->suspectOf(QStringLiteral("node2"))->reason, QStringLiteral("ECC errors"));
        QVERIFY(!strip->suspectOf(QStringLiteral("node1")));
        int node1 = -1, node2 = -1;
        for (int i = 0; i < strip->nodes().size(); ++i)
            (strip->nodes()[i].name == QLatin1String("node1") ? node1 : node2) = i;
        // A node that is not suspect has nothing to clear.
        std::unique_ptr<QMenu> menu(strip->menuAt(strip->tileRect(node1).center()));
        QVERIFY(menu);
        QVERIFY(!menu->findChild<QAction *>(QStringLiteral("clearSuspect"))->isEnabled());
        menu.reset(strip->menuAt(strip->tileRect(node2).center()));
        QAction *clear = menu->findChild<QAction *>(QStringLiteral("clearSuspect"));
        QVERIFY(clear && clear->isEnabled());
        QVERIFY(clear->text().contains(QLatin1String("node2")));
        clear->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(strip->suspects().isEmpty(), 10'000);
        auto store = core::TrackingStore::open(m_dir.filePath(QStringLiteral("orrery.sqlite")),
                                               core::TrackingStore::Mode::ReadOnly);
        QVERIFY(store->suspectNodes(p.name).isEmpty());
    }

    void aChangedHostKeyIsRefusedWithBothFingerprints()
    {
        remote::ClusterProfile p = profile(QStringLiteral("changed"));
        p.knownHostsFile = m_dir.filePath(QStringLiteral("known_hosts.wrong"));
        QVERIFY(QFile::copy(m_cluster.value("ORRERY_TEST_SSH_KNOWN_HOSTS_WRONG"), p.knownHostsFile));
        const QByteArray before = readAll(p.knownHostsFile);
        save(p);
        hub()->connectNow(p.name);
        auto *box =
            waitForDialog<QMessageBox>(m_window.get(), QStringLiteral("hostKeyChangedDialog"), p.name);
        QVERIFY(box);
        const QString text = box->informativeText();
        QVERIFY2(text.contains(m_fingerprint), qPrintable(text));
        QVERIFY2(text.count(QLatin1String("SHA256:")) >= 2, qPrintable(text));  // offered and on file
        QVERIFY2(text.contains(p.knownHostsFile), qPrintable(text));  // where to fix it
        QVERIFY(!waitForDialog<HostKeyDialog>(m_window.get(), QStringLiteral("hostKeyDialog"), p.name, 0));
        box->accept();
        QTRY_COMPARE_WITH_TIMEOUT(hub()->status(p.name).link, Link::NeedsYou, 10'000);
        QCOMPARE(readAll(p.knownHostsFile), before);
        // Nothing uses it meanwhile: the follower's and fetcher's calls are refused at once.
        QString problem;
        QVERIFY(!hub()->connection(p.name, &problem));
        QVERIFY2(problem.contains(QLatin1String("host key changed")), qPrintable(problem));
    }

    void aKeyboardInteractiveSignInIsAnsweredThroughTheDialog()
    {
        if (m_cluster.value("ORRERY_TEST_SSH_PASSWORD_PORT").isEmpty()) {
            const QString why = QStringLiteral("the fixture could not start its password sshd: %1")
                                    .arg(m_cluster.value("ORRERY_TEST_SSH_PASSWORD_SKIPPED"));
            if (qEnvironmentVariable("CI") == QLatin1String("true"))
                QFAIL(qPrintable(why));
            QSKIP(qPrintable(why));
        }
        remote::ClusterProfile p = profile(QStringLiteral("pam"));
        p.port = m_cluster.value("ORRERY_TEST_SSH_PASSWORD_PORT").toInt();
        p.user = QStringLiteral("root");
        p.identityFile.clear();
        save(p);
        QSignalSpy asked(m_window->prompter(), &SshPrompter::asked);
        hub()->connectNow(p.name);
        auto *signIn =
            waitForDialog<PromptDialog>(m_window.get(), QStringLiteral("keyboardInteractiveDialog"), p.name);
        QVERIFY(signIn);
        QVERIFY(!signIn->fields().isEmpty());
        QCOMPARE(signIn->fields().front()->echoMode(), QLineEdit::Password);  // PAM's password prompt
        for (QLineEdit *f : signIn->fields())
            f->setText(m_cluster.value("ORRERY_TEST_SSH_PASSWORD"));
        signIn->accept();
        QTRY_COMPARE_WITH_TIMEOUT(hub()->status(p.name).link, Link::Connected, 30'000);
        QVERIFY(!asked.isEmpty());
        QCOMPARE(asked.front().at(1).toString(), QStringLiteral("keyboard-interactive"));
        QString problem;
        const auto c = hub()->connection(p.name, &problem);
        QVERIFY(c);
        QCOMPARE(c->exec("echo signed-in").result().out, QByteArray("signed-in\n"));
        QCOMPARE(c->connectCount(), 1);  // one sign-in, then the connection is shared
    }

    void aLostConnectionShowsAndComesBackByItself()
    {
        TcpRelay relay(quint16(m_cluster.value("ORRERY_TEST_SSH_PORT").toInt()));
        const quint16 port = relay.start();
        QVERIFY(port > 0);
        remote::ClusterProfile p = profile(QStringLiteral("relay"));
        p.port = port;
        // The fixture's host key under the relay's port.
        p.knownHostsFile = m_dir.filePath(QStringLiteral("known_hosts.relay"));
        {
            const QList<QByteArray> fields =
                readAll(m_cluster.value("ORRERY_TEST_SSH_KNOWN_HOSTS")).split('\n').front().split(' ');
            QFile f(p.knownHostsFile);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("[127.0.0.1]:" + QByteArray::number(port) + ' ' + fields.value(1) + ' ' +
                    fields.value(2) + '\n');
        }
        save(p);
        ClusterView *view = m_window->clusterView();
        m_window->tabs()->setCurrentWidget(view);
        view->setCluster(p.name);
        QTRY_COMPARE_WITH_TIMEOUT(hub()->status(p.name).link, Link::Connected, 30'000);
        QTRY_VERIFY_WITH_TIMEOUT(view->partitionsTable()->rowCount() > 0, 30'000);
        QCOMPARE(hub()->status(p.name).connects, 1);

        // Cut: the status bar says so within a few polls, and the window keeps answering.
        relay.stop();
        QElapsedTimer clock;
        clock.start();
        qint64 last = 0, worstGap = 0;
        while (hub()->status(p.name).link != Link::Lost && clock.elapsed() < 30'000) {
            QTest::qWait(20);
            worstGap = std::max(worstGap, clock.elapsed() - last);
            last = clock.elapsed();
        }
        QCOMPARE(hub()->status(p.name).link, Link::Lost);
        // A UI thread waiting on SSH would stall for a connect timeout (10 s) and more; here it
        // only paints (the bound leaves room for a slow, loaded machine).
        QVERIFY2(worstGap < 5'000, qPrintable(QString::number(worstGap)));
        QVERIFY(m_window->clusterStatusLabel()->text().contains(QLatin1String("connection lost")));
        QVERIFY(view->linkLabel()->text().contains(QLatin1String("connection lost")));
        QTRY_VERIFY_WITH_TIMEOUT(!view->noticeLabel()->text().isEmpty() &&
                                     view->partitionsTable()->rowCount() > 0,  // the last data stays
                                 10'000);

        // Restored: the next poll reconnects by itself.
        QCOMPARE(relay.start(port), port);
        QTRY_COMPARE_WITH_TIMEOUT(hub()->status(p.name).link, Link::Connected, 30'000);
        QVERIFY(hub()->status(p.name).connects >= 2);
        QTRY_VERIFY_WITH_TIMEOUT(
            m_window->clusterStatusLabel()->text().contains(QLatin1String("reconnected")), 10'000);
        QTRY_VERIFY_WITH_TIMEOUT(view->noticeLabel()->text().contains(QLatin1String("polled in")), 10'000);
    }

    void aSweepLaunchedFromTheDialogRunsToCompletionOnSlurm()
    {
        ORRERY_SKIP_WITHOUT_TRAINER();
        remote::ClusterProfile p = profile(QStringLiteral("fixture"));
        p.trainerPath = qEnvironmentVariable("ORRERY_TRAINER");
        p.setup = {QStringLiteral("export MASTER_ADDR=127.0.0.1")};
        save(p);
        const QString specPath = m_dir.filePath(QStringLiteral("specs/launch.yaml"));
        QVERIFY(QDir().mkpath(QFileInfo(specPath).path()));
        QVERIFY(
            QFile::copy(orrery::test::microConfigPath(), m_dir.filePath(QStringLiteral("specs/micro.yaml"))));
        const QString hostileName = QStringLiteral("gui 'q' $(touch pwned) ; rm -rf x");
        const QString hostileExperiment = QStringLiteral("exp \"q\" `id` $HOME");

        Launcher *launcher = m_window->launchDialogs()->openLauncher();
        QVERIFY(launcher);
        launcher->setSpecPath(specPath);
        launcher->setTarget(p.name);
        QCOMPARE(launcher->target(), p.name);
        QTRY_VERIFY_WITH_TIMEOUT(launcher->schemaReady(), 60'000);

        // A key the trainer does not have: underlined at its line, listed beside.
        const QString bad = QStringLiteral("name: x\n"
                                           "trainer: {config: micro.yaml}\n"
                                           "method: grid\n"
                                           "parameters:\n"
                                           "  optim.lrr: {values: [1e-3]}\n");
        QSignalSpy validated(launcher, &Launcher::validated);
        launcher->editor()->setPlainText(bad);
        QVERIFY(validated.wait(5'000));
        QVERIFY(!launcher->isValid());
        QVERIFY2(launcher->underlinedLines().contains(5),
                 qPrintable(launcher->problemList()->item(0)->text()));
        QVERIFY(launcher->problemList()->count() >= 1);
        QVERIFY2(launcher->problemList()->item(0)->text().contains(QLatin1String("line 5")),
                 qPrintable(launcher->problemList()->item(0)->text()));
        QVERIFY(!launcher->findChild<QPushButton *>(QStringLiteral("submitButton"))->isEnabled());

        // A W&B file's own keys are said as warnings at their line and block nothing.
        launcher->editor()->setPlainText(QStringLiteral("name: x\n"
                                                        "project: my-wandb-project\n"
                                                        "trainer: {config: micro.yaml}\n"
                                                        "method: grid\n"
                                                        "parameters:\n"
                                                        "  optim.lr: {values: [1.0e-3]}\n"));
        QVERIFY(validated.wait(5'000));
        QVERIFY2(launcher->isValid(),
                 qPrintable(launcher->problemList()->count() ? launcher->problemList()->item(0)->text()
                                                             : QString()));
        QCOMPARE(launcher->problemList()->count(), 1);
        QVERIFY2(launcher->problemList()->item(0)->text().startsWith(QLatin1String("line 2: warning:")),
                 qPrintable(launcher->problemList()->item(0)->text()));
        QVERIFY(launcher->underlinedLines().isEmpty());

        const QString spec = QStringLiteral("name: \"%1\"\n"
                                            "experiment: '%2'\n"
                                            "trainer: {config: micro.yaml}\n"
                                            "method: grid\n"
                                            "metric: {name: train/loss, goal: minimize}\n"
                                            "parameters:\n"
                                            "  optim.lr: {values: [3e-3, 1e-3]}\n"
                                            "  train.steps: {value: 12}\n"
                                            "resources: {cpus_per_task: 1, mem: 500M, time: \"00:10:00\"}\n"
                                            "max_concurrent: 2\n")
                                 .arg(QString(hostileName).replace(QLatin1Char('"'), QLatin1String("\\\"")),
                                      hostileExperiment);
        launcher->editor()->setPlainText(spec);
        QVERIFY(validated.wait(5'000));
        QVERIFY2(launcher->isValid(),
                 qPrintable(launcher->problemList()->count() ? launcher->problemList()->item(0)->text()
                                                             : launcher->statusText()));
        QVERIFY(launcher->underlinedLines().isEmpty());

        launcher->preview();
        QCOMPARE(launcher->trialTable()->rowCount(), 2);
        QVERIFY2(launcher->scriptText().contains(QLatin1String("#SBATCH")),
                 qPrintable(launcher->scriptText()));
        QVERIFY2(launcher->scriptText().contains(QLatin1String("--array=0-1")),
                 qPrintable(launcher->scriptText()));

        QSignalSpy submitted(launcher, &Launcher::submitted);
        QSignalSpy failed(launcher, &Launcher::submitFailed);
        launcher->findChild<QPushButton *>(QStringLiteral("submitButton"))->click();
        QTRY_VERIFY2_WITH_TIMEOUT(!submitted.isEmpty() || !failed.isEmpty(),
                                  qPrintable(failed.isEmpty() ? QString() : failed.front().at(0).toString()),
                                  120'000);
        QVERIFY2(failed.isEmpty(),
                 qPrintable(failed.isEmpty() ? QString() : failed.front().at(0).toString()));
        const qint64 sweep = submitted.front().at(0).toLongLong();
        QCOMPARE(submitted.front().at(1).toString(), hostileName);

        // The tree shows it (selected), and the window's follower takes it to the end.
        SweepTreeModel *tree = m_window->treeModel();
        QTRY_VERIFY_WITH_TIMEOUT(tree->sweepIndex(sweep).isValid(), 30'000);
        const QModelIndex item = tree->sweepIndex(sweep);
        QCOMPARE(item.data(Qt::DisplayRole).toString(), hostileName);
        QCOMPARE(item.parent().data(Qt::DisplayRole).toString(), hostileExperiment);
        QCOMPARE(item.data(SweepTreeModel::ClusterRole).toString(), p.name);
        auto trialStates = [&] {
            QStringList states;
            const QModelIndex s = tree->sweepIndex(sweep);
            if (tree->canFetchMore(s))  // trial rows are made when the sweep is expanded
                tree->fetchMore(s);
            for (int r = 0; r < tree->rowCount(s); ++r)
                states << tree->index(r, 0, s).data(SweepTreeModel::StateRole).toString();
            return states;
        };
        QTRY_VERIFY2_WITH_TIMEOUT(trialStates() ==
                                      (QStringList{QStringLiteral("completed"), QStringLiteral("completed")}),
                                  qPrintable(trialStates().join(QLatin1Char(','))), 240'000);
        auto store = core::TrackingStore::open(m_dir.filePath(QStringLiteral("orrery.sqlite")),
                                               core::TrackingStore::Mode::ReadOnly);
        const auto sw = store->sweep(sweep);
        QVERIFY(sw);
        QCOMPARE(sw->name, hostileName);
        QCOMPARE(sw->cluster, p.name);
        QVERIFY(!sw->arrayJobId.isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(!core::isActive(store->sweep(sweep)->sweepState()), 60'000);
        // Where a shell would have run the name's command: the remote root (the fixture's home for
        // SSH commands is elsewhere, but the jobs start there) and this process's directory.
        QVERIFY(!QFile::exists(p.remoteRoot + QStringLiteral("/pwned")));
        QVERIFY(!QFile::exists(QDir::current().filePath(QStringLiteral("pwned"))));
        // The follower used the window's one connection to the cluster.
        QString problem;
        QVERIFY(hub()->connection(p.name, &problem)->connectCount() == 1);

        // A trial's logs: double-click opens their live tail, read over the same connection.
        QSignalSpy opened(m_window.get(), &MainWindow::logsOpened);
        QSignalSpy logsFailed(m_window.get(), &MainWindow::logsFailed);
        const QModelIndex trial0 = tree->index(0, 0, tree->sweepIndex(sweep));
        Q_EMIT m_window->sweepTree()->doubleClicked(trial0);
        QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty() || !logsFailed.isEmpty(), 30'000);
        QVERIFY2(logsFailed.isEmpty(),
                 qPrintable(logsFailed.isEmpty() ? QString() : logsFailed.front().at(0).toString()));
        auto *logs = opened.front().at(0).value<LogView *>();
        QVERIFY(logs);
        QCOMPARE(logs->fileCount(), 2);
        QVERIFY2(logs->file(0).path.endsWith(QLatin1String(".out")), qPrintable(logs->file(0).path));
        // The trainer writes its metrics to events.jsonl, not stdout: the files exist and are read
        // (their content is the queue test's business below).
        QTRY_VERIFY2_WITH_TIMEOUT(logs->loadedTo(0) >= 0 && logs->loadedTo(1) >= 0,
                                  qPrintable(logs->text(0) + logs->statusText()), 30'000);
        QVERIFY2(logs->error(0).isEmpty(), qPrintable(logs->error(0)));
        QVERIFY(!logs->text(0).contains(QLatin1String("not created yet")));
        logs->close();
        // Read through the executor on the window's one connection: none opened for the logs.
        QCOMPARE(hub()->connection(p.name, &problem)->connectCount(), 1);

        // "Copy as CLI command": the same action for a terminal, quoted where it must be.
        const QString line =
            m_window->sweepActions()->commandLine(SweepActions::Action::RetryTrial, sweep, 1);
        QVERIFY2(line.endsWith(QStringLiteral("sweep retry %1 1").arg(sweep)), qPrintable(line));
        QVERIFY2(line.contains(QLatin1String("--db")), qPrintable(line));
    }

    // A command trial that fails on the cluster: the details dock shows the last lines of its
    // stderr, read from the sweep's logs/ on the cluster over the window's one connection.
    void aFailedClusterTrialsStderrIsInTheDetails()
    {
        const remote::ClusterProfile p = profile(QStringLiteral("stderr"));
        save(p);
        QString problem;
        QVERIFY2(hub()->connection(p.name, &problem), qPrintable(problem));
        const QString spec = m_dir.filePath(QStringLiteral("specs/fails.yaml"));
        QVERIFY(QDir().mkpath(QFileInfo(spec).path()));
        QFile f(spec);
        QVERIFY(f.open(QIODevice::WriteOnly));
        // Thirty lines of noise, then a traceback: the dock shows the last kStderrLines.
        const QString script = QStringLiteral(
            "for i in $(seq 30); do echo noise-$i >&2; done; "
            "echo 'Traceback (most recent call last):' >&2; echo '  File \"train.py\", line 3' >&2; "
            "printf 'ValueError: lr \\033[31mmust\\033[0m be positive\\n' >&2; echo progress; exit 3");
        f.write("name: fails\nexperiment: stderr\ncommand: [bash, -c, " + orrery::test::yamlQuoted(script) +
                "]\nmethod: grid\nparameters:\n  x: {values: [1]}\n"
                "resources: {cpus_per_task: 1, mem: 200M, time: \"00:05:00\"}\nretries: 0\n");
        f.close();
        // Submitted as the launcher does (the profile is this test's, in QStandardPaths' test
        // mode, which a CLI process would not see), over the window's connection.
        core::SweepId sweep = 0;
        {
            auto writer = core::TrackingStore::open(m_dir.filePath(QStringLiteral("orrery.sqlite")));
            remote::SweepOperations::Options options;
            options.connections = hub()->connectionSource();
            remote::SweepOperations ops(*writer, options);
            try {
                const remote::CheckedSpec checked = ops.checkSpecFile(spec, false);
                QVERIFY2(checked.ok(), qPrintable(checked.problemLines().join(QLatin1Char('\n'))));
                sweep = ops.submit(checked, p.name);
            } catch (const remote::OperationError &e) {
                QFAIL(e.what());
            }
        }  // its leases go: the window's follower takes the sweep
        QVERIFY(sweep > 0);

        // The window's follower records the failure.
        auto store = core::TrackingStore::open(m_dir.filePath(QStringLiteral("orrery.sqlite")),
                                               core::TrackingStore::Mode::ReadOnly);
        auto failedTrial = [&]() -> std::optional<core::Trial> {
            for (const core::Trial &t : store->trials(sweep))
                if (t.state == QLatin1String("failed") && t.runId)
                    return t;
            return std::nullopt;
        };
        QTRY_VERIFY_WITH_TIMEOUT(failedTrial().has_value(), 120'000);
        const core::Trial trial = *failedTrial();

        // Selected as a click in the runs table would (each snapshot shows the current run again).
        DetailsView *details = m_window->detailsView();
        m_window->selection()->select({trial.runId}, this, trial.runId);
        details->showRun(trial.runId);
        auto stderrLines = [&] {
            QStringList lines;
            const QList<QTreeWidgetItem *> sections =
                details->findItems(QStringLiteral("stderr of attempt"), Qt::MatchStartsWith, 0);
            for (int i = 0; !sections.isEmpty() && i < sections.front()->childCount(); ++i)
                if (sections.front()->child(i)->data(0, Qt::UserRole).toString() != QLatin1String("error"))
                    lines << sections.front()->child(i)->text(0);  // the lines, after the one that says why
            return lines;
        };
        QTRY_VERIFY2_WITH_TIMEOUT(stderrLines().contains(QStringLiteral("ValueError: lr must be positive")),
                                  qPrintable(stderrLines().join(QLatin1Char('\n'))), 30'000);
        const QStringList lines = stderrLines();
        // The file's last 20 lines, then the log window's offer: the traceback (its colour codes
        // gone) and what srun adds after it ("srun: error: node1: task 0: Exited with exit code
        // 3"), after as much noise as fits.
        const QStringList tail = lines.mid(0, DetailsView::kStderrLines);
        const qsizetype error = tail.indexOf(QStringLiteral("ValueError: lr must be positive"));
        QVERIFY2(error >= 2, qPrintable(tail.join(QLatin1Char('\n'))));
        QCOMPARE(tail[error - 2], QStringLiteral("Traceback (most recent call last):"));
        for (qsizetype i = error + 1; i < tail.size(); ++i)
            QVERIFY2(tail[i].startsWith(QLatin1String("srun: ")), qPrintable(tail[i]));
        QCOMPARE(tail.front(), QStringLiteral("noise-%1").arg(30 - (error - 2) + 1));
        QVERIFY(lines.size() > DetailsView::kStderrLines);
        QVERIFY(!lines.contains(QStringLiteral("progress")));  // stdout is not stderr
        const QTreeWidgetItem *section =
            details->findItems(QStringLiteral("stderr of attempt"), Qt::MatchStartsWith, 0).front();
        QVERIFY2(section->toolTip(0).endsWith(QStringLiteral("/logs/%1.err").arg(trial.task)),
                 qPrintable(section->toolTip(0)));
        // The line that says why first: the exception, not srun's report of the exit after it.
        QCOMPARE(section->child(0)->data(0, Qt::UserRole).toString(), QStringLiteral("error"));
        QCOMPARE(section->child(0)->toolTip(0), QStringLiteral("ValueError: lr must be positive"));
        // Over the window's one connection.
        QCOMPARE(hub()->connection(p.name, &problem)->connectCount(), 1);
        // Read once: a refresh (the next snapshot) shows the same lines at once, not "reading".
        QSignalSpy shown(details, &DetailsView::shown);
        details->showRun(trial.runId);
        QVERIFY(shown.wait(10'000));
        QCOMPARE(stderrLines(), lines);
    }

    void aQueuedJobsOutputIsTailedLive()
    {
        remote::ClusterProfile p = profile(QStringLiteral("queue"));
        save(p);
        QString problem;
        const auto c = hub()->connection(p.name, &problem);
        QVERIFY2(c, qPrintable(problem));
        const QString out = p.remoteRoot + QStringLiteral("/job-%j.out");
        c->exec(remote::commandLine(QStringList{QStringLiteral("mkdir"), QStringLiteral("-p"), p.remoteRoot}))
            .result();
        const auto submitted =
            c
                ->exec(remote::commandLine(QStringList{
                    QStringLiteral("sbatch"), QStringLiteral("--parsable"), QStringLiteral("--partition=gpu"),
                    QStringLiteral("--output=") + out, QStringLiteral("--job-name=gui \x1b[31mtail"),
                    QStringLiteral("--wrap=echo hello-from-job; printf 'bell\\a\\033[31mred\\n'; "
                                   "sleep 2; echo second-line; exec sleep 120")}))
                .result();
        QCOMPARE(submitted.exitStatus, 0);
        const QString job = QString::fromUtf8(submitted.out).trimmed().section(QLatin1Char(';'), 0, 0);
        QVERIFY(!job.isEmpty());
        auto cancel = qScopeGuard([&] {
            c->exec(remote::commandLine(QStringList{QStringLiteral("scancel"), job})).waitForFinished();
        });

        ClusterView *view = m_window->clusterView();
        m_window->tabs()->setCurrentWidget(view);
        view->setCluster(p.name);
        int row = -1;
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                for (int r = 0; r < view->queueTable()->rowCount(); ++r)
                    if (view->queueTable()->item(r, 0)->text() == job &&
                        view->queueTable()->item(r, 2)->text() == QLatin1String("RUNNING"))
                        row = r;
                return row >= 0;
            }(),
            60'000);
        // The job's name is data: its escape byte does not reach the table as a control character.
        QVERIFY(!view->queueTable()->item(row, 1)->text().contains(QChar(0x1b)));

        QSignalSpy opened(m_window.get(), &MainWindow::logsOpened);
        Q_EMIT view->queueTable()->cellDoubleClicked(row, 0);
        QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty(), 30'000);
        auto *logs = opened.front().at(0).value<LogView *>();
        QVERIFY(logs);
        QCOMPARE(logs->file(0).path, QString(out).replace(QLatin1String("%j"), job));
        logs->setPollInterval(200);
        QTRY_VERIFY2_WITH_TIMEOUT(logs->text(0).contains(QLatin1String("hello-from-job")),
                                  qPrintable(logs->text(0)), 30'000);
        // Followed: a line written later shows without asking.
        QTRY_VERIFY2_WITH_TIMEOUT(logs->text(0).contains(QLatin1String("second-line")),
                                  qPrintable(logs->text(0)), 30'000);
        QVERIFY2(!logs->text(0).contains(QChar(0x1b)) && !logs->text(0).contains(QChar(0x07)),
                 qPrintable(logs->text(0)));
        QVERIFY2(logs->text(0).contains(QLatin1String("red")), qPrintable(logs->text(0)));
        logs->close();
    }
};

ORRERY_TEST_MAIN(TestGuiCluster, QApplication)
#include "tst_gui_cluster.moc"
