// SPDX-License-Identifier: GPL-3.0-or-later
//
// The sweep spec (ARCHITECTURE.md "Sweep spec (YAML)", docs/sweeps.md): parsing, and validation
// of every parameter against the trainer's config schema before anything is submitted.
// Pure functions over text; yaml-cpp stays inside core (no YAML type in this header).
#pragma once

#include "orrery/core/command.h"
#include "orrery/core/error.h"
#include "orrery/core/metricgoal.h"
#include "orrery/core/notice.h"
#include "orrery/core/pyvalue.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <optional>
#include <utility>

namespace orrery::core {

// One key of `orrery-train --print-schema --json`.
struct ConfigKey {
    enum class Type { Int, Float, Bool, String };
    QString key;  // dotted: optim.lr
    Type type = Type::String;
    QVariant defaultValue;
    std::optional<double> min, max;  // numbers only; inclusive
    QStringList choices;  // strings only; empty: any
    QString meaning;
};
QString toString(ConfigKey::Type type);

// The trainer's config schema.
class TrainerSchema {
public:
    // Parses `--print-schema --json` output, or says why it is not a schema.
    static Parsed<TrainerSchema> fromJson(const QByteArray &json);
    // Runs `<trainer> --print-schema --json` (a local process, no shell). A problem when the
    // trainer cannot be run or prints something else.
    static Parsed<TrainerSchema> fromTrainer(const QString &trainer);
    // What `<trainer> --print-schema --json` printed (fromTrainer() without the parse).
    static Parsed<QByteArray> printedBy(const QString &trainer);
    // The local trainer's (trainerExecutable()), else the schema an installation without one
    // ships (<prefix>/share/orrery/trainer-schema.json, written at build time from the trainer
    // the package's source builds): a laptop that only submits to clusters needs no LibTorch.
    // The trainer's answer is kept in the cache directory (`$ORRERY_CACHE_DIR`, else
    // ~/.cache/orrery) beside the program's path, size and modification time, and asked again
    // when one of them changes: each ask loads LibTorch (~0.45 CPU-seconds).
    static Parsed<TrainerSchema> load();

    const QList<ConfigKey> &keys() const { return m_keys; }
    const ConfigKey *find(const QString &key) const;
    // The known key nearest to `key` by edit distance (for "did you mean"), empty if none is close.
    QString closest(const QString &key) const;

private:
    QList<ConfigKey> m_keys;
};

// A W&B parameter distribution (https://docs.wandb.ai/guides/sweeps/sweep-config-keys).
enum class Distribution {
    Constant,  // value
    Categorical,  // values [+ probabilities]
    Uniform,  // min, max
    IntUniform,  // min, max (integers)
    QUniform,  // min, max, q
    LogUniform,  // min, max are natural logs of the bounds (as W&B)
    LogUniformValues,  // min, max are the bounds
    QLogUniform,  // as LogUniform, rounded to q
    QLogUniformValues,  // as LogUniformValues, rounded to q
    Normal,  // mu, sigma
    QNormal,  // mu, sigma, q
    // W&B's (github.com/wandb/sweeps src/sweeps/params.py):
    InvLogUniform,  // min, max bound ln(1/x): x = exp(-U(min, max))
    InvLogUniformValues,  // min, max are the bounds of x; ln(1/x) uniform
    LogNormal,  // mu, sigma of ln(x): x = exp(N(mu, sigma))
    QLogNormal,  // as LogNormal, rounded to q
};
constexpr Distribution kLastDistribution = Distribution::QLogNormal;
QString toString(Distribution d);  // W&B's name
std::optional<Distribution> distributionFromString(const QString &name);
// Rounded to q (the q* distributions): what the spec's checks and the searches both ask.
constexpr bool isQuantized(Distribution d)
{
    return d == Distribution::QUniform || d == Distribution::QLogUniform ||
        d == Distribution::QLogUniformValues || d == Distribution::QNormal || d == Distribution::QLogNormal;
}
// Drawn from a normal (mu, sigma), of the value or of its log.
constexpr bool isNormal(Distribution d)
{
    return d == Distribution::Normal || d == Distribution::QNormal || d == Distribution::LogNormal ||
        d == Distribution::QLogNormal;
}

// One swept parameter, typed by the schema: values hold qint64 / double / bool / QString.
struct ParamSpec {
    QString key;  // dotted trainer key
    int line = 0;  // 1-based line of the key in the spec file
    ConfigKey::Type type = ConfigKey::Type::String;
    Distribution distribution = Distribution::Constant;
    QVariantList values;  // Constant: one; Categorical: all
    QList<double> probabilities;  // Categorical: empty (uniform) or one per value, summing to 1
    double min = 0, max = 0;  // as written (log_uniform: natural logs)
    double mu = 0, sigma = 1;
    double q = 1;
    // W&B's nesting of the key: ["optimizer", "lr"] for `optimizer: {parameters: {lr: ...}}`
    // (key "optimizer.lr"), where ${args}, ${args_json} and wandb.config see a dict; empty for a
    // key written as it is (a dotted `optim.lr:` is one flat name to W&B).
    QStringList wandbPath;
    // Bounds of the key (from the schema) that samples are clipped to (normal distributions).
    double lowerBound = -1e300, upperBound = 1e300;

