// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/healthreport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>

namespace orrery::core {

QString healthFromFile(const QByteArray &bytes)
{
    const QJsonDocument doc = QJsonDocument::fromJson(bytes);
    if (!doc.isObject() || doc.object().isEmpty())
        return {};
    return QString::fromUtf8(doc.toJson(QJsonDocument::Compact));
}

QList<HealthNodeLine> healthNodes(const QString &health)
{
    QList<HealthNodeLine> out;
    const QJsonDocument doc = QJsonDocument::fromJson(health.toUtf8());
    if (!doc.isObject())
        return out;
    const QJsonObject all = doc.object();
    for (auto it = all.begin(); it != all.end(); ++it) {  // QJsonObject iterates in key order
        const QJsonObject o = it.value().toObject();
        HealthNodeLine l;
        l.node = it.key();
        l.pass = o.value(QLatin1String("pass")).toBool(false);
        l.reason = o.value(QLatin1String("reason")).toString();
        QStringList f;
        const bool cuda = o.value(QLatin1String("device")).toString() == QLatin1String("cuda");
        if (const QJsonValue v = o.value(QLatin1String("matmul_gflops")); v.isDouble())
            f << (cuda ? QStringLiteral("matmul %1 TFLOP/s").arg(v.toDouble() / 1000, 0, 'f', 1)
                       : QStringLiteral("matmul %1 GFLOP/s").arg(v.toDouble(), 0, 'f', 1));
        if (const QJsonValue v = o.value(QLatin1String("memory_gbps")); v.isDouble())
            f << QStringLiteral("memory %1 GB/s").arg(v.toDouble(), 0, 'f', 1);
        if (const QJsonValue v = o.value(QLatin1String("busbw_gbps")); v.isDouble())
            f << QStringLiteral("all-reduce %1 GB/s").arg(v.toDouble(), 0, 'f', 2);
        if (const QJsonValue v = o.value(QLatin1String("ecc")); v.isDouble())
            f << QStringLiteral("ECC %1").arg(qint64(v.toDouble()));
        if (const QJsonValue v = o.value(QLatin1String("duration_ms")); v.isDouble())
            f << QStringLiteral("%1 ms").arg(qint64(v.toDouble()));
        l.figures = f.join(QStringLiteral(" · "));
        out << l;
    }
    return out;
}

QString healthCell(const QString &health)
{
    const QList<HealthNodeLine> nodes = healthNodes(health);
    if (nodes.isEmpty())
        return QStringLiteral("-");
    QStringList failed;
    for (const HealthNodeLine &n : nodes)
        if (!n.pass)
            failed << n.node;
    return failed.isEmpty() ? QStringLiteral("ok ×%1").arg(nodes.size())
                            : QStringLiteral("failed: %1").arg(failed.join(QLatin1Char(',')));
}

QStringList healthLines(const QString &health)
{
    QStringList out;
    for (const HealthNodeLine &l : healthNodes(health)) {
        QString line = QStringLiteral("%1  %2").arg(
            l.node, l.pass ? QStringLiteral("passed") : QStringLiteral("failed"));
        if (!l.figures.isEmpty())
            line += QStringLiteral("  ") + l.figures;
        if (!l.pass && !l.reason.isEmpty())
            line += QStringLiteral(" — ") + l.reason;
        out << line;
    }
    return out;
}

}  // namespace orrery::core
