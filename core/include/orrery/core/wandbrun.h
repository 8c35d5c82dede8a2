// SPDX-License-Identifier: GPL-3.0-or-later
//
// W&B offline runs (`wandb/offline-run-<time>-<id>/run-<id>.wandb`, what `wandb.init` writes with
// WANDB_MODE=offline), read without W&B: `orrery runs ingest DIR` takes them (docs/store.md).
//
// The .wandb file (wandb's datastore, checked against wandb 0.31's files): a 7-byte header
// (":W&B", uint16 0xBEE1, version 0), then LevelDB's log format: 32 KiB blocks of records, each a
// 7-byte header (uint32 CRC-32 of the type byte and the data, zlib's polynomial, not masked;
// uint16 length; uint8 type FULL 1, FIRST 2, MIDDLE 3, LAST 4), a block's tail under 7 bytes
// zero-filled. Each whole record is a protobuf wandb_internal.Record (wandb_internal.proto):
// history 2 (HistoryRecord { item 1 { key 1, nested_key 2, value_json 16 }, step 4 { num 1 } }),
// summary 3, config 5 (ConfigRecord { update 1: ConfigItem }), run 17 (RunRecord { run_id 1,
// project 3, config 4, display_name 8, start_time 17 }), exit 18 (RunExitRecord { exit_code 1,
// runtime 2 }). A logged image or video is a history object (nested keys ["img", "_type"] =
// "image-file", ["img", "path"] = "media/images/..") whose file is under the run's files/.
#pragma once

#include "orrery/core/metricseries.h"
#include "orrery/core/store.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QMap>
#include <QString>

#include <optional>

namespace orrery::core {

// The whole records of a .wandb file's bytes from `fileOffset` (0, or where an earlier read
// stopped: always a record boundary). `consumed` ends after the last whole record; a record cut
// short is left for the next read.
struct WandbLog {
    QList<QByteArray> records;
    qint64 consumed = 0;
    QMap<QString, qint64> problems;  // "corrupt record (CRC)", "not a .wandb file", ...
};
WandbLog readWandbLog(QByteArrayView data, qint64 fileOffset);

// What a run's records say, accumulated record by record.
struct WandbRun {
    QString runId, project, displayName;
    qint64 startMs = 0;
    QList<std::pair<QString, QString>> params;  // config, nested keys joined with '.'
    QList<std::pair<QString, QString>> summary;  // summary values that are not objects
    QList<std::pair<QString, MetricPoint>> points;
    QList<Artifact> media;  // path relative to the run dir (files/media/...), kind image / video
    std::optional<int> exitCode;
    qint64 runtimeS = 0;
    // Values that are not numbers, by why: "histogram", "table-file", "text", ...: counted, not errors.
    QMap<QString, qint64> ignored;
    QMap<QString, qint64> problems;
};
void applyWandbRecord(QByteArrayView record, WandbRun &run);

// The .wandb file of an offline run's directory (run-*.wandb), or empty.
QString wandbFileIn(const QString &dir);

}  // namespace orrery::core
