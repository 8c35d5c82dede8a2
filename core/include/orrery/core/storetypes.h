// SPDX-License-Identifier: GPL-3.0-or-later
//
// The tracking store's ids, errors and value types: what its calls take and return
// (TrackingStore, store.h, and its facets sweepbook.h, ingestbook.h, housekeepingbook.h), with the
// plain functions over them that need no store.
#pragma once

#include "orrery/core/error.h"
#include "orrery/core/metricgoal.h"
#include "orrery/core/metricseries.h"
#include "orrery/core/states.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>

namespace orrery::core {

using ExperimentId = qint64;
using RunId = qint64;
using SweepId = qint64;

// Every failure of the store: SQLite's message plus what the store was doing.
class StoreError : public Error {
public:
    explicit StoreError(const std::string &message, Kind kind = Kind::Failed) : Error(kind, message) { }
    explicit StoreError(const char *message, Kind kind = Kind::Failed) : Error(kind, message) { }
};

// A write that cannot be made now, though the file is fine: the disk is full (SQLITE_FULL), or
// another process held the write lock past the busy timeout. Nothing of the call was written
// (every write is one transaction); the same call may succeed later, so a follower says so and
// tries again on its next tick rather than giving up (bench/chaos.py "store-full").
class StoreUnavailableError : public StoreError {
public:
    explicit StoreUnavailableError(const std::string &message) : StoreError(message, Kind::Unavailable) { }
};

// A row asked for by id is not there (another process or window deleted it since the id was
// read): the caller's view is stale and wants a refresh, the file is fine.
class NotFoundError : public StoreError {
public:
    explicit NotFoundError(const std::string &message) : StoreError(message, Kind::NotFound) { }
};

// The tags a user edits by hand (the window's Tags dialog): not MLflow's `mlflow.*` nor Orrery's
// `orrery.*` (written by the trainer, the runner, the note and the baseline star).
bool isUserTag(const QString &key);
// The Tags dialog's text — one KEY=VALUE a line, a value may hold spaces and '=' — against the
// user tags the run had when the dialog opened: what to set (new or changed) and what to remove
// (a line deleted). A line without '=' or with an empty key, or a key that is not a user tag, is
// an error naming its line, and then nothing is to be done.
struct TagChanges {
    QList<std::pair<QString, QString>> set;
    QStringList remove;
    QString error;
};
TagChanges tagChanges(const QMap<QString, QString> &before, const QString &text);
// The text that tagChanges reads for `tags`' user tags, sorted by key.
QString tagText(const QMap<QString, QString> &tags);

// MLflow's run statuses.
enum class RunStatus { Scheduled, Running, Finished, Failed, Killed };
QString toString(RunStatus s);
std::optional<RunStatus> runStatusFromString(const QString &s);  // case-insensitive

struct Experiment {
    ExperimentId id = 0;
    QString name;
    QString artifactLocation;
    qint64 creationTimeMs = 0;
    qint64 runCount = 0;  // its runs not archived (what every listing shows without --archived)
    QMap<QString, QString> tags;
};

struct Run {
    RunId id = 0;
    QString uuid;  // 32 hex digits, as MLflow's run ids
    ExperimentId experimentId = 0;
    QString experimentName;
    QString name;
    RunStatus status = RunStatus::Running;
    qint64 startTimeMs = 0;
    qint64 endTimeMs = 0;  // 0 while not ended
    QString runDir;
    // Archived (docs/store.md "Run housekeeping"): kept, hidden from lists unless asked for
    // (RunQuery::includeArchived). Stored as the runs table's lifecycle_stage 'archived'.
    bool archived = false;
};

// Tags with a meaning to every face (docs/store.md "Run housekeeping"): a run's note (MLflow's own
// key, so the MLflow UI shows it) and the starred baseline of its experiment ("true"), which
// charts, tables and the video grid show first.
inline constexpr char kNoteTag[] = "mlflow.note.content";
inline constexpr char kBaselineTag[] = "orrery.baseline";

struct LatestMetric {
    QString key;
    MetricPoint last;
    double min = 0, max = 0;  // over the finite and infinite values; NaN when all were NaN
    qint64 count = 0;
};

struct Artifact {
    QString path;  // relative to the run dir, as the trainer announced it
    QString kind;  // video, image, checkpoint, ...
    qint64 step = -1;
    QString remotePath;  // where it lives (on a cluster, or the local run dir)
    QString localPath;  // a local copy, when there is one
    qint64 size = -1;
};

struct RunDetails {
    Run run;
    QMap<QString, QString> params;
    QMap<QString, QString> tags;
    QList<LatestMetric> metrics;  // sorted by key
    QList<Artifact> artifacts;  // by step, then path
};

// The sample of `samples` (one kind, sorted by step) nearest to `step`: the earlier one on a tie.
// nullptr when there is none. What a video grid shows for a run at a chosen training step.
const Artifact *nearestSample(const QList<Artifact> &samples, qint64 step);
// The steps at which any of `runs` wrote a sample, sorted and unique (a step slider's stops).
QList<qint64> sampleSteps(const QList<QList<Artifact>> &runs);
// The sample of `samples` written at exactly `step`, or nullptr (a curve over steps plots a step
// only where both of its clips were written there, never a neighbour's).
const Artifact *sampleAt(const QList<Artifact> &samples, qint64 step);
// The series a sample belongs to (its media key), from its path with the step taken out: the
// trainer's `samples/step-40.mp4` → "samples"; TensorBoard's `tensorboard/val_video/step-40.gif` →
// "val_video"; W&B's `files/media/videos/samples_40_3f2a1b9c.mp4` → "samples"; MLflow's
// `images/grid%step%40%timestamp%….png` → "grid"; else the path with the step's digits as "*".
// An image series is its own key, " (image)" after the name ("samples (image)": the trainer's
// contact sheets). A run that logs several videos and images a step has one key each; the Video
// tab shows one.
QString mediaKey(const Artifact &sample);
// The media keys of several runs' samples: those the most runs have first, then videos before
// images, then by name (the first is what the Video tab shows by default).
QStringList mediaKeys(const QList<QList<Artifact>> &runs);

// A run filter term, MLflow search style: `params.optim.lr = 0.001`, `metrics.eval/loss < 0.2`,
// `tags.orrery.device = cuda`, `attributes.status = FINISHED`, `attributes.name LIKE 'lr-%'`.
struct RunCondition {
    enum class Scope { Param, Tag, Metric, Attribute };
    enum class Op { Eq, Ne, Lt, Le, Gt, Ge, Like };
    Scope scope = Scope::Param;
    QString key;
    Op op = Op::Eq;
    QString value;
};
// Parses one term, or says why it is not one.
Parsed<RunCondition> parseRunCondition(const QString &text);
// A whole filter, MLflow's filter_string: terms joined by AND (any case, outside quotes), e.g.
// `params.optim.lr >= 3e-4 and metrics.eval/loss < 0.2`. Empty text is no condition.
Parsed<QList<RunCondition>> parseRunFilter(const QString &text);

struct RunQuery {
    std::optional<QString> experiment;  // by name
    std::optional<SweepId> sweep;
    // Params and tags to return with each row (RunRow::params, ::tags): one read for a table
    // with param columns, not one details() per run.
    QStringList params, tags;
    QList<RunCondition> conditions;  // all must hold
    QString orderByMetric;  // empty: newest first
    bool descending = false;
    int limit = 0;  // 0: all
    bool includeArchived = false;  // archived runs too (hidden by default)
};

struct RunRow {
    Run run;
    QList<LatestMetric> latest;  // every metric of the run, by key
    QMap<QString, QString> params, tags;  // the query's chosen keys the run has (tags: + kBaselineTag)
    bool isBaseline() const { return tags.value(QLatin1String(kBaselineTag)) == QLatin1String("true"); }
    // The run's latest value of `key`, or nullptr.
    const LatestMetric *metric(const QString &key) const;
};

// The x of a metric's history: the training step, the point's wall time (unix ms), or the time
// since the run started (ms; the run's start time, else its first point's).
enum class XAxis { Step, WallTime, RelativeTime };

// A metric's history over [from, to] on the chosen x axis: raw points when the range holds at
// most 2 × buckets of them (or buckets is 0), else min/max buckets over x (spikes kept). Query a
// narrower range to zoom in at full fidelity: a plot asks for its visible range at its pixel
// width. Points come in step order whatever the axis.
struct HistoryQuery {
    qint64 from = std::numeric_limits<qint64>::min();
    qint64 to = std::numeric_limits<qint64>::max();
    int buckets = 0;
    XAxis axis = XAxis::Step;
};
struct MetricHistory {
    qint64 pointsInRange = 0;
    qint64 origin = 0;  // RelativeTime: the run's start (unix ms) that x counts from; else 0
    bool downsampled = false;
    std::vector<MetricPoint> points;  // raw (when not downsampled) or flatten(buckets)
    std::vector<HistoryBucket> buckets;  // when downsampled
};

// What one ingest call did. Line numbers are 1-based within the file.
struct IngestIssue {
    qint64 line = 0;
    QString message;
};
struct IngestResult {
    bool applied = true;  // false: the stored offset was not the caller's (another writer won)
    qint64 newOffset = 0;
    qint64 lines = 0;  // complete lines consumed
    qint64 points = 0;  // metric points stored
    qint64 events = 0;  // events applied (any kind)
    qint64 malformed = 0;
    qint64 unknownKinds = 0;
    QList<IngestIssue> issues;  // the first 100
};

struct IngestState {
    qint64 offset = 0;
    qint64 lines = 0;
    qint64 malformed = 0;
};

struct Sweep {
    SweepId id = 0;
    QString name;
    ExperimentId experimentId = 0;
    QString spec;  // the YAML as submitted
    QString method;  // grid | random | bayes
    QString metricName;
    Goal metricGoal = Goal::Minimize;
    QString cluster;  // empty: local
    QString arrayJobId;  // the first batch's (Slurm: the job array's id)
    QString state;  // SweepState's text (states.h)
    QString specFile;  // the spec's path as given at submission (for messages)
    QString baseConfig;  // the base trainer config's text the trials were rendered from
    QString rootDir;  // the sweep's directory on the executor's machine
    int trialCount = 0;  // planned trials (grid: the combinations; random/bayes: run_cap)
    QString message;  // the runner's last word on the sweep as a whole (why it ended)

