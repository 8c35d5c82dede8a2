// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/storecheck.h"

#include "orrery/core/store.h"

#include "schema.h"
#include "sqlite.h"
#include "storeimpl.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QThread>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace orrery::core {

namespace {

constexpr int kBusyMs = 5000;
constexpr int kMaxFindings = 100;

sql::DbHandle openFile(const QString &path, int flags)
{
    return openDatabaseFile(path, flags, kBusyMs);
}

QString text(const sql::Stmt &s, int col)
{
    const std::string_view v = s.text(col);
    return QString::fromUtf8(v.data(), qsizetype(v.size()));
}

}  // namespace

int backupDatabase(const QString &source, const QString &target, const BackupProgress &progress,
                   int pagesPerStep)
{
    if (!QFileInfo(source).isFile())
        throw StoreError(QStringLiteral("no database at %1").arg(source).toStdString());
    if (QFileInfo(source).canonicalFilePath() == QFileInfo(target).canonicalFilePath())
        throw StoreError(QStringLiteral("%1 is the database itself: back it up to another file")
                             .arg(target)
                             .toStdString());
    const QString dir = QFileInfo(target).absolutePath();
    if (!QFileInfo(dir).isDir())
        throw StoreError(QStringLiteral("cannot write %1: no folder %2").arg(target, dir).toStdString());
    // Beside the target, so the rename is atomic; its name says what it is if a crash leaves it.
    const QString part = QDir(dir).filePath(QStringLiteral(".%1.backup-%2")
                                                .arg(QFileInfo(target).fileName())
                                                .arg(QCoreApplication::applicationPid()));
    auto removePart = [&] {
        for (const char *suffix : {"", "-journal", "-wal", "-shm"})
            QFile::remove(part + QLatin1String(suffix));
    };
    removePart();
    int pages = 0;
    try {
        // Read-write where allowed (nothing is written): the last connection to close then
        // checkpoints and removes the -wal and -shm a read-only one would leave beside the file.
        sql::DbHandle from = [&] {
            try {
                return openFile(source, SQLITE_OPEN_READWRITE);
            } catch (const StoreError &) {
                return openFile(source, SQLITE_OPEN_READONLY);
            }
        }();
        sql::DbHandle to = openFile(part, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        // One snapshot of the source for the whole copy: without it, a write by a sweep between
        // two steps made SQLite start the copy over (and a steady writer, forever).
        sql::execScript(from.get(), "BEGIN");
        sql::execScript(from.get(), "SELECT count(*) FROM sqlite_schema");
        sqlite3_backup *b = sqlite3_backup_init(to.get(), "main", from.get(), "main");
        if (!b)
            sql::fail(to.get(), sqlite3_errcode(to.get()), "backup");
        int rc = SQLITE_OK;
        bool cancelled = false;
        while (true) {
            rc = sqlite3_backup_step(b, std::max(1, pagesPerStep));
            if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {  // a writer holds the file a moment
                QThread::msleep(20);
                continue;
            }
            if (rc != SQLITE_OK && rc != SQLITE_DONE)
                break;
            const int total = sqlite3_backup_pagecount(b);
            pages = total - sqlite3_backup_remaining(b);
            if (progress && !progress(pages, total)) {
                cancelled = true;
                break;
            }
            if (rc == SQLITE_DONE)
                break;
        }
        sqlite3_backup_finish(b);
        sql::execScript(from.get(), "COMMIT");
        if (cancelled) {
            to.reset();
            removePart();
            return -1;
        }
        if (rc != SQLITE_DONE)
            throw StoreError(QStringLiteral("cannot back up %1 to %2: %3")
                                 .arg(source, target, QString::fromUtf8(sqlite3_errstr(rc)))
                                 .toStdString());
        // One file, whole: the copy leaves WAL mode (Orrery turns it on again when it writes).
        sql::execScript(to.get(), "PRAGMA journal_mode = DELETE");
        sql::Stmt quick(to.get(), "PRAGMA quick_check");
        if (!quick.step() || text(quick, 0) != QLatin1String("ok"))
            throw StoreError(QStringLiteral("the copy at %1 did not check out: %2")
                                 .arg(target, text(quick, 0))
                                 .toStdString());
    } catch (const sql::Error &e) {
        removePart();
        throw StoreError(QStringLiteral("cannot back up %1 to %2: %3")
                             .arg(source, target, QString::fromUtf8(e.what()))
                             .toStdString());
    } catch (...) {
        removePart();
        throw;
    }
    if (std::rename(QFile::encodeName(part).constData(), QFile::encodeName(target).constData()) != 0) {
        const QString why = QString::fromLocal8Bit(std::strerror(errno));
        removePart();
        throw StoreError(QStringLiteral("cannot write %1: %2").arg(target, why).toStdString());
    }
    return pages;
}

DatabaseCheck checkDatabase(const QString &path)
{
    DatabaseCheck c;
    c.path = path;
    c.expectedVersion = schema::currentVersion();
    if (!QFileInfo(path).isFile()) {
        c.openError = QStringLiteral("no such file");
        return c;
    }
    try {
        sql::DbHandle db = openFile(path, SQLITE_OPEN_READONLY);
        sqlite3 *h = db.get();
        auto one = [h](const char *pragma) {
            sql::Stmt s(h, pragma);
            return s.step() ? qint64(s.int64(0)) : 0;
        };
        c.schemaVersion = int(one("PRAGMA user_version"));  // reads the header: not a database fails here
        c.pages = one("PRAGMA page_count");
        c.pageSize = one("PRAGMA page_size");
        try {
            sql::Stmt integrity(h, "PRAGMA integrity_check(100)");
            while (integrity.step())
                if (const QString line = text(integrity, 0); line != QLatin1String("ok"))
                    c.integrity << line;
        } catch (const sql::Error &e) {  // damage bad enough that the check itself stops
            c.integrity << QString::fromUtf8(e.what());
        }
        try {
            sql::Stmt fk(h, "PRAGMA foreign_key_check");
            while (fk.step() && c.foreignKeys.size() < kMaxFindings)
                c.foreignKeys.push_back({text(fk, 0), qint64(fk.int64(1)), text(fk, 2)});
        } catch (const sql::Error &e) {
            c.integrity << QString::fromUtf8(e.what());
        }
    } catch (const std::exception &e) {
        c.openError = QString::fromUtf8(e.what());
    }
    return c;
}

QString DatabaseCheck::advice() const
{
    QStringList out;
    if (!openError.isEmpty())
        out << QStringLiteral("%1 cannot be read as a database (%2). Orrery never leaves a file half "
                              "written, so it was damaged or replaced from outside: restore your last "
                              "backup (orrery db backup FILE makes one).")
                   .arg(path, openError);
    if (!integrity.isEmpty())
        out << QStringLiteral("The file is damaged (%1 finding(s)). Stop every Orrery window and command "
                              "using it and keep a copy as it is. Then restore your last backup, or "
                              "salvage what SQLite can still read:\n"
                              "  sqlite3 '%2' .recover | sqlite3 recovered.sqlite\n"
                              "  orrery --db recovered.sqlite db check\n"
                              "and use recovered.sqlite from then on.")
                   .arg(integrity.size())
                   .arg(path);
    if (!foreignKeys.isEmpty())
        out << QStringLiteral(
                   "%1 row(s) refer to rows that are gone (the first: %2 row %3 names a "
                   "missing %4 row). The rest of the file is sound; a backup and `sqlite3 .recover` "
                   "keep them as they are. Please report how it happened.")
                   .arg(foreignKeys.size())
                   .arg(foreignKeys.front().table)
                   .arg(foreignKeys.front().rowid)
                   .arg(foreignKeys.front().parent);
    return out.join(QLatin1Char('\n'));
}

}  // namespace orrery::core
