// SPDX-License-Identifier: GPL-3.0-or-later
//
// Reading many remote files in one round trip: one `perl` process on the cluster reads the
// requests (offset, at most how many bytes, path) from its stdin and answers each with a header
// line and the bytes. perl-base is part of every Debian/Ubuntu/RHEL install (it is Essential on
// Debian), so the follow tick of 1,000 trials costs one command, not several SFTP round trips
// per file (libssh 0.10's SFTP calls are synchronous). Paths travel as data on stdin, never in
// the command line. The pieces here are pure; SlurmExecutor::readFiles runs them.
//
// The framing (docs/sweeps.md): stdin is "<offset>\0<maxBytes>\0<path>\0" per file (maxBytes -1:
// to the end). stdout is the line "orrery-read 1\n", then per file, in order,
// "<size> <length>\n" and `length` bytes from `offset`; size is -1 (and length 0) when the path is
// missing, unreadable or not a regular file. A listing (FileRead::list) goes as
// "-1\0<maxEntries>\0<dir>\0" and is answered "<count> <length>\n" and `length` bytes of
// "<size> <relative path>\0" per regular file under the directory (at most 8 levels down,
// symbolic links not followed); count is -1 when the path is not a directory.
#pragma once

#include "orrery/core/executor.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace orrery::remote {

// The remote command line (the program is one quoted argument of `perl -e`).
QByteArray batchReadCommand();
// What goes to its stdin. Throws std::invalid_argument for a path holding NUL, a relative path
// or a negative offset.
QByteArray batchReadInput(const QList<core::FileRead> &reads);

struct BatchReadResult {
    QList<core::FileChunk> chunks;  // one per read, in order
    QString error;  // empty: parsed
    bool ok() const { return error.isEmpty(); }
};
// Reads the program's stdout for `reads`. Anything before the "orrery-read 1" line (a login
// script that prints) is skipped; a missing or malformed header, a length over the read's
// limit, output cut short or bytes left over are errors naming the file.
BatchReadResult parseBatchRead(const QByteArray &out, const QList<core::FileRead> &reads);

}  // namespace orrery::remote
