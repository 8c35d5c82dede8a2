// SPDX-License-Identifier: GPL-3.0-or-later
//
// A minimal reader of the protobuf wire format (https://protobuf.dev/programming-guides/encoding/),
// enough to read the few messages Orrery ingests without a protobuf dependency: TensorBoard's
// Event/Summary (tfevents.h) and W&B's Record (wandbrun.h). Pure functions over bytes; a reader
// never reads past the view it was given and reports malformed input instead of throwing.
//
// Also CRC-32C (Castagnoli) and its mask, which TFRecord framing uses, and zlib's CRC-32, which
// W&B's LevelDB-style log (.wandb files, version 0) uses.
#pragma once

#include <QByteArrayView>

#include <cstdint>
#include <cstring>

namespace orrery::core::proto {

enum class WireType : std::uint8_t {
    Varint = 0,
    Fixed64 = 1,
    Bytes = 2,
    StartGroup = 3,
    EndGroup = 4,
    Fixed32 = 5
};

struct Field {
    std::uint32_t number = 0;
    WireType type = WireType::Varint;
    std::uint64_t varint = 0;  // Varint; Fixed64 and Fixed32 as their raw bits
    QByteArrayView bytes;  // Bytes: the payload (a string, a message, a packed repeated field)

    double asDouble() const;  // Fixed64 as an IEEE double
    float asFloat() const;  // Fixed32 as an IEEE float
    std::int64_t asInt64() const { return std::int64_t(varint); }
};

// Walks the fields of one message: `while (r.next(f)) ...; if (r.malformed()) ...`.
class Reader {
public:
    explicit Reader(QByteArrayView data) : m_data(data) { }
    // The next field, or false at the end of the message or on malformed input (a truncated
    // field, a varint over 10 bytes, a group or an unknown wire type).
    bool next(Field &f);
    bool malformed() const { return m_malformed; }

private:
    QByteArrayView m_data;
    qsizetype m_at = 0;
    bool m_malformed = false;
};

// Reads a varint at data[*at], advancing *at; false when truncated or longer than 10 bytes.
bool readVarint(QByteArrayView data, qsizetype *at, std::uint64_t *value);

// The elements of a repeated scalar field, packed (one Bytes field) or not (one field each):
// callers pass each occurrence here. Fixed32 floats / Fixed64 doubles.
template<typename F>
void forEachPackedFixed32(const Field &f, F &&fn)
{
    if (f.type == WireType::Fixed32) {
        fn(f.asFloat());
    } else if (f.type == WireType::Bytes) {
        for (qsizetype i = 0; i + 4 <= f.bytes.size(); i += 4) {
            std::uint32_t bits = 0;
            for (int b = 3; b >= 0; --b)
                bits = (bits << 8) | std::uint8_t(f.bytes[i + b]);
            float v;
            static_assert(sizeof v == sizeof bits);
            std::memcpy(&v, &bits, sizeof v);
            fn(v);
        }
    }
}
template<typename F>
void forEachPackedFixed64(const Field &f, F &&fn)
{
    if (f.type == WireType::Fixed64) {
        fn(f.asDouble());
    } else if (f.type == WireType::Bytes) {
        for (qsizetype i = 0; i + 8 <= f.bytes.size(); i += 8) {
            std::uint64_t bits = 0;
            for (int b = 7; b >= 0; --b)
                bits = (bits << 8) | std::uint8_t(f.bytes[i + b]);
            double v;
            std::memcpy(&v, &bits, sizeof v);
            fn(v);
        }
    }
}

// CRC-32C of `data` (continuing from `crc`, 0 to start).
std::uint32_t crc32c(QByteArrayView data, std::uint32_t crc = 0);
// CRC-32 (IEEE, zlib's crc32) of `data`, continuing from `crc`: W&B's .wandb records use it.
std::uint32_t crc32ieee(QByteArrayView data, std::uint32_t crc = 0);
// The masked form TFRecord and LevelDB store: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
std::uint32_t maskCrc(std::uint32_t crc);

// Little-endian fixed-width reads at data[at] (the caller checks the bounds).
std::uint32_t readLe32(QByteArrayView data, qsizetype at);
std::uint64_t readLe64(QByteArrayView data, qsizetype at);

}  // namespace orrery::core::proto
