// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer targets of the Slurm executor's pure pieces (ORRERY_FUZZ_TARGET selects one):
//   batchread: the batch reader's framing parser (remote/src/batchread.cpp): the first 6 bytes choose three
//     reads' offsets and limits, the rest is the answer. Parsed → one chunk per read, none longer
//     than its limit allows, `exists` exactly when size >= 0; an error is one line.
//   tar: the ustar writer (remote/src/tar.cpp): the input split at NUL into path and contents. It
//     either refuses the path, or writes whole 512-byte blocks that carry the contents verbatim
//     and a header whose checksum verifies.
#include "fuzzsupport.h"
#include "orrery/remote/batchread.h"
#include "orrery/remote/tar.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

using orrery::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray input(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    switch (orrery::fuzz::target({"batchread", "tar"})) {
    case 0: {
        if (input.size() < 6)
            return 0;
        QList<orrery::core::FileRead> reads;
        for (int i = 0; i < 3; ++i) {
            orrery::core::FileRead r;
            r.path = QStringLiteral("/run/%1/events.jsonl").arg(i);
            r.offset = static_cast<unsigned char>(input[2 * i]);
            const int limit = static_cast<unsigned char>(input[2 * i + 1]);
            r.maxBytes = limit == 255 ? -1 : limit;
            reads.append(r);
        }
        const auto parsed = orrery::remote::parseBatchRead(input.mid(6), reads);
        check(parsed.ok() != !parsed.error.isEmpty());
        if (parsed.ok()) {
            check(parsed.chunks.size() == reads.size());
            for (qsizetype i = 0; i < reads.size(); ++i) {
                const auto &c = parsed.chunks[i];
                check(c.exists == (c.size >= 0));
                check(c.exists || c.data.isEmpty());
                check(reads[i].maxBytes < 0 || c.data.size() <= reads[i].maxBytes);
                check(!c.exists || c.data.size() <= std::max<qint64>(0, c.size - reads[i].offset));
            }
        } else {
            check(!parsed.error.contains(QLatin1Char('\n')));  // one line, for the user
        }
        break;
    }
    case 1: {
        const qsizetype nul = input.indexOf('\0');
        const QByteArray path = nul < 0 ? input : input.left(nul);
        const QByteArray contents = nul < 0 ? QByteArray() : input.mid(nul + 1);
        QByteArray archive;
        try {
            archive = orrery::remote::writeTar({{path, contents, 0644}});
        } catch (const std::invalid_argument &) {
            check(!orrery::remote::isSafeRelativePath(path) || path.size() > 100);
            return 0;
        }
        check(orrery::remote::isSafeRelativePath(path));
        check(archive.size() % 512 == 0);
        check(archive.size() == 512 + (contents.size() + 511) / 512 * 512 + 1024);
        check(archive.mid(512, contents.size()) == contents);
        unsigned sum = 0;
        for (int i = 0; i < 512; ++i)
            sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(archive[i]);
        check(archive.mid(148, 6).toUInt(nullptr, 8) == sum);
        break;
    }
    }
    return 0;
}
