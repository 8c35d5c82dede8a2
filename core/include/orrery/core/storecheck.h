// SPDX-License-Identifier: GPL-3.0-or-later
//
// Keeping the record safe (docs/store.md "Backups and checks"): a copy of a live database taken
// with SQLite's online backup API, and a check of one file's integrity and references. Both work
// on the file itself, not through TrackingStore, so a database that no longer opens as a store (a
// damaged page, a schema from a newer Orrery) can still be checked and copied. `orrery db backup`
// and `orrery db check` are these.
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

namespace orrery::core {

// Copies the database at `source` to `target` while other connections read and write it: one
// consistent snapshot, the write-ahead log's committed pages included, in a single file (no -wal
// beside it). The copy is written to a temporary file beside `target` and renamed over it only when
// whole, so a failure or a cancel (a full disk, `progress` returning false) leaves `target` as it
// was and nothing else behind. `progress(pagesDone, pagesTotal)` is called after each step. Returns
// the number of pages copied; throws StoreError with the reason (SQLite's message, the disk full).
using BackupProgress = std::function<bool(int done, int total)>;
// `pagesPerStep`: how much is copied between two progress calls (1024: 16 MiB at Orrery's 16 KiB
// pages). The source is read in one read transaction from the first step to the last, so writers
// (which WAL lets go on meanwhile) neither wait for the copy nor make it start over.
int backupDatabase(const QString &source, const QString &target, const BackupProgress &progress = {},
                   int pagesPerStep = 1024);

struct ForeignKeyProblem {
    QString table;  // the row's table
    qint64 rowid = 0;
    QString parent;  // the table it names a missing row of
};

struct DatabaseCheck {
    QString path;
    int schemaVersion = 0;  // PRAGMA user_version
    int expectedVersion = 0;  // what this build writes
    qint64 pages = 0, pageSize = 0;
    QStringList integrity;  // PRAGMA integrity_check's findings (at most 100); empty: ok
    QList<ForeignKeyProblem> foreignKeys;  // PRAGMA foreign_key_check's (at most 100)
    QString openError;  // the file could not be opened as a database at all
    bool ok() const { return openError.isEmpty() && integrity.isEmpty() && foreignKeys.isEmpty(); }
    // What to do about what was found, in a few lines (empty when ok).
    QString advice() const;
};

// Opens `path` read-only (never creating it) and runs SQLite's integrity and foreign-key checks.
// Never throws for what it finds: a file that is no database says so in openError.
DatabaseCheck checkDatabase(const QString &path);

}  // namespace orrery::core
