// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/batchread.h"

#include "orrery/remote/shell.h"

#include <algorithm>
#include <stdexcept>

namespace orrery::remote {

namespace {

constexpr char kMagic[] = "orrery-read 1\n";

// Requests are read whole first (NUL-separated), then answered in order. `-f _` reuses the
// stat of the open handle: size and data come from the same file even if it is replaced.
// A read stops at the size seen at open time, so a file that grows meanwhile answers
// consistently (the rest comes next tick).
constexpr char kProgram[] = R"PERL(
binmode STDIN; binmode STDOUT; $/ = "\0";
sub ls_ {
    my ($dir, $rel, $depth, $max, $l) = @_;
    opendir(my $h, $dir) or return;
    my @e = sort grep { $_ ne "." && $_ ne ".." } readdir $h;
    closedir $h;
    for my $e (@e) {
        return if @$l >= $max;
        my ($p, $q) = ("$dir/$e", $rel eq "" ? $e : "$rel/$e");
        lstat $p or next;
        next if -l _;
        if (-d _) { ls_($p, $q, $depth + 1, $max, $l) if $depth + 1 < 8; }
        elsif (-f _) {
            # a hard link of the sweep's frozen code in a trial's work/ (core/codesnapshot.h)
            next if (stat _)[3] > 1 && $q =~ m{^work(?:/|\.tmp\.)};
            push @$l, (-s _) . " $q\0";
        }
    }
}
my @f = <STDIN>; chomp @f;
print "orrery-read 1\n";
while (@f >= 3) {
    my ($o, $m, $p) = splice @f, 0, 3;
    my ($s, $d) = (-1, "");
    if ($o < 0) {
        my @l;
        if (!-l $p && -d _) { ls_($p, "", 0, $m, \@l); $s = @l; $d = join "", @l; }
        print $s, " ", length($d), "\n", $d;
        next;
    }
    if (open(my $h, "<:raw", $p)) {
        if (-f $h) {
            $s = -s _;
            my $n = $s - $o;
            $n = $m if $m >= 0 && $n > $m;
            if ($n > 0 && seek($h, $o, 0)) {
                while ($n > 0) {
                    my $r = read($h, $d, $n, length $d);
                    last unless $r;
                    $n -= $r;
                }
            }
        }
        close $h;
    }
    print $s, " ", length($d), "\n", $d;
}
)PERL";

}  // namespace

QByteArray batchReadCommand()
{
    return commandLine(QList<QByteArray>{"perl", "-e", QByteArray(kProgram)});
}

QByteArray batchReadInput(const QList<core::FileRead> &reads)
{
    QByteArray input;
    for (const core::FileRead &r : reads) {
        const QByteArray path = r.path.toUtf8();
        if (path.contains('\0') || !path.startsWith('/'))
            throw std::invalid_argument("cannot read '" + path.toStdString() + "': not an absolute path");
        if (r.list) {
            input += QByteArray("-1") + '\0' + QByteArray::number(std::max<qint64>(0, r.maxBytes)) + '\0' +
                path + '\0';
            continue;
        }
        if (r.offset < 0)
            throw std::invalid_argument("cannot read '" + path.toStdString() + "' from a negative offset");
        input += QByteArray::number(r.offset) + '\0' + QByteArray::number(r.maxBytes < 0 ? -1 : r.maxBytes) +
            '\0' + path + '\0';
    }
    return input;
}

BatchReadResult parseBatchRead(const QByteArray &out, const QList<core::FileRead> &reads)
{
    BatchReadResult result;
    const QByteArray magic(kMagic);
    qsizetype at = 0;
    if (out.startsWith(magic)) {
        at = magic.size();
    } else {
        at = out.indexOf(QByteArray('\n' + magic));
        if (at < 0)
            return {{}, QStringLiteral("no answer from the reader (no \"orrery-read 1\" line)")};
        at += 1 + magic.size();
    }
    for (const core::FileRead &r : reads) {
        auto fail = [&](const QString &why) {
            return BatchReadResult{{}, QStringLiteral("%1: %2").arg(r.path, why)};
        };
        const qsizetype eol = out.indexOf('\n', at);
        // A header is two decimal numbers: never longer than 41 bytes.
        if (eol < 0 || eol - at > 41)
            return fail(QStringLiteral("the answer is cut short"));
        const QList<QByteArray> numbers = out.mid(at, eol - at).split(' ');
        bool sizeOk = false, lengthOk = false;
        const qint64 size = numbers.size() == 2 ? numbers[0].toLongLong(&sizeOk) : 0;
        const qint64 length = numbers.size() == 2 ? numbers[1].toLongLong(&lengthOk) : 0;
        if (!sizeOk || !lengthOk || size < -1 || length < 0)
            return fail(
                QStringLiteral("malformed header '%1'").arg(QString::fromUtf8(out.mid(at, eol - at))));
        if (r.list) {
            // "<size> <path>\0" per entry; a path is at most PATH_MAX (4096) bytes.
            const qint64 most = size < 0 ? 0 : std::min<qint64>(size, std::max<qint64>(0, r.maxBytes)) * 4120;
            if (length > most || (size < 0 && length != 0))
                return fail(QStringLiteral("a listing of %1 bytes for %2 entries").arg(length).arg(size));
            at = eol + 1;
            if (out.size() - at < length)
                return fail(QStringLiteral("the answer is cut short"));
            core::FileChunk chunk;
            chunk.exists = size >= 0;
            for (const QByteArray &entry : out.mid(at, length).split('\0')) {
                if (entry.isEmpty())
                    continue;
                const qsizetype space = entry.indexOf(' ');
                bool entryOk = false;
                const qint64 fileSize = space > 0 ? entry.left(space).toLongLong(&entryOk) : -1;
                if (!entryOk || fileSize < 0 || space + 1 >= entry.size())
                    return fail(QStringLiteral("a malformed listing entry"));
                chunk.entries.append({QString::fromUtf8(entry.mid(space + 1)), fileSize});
            }
            if (chunk.exists && chunk.entries.size() != size)
                return fail(QStringLiteral("%1 entries listed where %2 were announced")
                                .arg(chunk.entries.size())
                                .arg(size));
            std::sort(chunk.entries.begin(), chunk.entries.end(),
                      [](const core::FileEntry &a, const core::FileEntry &b) { return a.path < b.path; });
            chunk.size = chunk.entries.size();
            at += length;
            result.chunks.append(std::move(chunk));
            continue;
        }
        const qint64 limit = size < 0
            ? 0
            : std::max<qint64>(0, r.maxBytes < 0 ? size - r.offset : std::min(size - r.offset, r.maxBytes));
        if (length > limit)
            return fail(
                QStringLiteral("%1 bytes answered where at most %2 were asked for").arg(length).arg(limit));
        at = eol + 1;
        if (out.size() - at < length)
            return fail(QStringLiteral("the answer is cut short"));
        core::FileChunk chunk;
        chunk.exists = size >= 0;
        chunk.size = size;
        chunk.data = out.mid(at, length);
        at += length;
        result.chunks.append(std::move(chunk));
    }
    if (at != out.size())
        return {{}, QStringLiteral("%1 bytes after the last file").arg(out.size() - at)};
    return result;
}

}  // namespace orrery::remote
