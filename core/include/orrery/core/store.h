// SPDX-License-Identifier: GPL-3.0-or-later
//
// The tracking store: experiments, runs, params, tags, metrics, artifacts, sweeps and trials in
// one SQLite file, with MLflow's concepts and names where they fit (docs/store.md).
//
// Ownership and threads: a TrackingStore is one SQLite connection and belongs to the thread that
// uses it (open one per thread; readers never block the writer in WAL mode). Several processes
// may open the same file; writes take SQLite's write lock up front (BEGIN IMMEDIATE) and wait on
// a busy timeout, so two writers queue instead of failing with "database is locked".
#pragma once

#include "orrery/core/error.h"
#include "orrery/core/metricgoal.h"
#include "orrery/core/metricseries.h"
#include "orrery/core/states.h"

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
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
// Parses one term; on error returns nullopt and sets *error.
std::optional<RunCondition> parseRunCondition(const QString &text, QString *error);
// A whole filter, MLflow's filter_string: terms joined by AND (any case, outside quotes), e.g.
// `params.optim.lr >= 3e-4 and metrics.eval/loss < 0.2`. Empty text is no condition.
std::optional<QList<RunCondition>> parseRunFilter(const QString &text, QString *error);

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

class TrackingStore {
public:
    enum class Mode { ReadWrite, ReadOnly };

    // Opens (creating it and its directory if needed) and migrates to the current schema. A file
    // written by a newer Orrery opens read-only: readOnlyReason() says so, and writes throw.
    static std::unique_ptr<TrackingStore> open(const QString &path, Mode mode = Mode::ReadWrite);
    ~TrackingStore();

    static int currentSchemaVersion();
    int schemaVersion() const;
    QString path() const;
    bool isReadOnly() const;
    QString readOnlyReason() const;

    // --- experiments and runs (MLflow) -------------------------------------------------------
    ExperimentId ensureExperiment(const QString &name);
    std::optional<Experiment> experiment(const QString &name) const;
    QList<Experiment> experiments() const;
    void setExperimentTag(ExperimentId id, const QString &key, const QString &value);

    RunId createRun(ExperimentId experiment, const QString &name, qint64 startTimeMs = 0,
                    const QString &runDir = {});
    void endRun(RunId run, RunStatus status, qint64 endTimeMs = 0);
    void setRunStatus(RunId run, RunStatus status);
    // When the run started, as an imported run's own records say (a W&B run's start_time).
    void setRunStart(RunId run, qint64 startTimeMs);
    // A run by numeric id, uuid, uuid prefix (at least 6 hex digits) or exact name.
    std::optional<Run> findRun(const QString &ref) const;
    std::optional<Run> run(RunId id) const;
    std::optional<RunId> runByDirectory(const QString &runDir) const;
    RunDetails details(RunId run) const;

    // Params are immutable once logged (as MLflow): logging a different value for a logged key
    // throws; the same value again is fine. Tags overwrite.
    void logParams(RunId run, const QList<std::pair<QString, QString>> &params);
    void setTags(RunId run, const QList<std::pair<QString, QString>> &tags);
    void logMetrics(RunId run, const QList<std::pair<QString, MetricPoint>> &points);
    void addArtifact(RunId run, const Artifact &artifact);
    // A run's sample artifacts of one kind ("video": the sample clips; "image": their contact
    // sheets), by step. Artifacts announced without a step are left out.
    QList<Artifact> samples(RunId run, const QString &kind = QStringLiteral("video")) const;
    // The sample of `kind` nearest to `step` (the earlier one on a tie), or nullopt.
    std::optional<Artifact> sampleNear(RunId run, qint64 step,
                                       const QString &kind = QStringLiteral("video")) const;
    // Records that `path` (as announced) of `run` now has a local copy (a cluster's sample
    // fetched into the cache), with its size. False when the run has no such artifact.
    bool setArtifactLocalCopy(RunId run, const QString &path, const QString &localPath, qint64 size);
    // The cluster profile a run was trained on (its sweep's), or empty: this machine.
    QString clusterOf(RunId run) const;

