// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/notify.h"

#include "logging.h"

#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QProcess>
#include <QThread>
#include <QTimer>
#include <QUrl>

namespace orrery::remote {

namespace {

NotifyResult runCommand(const QStringList &argv, const QByteArray &json, int timeoutMs)
{
    const QString shown = argv.join(QLatin1Char(' '));
    QProcess p;
    p.setProcessChannelMode(QProcess::SeparateChannels);
    p.setStandardOutputFile(QProcess::nullDevice());
    p.start(argv.front(), argv.mid(1));
    if (!p.waitForStarted(timeoutMs))
        return {false, QStringLiteral("notify: cannot run %1: %2").arg(shown, p.errorString())};
    p.write(json);
    p.write("\n");
    p.closeWriteChannel();
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(1000);
        return {
            false,
            QStringLiteral("notify: %1 did not finish within %2 s; killed").arg(shown).arg(timeoutMs / 1000)};
    }
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        const QString err = QString::fromUtf8(p.readAllStandardError()).trimmed().left(300);
        return {false,
                QStringLiteral("notify: %1 %2%3")
                    .arg(shown,
                         p.exitStatus() == QProcess::NormalExit
                             ? QStringLiteral("exited with status %1").arg(p.exitCode())
                             : QStringLiteral("crashed"),
                         err.isEmpty() ? QString() : QStringLiteral(": ") + err)};
    }
    return {};
}

NotifyResult post(const QString &target, const QByteArray &json, int timeoutMs)
{
    const QUrl url(target);
    QNetworkAccessManager nam;
    QString last;
    // One retry, a second later: a webhook's receiver restarting, or a dropped connection.
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (attempt > 0)
            QThread::msleep(1000);
        QNetworkRequest request(url);
        request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
        request.setTransferTimeout(timeoutMs);
        QNetworkReply *reply = nam.post(request, json);
        QEventLoop loop;
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const QString netText = reply->errorString();
        const QByteArray body = reply->readAll().left(300);
        reply->deleteLater();
        if (status >= 200 && status < 300)
            return {};
        last = status == 0
            ? QStringLiteral("notify: cannot reach %1: %2").arg(target, netText)
            : QStringLiteral("notify: %1 answered HTTP %2%3")
                  .arg(target)
                  .arg(status)
                  .arg(body.isEmpty() ? QString() : QStringLiteral(": ") + QString::fromUtf8(body));
        qCDebug(lcRemote) << last << (attempt == 0 ? "- retrying" : "");
        // A client error (a wrong URL, a refused payload) is not retried: it would be refused again.
        if (status >= 400 && status < 500 && status != 429)
            break;
    }
    return {false, last};
}

}  // namespace

NotifyResult deliverNotice(const core::NotifyTarget &target, const core::Notice &notice, int timeoutMs)
{
    const QByteArray json = core::toJson(notice);
    if (!target.url.isEmpty())
        return post(target.url, json, timeoutMs);
    if (target.command.isEmpty())
        return {false, QStringLiteral("notify: no command or URL")};
    return runCommand(target.command, json, timeoutMs);
}

}  // namespace orrery::remote
