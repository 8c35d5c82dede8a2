// SPDX-License-Identifier: GPL-3.0-or-later
// The cluster-status operation's rules (remote/clusterstatus.h, remote/nodes.h), as tables: which
// of Slurm's node states take work (the Cluster tab's colours, the monitor's "nodes up" and
// `orrery cluster nodes --json` read the same rule), what a failed call means for the link; and
// a poll of a port nothing listens on (a real refused connection on loopback): an error, a lost
// link, no hint to settle it, nothing thrown.
#include "orrery/remote/clusterstatus.h"
#include "orrery/remote/error.h"
#include "orrery/remote/nodes.h"

#include <QTcpServer>
#include <QTest>

#include <stdexcept>

using namespace orrery::remote;

Q_DECLARE_METATYPE(orrery::remote::NodeCondition)
Q_DECLARE_METATYPE(orrery::remote::LinkFailure)

class TestClusterStatus : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void nodeCondition_data()
    {
        QTest::addColumn<QString>("state");
        QTest::addColumn<NodeCondition>("condition");
        QTest::addColumn<bool>("up");
        const auto row = [](const char *state, NodeCondition c, bool up) {
            QTest::newRow(state) << QString::fromLatin1(state) << c << up;
        };
        row("idle", NodeCondition::Idle, true);
        row("IDLE", NodeCondition::Idle, true);
        row("mixed", NodeCondition::Mixed, true);
        row("allocated", NodeCondition::Allocated, true);
        row("completing", NodeCondition::Allocated, true);
        row("reserved", NodeCondition::Other, true);
        row("maint", NodeCondition::Other, true);
        row("planned", NodeCondition::Other, true);
        row("down", NodeCondition::Down, false);
        row("drained", NodeCondition::Down, false);
        row("draining", NodeCondition::Down, false);
        row("fail", NodeCondition::Down, false);
        row("inval", NodeCondition::Down, false);
        row("idle*", NodeCondition::Unknown, false);  // not responding
        row("unknown", NodeCondition::Unknown, false);
        row("not_responding", NodeCondition::Unknown, false);
        row("", NodeCondition::Unknown, false);
        row("powered_down", NodeCondition::Off, false);
        row("powering_up", NodeCondition::Off, false);
        row("future", NodeCondition::Off, false);
    }
    void nodeCondition()
    {
        QFETCH(QString, state);
        QFETCH(NodeCondition, condition);
        QFETCH(bool, up);
        QCOMPARE(orrery::remote::nodeCondition(state), condition);
        QCOMPARE(isNodeUp(state), up);
        QVERIFY(!conditionName(condition).isEmpty());
    }

    void linkFailure_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<LinkFailure>("failure");
        QTest::addColumn<bool>("hint");
        using K = RemoteError::Kind;
        QTest::newRow("host key changed") << int(K::HostKeyChanged) << LinkFailure::HostKeyChanged << true;
        QTest::newRow("host key unknown") << int(K::HostKeyUnknown) << LinkFailure::NeedsYou << true;
        QTest::newRow("auth") << int(K::Auth) << LinkFailure::NeedsYou << true;
        QTest::newRow("connect") << int(K::Connect) << LinkFailure::Lost << false;
        QTest::newRow("timeout") << int(K::Timeout) << LinkFailure::Lost << false;
        QTest::newRow("channel") << int(K::Channel) << LinkFailure::Lost << false;
        QTest::newRow("slurm refused") << int(K::Slurm) << LinkFailure::Refused << false;
        QTest::newRow("sftp refused") << int(K::Sftp) << LinkFailure::Refused << false;
    }
    void linkFailure()
    {
        QFETCH(int, kind);
        QFETCH(LinkFailure, failure);
        QFETCH(bool, hint);
        const RemoteError e(RemoteError::Kind(kind), QStringLiteral("x"));
        QCOMPARE(orrery::remote::linkFailure(e), failure);
        QCOMPARE(!settleHint(failure, QStringLiteral("c1")).isEmpty(), hint);
        if (hint)
            QVERIFY(
                settleHint(failure, QStringLiteral("c1")).contains(QLatin1String("orrery cluster test c1")));
    }
    void anotherExceptionIsALostLink()
    {
        QCOMPARE(orrery::remote::linkFailure(std::runtime_error("boom")), LinkFailure::Lost);
    }

    void aRefusedConnectionIsAnErrorNotAThrow()
    {
        // A port that was free a moment ago: nothing listens there now.
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost));
        const quint16 port = server.serverPort();
        server.close();
        ClusterProfile profile;
        profile.name = QStringLiteral("nobody");
        profile.host = QStringLiteral("127.0.0.1");
        profile.port = port;
        ConnectionOptions once;
        once.reconnectAttempts = 1;
        ClusterWatch watch(profile, {}, once);
        const ClusterStatus status = watch.poll(QueueScope::Mine);
        QVERIFY(!status.ok());
        QCOMPARE(status.failure, LinkFailure::Lost);
        QVERIFY(status.exception);
        QVERIFY(status.info.nodes.isEmpty());
        QVERIFY(status.mineOnly);
    }
};

QTEST_GUILESS_MAIN(TestClusterStatus)
#include "tst_clusterstatus.moc"
