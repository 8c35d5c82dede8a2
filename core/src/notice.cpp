// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/notice.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>

namespace orrery::core {

QString toText(Notice::Kind kind)
{
    switch (kind) {
    case Notice::Kind::SweepEnded:
        return QStringLiteral("sweep_ended");
    case Notice::Kind::TrialFailed:
        return QStringLiteral("trial_failed");
    case Notice::Kind::TrialHung:
        return QStringLiteral("trial_hung");
    case Notice::Kind::BudgetStopped:
        return QStringLiteral("budget_stopped");
    }
    return {};
}

QByteArray toJson(const Notice &notice)
{
    QJsonObject o;
    o.insert(QStringLiteral("v"), 1);
    o.insert(QStringLiteral("kind"), toText(notice.kind));
    o.insert(QStringLiteral("sweep_id"), notice.sweepId);
    o.insert(QStringLiteral("sweep"), notice.sweep);
    o.insert(QStringLiteral("state"), notice.state);
    if (notice.trial)
        o.insert(QStringLiteral("trial"), *notice.trial);
    o.insert(QStringLiteral("message"), notice.message);
    o.insert(QStringLiteral("time"),
             QDateTime::fromMSecsSinceEpoch(notice.timeMs, Qt::UTC).toString(Qt::ISODateWithMs));
    o.insert(QStringLiteral("t"), double(notice.timeMs) / 1000.0);
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

QString noticeTitle(const Notice &notice)
{
    return QStringLiteral("Orrery: %1").arg(notice.sweep);
}

}  // namespace orrery::core
