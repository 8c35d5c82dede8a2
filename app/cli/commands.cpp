// SPDX-License-Identifier: GPL-3.0-or-later
#include "commands.h"

#include "cluster_commands.h"
#include "output.h"

#include "orrery/core/version.h"
#include "orrery/remote/diagnostics.h"
#include "orrery/remote/profile.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <optional>

namespace orrery::cli {

int runDoctor(const QStringList &args)
{
    const QString usage =
        QStringLiteral("usage: orrery doctor [--cluster NAME [--accept-new-host-key]] [--json]\n");
    bool json = false, acceptHostKey = false;
    QString cluster;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &arg = args[i];
        if (arg == QLatin1String("--json")) {
            json = true;
        } else if (arg == QLatin1String("--accept-new-host-key")) {
            acceptHostKey = true;
        } else if (arg == QLatin1String("--cluster") && i + 1 < args.size()) {
            cluster = args[++i];
        } else {
            err(QStringLiteral("orrery doctor: unknown option '%1'\n").arg(arg) + usage);
            return kUsage;
        }
    }
    QList<core::Check> checks;
    QString title = QStringLiteral("orrery %1").arg(core::version());
    if (cluster.isEmpty()) {
        checks = remote::environmentChecks();
    } else {
        std::optional<remote::ClusterProfile> profile;
        try {
            profile = remote::ProfileStore().find(cluster);
        } catch (const remote::ProfileError &e) {
            err(QStringLiteral("orrery doctor: %1\n").arg(e.message()));
            return kFailed;
        }
        if (!profile) {
            err(QStringLiteral("orrery doctor: no cluster '%1' (see `orrery cluster list`)\n").arg(cluster));
            return kFailed;
        }
        if (!json)
            err(QStringLiteral("checking cluster %1 (the last check runs a one-task job: it may wait for a "
                               "node)...\n")
                    .arg(cluster));
        checks = remote::clusterChecks(*profile, terminalCallbacks(acceptHostKey));
        title += QStringLiteral(", cluster %1").arg(cluster);
    }
    const bool passed = core::allPassed(checks);
    if (json) {
        QJsonArray items;
        for (const core::Check &c : checks)
            items.append(QJsonObject{{QStringLiteral("name"), c.name},
                                     {QStringLiteral("status"), core::statusLabel(c.status).toLower()},
                                     {QStringLiteral("detail"), c.detail},
                                     {QStringLiteral("hint"), c.hint}});
        QJsonObject o{{QStringLiteral("version"), core::version()},
                      {QStringLiteral("ok"), passed},
                      {QStringLiteral("checks"), items}};
        if (!cluster.isEmpty())
            o.insert(QStringLiteral("cluster"), cluster);
        out(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)) + QLatin1Char('\n'));
        return passed ? kOk : kFailed;
    }
    QList<QStringList> rows;
    for (const core::Check &c : checks) {
        QString detail = c.detail;
        if (!c.hint.isEmpty())
            detail += QStringLiteral(" — ") + c.hint;
        rows.append({core::statusLabel(c.status), c.name, detail});
    }
    out(title + QLatin1Char('\n'));
    out(formatTable({QStringLiteral("STATUS"), QStringLiteral("CHECK"), QStringLiteral("DETAIL")}, rows));
    if (!passed)
        err(QStringLiteral("orrery doctor: some checks failed (see the hints above)\n"));
    return passed ? kOk : kFailed;
}

}  // namespace orrery::cli
