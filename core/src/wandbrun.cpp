// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/wandbrun.h"

#include "orrery/core/protowire.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>

#include <cmath>

namespace orrery::core {

using proto::Field;
using proto::Reader;
using proto::WireType;

namespace {

constexpr qint64 kBlock = 32768;  // LevelDB's log block
constexpr qint64 kRecordHeader = 7;
constexpr qint64 kFileHeader = 7;
enum RecordType { Zero = 0, Full = 1, First = 2, Middle = 3, Last = 4 };

// A value_json: a number (W&B writes NaN, Infinity, -Infinity bare), else any JSON value.
struct JsonValue {
    std::optional<double> number;
    QJsonValue json;
};
JsonValue parseValue(QByteArrayView text)
{
    JsonValue v;
    const QByteArray t = text.trimmed().toByteArray();
    if (t == "NaN") {
        v.number = std::nan("");
        return v;
    }
    if (t == "Infinity" || t == "-Infinity") {
        v.number = t.startsWith('-') ? -INFINITY : INFINITY;
        return v;
    }
    bool ok = false;
    const double d = t.toDouble(&ok);
    if (ok) {
        v.number = d;
        return v;
    }
    const QJsonDocument doc = QJsonDocument::fromJson("[" + t + "]");
    v.json = doc.isArray() ? doc.array().at(0) : QJsonValue(QJsonValue::Undefined);
    return v;
}

QString textOf(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::String:
        return v.toString();
    case QJsonValue::Bool:
        return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Null:
        return QStringLiteral("None");
    case QJsonValue::Array:
        return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
    case QJsonValue::Object:
        return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
    default:
        return {};
    }
}

// An item's key: `key`, or its nested keys.
struct Item {
    QStringList key;
    QByteArrayView valueJson;
};
QList<Item> itemsOf(QByteArrayView message, std::uint32_t field)
{
    QList<Item> out;
    Reader r(message);
    Field f;
    while (r.next(f)) {
        if (f.number != field || f.type != WireType::Bytes)
            continue;
        Item item;
        QString key;
        Reader ir(f.bytes);
        Field i;
        while (ir.next(i)) {
            if (i.number == 1 && i.type == WireType::Bytes)
                key = QString::fromUtf8(i.bytes);
            else if (i.number == 2 && i.type == WireType::Bytes)
                item.key << QString::fromUtf8(i.bytes);
            else if (i.number == 16 && i.type == WireType::Bytes)
                item.valueJson = i.bytes;
        }
        if (!key.isEmpty())
            item.key = QStringList{key} + item.key;
        if (!item.key.isEmpty())
            out.append(item);
    }
    return out;
}

void flattenParam(const QString &key, const QJsonValue &v, QList<std::pair<QString, QString>> &out)
{
    if (v.isObject()) {
        const QJsonObject o = v.toObject();
        // wandb < 0.13 wrapped each value as {"desc": .., "value": ..}
        if (o.contains(QLatin1String("value")) && o.size() <= 2 &&
            (o.size() == 1 || o.contains(QLatin1String("desc")))) {
            flattenParam(key, o.value(QLatin1String("value")), out);
            return;
        }
        for (auto it = o.begin(); it != o.end(); ++it)
            flattenParam(key + QLatin1Char('.') + it.key(), it.value(), out);
        return;
    }
    out.append({key, textOf(v)});
}

void applyConfig(QByteArrayView config, WandbRun &run)
{
    for (const Item &item : itemsOf(config, 1)) {
        const QString key = item.key.join(QLatin1Char('.'));
        if (key.startsWith(QLatin1String("_wandb")))
            continue;
        const JsonValue v = parseValue(item.valueJson);
        if (v.number)
            run.params.append({key, QString::fromUtf8(item.valueJson.trimmed().toByteArray())});
        else
            flattenParam(key, v.json, run.params);
    }
}

void applyHistory(QByteArrayView history, WandbRun &run)
{
    const QList<Item> items = itemsOf(history, 1);
    std::optional<qint64> step;
    Reader r(history);
    Field f;
    while (r.next(f))
        if (f.number == 2 && f.type == WireType::Bytes) {  // HistoryStep { int64 num = 1 }
            Reader s(f.bytes);
            Field n;
            while (s.next(n))
                if (n.number == 1 && n.type == WireType::Varint)
                    step = n.asInt64();
        }
    qint64 timeMs = 0;
    // Objects (a media file, a histogram, a table): the items under a key whose `_type` names them.
    QMap<QString, QString> objectType;
    QMap<QString, QString> objectPath;
    for (const Item &item : items) {
        if (item.key.size() == 1 && item.key.front() == QLatin1String("_step") && !step) {
            if (const JsonValue v = parseValue(item.valueJson); v.number)
                step = qint64(*v.number);
        } else if (item.key.size() == 1 && item.key.front() == QLatin1String("_timestamp")) {
            if (const JsonValue v = parseValue(item.valueJson); v.number && std::isfinite(*v.number))
                timeMs = qint64(std::llround(*v.number * 1000.0));
        } else if (item.key.size() > 1 && item.key.back() == QLatin1String("_type")) {
            objectType.insert(item.key.mid(0, item.key.size() - 1).join(QLatin1Char('.')),
                              parseValue(item.valueJson).json.toString());
        }
    }
    for (const Item &item : items)
        if (item.key.size() > 1 && item.key.back() == QLatin1String("path"))
            objectPath.insert(item.key.mid(0, item.key.size() - 1).join(QLatin1Char('.')),
                              parseValue(item.valueJson).json.toString());
    const qint64 at = step.value_or(0);
    for (auto it = objectType.cbegin(); it != objectType.cend(); ++it) {
        const QString kind = it.value() == QLatin1String("image-file") ? QStringLiteral("image")
            : it.value() == QLatin1String("video-file")                ? QStringLiteral("video")
                                                                       : QString();
        if (kind.isEmpty() || objectPath.value(it.key()).isEmpty()) {
            ++run.ignored[it.value().isEmpty() ? QStringLiteral("object") : it.value()];
            continue;
        }
        Artifact a;
        a.path = QStringLiteral("files/") + objectPath.value(it.key());
        a.kind = kind;
        a.step = at;
        run.media.append(a);
    }
    for (const Item &item : items) {
        if (item.key.front().startsWith(QLatin1Char('_')))
            continue;  // _step, _runtime, _timestamp, _wandb
        bool inObject = false;
        for (qsizetype n = 1; n < item.key.size() && !inObject; ++n)
            inObject = objectType.contains(item.key.mid(0, n).join(QLatin1Char('.')));
        if (inObject)
            continue;
        const JsonValue v = parseValue(item.valueJson);
        if (v.number)
            run.points.append({item.key.join(QLatin1Char('.')), MetricPoint{at, timeMs, *v.number}});
        else
            ++run.ignored[v.json.isString()     ? QStringLiteral("text")
                              : v.json.isBool() ? QStringLiteral("bool")
                                                : QStringLiteral("not a number")];
    }
}

void applySummary(QByteArrayView summary, WandbRun &run)
{
    for (const Item &item : itemsOf(summary, 1)) {
        if (item.key.front().startsWith(QLatin1Char('_')))
            continue;
        const JsonValue v = parseValue(item.valueJson);
        if (v.number || (!v.json.isObject() && !v.json.isArray() && !v.json.isUndefined()))
            run.summary.append(
                {item.key.join(QLatin1Char('.')),
                 v.number ? QString::fromUtf8(item.valueJson.trimmed().toByteArray()) : textOf(v.json)});
    }
}

void applyRun(QByteArrayView bytes, WandbRun &run)
{
    Reader r(bytes);
    Field f;
    while (r.next(f)) {
        if (f.type != WireType::Bytes)
            continue;
        if (f.number == 1)
            run.runId = QString::fromUtf8(f.bytes);
        else if (f.number == 3)
            run.project = QString::fromUtf8(f.bytes);
        else if (f.number == 8)
            run.displayName = QString::fromUtf8(f.bytes);
        else if (f.number == 4)
            applyConfig(f.bytes, run);
        else if (f.number == 17) {  // google.protobuf.Timestamp { seconds 1, nanos 2 }
            Reader t(f.bytes);
            Field s;
            qint64 seconds = 0, nanos = 0;
            while (t.next(s))
                (s.number == 1 ? seconds : nanos) = s.asInt64();
            run.startMs = seconds * 1000 + nanos / 1000000;
        }
    }
}

}  // namespace

