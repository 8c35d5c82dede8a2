// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/tar.h"

#include <cstring>
#include <string>

namespace orrery::remote {

namespace {

constexpr qsizetype kBlock = 512;

// ustar header fields: offset and width (POSIX.1-1988, pax(1) "ustar Interchange Format").
struct Field {
    int offset;
    int width;
};
constexpr Field kName{0, 100}, kMode{100, 8}, kUid{108, 8}, kGid{116, 8}, kSize{124, 12}, kMtime{136, 12},
    kChecksum{148, 8}, kType{156, 1}, kUstarMagic{257, 6}, kVersion{263, 2}, kPrefix{345, 155};

void put(char *header, Field field, const QByteArray &value)
{
    std::memcpy(header + field.offset, value.constData(),
                static_cast<size_t>(std::min<qsizetype>(value.size(), field.width)));
}

// Octal, zero-padded to width - 1 digits, NUL-terminated (what GNU tar and bsdtar write).
void putOctal(char *header, Field field, qint64 value)
{
    QByteArray digits = QByteArray::number(value, 8);
    digits = QByteArray(field.width - 1 - digits.size(), '0') + digits;
    put(header, field, digits);
}

[[noreturn]] void refuse(const QByteArray &path, const char *why)
{
    throw std::invalid_argument("tar: cannot archive '" + path.toStdString() + "': " + why);
}

}  // namespace

bool isSafeRelativePath(const QByteArray &path)
{
    if (path.isEmpty() || path.startsWith('/'))
        return false;
    for (const char c : path)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return false;
    for (const QByteArray &part : path.split('/'))
        if (part.isEmpty() || part == "." || part == "..")
            return false;
    return true;
}

QByteArray writeTar(const QList<TarFile> &files, qint64 mtime)
{
    QByteArray archive;
    qsizetype total = 2 * kBlock;
    for (const TarFile &f : files)
        total += kBlock + (f.data.size() + kBlock - 1) / kBlock * kBlock;
    archive.reserve(total);
    for (const TarFile &f : files) {
        if (!isSafeRelativePath(f.path))
            refuse(f.path, "not a plain relative path");
        if (f.data.size() >= (qint64(1) << 33))
            refuse(f.path, "8 GiB or larger");
        // A name over 100 bytes is split at a '/' into prefix (<= 155) and name (<= 100).
        QByteArray prefix, name = f.path;
        if (name.size() > kName.width) {
            // The last '/' that the prefix can hold leaves the shortest name.
            const qsizetype cut = f.path.lastIndexOf('/', kPrefix.width);
            if (cut <= 0 || f.path.size() - cut - 1 > kName.width)
                refuse(f.path, "too long for ustar");
            prefix = f.path.left(cut);
            name = f.path.mid(cut + 1);
        }
        char header[kBlock] = {};
        put(header, kName, name);
        putOctal(header, kMode, f.mode & 07777);
        putOctal(header, kUid, 0);
        putOctal(header, kGid, 0);
        putOctal(header, kSize, f.data.size());
        putOctal(header, kMtime, mtime);
        header[kType.offset] = '0';
        put(header, kUstarMagic, QByteArray("ustar", 6));  // with its NUL
        put(header, kVersion, "00");
        put(header, kPrefix, prefix);
        // The checksum: the unsigned sum of the header's bytes, its own field counted as spaces.
        std::memset(header + kChecksum.offset, ' ', static_cast<size_t>(kChecksum.width));
        unsigned sum = 0;
        for (const char c : header)
            sum += static_cast<unsigned char>(c);
        QByteArray checksum = QByteArray::number(sum, 8);
        checksum = QByteArray(6 - checksum.size(), '0') + checksum;
        checksum.append('\0').append(' ');
        put(header, kChecksum, checksum);

        archive.append(header, kBlock);
        archive.append(f.data);
        archive.append(QByteArray((kBlock - f.data.size() % kBlock) % kBlock, '\0'));
    }
    archive.append(QByteArray(2 * kBlock, '\0'));
    return archive;
}

}  // namespace orrery::remote
