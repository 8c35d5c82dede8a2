// SPDX-License-Identifier: GPL-3.0-or-later
#include "commands.h"

#include "output.h"

#include "orrery/core/version.h"
#include "orrery/remote/diagnostics.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace orrery::cli {

int runDoctor(const QStringList &args)
{
    bool json = false;
    for (const QString &arg : args) {
        if (arg == QLatin1String("--json")) {
            json = true;
        } else {
            err(QStringLiteral("orrery doctor: unknown option '%1'\nusage: orrery doctor [--json]\n")
                    .arg(arg));
            return kUsage;
        }
    }
    const QList<core::Check> checks = remote::environmentChecks();
    const bool passed = core::allPassed(checks);
    if (json) {
        QJsonArray items;
        for (const core::Check &c : checks)
            items.append(QJsonObject{{QStringLiteral("name"), c.name},
                                     {QStringLiteral("status"), core::statusLabel(c.status).toLower()},
                                     {QStringLiteral("detail"), c.detail},
                                     {QStringLiteral("hint"), c.hint}});
        out(QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("version"), core::version()},
                                                        {QStringLiteral("ok"), passed},
                                                        {QStringLiteral("checks"), items}})
                                  .toJson(QJsonDocument::Compact)) +
            QLatin1Char('\n'));
        return passed ? kOk : kFailed;
    }
    QList<QStringList> rows;
    for (const core::Check &c : checks) {
        QString detail = c.detail;
        if (!c.hint.isEmpty())
            detail += QStringLiteral(" — ") + c.hint;
        rows.append({core::statusLabel(c.status), c.name, detail});
    }
    out(QStringLiteral("orrery %1\n").arg(core::version()));
    out(formatTable({QStringLiteral("STATUS"), QStringLiteral("CHECK"), QStringLiteral("DETAIL")}, rows));
    if (!passed)
        err(QStringLiteral("orrery doctor: some checks failed (see the hints above)\n"));
    return passed ? kOk : kFailed;
}

}  // namespace orrery::cli