WandbLog readWandbLog(QByteArrayView data, qint64 fileOffset)
{
    WandbLog out;
    qsizetype at = 0;
    if (fileOffset == 0) {
        if (data.size() < kFileHeader)
            return out;
        if (!data.startsWith(":W&B") || std::uint8_t(data[4]) != 0xe1 || std::uint8_t(data[5]) != 0xbe) {
            ++out.problems[QStringLiteral("not a .wandb file (no :W&B header)")];
            return out;
        }
        if (std::uint8_t(data[6]) != 0)
            ++out.problems[QStringLiteral("a .wandb format version other than 0")];
        at = kFileHeader;
        out.consumed = at;
    }
    QByteArray fragment;
    bool inFragment = false;
    while (true) {
        const qint64 inBlock = (fileOffset + at) % kBlock;
        if (kBlock - inBlock < kRecordHeader) {  // the block's zero-filled tail
            const qsizetype skip = qsizetype(kBlock - inBlock);
            if (data.size() - at < skip)
                break;
            at += skip;
            if (!inFragment)
                out.consumed = at;
            continue;
        }
        if (data.size() - at < kRecordHeader)
            break;
        const std::uint32_t crc = proto::readLe32(data, at);
        const qsizetype length = std::uint8_t(data[at + 4]) | (std::uint8_t(data[at + 5]) << 8);
        const int type = std::uint8_t(data[at + 6]);
        if (length > kBlock - inBlock - kRecordHeader) {
            ++out.problems[QStringLiteral("corrupt record (length past its block)")];
            at += qsizetype(kBlock - inBlock);  // LevelDB's recovery: drop the rest of the block
            fragment.clear();
            inFragment = false;
            if (at <= data.size())
                out.consumed = at;
            continue;
        }
        if (data.size() - at - kRecordHeader < length)
            break;  // being written
        const QByteArrayView payload = data.sliced(at + kRecordHeader, length);
        at += kRecordHeader + length;
        if (type == Zero && length == 0) {
            if (!inFragment)
                out.consumed = at;
            continue;
        }
        const char typeByte = char(type);
        if (proto::crc32ieee(payload, proto::crc32ieee(QByteArrayView(&typeByte, 1))) != crc) {
            ++out.problems[QStringLiteral("corrupt record (CRC)")];
            fragment.clear();
            inFragment = false;
            out.consumed = at;
            continue;
        }
        switch (type) {
        case Full:
            out.records.append(payload.toByteArray());
            inFragment = false;
            out.consumed = at;
            break;
        case First:
            fragment = payload.toByteArray();
            inFragment = true;
            break;
        case Middle:
        case Last:
            if (!inFragment) {
                ++out.problems[QStringLiteral("record fragment without its start")];
                out.consumed = at;
                break;
            }
            fragment += payload;
            if (type == Last) {
                out.records.append(fragment);
                fragment.clear();
                inFragment = false;
                out.consumed = at;
            }
            break;
        default:
            ++out.problems[QStringLiteral("unknown record type")];
            out.consumed = at;
            break;
        }
    }
    return out;
}

