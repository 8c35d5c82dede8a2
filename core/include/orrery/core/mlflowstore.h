// SPDX-License-Identifier: GPL-3.0-or-later
//
// Runs kept by MLflow itself, read without MLflow (docs/store.md "Importing MLflow runs"):
// `orrery runs ingest` brings in the runs of an MLflow store a script wrote before Orrery
// followed it, or outside any sweep. Both of MLflow's local stores are read:
//   - the SQLite store (`mlflow.db`, MLflow 3's default): tables experiments, runs, params, tags,
//     metrics (key, value, timestamp ms, step, is_nan), opened read-only;
//   - the file store (`mlruns/`, MLflow 2's default, `file:` URIs): <experiment id>/meta.yaml,
//     <experiment id>/<run id>/meta.yaml, metrics/<key> ("timestamp value step" lines; a key
//     with '/' is a path), params/<key>, tags/<key>.
// Plain functions over files: nothing here writes, and nothing needs MLflow installed.
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>
#include <utility>

namespace orrery::core {

class TrackingStore;

struct MlflowPoint {
    QString key;
    double value = 0;
    qint64 timestampMs = 0;
    qint64 step = 0;
};

struct MlflowRun {
    QString uuid, name, experiment;
    QString status;  // MLflow's: RUNNING, SCHEDULED, FINISHED, FAILED, KILLED
    qint64 startMs = 0, endMs = 0;
    QString artifactDir;  // local directory of its artifacts (empty: elsewhere, e.g. s3://)
    QString runDir;  // the run's own directory in a file store, else its artifacts' parent
    QList<std::pair<QString, QString>> params, tags;
    QList<MlflowPoint> metrics;  // as MLflow keeps them: every point, by key then timestamp
};

struct MlflowStore {
    QString kind;  // "sqlite" or "file"
    QString path;  // the database file, or the mlruns directory
    QList<MlflowRun> runs;
    QStringList problems;  // what was unreadable (a run's malformed meta.yaml), one line each
};

// The MLflow store at `path`: an mlflow.db (or any SQLite file with MLflow's runs table), a
// directory holding one (mlflow.db) or an `mlruns` file store, or an mlruns directory itself.
// nullopt when `path` is none of those.
std::optional<QString> findMlflowStore(const QString &path);
// Reads every run of the store (deleted runs left out). Throws std::runtime_error, naming the
// file, when the store cannot be read at all.
MlflowStore readMlflowStore(const QString &storePath);

// What importing a store did.
struct MlflowImport {
    int runs = 0, created = 0;
    qint64 points = 0, media = 0;
    QStringList notes;
};
// What `runs ingest PATH` and the window's File → Import take from PATH: its MLflow store (if it
// is one or holds one) and Orrery's run directories under it (a directory). Throws
// std::runtime_error when PATH is neither a directory nor an MLflow store.
struct ImportSources {
    std::optional<QString> mlflowStore;
    QStringList runDirectories;
};
ImportSources importSources(const QString &path);

// Brings the runs into `store`, each as a run of its MLflow experiment, with its params, tags
// (and orrery.mlflow.run_id), metrics (one point per step, the last MLflow kept at it: Orrery
// keeps a series per step), status and times, and its video and image artifacts. A run imported
// before is found again (by its directory) and updated, so a second import adds what is new and
// duplicates nothing.
MlflowImport importMlflowRuns(TrackingStore &store, const MlflowStore &mlflow);

}  // namespace orrery::core
