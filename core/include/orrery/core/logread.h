// SPDX-License-Identifier: GPL-3.0-or-later
//
// Reading a task's log files wherever its executor keeps them (this machine's files, or a
// cluster's over one batched remote read): the one reader behind `orrery sweep logs`, the
// window's log view and Details dock, and the terminal monitor (ARCHITECTURE.md "Operations:
// written once, called by every face"). Plain data and functions over core::Executor; no screen,
// no thread of its own.
//
// readLogFiles answers a list of jobs (one per file) in at most two Executor::readFiles calls:
// what is new past the last byte read (or the file's tail on a first read, after it shrank or
// when it grew by more than kLogMaxAppendBytes), the chunk before the first byte shown (scrolling
// back), or the bytes from an offset on (reading a whole file, chunk by chunk). Tails and earlier
// chunks start at a line start. LogTailer keeps one trial's tails between reads (the monitor, the
// Details dock), as lines.
#pragma once

#include "orrery/core/executor.h"
#include "orrery/core/store.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace orrery::core {

// A tail or an earlier chunk: a thousand lines of 64 bytes, within one SFTP read (OpenSSH's
// sftp-server answers reads of up to 255 KiB).
constexpr qint64 kLogChunkBytes = 64 * 1024;
// A file that grew by more than this between two polls is read again from its tail (the bytes in
// between are then not read: scroll back for them) rather than all appended.
constexpr qint64 kLogMaxAppendBytes = 16 * kLogChunkBytes;
// A From job's most per read: a whole file comes in reads of this size.
constexpr qint64 kLogFromBytes = 8 << 20;

// One file's read.
struct LogReadJob {
    enum class Kind {
        Poll,  // what is new since `end` (-1: nothing read yet: the tail)
        Earlier,  // the chunk before `from`, the first byte shown
        From,  // the bytes from `end` on (0 on a first read), at most kLogFromBytes
    };
    Kind kind = Kind::Poll;
    int file = 0;  // the caller's index, returned as is
    QString path;  // on the executor's machine
    qint64 from = -1;  // the first byte shown (Earlier)
    qint64 end = -1;  // past the last byte read; -1: nothing read yet
};

// What one job found.
struct LogRead {
    enum class Kind {
        Missing,  // no such file (yet)
        Unchanged,  // nothing past `end`
        Tail,  // the file's tail (first read, shrank, or grew by more than kLogMaxAppendBytes)
        Append,  // the bytes past `end`
        Earlier,  // the chunk before `from`
        Failed,  // `error` says why (the caller's; readLogFiles throws instead)
    };
    Kind kind = Kind::Failed;
    int file = 0;
    qint64 offset = 0;  // of data's first byte
    QByteArray data;
    qint64 size = -1;  // the file's size when asked; -1: not asked
    qint64 bytesRead = 0;  // what the reads returned, the byte before a cut included
    QString error;
};

// Every job's read, in the jobs' order, in at most two executor.readFiles calls (the second only
// for tails). Throws what the executor throws (a cluster that cannot be reached).
QList<LogRead> readLogFiles(Executor &executor, const QList<LogReadJob> &jobs);

// Whose logs: a trial of a sweep (its latest attempt's logs).
struct LogRequest {
    SweepId sweep = 0;  // 0: none
    int trial = -1;  // the trial index
    bool operator==(const LogRequest &) const = default;
};

struct LogFile {
    QString path;
    bool exists = false;
    QStringList lines;  // its last lines as read (raw: a view makes them safe to show)
};

// The tail of one trial's standard output and error (LogTailer::read).
struct LogTail {
    LogRequest of;  // what was read; sweep 0: nothing yet
    int attempt = 0;
    QString state;  // of that attempt
    QList<LogFile> files;  // the executor's logPaths order: stdout, then stderr
    QString error;  // the read failed (files: what was read before, if anything)
};

// The tail of a trial's standard output and error, kept between reads so that a live tail reads
// only what is new (readLogFiles' Poll jobs). One trial at a time: another trial or attempt
// starts over. Not thread-safe: one reader thread owns it.
class LogTailer {
public:
    static constexpr qint64 kTailBytes = kLogChunkBytes;
    static constexpr int kMaxLines = 1000;  // per file: more than any screen is high

    // Throws what the executor throws.
    LogTail read(Executor &executor, const Sweep &sweep, const Trial &trial);

private:
    struct File {
        QString path;
        bool exists = false;
        qint64 end = -1;  // the file offset `tail` ends at; -1: not read yet
        QByteArray tail;  // its last bytes, at most kTailBytes
        bool lineStart = true;  // `tail` starts at a line start
    };
    LogRequest m_of;
    int m_attempt = -1;
    QList<File> m_files;
};

}  // namespace orrery::core
