// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/tfevents.h"

#include "orrery/core/protowire.h"

#include <QtEndian>

#include <cmath>
#include <cstring>
#include <optional>

namespace orrery::core {

using proto::Field;
using proto::Reader;
using proto::WireType;

namespace {

constexpr qsizetype kHeader = 12;  // uint64 length + masked CRC of it
constexpr qsizetype kFooter = 4;  // masked CRC of the data

// TensorFlow's DataType numbers (types.proto) that a scalar tensor comes in.
enum DataType { DtFloat = 1, DtDouble = 2, DtInt32 = 3, DtInt64 = 9, DtBool = 10, DtHalf = 19 };

bool headerValid(QByteArrayView data, qsizetype at)
{
    return proto::maskCrc(proto::crc32c(data.sliced(at, 8))) == proto::readLe32(data, at + 8);
}

double halfToDouble(std::uint16_t h)
{
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (exponent == 0)
        return sign * std::ldexp(mantissa, -24);
    if (exponent == 31)
        return mantissa ? std::nan("") : sign * INFINITY;
    return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

struct Tensor {
    int dtype = 0;
    qint64 elements = 1;  // product of the shape's dims (1 for a scalar)
    QList<double> values;  // the numeric values found (float_val, double_val, ..., tensor_content)
    QList<QByteArrayView> strings;  // string_val
};

Tensor readTensor(QByteArrayView bytes)
{
    Tensor t;
    QByteArrayView content;
    Reader r(bytes);
    Field f;
    while (r.next(f)) {
        switch (f.number) {
        case 1:
            t.dtype = int(f.varint);
            break;
        case 2: {  // TensorShapeProto { repeated Dim dim = 2 { int64 size = 1 } }
            Reader shape(f.bytes);
            Field d;
            while (shape.next(d))
                if (d.number == 2 && d.type == WireType::Bytes) {
                    Reader dim(d.bytes);
                    Field s;
                    while (dim.next(s))
                        if (s.number == 1 && s.type == WireType::Varint)
                            t.elements *= s.asInt64();
                }
            break;
        }
        case 4:
            content = f.bytes;
            break;
        case 5:
            proto::forEachPackedFixed32(f, [&](float v) { t.values.append(v); });
            break;
        case 6:
            proto::forEachPackedFixed64(f, [&](double v) { t.values.append(v); });
            break;
        case 7:  // int_val (int32, also half_val's carrier in some writers)
        case 10:  // int64_val
        case 11:  // bool_val
        case 13:  // half_val
            if (f.type == WireType::Varint) {
                t.values.append(f.number == 13 ? halfToDouble(std::uint16_t(f.varint)) : double(f.asInt64()));
            } else if (f.type == WireType::Bytes) {
                qsizetype at = 0;
                std::uint64_t v = 0;
                while (at < f.bytes.size() && proto::readVarint(f.bytes, &at, &v))
                    t.values.append(f.number == 13 ? halfToDouble(std::uint16_t(v))
                                                   : double(std::int64_t(v)));
            }
            break;
        case 8:
            if (f.type == WireType::Bytes)
                t.strings.append(f.bytes);
            break;
        default:
            break;
        }
    }
    if (t.values.isEmpty() && !content.isEmpty()) {
        auto each = [&](qsizetype width, auto convert) {
            for (qsizetype at = 0; at + width <= content.size(); at += width)
                t.values.append(convert(at));
        };
        switch (t.dtype) {
        case DtFloat:
            each(4, [&](qsizetype at) {
                const std::uint32_t bits = proto::readLe32(content, at);
                float v;
                std::memcpy(&v, &bits, sizeof v);
                return double(v);
            });
            break;
        case DtDouble:
            each(8, [&](qsizetype at) {
                const std::uint64_t bits = proto::readLe64(content, at);
                double v;
                std::memcpy(&v, &bits, sizeof v);
                return v;
            });
            break;
        case DtInt32:
            each(4, [&](qsizetype at) { return double(std::int32_t(proto::readLe32(content, at))); });
            break;
        case DtInt64:
            each(8, [&](qsizetype at) { return double(std::int64_t(proto::readLe64(content, at))); });
            break;
        case DtHalf:
            each(2, [&](qsizetype at) {
                return halfToDouble(
                    std::uint16_t(std::uint8_t(content[at]) | (std::uint8_t(content[at + 1]) << 8)));
            });
            break;
        case DtBool:
            each(1, [&](qsizetype at) { return content[at] ? 1.0 : 0.0; });
            break;
        default:
            break;
        }
    }
    return t;
}

bool mediaKind(QByteArrayView encoded, TfMedia *m)
{
    if (encoded.startsWith("GIF8")) {
        m->kind = QStringLiteral("video");
        m->extension = QStringLiteral("gif");
    } else if (encoded.startsWith("\x89PNG")) {
        m->kind = QStringLiteral("image");
        m->extension = QStringLiteral("png");
    } else if (encoded.startsWith("\xff\xd8")) {
        m->kind = QStringLiteral("image");
        m->extension = QStringLiteral("jpg");
    } else {
        return false;
    }
    m->data = encoded.toByteArray();
    return true;
}

// Plugins whose values are not numbers: ignored, counted, never a warning.
bool knownNonScalarPlugin(QByteArrayView name)
{
    for (const char *p : {"histograms", "distributions", "text", "hparams", "pr_curves", "audio", "mesh",
                          "custom_scalars", "graphs", "projector", "profile", "embedding"})
        if (name == QByteArrayView(p))
            return true;
    return false;
}

struct Parser {
    TfEventsChunk &out;
    // Each tag's QString, shared by its points; few tags, looked up by the last one first.
    QList<std::pair<QByteArray, QString>> tags;
    qsizetype lastTag = 0;

    const QString &tagOf(QByteArrayView bytes)
    {
        if (lastTag < tags.size() && tags[lastTag].first == bytes)
            return tags[lastTag].second;
        for (qsizetype i = 0; i < tags.size(); ++i)
            if (tags[i].first == bytes) {
                lastTag = i;
                return tags[i].second;
            }
        tags.append({bytes.toByteArray(), QString::fromUtf8(bytes)});
        lastTag = tags.size() - 1;
        return tags.back().second;
    }

    void value(QByteArrayView bytes, qint64 step, qint64 timeMs)
    {
        QByteArrayView tag, image, tensor, plugin;
        std::optional<float> simple;
        bool histogram = false, audio = false;
        Reader r(bytes);
        Field f;
        while (r.next(f)) {
            switch (f.number) {
            case 1:
                tag = f.bytes;
                break;
            case 2:
                if (f.type == WireType::Fixed32)
                    simple = f.asFloat();
                break;
            case 3:
            case 5:
                histogram = true;
                break;
            case 4:
                image = f.bytes;
                break;
            case 6:
                audio = true;
                break;
            case 8:
                tensor = f.bytes;
                break;
            case 9: {  // SummaryMetadata { PluginData plugin_data = 1 { string plugin_name = 1 } }
                Reader meta(f.bytes);
                Field m;
                while (meta.next(m))
                    if (m.number == 1 && m.type == WireType::Bytes) {
                        Reader pd(m.bytes);
                        Field p;
                        while (pd.next(p))
                            if (p.number == 1 && p.type == WireType::Bytes)
                                plugin = p.bytes;
                    }
                break;
            }
            default:
                break;
            }
        }
        if (r.malformed()) {
            ++out.problems[QStringLiteral("malformed summary value")];
            return;
        }
        if (simple) {
            out.points.append({tagOf(tag), MetricPoint{step, timeMs, double(*simple)}});
            return;
        }
        if (!image.isEmpty()) {
            QByteArrayView encoded;
            Reader ir(image);
            Field i;
            while (ir.next(i))
                if (i.number == 4 && i.type == WireType::Bytes)
                    encoded = i.bytes;
            TfMedia m{tagOf(tag), step, timeMs, {}, {}, {}};
            if (mediaKind(encoded, &m))
                out.media.append(std::move(m));
            else
                ++out.problems[QStringLiteral("image in an unknown format")];
            return;
        }
        if (histogram) {
            ++out.ignored[QStringLiteral("histogram")];
            return;
        }
        if (audio) {
            ++out.ignored[QStringLiteral("audio")];
            return;
        }
        if (tensor.isEmpty()) {
            if (!plugin.isEmpty() && knownNonScalarPlugin(plugin))
                ++out.ignored[QString::fromUtf8(plugin)];
            return;  // a value with only a tag or metadata (hparams' session markers)
        }
        const Tensor t = readTensor(tensor);
        if (plugin == QByteArrayView("images")) {
            // tf.summary.image: string_val = [width, height, encoded image, ...]: the first image.
            TfMedia m{tagOf(tag), step, timeMs, {}, {}, {}};
            if (t.strings.size() >= 3 && mediaKind(t.strings[2], &m))
                out.media.append(std::move(m));
            else
                ++out.problems[QStringLiteral("image in an unknown format")];
            return;
        }
        if (plugin.isEmpty() || plugin == QByteArrayView("scalars")) {
            if (t.elements == 1 && t.values.size() == 1) {
                out.points.append({tagOf(tag), MetricPoint{step, timeMs, t.values.front()}});
                return;
            }
            if (plugin.isEmpty()) {
                ++out.ignored[QStringLiteral("tensor (not a scalar)")];
                return;
            }
            ++out.problems[QStringLiteral("scalar that is not one number")];
            return;
        }
        if (knownNonScalarPlugin(plugin)) {
            ++out.ignored[QString::fromUtf8(plugin)];
            return;
        }
        ++out.problems[QStringLiteral("unknown plugin '%1'").arg(QString::fromUtf8(plugin))];
    }

    void event(QByteArrayView bytes)
    {
        double wallTime = 0;
        qint64 step = 0;
        QByteArrayView summary;
        Reader r(bytes);
        Field f;
        while (r.next(f)) {
            if (f.number == 1 && f.type == WireType::Fixed64)
                wallTime = f.asDouble();
            else if (f.number == 2 && f.type == WireType::Varint)
                step = f.asInt64();
            else if (f.number == 5 && f.type == WireType::Bytes)
                summary = f.bytes;
        }
        if (r.malformed()) {
            ++out.problems[QStringLiteral("malformed event")];
            return;
        }
        if (summary.isEmpty())
            return;  // file_version, graphs, session logs
        const qint64 timeMs = std::isfinite(wallTime) ? qint64(std::llround(wallTime * 1000.0)) : 0;
        Reader s(summary);
        while (s.next(f))
            if (f.number == 1 && f.type == WireType::Bytes)
                value(f.bytes, step, timeMs);
        if (s.malformed())
            ++out.problems[QStringLiteral("malformed summary")];
    }
};

}  // namespace

TfEventsChunk parseTfEvents(QByteArrayView data)
{
    TfEventsChunk out;
    Parser parser{out, {}};
    qsizetype at = 0;
    while (data.size() - at >= kHeader) {
        if (!headerValid(data, at)) {
            // Not a record boundary: find the next place a header's CRC holds (a false match is
            // a 1 in 2^32 chance, and its data CRC must hold too before anything is read).
            qsizetype next = at + 1;
            while (data.size() - next >= kHeader && !headerValid(data, next))
                ++next;
            out.problems[QStringLiteral("corrupt record header (bytes skipped)")] += next - at;
            at = next;
            out.consumed = at;
            continue;
        }
        const std::uint64_t length = proto::readLe64(data, at);
        const qsizetype available = data.size() - at - kHeader - kFooter;
        if (available < 0 || length > std::uint64_t(available)) {
            out.needBytes =
                qint64(std::min<std::uint64_t>(length, std::uint64_t(1) << 40)) + kHeader + kFooter;
            break;  // the writer has not finished this record: read it again with the rest
        }
        const QByteArrayView payload = data.sliced(at + kHeader, qsizetype(length));
        const std::uint32_t stored = proto::readLe32(data, at + kHeader + qsizetype(length));
        ++out.records;
        if (proto::maskCrc(proto::crc32c(payload)) != stored)
            ++out.problems[QStringLiteral("corrupt record (data CRC)")];
        else
            parser.event(payload);
        at += kHeader + qsizetype(length) + kFooter;
        out.consumed = at;
    }
    return out;
}

QByteArray tfRecord(QByteArrayView payload)
{
    QByteArray out(kHeader, Qt::Uninitialized);
    const std::uint64_t length = qToLittleEndian(std::uint64_t(payload.size()));
    std::memcpy(out.data(), &length, 8);
    const std::uint32_t lengthCrc =
        qToLittleEndian(proto::maskCrc(proto::crc32c(QByteArrayView(out.constData(), 8))));
    std::memcpy(out.data() + 8, &lengthCrc, 4);
    out += payload;
    const std::uint32_t dataCrc = qToLittleEndian(proto::maskCrc(proto::crc32c(payload)));
    out.append(reinterpret_cast<const char *>(&dataCrc), 4);
    return out;
}

bool isTfEventsFile(const QString &fileName)
{
    return fileName.contains(QLatin1String("tfevents"));
}

}  // namespace orrery::core