    bool isDistribution() const
    {
        return distribution != Distribution::Constant && distribution != Distribution::Categorical;
    }
};

enum class SearchMethod { Grid, Random, Bayes };
QString toString(SearchMethod m);

struct EarlyTerminate {
    enum class Type { Hyperband, Median };
    Type type = Type::Hyperband;
    // hyperband: rungs at min_iter * eta^k, or (max_iter, s) → max_iter / eta^k for k = 1..s.
    int minIter = 0, maxIter = 0, s = 0;
    double eta = 3;
    // hyperband `strict: true` (W&B's hyperband_stopping.py): a trial is judged by its value at
    // the rung, not by its best value up to it (earlystop.cpp); stops more trials.
    bool strict = false;
    // median: judge from this step on (warm-up), with at least this many other trials there.
    qint64 minStep = 0;
    int minTrials = 3;
};

// What each array task asks Slurm for. Empty strings: the cluster profile's default or Slurm's.
struct SweepResources {
    int nodes = 1;
    int gpusPerNode = 0;  // 0: CPU, one task per node
    int cpusPerTask = 1;
    QString mem;  // Slurm syntax: 16G
    QString time;  // Slurm syntax: 02:00:00
    QString partition;
    QString account;
};

// What one trial is allocated over all its nodes: GPUs, and CPUs (one task per GPU, else one per
// node, each with cpus_per_task).
int allocatedGpus(const SweepResources &r);
int allocatedCpus(const SweepResources &r);

using TrialParams = QList<std::pair<QString, QVariant>>;  // in the spec's parameter order

// One problem found in a spec: file:line: message (line 0: the file as a whole).
// Orrery's `health_check:` (docs/sweeps.md "Health check"): `orrery-train --health-check` on
// every node of an attempt before its program starts. `true`/`false`, or a mapping of
// thresholds (which turns it on). Unset: on for the bundled trainer, off for a command.
struct HealthCheckSpec {
    bool enabled = false;
    // The trainer's threshold names (healthCheckThresholdNames) and values, in spec order.
    QList<std::pair<QString, double>> thresholds;
    int line = 0;  // the key's line; 0: not in the spec (the default applies)
};
// The names a `health_check:` mapping takes (what `orrery-train --health-check --set` takes).
QStringList healthCheckThresholdNames();
// The trainer's words for it: `--health-check --set NAME=VALUE ...`; empty when it is off.
QStringList healthCheckArgs(const HealthCheckSpec &h);

struct SpecError {
    QString file;
    int line = 0;
    QString message;
    QString toString() const;
};

// `notify:`'s value: one word that is an http(s) URL, else a command. A single string is split
// into words as a shell splits them (quotes and backslashes; nothing is expanded and no shell
// runs). A problem for an empty command, a malformed URL or unbalanced quotes.
Parsed<NotifyTarget> parseNotifyTarget(const QStringList &words);
// A hang_timeout such as "90s", "10m", "1h", "1h30m" or a plain number of seconds, in ms;
// a problem when it is not one (or not positive).
Parsed<qint64> parseHangDuration(const QString &text);

struct SweepSpec {
    QString file;  // as given (for messages)
    QString name;
    QString experiment;
    QString trainerConfig;  // base config, resolved against the spec file's directory; may be empty
    // A program of the user's instead of the bundled trainer (docs/sweeps.md "Any training
    // command"): its parameters are then any keys, typed by their values, not the trainer's.
    std::optional<CommandSpec> command;
    QString program;  // W&B's `program`, for ${program} in the command
    // Config-file sweeps (docs/sweeps.md): the program's own YAML or JSON config, each trial's
    // copy with its parameters set at their dotted paths (configfile.h), written into its run
    // dir under the base's file name and named by {{config}}. Its text travels as the plan's
    // baseConfig (sweepplan.h), stored with the sweep.
    struct ConfigFile {
        QString base;  // as written; parseSweepSpecAt resolves it against the spec's directory
        QString fileName;  // what it is called in the run dir: the base's file name
        bool allowNewKeys = false;  // a parameter the base lacks is added, not refused
        int line = 0;
    };
    std::optional<ConfigFile> configFile;
    SearchMethod method = SearchMethod::Grid;
    QString metricName;
    Goal goal = Goal::Minimize;
    // W&B's metric.target: once a finished trial reached it, no new trial is launched
    // (sweeprules.h targetReached).
    std::optional<double> metricTarget;
    QList<ParamSpec> parameters;
    int runCap = 0;  // 0: no cap (grid: all combinations; random/bayes need one)
    std::optional<EarlyTerminate> earlyTerminate;
    SweepResources resources;
    int maxConcurrent = 1;
    int retries = 0;
    quint64 seed = 0;  // Orrery's addition: seeds random and bayes suggestions
    // Orrery's: `budget: {gpu_hours: N}`: no trial is launched that could take the sweep past N
    // GPU-hours (usage.h budgetState; needs resources.time). nullopt: no budget.
    std::optional<double> budgetGpuHours;
    // Orrery's `hang_timeout`: how long a running attempt may show no progress before it is ended
    // and resumed (sweeprules.h hangLimits). nullopt: `auto`, derived from the attempt's own pace.
    std::optional<qint64> hangTimeoutMs;
    // Orrery's `notify`: where the follower sends the sweep's notices (notice.h). nullopt: nowhere.
    std::optional<NotifyTarget> notify;
    // Keys the spec holds that Orrery accepts and does not act on (W&B's `project`, `entity`,
    // `description`, `job`, `scheduler`, ...): one line each, "FILE:LINE: ...", for `sweep plan`
    // and `submit` to show (never an error, never silent).
    QList<SpecError> warnings;
    HealthCheckSpec healthCheck;  // resolved: enabled is the default where the spec has no key
};

struct SpecParse {
    std::optional<SweepSpec> spec;  // set when errors is empty
    QList<SpecError> errors;  // every problem found, in file order
};

// Parses and validates a spec against the schema. Every value is data: hostile names and values
// are kept verbatim or refused with a message, never interpreted. Non-UTF-8 text is refused.
SpecParse parseSweepSpec(const QByteArray &yaml, const QString &file, const TrainerSchema &schema);
// Whether a spec sweeps the user's own program (a top-level `command`, or W&B's `program` alone)
// rather than the bundled trainer, as parseSweepSpec decides it; needs no schema (a stored spec's
// text: only the trainer's sweeps need orrery-train to type their params). False for text that
// is not YAML.
bool specRunsOwnCommand(const QByteArray &yaml);
// W&B's `--count N` (`wandb agent --count`): the spec's text with run_cap at most N (added where
// it has none, lowered where it is higher), so the stored spec says what ran. A problem where
// the text cannot be edited (a spec written as one flow mapping).
Parsed<QByteArray> withRunCap(const QByteArray &yaml, int count);
SpecParse loadSweepSpec(const QString &path, const TrainerSchema &schema);
// The text of a spec that is (or will be saved) at `path`, as loadSweepSpec reads it: a relative
// trainer.config is taken relative to the file's directory and must exist (the GUI's launcher
// validates what is typed before it is saved).
SpecParse parseSweepSpecAt(const QByteArray &yaml, const QString &path, const TrainerSchema &schema);

// A parameter value as YAML/CLI text (floats round-trip exactly).
QString formatParamValue(const QVariant &value);

// The trial's resolved config: the base config YAML (may be empty) with `params` set as nested
// keys (optim.lr → optim: {lr: ...}), replacing what the base had. Throws std::runtime_error
// naming the base file and line when the base is not a YAML mapping.
QByteArray renderTrialConfig(const QByteArray &baseYaml, const QString &baseFile, const TrialParams &params);

// A trial's params file (trial.yaml): the trainer's resolved config (renderTrialConfig), or for
// a command the params alone as nested YAML written as PyYAML writes them (`1.0e-05`, `true`,
// `null`), so a Python program's yaml.safe_load reads back the very values.
QByteArray trialParamsFile(const SweepSpec &spec, const QByteArray &baseYaml, const TrialParams &params);
// A trial's params nested: by every dotted key (optim.lr → optim: {lr: ...}: the params file),
// or `asWandb` only where W&B nests them (ParamSpec::wandbPath: ${args_json}, ${args}).
PyDict nestParams(const SweepSpec &spec, const TrialParams &params, bool asWandb);
// The params as W&B's agent writes them for wandb.init() (config_util.save_config_file_from_dict:
// `wandb_version: 1`, then each top-level name `{value: ...}`, nested groups as dicts), so that
// wandb.config holds what it holds under `wandb agent`.
QByteArray wandbSweepParamsFile(const SweepSpec &spec, const TrialParams &params);

// The trainer's own verdict on resolved trial configs (`orrery-train --check-config`): its
// cross-key rules (data.size divisible per level, channels a multiple of 8) that no single
// parameter shows. Runs the checks as local processes, as many at once as there are cores;
// returns one entry per config:
// empty when accepted, else the trainer's message. Each check loads LibTorch (about 0.5 s), so
// callers check a sample of a large grid.
QStringList checkTrialConfigs(const QString &trainer, const QList<QByteArray> &configs);

}  // namespace orrery::core
