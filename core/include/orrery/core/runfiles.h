// SPDX-License-Identifier: GPL-3.0-or-later
//
// Files a command's run writes that Orrery reads without the program's help (docs/sweeps.md,
// "TensorBoard event files" and "Sample files by pattern"): TensorBoard event files anywhere under
// the run dir (tfevents.h), and sample videos and images matched by the spec's `artifacts` rules.
// Both are found by a listing (executor.h FileRead::listing) taken in the tick's one read, and
// an event file is then followed from its stored offset (ingest_offsets, keyed by its path
// relative to the run dir) like events.jsonl.
#pragma once

#include "orrery/core/command.h"
#include "orrery/core/executor.h"
#include "orrery/core/store.h"

#include <QByteArrayView>
#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

namespace orrery::core {

// The warning tag a run gets, once, when an event file held something that was skipped (a
// corrupt record, an unknown plugin).
inline constexpr char kTensorBoardWarningTag[] = "orrery.warning.tensorboard";

// Where the images and videos of a run's event files are written (they live inside the event
// file, not as files): $ORRERY_CACHE_DIR/tensorboard/<run uuid>, else the cache location's.
QString tensorboardMediaDir(const QString &runUuid);

// The event files of a listing of `listedDir`, as paths relative to `runDir` (absolute when the
// listed directory is outside it), sorted.
QStringList tfEventsFiles(const QList<FileEntry> &entries, const QString &listedDir, const QString &runDir);

// The directory the spec's `tensorboard.dir` names for a run (the run dir itself by default).
QString tensorboardDirOf(const CommandSpec &command, const QString &runDir);

// The local executor appends every attempt of a trial to its run directory's stdout.log and
// stderr.log (a retry resumes in the same directory); a retry's output starts with this line, so
// that each attempt's part can be told apart: "==> orrery: attempt N (task T) started at ISO\n".
QByteArray attemptMarker(int attempt, const QString &task, const QDateTime &when);
// The lines of `attempt` among a log's lines (its tail, perhaps): after that attempt's marker and
// before the next one; an attempt before the first marker's: the lines before it. A log without
// markers is all one attempt's; an attempt whose part is not in the lines: none.
QStringList linesOfAttempt(const QStringList &lines, int attempt);
// The line of a failed process's output that says why, where one does: the last line of a
// Python traceback ("ValueError: …"), argparse's "prog: error: …", a C++ "terminate called …
// what(): …", "Killed", CUDA's "out of memory" — the last such line. Empty when none does.
QString errorLineOf(const QStringList &lines);

// A file's sample kind by its extension: "video" (mp4, webm, mkv, mov, avi, gif, y4m), "image"
// (png, jpg, jpeg, webp), else "file".
QString sampleKindOf(const QString &path);
// The sample artifacts `rules` match in a listing of the run dir: path relative to it, kind
// sampleKindOf, the step from the rule's step regex (-1 without), remotePath the file on the
// executor's machine, its size. A file two rules match is taken by the first.
QList<Artifact> matchArtifacts(const QList<ArtifactRule> &rules, const QList<FileEntry> &entries,
                               const QString &runDir);

struct TfIngest {
    bool applied = true;  // false: another writer ingested this file meanwhile (read again)
    qint64 consumed = 0;  // bytes of `data` applied (whole records)
    qint64 needBytes = 0;  // the next record's size when `data` ended inside it
    qint64 records = 0;
    qint64 points = 0;
    qint64 media = 0;
    QString warning;  // what was skipped in this chunk, empty when nothing
};
// Applies the whole records of `data`, read from byte `fromOffset` of the event file `file` (a
// key as tfEventsFiles gives it): its scalars as metric points at the event's step and wall
// time, with the file's new offset, in one transaction (nested in the caller's, if any); its
// images and videos written under `mediaDir` and recorded as artifacts (kind image / video,
// path "tensorboard/<tag>/step-<N>.<ext>", the local copy set). Skipped records or values set
// the run's kTensorBoardWarningTag once.
TfIngest ingestTfEventsChunk(TrackingStore &store, RunId run, const QString &file, qint64 fromOffset,
                             QByteArrayView data, const QString &mediaDir);

// Every event file under the local directory `dir` (the run dir `runDir` or inside it), read to
// its end from the stored offsets (`orrery runs ingest`). Returns the totals.
TfIngest ingestTfEventsDirectory(TrackingStore &store, RunId run, const QString &dir, const QString &runDir,
                                 const std::function<bool()> &cancel = {});

struct RunFileIngest {
    qint64 points = 0;
    qint64 media = 0;
    bool exited = false;  // the run's exit record was read: the run is ended
    QStringList notes;  // skipped and ignored values, one line each
};
// A W&B offline run's .wandb file in the local directory `runDir` (wandbrun.h), from its stored
// offset to its end: history as metric points (with the file's new offset, one transaction),
// config as params (a key already logged keeps its value), summary values as tags
// `wandb.summary.<key>`, the run id and project as tags, logged images and videos (files/media/..)
// as artifacts, the exit record as the run's end. Values that are not numbers are counted in a
// note and the tag `orrery.wandb.ignored`. Nothing when there is no run-*.wandb.
RunFileIngest ingestWandbRun(TrackingStore &store, RunId run, const QString &runDir);

}  // namespace orrery::core
