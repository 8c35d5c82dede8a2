// SPDX-License-Identifier: GPL-3.0-or-later
#include "logtailer.h"

#include "orrery/core/runfiles.h"

#include <algorithm>
#include <limits>

namespace orrery::appcommon {

LogTail LogTailer::read(core::Executor &executor, const core::Sweep &sweep, const core::Trial &trial)
{
    const LogRequest of{sweep.id, trial.index};
    if (of != m_of || trial.attempt != m_attempt) {
        m_of = of;
        m_attempt = trial.attempt;
        m_files.clear();
        for (const QString &path : executor.logPaths(sweep.rootDir, trial.task, trial.runDir))
            m_files.append({path, false, -1, {}});
    }
    constexpr qint64 kPastTheEnd = std::numeric_limits<qint64>::max() / 2;  // asks the size only
    QList<core::FileRead> reads;
    for (const File &f : m_files)
        reads.append({f.path, f.end < 0 ? kPastTheEnd : f.end, kTailBytes});
    const QList<core::FileChunk> chunks = executor.readFiles(reads);
    QList<core::FileRead> again;
    QList<int> againOf;
    for (qsizetype i = 0; i < m_files.size() && i < chunks.size(); ++i) {
        File &f = m_files[i];
        const core::FileChunk &c = chunks[i];
        f.exists = c.exists;
        if (!c.exists) {
            f.end = -1;
            f.tail.clear();
        } else if (f.end >= 0 && c.size >= f.end && c.size <= f.end + c.data.size()) {
            f.tail += c.data;  // all that is new
            f.end += c.data.size();
        } else {  // first read, more than a read behind, or rewritten: the tail again
            again.append({f.path, std::max<qint64>(0, c.size - kTailBytes), kTailBytes});
            againOf.append(int(i));
        }
    }
    if (!again.isEmpty()) {
        const QList<core::FileChunk> tails = executor.readFiles(again);
        for (qsizetype j = 0; j < again.size() && j < tails.size(); ++j) {
            File &f = m_files[againOf[j]];
            f.exists = tails[j].exists;
            f.tail = tails[j].data;
            f.end = tails[j].exists ? again[j].offset + tails[j].data.size() : -1;
        }
    }

    LogTail out;
    out.of = of;
    out.attempt = trial.attempt;
    out.state = trial.state;
    for (File &f : m_files) {
        if (f.tail.size() > kTailBytes)
            f.tail = f.tail.right(kTailBytes);
        LogFile file;
        file.path = f.path;
        file.exists = f.exists;
        QList<QByteArray> lines = f.tail.split('\n');
        if (!lines.isEmpty() && lines.back().isEmpty())
            lines.removeLast();  // the newline that ends the last line
        if (!lines.isEmpty() && f.end - f.tail.size() > 0)
            lines.removeFirst();  // starts in the middle of a line (or of a character)
        for (qsizetype k = std::max<qsizetype>(0, lines.size() - kMaxLines); k < lines.size(); ++k)
            file.lines.append(QString::fromUtf8(lines[k]));
        // This attempt's part where the file holds several (the local executor appends retries).
        file.lines = core::linesOfAttempt(file.lines, trial.attempt);
        out.files.append(std::move(file));
    }
    return out;
}

}  // namespace orrery::appcommon
