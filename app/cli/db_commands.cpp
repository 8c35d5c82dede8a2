// SPDX-License-Identifier: GPL-3.0-or-later
#include "db_commands.h"

#include "commands.h"
#include "interrupt.h"
#include "output.h"

#include "orrery/core/store.h"
#include "orrery/core/storecheck.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace orrery::cli {

namespace {

const QCommandLineOption &json()
{
    static const QCommandLineOption o(QStringLiteral("json"),
                                      QStringLiteral("one JSON document for scripts"));
    return o;
}

// A copy of the live database, consistent while sweeps write to it; progress on stderr at most
// twice a second; Ctrl-C cancels and leaves nothing behind.
int dbBackup(const Context &ctx, const QCommandLineParser &p)
{
    const QString target = p.positionalArguments().value(0);
    const bool asJson = p.isSet(json());
    const InterruptScope interrupt;
    QElapsedTimer shown, took;
    took.start();
    int pages = 0;
    try {
        pages = core::backupDatabase(ctx.dbPath, target, [&](int done, int total) {
            if (!asJson && (!shown.isValid() || shown.elapsed() >= 500 || done == total)) {
                err(QStringLiteral("backup: %1 of %2 pages (%3%)\n")
                        .arg(done)
                        .arg(total)
                        .arg(total > 0 ? 100 * qint64(done) / total : 100));
                shown.start();
            }
            return !InterruptScope::requested();
        });
    } catch (const core::StoreError &e) {
        err(QStringLiteral("orrery db backup: %1\n").arg(QString::fromUtf8(e.what())));
        return kFailed;
    }
    if (pages < 0) {
        err(QStringLiteral("orrery db backup: cancelled; %1 was not written\n").arg(target));
        return kFailed;
    }
    const qint64 bytes = QFileInfo(target).size();
    if (asJson) {
        printJson(QJsonObject{{QStringLiteral("database"), ctx.dbPath},
                              {QStringLiteral("backup"), QFileInfo(target).absoluteFilePath()},
                              {QStringLiteral("pages"), pages},
                              {QStringLiteral("bytes"), bytes},
                              {QStringLiteral("seconds"), double(took.elapsed()) / 1000.0}});
        return kOk;
    }
    out(QStringLiteral("backed up %1 to %2 (%3 MB, %4 s); check it with: orrery --db %2 db check\n")
            .arg(ctx.dbPath, QFileInfo(target).absoluteFilePath())
            .arg(double(bytes) / 1e6, 0, 'f', 1)
            .arg(double(took.elapsed()) / 1000.0, 0, 'f', 1));
    return kOk;
}

// Integrity and references of the database file; exit 1 with what to do when either fails.
int dbCheck(const Context &ctx, const QCommandLineParser &p)
{
    const core::DatabaseCheck c = core::checkDatabase(ctx.dbPath);
    if (p.isSet(json())) {
        QJsonArray fks;
        for (const core::ForeignKeyProblem &f : c.foreignKeys)
            fks.append(QJsonObject{{QStringLiteral("table"), f.table},
                                   {QStringLiteral("rowid"), f.rowid},
                                   {QStringLiteral("parent"), f.parent}});
        printJson(QJsonObject{{QStringLiteral("database"), c.path},
                              {QStringLiteral("ok"), c.ok()},
                              {QStringLiteral("open_error"), c.openError},
                              {QStringLiteral("schema_version"), c.schemaVersion},
                              {QStringLiteral("expected_version"), c.expectedVersion},
                              {QStringLiteral("bytes"), c.pages * c.pageSize},
                              {QStringLiteral("integrity"), QJsonArray::fromStringList(c.integrity)},
                              {QStringLiteral("foreign_keys"), fks},
                              {QStringLiteral("advice"), c.advice()}});
        return c.ok() ? kOk : kFailed;
    }
    if (!c.openError.isEmpty()) {
        err(c.advice() + QLatin1Char('\n'));
        return kFailed;
    }
    QString text = QStringLiteral("%1: schema v%2").arg(c.path).arg(c.schemaVersion);
    if (c.schemaVersion > c.expectedVersion)
        text += QStringLiteral(" (written by a newer Orrery; this one knows v%1)").arg(c.expectedVersion);
    text += QStringLiteral(", %1 MB\n").arg(double(c.pages * c.pageSize) / 1e6, 0, 'f', 1);
    text += QStringLiteral("integrity: %1\n")
                .arg(c.integrity.isEmpty() ? QStringLiteral("ok")
                                           : QStringLiteral("%1 problem(s)\n  ").arg(c.integrity.size()) +
                             c.integrity.mid(0, 10).join(QStringLiteral("\n  ")));
    text += QStringLiteral("references: %1\n")
                .arg(c.foreignKeys.isEmpty()
                         ? QStringLiteral("ok")
                         : QStringLiteral("%1 row(s) name rows that are gone").arg(c.foreignKeys.size()));
    out(text);
    if (!c.ok()) {
        err(c.advice() + QLatin1Char('\n'));
        return kFailed;
    }
    return kOk;
}

}  // namespace

QList<VerbInfo> dbVerbs()
{
    return {
        parsedVerb(QStringLiteral("backup"), {QStringLiteral("FILE")}, {json()},
                   QStringLiteral("a consistent copy of the database, also while sweeps write to it"),
                   dbBackup),
        parsedVerb(QStringLiteral("check"), {}, {json()},
                   QStringLiteral("the database's integrity and references, and what to do if they fail"),
                   dbCheck),
    };
}

}  // namespace orrery::cli
