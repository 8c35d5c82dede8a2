// SPDX-License-Identifier: GPL-3.0-or-later
// Notices delivered (remote/notify.h, docs/sweeps.md "Notifications") to real targets: an HTTP
// server on loopback (a QTcpServer in this test, speaking plain HTTP/1.1: it sees the request
// as sent, answers 500 once to check the one retry, or 404 that is not retried), a port nobody
// listens on, and real commands (sh writing its stdin to a file; one that fails; one that does
// not exist).
#include "testsupport.h"

#include "orrery/core/notice.h"
#include "orrery/remote/notify.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

using namespace orrery;

namespace {

// A loopback HTTP server: records each request (its head and body) and answers with the next of
// `statuses` (the last one repeated).
class HttpSink : public QObject {
public:
    explicit HttpSink(QList<int> statuses) : m_statuses(std::move(statuses))
    {
        QObject::connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *s = m_server.nextPendingConnection()) {
                auto *buffer = new QByteArray;
                QObject::connect(s, &QTcpSocket::disconnected, s, [s, buffer] {
                    delete buffer;
                    s->deleteLater();
                });
                QObject::connect(s, &QTcpSocket::readyRead, this, [this, s, buffer] {
                    *buffer += s->readAll();
                    const qsizetype headEnd = buffer->indexOf("\r\n\r\n");
                    if (headEnd < 0)
                        return;
                    const QByteArray head = buffer->left(headEnd);
                    qsizetype length = 0;
                    for (const QByteArray &line : head.split('\n'))
                        if (line.toLower().startsWith("content-length:"))
                            length = line.mid(15).trimmed().toLongLong();
                    if (buffer->size() < headEnd + 4 + length)
                        return;
                    requests.append({head, buffer->mid(headEnd + 4, length)});
                    const int status = m_statuses.value(requests.size() - 1, m_statuses.constLast());
                    s->write(QByteArrayLiteral("HTTP/1.1 ") + QByteArray::number(status) +
                             " X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
                    s->disconnectFromHost();
                    buffer->clear();
                });
            }
        });
        if (!m_server.listen(QHostAddress::LocalHost))
            qFatal("cannot listen on loopback");
    }
    QString url() const
    {
        return QStringLiteral("http://127.0.0.1:%1/hooks/orrery?x=1").arg(m_server.serverPort());
    }
    QList<std::pair<QByteArray, QByteArray>> requests;  // (head, body)

private:
    QTcpServer m_server;
    QList<int> m_statuses;
};

core::Notice notice()
{
    core::Notice n;
    n.kind = core::Notice::Kind::TrialFailed;
    n.sweepId = 9;
    n.sweep = QStringLiteral("lr 'quoted' $(x)");
    n.state = QStringLiteral("failed");
    n.trial = 2;
    n.message = QStringLiteral("trial 2 failed: exit 1; no retries (retries: 0)");
    n.timeMs = 1700000000000;
    return n;
}

core::NotifyTarget url(const QString &u)
{
    core::NotifyTarget t;
    t.url = u;
    return t;
}

core::NotifyTarget command(const QStringList &argv)
{
    core::NotifyTarget t;
    t.command = argv;
    return t;
}

}  // namespace

class TestNotify : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aWebhookGetsTheNoticeAsJson()
    {
        HttpSink sink({200});
        const remote::NotifyResult r = remote::deliverNotice(url(sink.url()), notice());
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(sink.requests.size(), 1);
        const auto &[head, body] = sink.requests.front();
        QVERIFY2(head.startsWith("POST /hooks/orrery?x=1 HTTP/1.1"), head.constData());
        QVERIFY2(head.toLower().contains("content-type: application/json"), head.constData());
        QCOMPARE(body, core::toJson(notice()));
        const QJsonObject o = QJsonDocument::fromJson(body).object();
        QCOMPARE(o.value(QStringLiteral("kind")).toString(), QStringLiteral("trial_failed"));
        QCOMPARE(o.value(QStringLiteral("sweep")).toString(), notice().sweep);
    }

    void aServerErrorIsRetriedOnce()
    {
        HttpSink sink({500, 200});
        const remote::NotifyResult r = remote::deliverNotice(url(sink.url()), notice());
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(sink.requests.size(), 2);
        HttpSink down({503});
        const remote::NotifyResult failed = remote::deliverNotice(url(down.url()), notice());
        QVERIFY(!failed.ok);
        QCOMPARE(down.requests.size(), 2);
        QVERIFY2(failed.error.contains(QStringLiteral("answered HTTP 503")), qPrintable(failed.error));
    }

    void aClientErrorIsNotRetried()
    {
        HttpSink sink({404});
        const remote::NotifyResult r = remote::deliverNotice(url(sink.url()), notice());
        QVERIFY(!r.ok);
        QCOMPARE(sink.requests.size(), 1);
        QVERIFY2(r.error.contains(sink.url()) && r.error.contains(QStringLiteral("404")),
                 qPrintable(r.error));
    }

    void nobodyListeningIsReportedNotThrown()
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost));
        const quint16 port = probe.serverPort();
        probe.close();
        const QString target = QStringLiteral("http://127.0.0.1:%1/x").arg(port);
        const remote::NotifyResult r = remote::deliverNotice(url(target), notice(), 3000);
        QVERIFY(!r.ok);
        QVERIFY2(r.error.startsWith(QStringLiteral("notify: cannot reach ") + target), qPrintable(r.error));
    }

    // A command's words are passed as they are (no shell: the sweep's name with quotes and $( )
    // arrives as data), the notice's JSON on its stdin.
    void aCommandGetsTheNoticeOnStdin()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("it's here.json"));
        const remote::NotifyResult r = remote::deliverNotice(
            command({QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("cat > \"$0\""), out}),
            notice());
        QVERIFY2(r.ok, qPrintable(r.error));
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), core::toJson(notice()) + '\n');
    }

    void aFailingCommandIsReported()
    {
        const remote::NotifyResult r =
            remote::deliverNotice(command({QStringLiteral("sh"), QStringLiteral("-c"),
                                           QStringLiteral("echo no webhook >&2; exit 3")}),
                                  notice());
        QVERIFY(!r.ok);
        QVERIFY2(r.error.contains(QStringLiteral("exited with status 3: no webhook")), qPrintable(r.error));
        const remote::NotifyResult missing =
            remote::deliverNotice(command({QStringLiteral("/nonexistent/notify-me")}), notice());
        QVERIFY(!missing.ok);
        QVERIFY2(missing.error.contains(QStringLiteral("cannot run /nonexistent/notify-me")),
                 qPrintable(missing.error));
        const remote::NotifyResult slow =
            remote::deliverNotice(command({QStringLiteral("sleep"), QStringLiteral("30")}), notice(), 500);
        QVERIFY(!slow.ok);
        QVERIFY2(slow.error.contains(QStringLiteral("did not finish")), qPrintable(slow.error));
    }
};

ORRERY_TEST_MAIN(TestNotify, QCoreApplication)
#include "tst_notify.moc"