void applyWandbRecord(QByteArrayView record, WandbRun &run)
{
    Reader r(record);
    Field f;
    while (r.next(f)) {
        if (f.type != WireType::Bytes)
            continue;
        switch (f.number) {
        case 2:
            applyHistory(f.bytes, run);
            break;
        case 3:
            applySummary(f.bytes, run);
            break;
        case 5:
            applyConfig(f.bytes, run);
            break;
        case 17:
            applyRun(f.bytes, run);
            break;
        case 18: {
            Reader e(f.bytes);
            Field x;
            while (e.next(x))
                if (x.number == 1 && x.type == WireType::Varint)
                    run.exitCode = int(std::int32_t(x.varint));
                else if (x.number == 2 && x.type == WireType::Varint)
                    run.runtimeS = x.asInt64();
            if (!run.exitCode)
                run.exitCode = 0;
            break;
        }
        default:
            break;
        }
    }
    if (r.malformed())
        ++run.problems[QStringLiteral("malformed record")];
}

QString wandbFileIn(const QString &dir)
{
    const QStringList files = QDir(dir).entryList({QStringLiteral("run-*.wandb")}, QDir::Files, QDir::Name);
    return files.isEmpty() ? QString() : QDir(dir).filePath(files.front());
}

}  // namespace orrery::core
