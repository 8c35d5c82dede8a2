// SPDX-License-Identifier: GPL-3.0-or-later
//
// The live tail of a trial's standard output and error, read through its executor (a local file,
// or one batched remote read on a cluster): the monitor's log view, and the GUI's. Plain data
// and one reader; no screen.
#pragma once

#include "orrery/core/executor.h"
#include "orrery/core/store.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace orrery::appcommon {

// Whose logs: a trial of a sweep (its latest attempt's logs).
struct LogRequest {
    core::SweepId sweep = 0;  // 0: none
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
// only what is new: the first read of a file asks its size (an offset past its end), then reads
// its last kTailBytes; later reads ask from where the last one ended, and read the tail again
// when the file grew by more than a read or shrank (rewritten). One trial at a time: another
// trial or attempt starts over. Not thread-safe: one reader thread (the monitor's store worker)
// owns it.
class LogTailer {
public:
    static constexpr qint64 kTailBytes = 64 * 1024;
    static constexpr int kMaxLines = 1000;  // per file: more than any screen is high

    // Two executor.readFiles calls at most (the second only for files to read from their tail).
    // Throws what the executor throws.
    LogTail read(core::Executor &executor, const core::Sweep &sweep, const core::Trial &trial);

private:
    struct File {
        QString path;
        bool exists = false;
        qint64 end = -1;  // the file offset `tail` ends at; -1: not read yet
        QByteArray tail;  // its last bytes, at most kTailBytes
    };
    LogRequest m_of;
    int m_attempt = -1;
    QList<File> m_files;
};

}  // namespace orrery::appcommon