    // --- run housekeeping (docs/store.md "Run housekeeping") ------------------------------------
    // The one implementation behind `orrery runs tag|note|rename|archive|delete|baseline` and the
    // window's run menu. Each call is one transaction; an unknown run id throws StoreError and
    // writes nothing.
    // A new display name (not empty; names need not be unique: ids and uuids are).
    void renameRun(RunId run, const QString &name);
    // The run's note (kNoteTag, MLflow's own key); empty text removes it.
    void setRunNote(RunId run, const QString &text);
    // Removes these tags (a key the run does not have is no error). setTags adds and overwrites.
    void removeTags(RunId run, const QStringList &keys);
    // Archives (runs.lifecycle_stage 'archived': hidden unless RunQuery::includeArchived) or
    // restores ('active') every run of `runs`.
    void archiveRuns(const QList<RunId> &runs, bool archived);
    // Every archived run's id (the window's tree marks their trials and leaves them out).
    QList<RunId> archivedRuns() const;
    // Deletes runs for good: the run row and with it its metrics (chunks, latest values), params,
    // tags, artifacts records, ingest offsets, phase records and MLflow mirror bookkeeping (the
    // schema's ON DELETE CASCADE). Its trials keep their attempts' history with no run
    // (trials.run_id ON DELETE SET NULL). Refuses, deleting nothing, when any of the runs belongs to
    // an attempt still queued, running, stopping or cancelling: the follower would write to it.
    // Files on disk (the run directory) are left alone.
    void deleteRuns(const QList<RunId> &runs);
    // Stars the run as its experiment's baseline (kBaselineTag = "true"), un-starring the
    // experiment's previous baseline in the same transaction; `baseline` false removes the star.
    void setBaseline(RunId run, bool baseline);
    // The experiment's starred baseline run, if any.
    std::optional<RunId> baselineOf(ExperimentId experiment) const;

    // The runs `query` selects, with their latest metrics, tags and the params it names.
    // `withoutParams`, when given, is called once with the rows before their params are in (in
    // the same read transaction: it may read the store): a table of every param of thousands of
    // runs is read beside it on a connection of its own, so work that needs the runs and their
    // metrics but no params (the window's sweep overviews) overlaps the longest part of the read.
    // The rows do not move afterwards; their params are filled in place.
    QList<RunRow> queryRuns(const RunQuery &query,
                            const std::function<void(const QList<RunRow> &)> &withoutParams = {}) const;
    QStringList metricKeys(RunId run) const;
    // Every metric key / param key logged by any run (sorted): a table's column chooser.
    QStringList metricKeys() const;
    QStringList paramKeys() const;
    MetricHistory history(RunId run, const QString &key, const HistoryQuery &query = {}) const;
    // (point count, last step) of a run's metric, from latest_metrics: changes whenever the
    // series does (a cache's key). nullopt when the run has no such metric.
    std::optional<std::pair<qint64, qint64>> seriesVersion(RunId run, const QString &key) const;
    // Every point of a run's metric, in step order (export).
    std::vector<MetricPoint> allPoints(RunId run, const QString &key) const;
    qint64 pointCount(RunId run) const;

    // --- ingest of events.jsonl --------------------------------------------------------------
    IngestState ingestState(RunId run, const QString &file) const;
    // Every file of the run with an ingest state, by name (the TensorBoard event files a listing
    // found are followed from here: runfiles.h).
    QList<std::pair<QString, IngestState>> ingestStates(RunId run) const;
    // Applies the complete lines of `data`, which starts at byte `fromOffset` of `file` (a
    // name relative to the run dir, e.g. "events.jsonl"). The points, the run's new state and
    // the new offset (after the last complete line) are committed in one transaction, so a
    // crash at any instant neither loses nor duplicates a point. If the stored offset is not
    // `fromOffset` (another writer ingested meanwhile) nothing is applied: applied == false.
    IngestResult ingestEvents(RunId run, const QString &file, qint64 fromOffset, QByteArrayView data);
    // Metric points the caller read from a text file of the run (a command's standard output,
    // command.h: parseMetricLines), stored with the file's new offset and line count in one
    // transaction. As ingestEvents: nothing is applied when the stored offset is not `fromOffset`.
    IngestResult ingestTextMetrics(RunId run, const QString &file, qint64 fromOffset, qint64 consumed,
                                   qint64 lines, const QList<std::pair<QString, MetricPoint>> &points);
    // Ingests a run directory (events.jsonl from its stored offset, then exit.json), creating the
    // run in `experiment` on first sight. `cancel` is polled between transactions.
    struct DirectoryIngest {
        RunId run = 0;
        bool created = false;
        IngestResult events;
        bool exited = false;
        // TensorBoard event files and a W&B offline run's .wandb file in the directory
        // (runfiles.h): their points are counted in events.points too.
        qint64 filePoints = 0;
        qint64 media = 0;
        QStringList notes;  // what was skipped or ignored there, one line each
    };
    // Applies exit.json (the trainer's last word: {"state", "reason", "step"}) to the run: its
    // end status, time and the tags orrery.exit_state / orrery.exit_reason. Returns the state
    // ("completed", "failed", "preempted"), or nullopt with *error when the text is not valid.
    std::optional<QString> applyExit(RunId run, const QByteArray &exitJson, qint64 timeMs, QString *error);
    // `progress` (optional) is told, after each chunk, how far into events.jsonl the store is and
    // the file's size, in bytes.
    DirectoryIngest ingestRunDirectory(const QString &runDir, const QString &experiment,
                                       const std::function<bool()> &cancel = {},
                                       const std::function<void(qint64 offset, qint64 size)> &progress = {});
    // The phase records of a run's trainer processes, by process start (ingest keeps them from
    // `phases` events; goodput.h reads them).
    QList<ProcessPhases> runPhases(RunId run) const;

