// SPDX-License-Identifier: GPL-3.0-or-later
//
// TensorBoard event files (`events.out.tfevents.*`, what torch.utils.tensorboard's SummaryWriter,
// tensorboardX and TensorFlow write): scalars as metric points, images and videos as media.
// docs/sweeps.md "TensorBoard event files".
//
// The file is a sequence of TFRecords: uint64 length, masked CRC-32C of those 8 bytes, the data,
// masked CRC-32C of the data (all little-endian). Each record's data is a tensorflow.Event:
// wall_time (1, double), step (2, int64), file_version (3), summary (5): Summary { repeated Value
// value = 1 }, Value { tag 1, simple_value 2 (float), image 4 (Image { height 1, width 2,
// colorspace 3, encoded_image_string 4 }), histo 5, audio 6, tensor 8 (TensorProto), metadata 9
// (SummaryMetadata { plugin_data 1 { plugin_name 1 } }) }.
//
// Scalars come as simple_value (torch's add_scalar, tensorboardX's default) or as a one-element
// tensor under the plugin "scalars" (TensorFlow 2, tensorboardX with new_style=True; such writers
// name the plugin only in a tag's first event, so a one-element float tensor without metadata is a
// scalar too). add_image writes a PNG, add_video an animated GIF, both as an Image value.
//
// A pure parser: the caller hands it the bytes read from a stored offset and keeps `consumed`.
// A record cut short (the writer is still writing it) is not read: `consumed` stops before it.
#pragma once

#include "orrery/core/metricseries.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace orrery::core {

// An image or a video of an event file: the encoded bytes as the writer stored them.
struct TfMedia {
    QString tag;
    qint64 step = 0;
    qint64 timeMs = 0;
    QString kind;  // "video" (an animated GIF: add_video) or "image" (PNG, JPEG: add_image)
    QString extension;  // gif, png, jpg
    QByteArray data;
};

struct TfEventsChunk {
    QList<std::pair<QString, MetricPoint>> points;  // in file order
    QList<TfMedia> media;
    qint64 consumed = 0;  // bytes through the last whole record (and past skipped corrupt bytes)
    qint64 records = 0;  // whole records read (corrupt ones included)
    // When the chunk ends inside a record: the bytes that record needs from `consumed` on (the
    // caller reads at least that much next time), else 0.
    qint64 needBytes = 0;
    // Skipped, with why, each counted: "corrupt record (data CRC)", "unknown plugin 'x'". Such
    // problems are worth a warning on the run.
    QMap<QString, qint64> problems;
    // Values deliberately not ingested (not numbers): "histogram", "text", "audio", ... counted.
    QMap<QString, qint64> ignored;
};

// Reads the whole records of `data`. Never throws. A record whose length CRC is wrong is not a
// record boundary: the reader looks for the next valid header and counts the skipped bytes as
// a problem; a record whose data CRC is wrong is skipped whole.
TfEventsChunk parseTfEvents(QByteArrayView data);

// One TFRecord around `payload` (what a writer appends), for tests and benchmarks.
QByteArray tfRecord(QByteArrayView payload);

// Whether a file name is a TensorBoard event file (contains "tfevents").
bool isTfEventsFile(const QString &fileName);

}  // namespace orrery::core
