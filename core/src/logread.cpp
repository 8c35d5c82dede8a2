// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/logread.h"

#include "orrery/core/runfiles.h"

#include <algorithm>
#include <limits>

namespace orrery::core {

namespace {

// An offset past any file's end: the read answers the file's size and no byte.
constexpr qint64 kPastTheEnd = std::numeric_limits<qint64>::max() / 2;

// The read of [start, end) that begins at a line start: it asks for the byte before `start` too,
// so a chunk that starts right after a newline keeps its first line whole (cut()).
FileRead lineRead(const QString &path, qint64 start, qint64 end)
{
    const qint64 from = start <= 0 ? 0 : start - 1;
    return {path, from, std::max<qint64>(0, end - from)};
}

// Fills r from a lineRead's chunk: the bytes from the first line start on.
void cut(LogRead &r, const FileRead &asked, const FileChunk &chunk)
{
    r.bytesRead += chunk.data.size();
    if (chunk.size >= 0)
        r.size = chunk.size;
    if (asked.offset == 0) {
        r.offset = 0;
        r.data = chunk.data;
        return;
    }
    const qsizetype nl = chunk.data.indexOf('\n');
    // No line start in a whole chunk (one very long line): shown from its middle.
    const qsizetype at = nl >= 0 ? nl + 1 : std::min<qsizetype>(1, chunk.data.size());
    r.offset = asked.offset + at;
    r.data = chunk.data.mid(at);
}

}  // namespace

QList<LogRead> readLogFiles(Executor &executor, const QList<LogReadJob> &jobs)
{
    QList<FileRead> first;
    for (const LogReadJob &job : jobs) {
        switch (job.kind) {
        case LogReadJob::Kind::Poll:  // its size (and what is new, when little is)
            first.append({job.path, job.end < 0 ? kPastTheEnd : job.end, kLogMaxAppendBytes});
            break;
        case LogReadJob::Kind::Earlier:
            first.append(lineRead(job.path, std::max<qint64>(0, job.from - kLogChunkBytes), job.from));
            break;
        case LogReadJob::Kind::From:
            first.append({job.path, std::max<qint64>(0, job.end), kLogFromBytes});
            break;
        }
    }
    const QList<FileChunk> chunks = executor.readFiles(first);

    QList<LogRead> reads;
    QList<FileRead> tails;
    QList<qsizetype> tailOf;
    for (qsizetype i = 0; i < jobs.size(); ++i) {
        const LogReadJob &job = jobs[i];
        LogRead r;
        r.file = job.file;
        const FileChunk chunk = chunks.value(i);
        if (!chunk.exists) {
            r.kind = LogRead::Kind::Missing;
        } else if (job.kind == LogReadJob::Kind::Earlier) {
            r.kind = LogRead::Kind::Earlier;
            cut(r, first[i], chunk);
        } else if (job.kind == LogReadJob::Kind::From) {
            r.kind = chunk.data.isEmpty() ? LogRead::Kind::Unchanged : LogRead::Kind::Append;
            r.offset = first[i].offset;
            r.data = chunk.data;
            r.size = chunk.size;
            r.bytesRead = chunk.data.size();
        } else if (job.end >= 0 && chunk.size == job.end) {
            r.kind = LogRead::Kind::Unchanged;
            r.size = chunk.size;
        } else if (job.end >= 0 && chunk.size > job.end && chunk.size - job.end <= kLogMaxAppendBytes) {
            r.kind = LogRead::Kind::Append;
            r.offset = job.end;
            r.data = chunk.data;
            r.size = chunk.size;
            r.bytesRead = chunk.data.size();
        } else {  // a first read, a file that shrank (rewritten) or grew by more than a read
            r.kind = LogRead::Kind::Tail;
            r.size = chunk.size;
            tails.append(lineRead(job.path, std::max<qint64>(0, chunk.size - kLogChunkBytes), chunk.size));
            tailOf.append(i);
        }
        reads.append(std::move(r));
    }
    if (!tails.isEmpty()) {
        const QList<FileChunk> again = executor.readFiles(tails);
        for (qsizetype j = 0; j < tails.size(); ++j) {
            LogRead &r = reads[tailOf[j]];
            const FileChunk chunk = again.value(j);
            if (!chunk.exists) {  // removed between the two reads
                r = LogRead{LogRead::Kind::Missing, r.file, 0, {}, -1, 0, {}};
                continue;
            }
            cut(r, tails[j], chunk);
        }
    }
    return reads;
}

LogTail LogTailer::read(Executor &executor, const Sweep &sweep, const Trial &trial)
{
    const LogRequest of{sweep.id, trial.index};
    if (of != m_of || trial.attempt != m_attempt) {
        m_of = of;
        m_attempt = trial.attempt;
        m_files.clear();
        for (const QString &path : executor.logPaths(sweep.rootDir, trial.task, trial.runDir))
            m_files.append({path, false, -1, {}, true});
    }
    QList<LogReadJob> jobs;
    for (int i = 0; i < m_files.size(); ++i)
        jobs.append({LogReadJob::Kind::Poll, i, m_files[i].path, -1, m_files[i].end});
    for (const LogRead &r : readLogFiles(executor, jobs)) {
        File &f = m_files[r.file];
        f.exists = r.kind != LogRead::Kind::Missing;
        switch (r.kind) {
        case LogRead::Kind::Missing:
            f.end = -1;
            f.tail.clear();
            f.lineStart = true;
            break;
        case LogRead::Kind::Tail:
            f.tail = r.data;
            f.end = r.offset + r.data.size();
            f.lineStart = true;
            break;
        case LogRead::Kind::Append:
            f.tail += r.data;  // all that is new
            f.end += r.data.size();
            break;
        default:
            break;
        }
        if (f.tail.size() > kTailBytes) {
            f.tail = f.tail.right(kTailBytes);
            f.lineStart = false;
        }
    }

    LogTail out;
    out.of = of;
    out.attempt = trial.attempt;
    out.state = trial.state;
    for (const File &f : m_files) {
        LogFile file;
        file.path = f.path;
        file.exists = f.exists;
        QList<QByteArray> lines = f.tail.split('\n');
        if (!lines.isEmpty() && lines.back().isEmpty())
            lines.removeLast();  // the newline that ends the last line
        if (!lines.isEmpty() && !f.lineStart)
            lines.removeFirst();  // starts in the middle of a line (or of a character)
        for (qsizetype k = std::max<qsizetype>(0, lines.size() - kMaxLines); k < lines.size(); ++k)
            file.lines.append(QString::fromUtf8(lines[k]));
        // This attempt's part where the file holds several (the local executor appends retries).
        file.lines = linesOfAttempt(file.lines, trial.attempt);
        out.files.append(std::move(file));
    }
    return out;
}

}  // namespace orrery::core