    // --- sweeps and trials -------------------------------------------------------------------
    SweepId createSweep(const Sweep &sweep);
    std::optional<Sweep> sweep(SweepId id) const;
    std::optional<Sweep> findSweep(const QString &ref) const;  // id or name
    QList<Sweep> sweeps() const;
    void setSweepState(SweepId id, const QString &state, const QString &arrayJobId = {});
    qint64 addTrial(const Trial &trial);
    void updateTrial(const Trial &trial);
    // updateTrial only while the stored attempt is still in `expectedState` (a compare-and-swap):
    // false, with nothing written, when another process changed it since it was read (a user
    // stopped or cancelled it between a follower's read and its decision).
    bool updateTrialIf(const QString &expectedState, const Trial &trial);
    QList<Trial> trials(SweepId sweep) const;  // every attempt, by index then attempt
    QList<Trial> attemptsOfRun(RunId run) const;  // a trial's attempts share its run, by attempt
    void setSweepMessage(SweepId id, const QString &message);
    // Every trial of the sweep, by index: one read of the attempts and one of the runs' latest
    // metrics (queryRuns), whatever the number of trials.
    QList<TrialSummary> trialSummaries(SweepId sweep) const;
    // The run with the best latest value of the sweep's metric, by its goal, among the runs
    // still in contention (running, queued or finished); only where none has the metric, among
    // all. A run stopped early, cancelled or failed is out: its latest value is from an earlier,
    // noisier step, and it has no final sample or checkpoint to offer.
    std::optional<RunRow> bestRun(SweepId sweep) const;

    // --- sweep leases: one follower acts on a sweep at a time ----------------------------------
    // Takes or renews the lease on `sweep` for `follower` until now + ttlMs, atomically (one
    // BEGIN IMMEDIATE transaction, so processes queue on it): granted when nobody holds it,
    // `follower` already does, or the holder's lease has expired (a crashed follower). Returns the
    // lease as it stands after the call: heldBy(follower) when granted, else the other holder's.
    // A renewal keeps acquiredMs; a lease taken anew (first, after a release or an expiry) starts
    // it again. `nowMs` 0: this machine's clock (tests pass their own).
    SweepLease acquireSweepLease(SweepId sweep, const QString &follower, qint64 ttlMs, qint64 nowMs = 0);
    // Ends the lease on `sweep` at once if `holder` still holds it (a follower known to be gone:
    // its process no longer exists), so the next acquireSweepLease takes it without waiting for
    // the TTL. Returns whether it did.
    bool expireSweepLease(SweepId sweep, const QString &holder);
    // The lease on `sweep` as stored (expired or not), or nullopt when nobody took one.
    std::optional<SweepLease> sweepLease(SweepId sweep) const;
    // Gives back `follower`'s lease on `sweep`, or on every sweep when `sweep` is 0 (a clean exit);
    // another follower's lease is left alone. Returns how many were released.
    int releaseSweepLeases(const QString &follower, SweepId sweep = 0);

    // --- suspect nodes: per cluster, the nodes kept out of submissions -------------------------
    // Adds `node` (or replaces its entry: a node that fails again gets the newer reason, source
    // and expiry). Throws for an empty cluster or node name.
    void addSuspectNode(const SuspectNode &node);
    // The cluster's suspects not expired at `nowMs` (0: this machine's clock), oldest first.
    QList<SuspectNode> suspectNodes(const QString &cluster, qint64 nowMs = 0) const;
    // Removes `node` from the cluster's list, or every node when `node` is empty; expired entries
    // of the cluster go too. Returns how many unexpired entries were removed.
    int clearSuspectNodes(const QString &cluster, const QString &node = {}, qint64 nowMs = 0);

    // --- MLflow mirror bookkeeping -----------------------------------------------------------
    struct MirrorState {
        QString remoteRunId;
        QMap<QString, qint64> lastStep;  // metric key → last step sent
        bool paramsSent = false;
    };
    MirrorState mirrorState(const QString &server, RunId run) const;
    void saveMirrorState(const QString &server, RunId run, const MirrorState &state);

    // Runs `f` in one write transaction (for callers that batch several calls).
    void writeTransaction(const std::function<void()> &f);

    struct Impl;

private:
    // One attempt at open(); throws sql::Error when SQLite answered busy where its busy handler
    // does not wait (open() then tries again).
    static std::unique_ptr<TrackingStore> openOnce(const QString &path, Mode mode);
    explicit TrackingStore(std::unique_ptr<Impl> d);
    std::unique_ptr<Impl> d;
};

// The run directories under `root` (itself included): those holding events.jsonl or exit.json,
// a W&B offline run's run-*.wandb, or TensorBoard event files (unless a directory above it is a
// run directory: its event files belong to that run), sorted. What `orrery runs ingest DIR` and
// the GUI's import take.
QStringList findRunDirectories(const QString &root);

}  // namespace orrery::core
