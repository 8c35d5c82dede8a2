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

int runDoctor(const QCommandLineParser &p)
{
    const bool json = p.isSet(QStringLiteral("json")),
               acceptHostKey = p.isSet(QStringLiteral("accept-new-host-key"));
    const QString cluster = p.value(QStringLiteral("cluster"));
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