    SweepState sweepState() const { return sweepStateFromText(state); }
};

// Who may act on a sweep (docs/sweeps.md "One follower acts"): several processes may follow one
// sweep, but only the holder of its lease resubmits, stops early, suggests and ends it.
struct SweepLease {
    SweepId sweep = 0;
    QString holder;  // the follower's id ("host:pid:random"); empty: nobody holds it
    qint64 acquiredMs = 0;  // when this holder's unbroken hold began (a fencing token)
    qint64 expiresMs = 0;  // after this (unix ms), any follower may take it over

    bool heldBy(const QString &follower) const { return !holder.isEmpty() && holder == follower; }
};

// A node Orrery keeps out of a cluster's submissions (docs/sweeps.md "Bad nodes kept out"): an
// attempt failed there for a node-level cause, or the user said so (`orrery cluster nodes --add`).
struct SuspectNode {
    QString cluster;
    QString node;
    QString reason;  // "health check failed on node2: ...", "NODE_FAIL (trial 3 of sweep x)"
    QString source;  // who said so: "health", "node", "node-fail", "oom", "user"
    qint64 sinceMs = 0;  // unix ms
    qint64 expiresMs = 0;  // unix ms; 0: never (the user's own entries)

    bool operator==(const SuspectNode &) const = default;
};

// One attempt of one trial; its states and their order are TrialState's (states.h).
struct Trial {
    qint64 id = 0;
    SweepId sweepId = 0;
    int index = 0;
    int attempt = 0;
    RunId runId = 0;
    QString slurmJobId, slurmTaskId, runDir;
    QString state;  // TrialState's text (states.h): read it with trialState()
    QString exitReason;
    QString params;  // the trial's parameters as a JSON object (dotted keys)
    QString config;  // the resolved trial.yaml
    QString task;  // the executor's task id ("123_4", "0.3")
    QString detail;  // what the executor last said ("PENDING (Resources)", "OUT_OF_MEMORY")
    qint64 submittedMs = 0, endedMs = 0;
    // When the executor first reported the attempt running (0: never seen running), and what it
    // was allocated over all its nodes: GPU-hours = (ended - started) x gpus (docs/sweeps.md).
    qint64 startedMs = 0;
    int gpus = 0, cpus = 0;
    // A user launched this attempt (SweepRunner::retryTrial), not the runner: the runner's retry
    // budget counts from the trial's latest such attempt, and early stopping leaves the trial be.
    bool userRetry = false;
    // Resilient sweeps (docs/sweeps.md "Resilient sweeps"): the nodes the attempt ran on
    // (comma-separated, as the executor reported them; "" unknown), its health check's verdict
    // per node (a JSON object by node name; "" none ran), when it was last seen making progress
    // (unix ms, this machine's clock; 0: not yet), and while queued Slurm's expected start
    // (unix ms; 0: unknown).
    QString nodes;
    QString health;
    qint64 progressMs = 0;
    qint64 expectedStartMs = 0;

    TrialState trialState() const { return trialStateFromText(state); }
    void setState(TrialState s) { state = toText(s); }
    // Queued or running, or being stopped/cancelled (it still runs until the executor says so).
    bool isActive() const { return core::isActive(trialState()); }
};

// The latest attempt of each trial, by trial index (what tables and the runner act on).
QList<Trial> latestAttempts(const QList<Trial> &attempts);
// The latest attempt of trial `index` (the highest attempt number); nullopt: no such trial.
std::optional<Trial> latestAttempt(const QList<Trial> &attempts, int index);

// Trials counted by the phase of their latest attempt (a failed attempt being retried counts as
// queued or running, not failed).
struct PhaseCounts {
    int queued = 0, running = 0, done = 0, failed = 0, stopped = 0;
    int total = 0;  // distinct trial indexes
    int ended() const { return done + failed + stopped; }
};
PhaseCounts countPhases(const QList<Trial> &attempts);

// A trial of a sweep as tables show it: its latest attempt and where its run stands.
struct TrialSummary {
    Trial trial;  // the latest attempt
    int attempts = 0;
    qint64 step = -1;  // the run's latest step, any metric (-1: nothing logged yet)
    std::optional<double> latest, best;  // the sweep's metric: last value; min or max by its goal
};
// Each trial's latest attempt with its attempt count, latest step and the sweep's metric (last,
// and best by the goal) from its run's row (`runOf`: nullptr where the run is not read):
// TrackingStore::trialSummaries, and the overview over rows already read.
QList<TrialSummary> summarizeTrials(const Sweep &sweep, const QList<Trial> &attempts,
                                    const std::function<const RunRow *(RunId)> &runOf);

// Where one trainer process of a run spent its time: its newest `phases` event (schema v9;
// docs/trainer.md "Phase timings"). Cumulative, so a killed process's last event still counts.
// goodput.h turns these into a run's goodput.
struct ProcessPhases {
    qint64 processStartMs = 0;  // when the process started, unix ms (the trainer's clock): its key
    qint64 updatedMs = 0;  // the event's time: the seconds below cover processStart..updated
    qint64 step = 0;  // the step reached
    qint64 resumeStep = 0;  // the step it resumed from (0: a fresh start)
    qint64 checkpointStep = 0;  // its newest checkpoint (resumeStep until it writes one)
    double startupS = 0, trainS = 0, checkpointS = 0, evalS = 0, sampleS = 0, otherS = 0;
};

}  // namespace orrery::core
