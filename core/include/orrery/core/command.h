// SPDX-License-Identifier: GPL-3.0-or-later
//
// Sweeping any training command (docs/sweeps.md "Any training command"): a spec's `command`
// rendered into one trial's argv and environment, and metrics read from a program's standard
// output by regular expressions (as SageMaker's metric_definitions). Pure functions over text;
// the executors carry the result out (core/localexecutor.h, remote/slurmexecutor.h) and the
// runner feeds the output through parseMetricLines.
//
// A rendered value is always one argv element or one environment value: nothing is ever handed to
// a shell, so a parameter value such as `$(rm -rf ~)` reaches the program as those bytes.
#pragma once

#include "orrery/core/metricseries.h"

#include <QByteArrayView>
#include <QHash>
#include <QList>
#include <QRegularExpression>
#include <QString>
#include <QStringList>

#include <optional>
#include <utility>

namespace orrery::core {

struct SweepSpec;
using TrialParams = QList<std::pair<QString, QVariant>>;

// One metric read from standard output: each line the regex matches gives a point, the value from
// its first capture group (a number, or nan/inf as Python prints them). The step comes from the
// step regex's first group on the same line; where there is none, or it does not match, the
// point takes the step after the metric's previous one.
struct MetricRule {
    QString name;  // train/loss
    QString regex;
    QString stepRegex;  // may be empty
    int line = 0;  // in the spec file
};

// Sample files a program writes, found by pattern (`artifacts:` in a spec): each file under the
// run dir whose path relative to it matches `glob` (QRegularExpression::wildcardToRegularExpression,
// `*` within one directory) becomes a sample artifact, a video or an image by its extension, at the
// step `stepRegex`'s first group finds in that path (none: no step, not shown by step).
struct ArtifactRule {
    QString glob;  // samples/*.mp4
    QString stepRegex;  // step_(\d+)
    int line = 0;
};

// A spec's own training command.
struct CommandSpec {
    // Each element a template: {{parameter key}}, {{run_dir}}, {{trial}}, {{attempt}},
    // {{sweep}}, {{experiment}}, {{params_file}}, {{resume}}, {{config}} (a config-file sweep's
    // copy in the run dir); and W&B's macros ${env}, ${interpreter}, ${program}, ${args},
    // ${args_no_hyphens}, ${args_no_boolean_flags}, ${args_no_equals}, ${args_append_hydra},
    // ${args_override_hydra}, ${args_json}, ${args_json_file} (as whole elements), rendered byte
    // for byte as W&B's agent renders them (pyvalue.h).
    QStringList argv;
    // The directory it runs in, as written. Here: relative to the spec file's directory, which is
    // the default. On a cluster: relative to the home directory, which is the default.
    QString workdir;
    QList<MetricRule> metrics;
    // TensorBoard event files are read from under the run dir, or from this directory (relative
    // to the run dir, or absolute) when the spec names one: `tensorboard: {dir: tb}`.
    QString tensorboardDir;
    QList<ArtifactRule> artifacts;
    // `launch:` how many processes a trial's nodes run (docs/sweeps.md "Launchers"): per_gpu, one
    // per GPU (1 on a CPU node), each a rank of its own; per_node, one per node, for launchers that
    // start their own per-GPU processes (torchrun --nproc_per_node, accelerate launch).
    enum class Launch { PerGpu, PerNode };
    Launch launch = Launch::PerGpu;
    bool launchWritten = false;  // `launch:` is in the spec (it asks for a distributed job)
    // `distributed_env:` whether the processes get the variables of a distributed job (RANK,
    // WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, NODE_RANK, NNODES). Auto: only where the
    // trial is several processes or `launch:` is written; a trial of one process gets what
    // `python train.py` or `wandb agent` would give (many scripts take a set RANK to mean
    // "torchrun started me"). docs/sweeps.md "Launchers".
    enum class DistributedEnv { Auto, Always, Never };
    DistributedEnv distributedEnv = DistributedEnv::Auto;
    // `env:` variables of the user's own for every process of a trial (WANDB_MODE: offline),
    // in spec order. Values are data: each one environment value, never read by a shell.
    QList<std::pair<QString, QString>> env;
    // `code:` the program's directory frozen at submission, each trial working in a directory of
    // its own (docs/sweeps.md "Each trial in its own directory"). snapshot false: every trial runs
    // in `workdir` itself, as before.
    struct Code {
        bool snapshot = true;
        QStringList link;  // more entries to link (shared) instead of copying
        QStringList fresh;  // more entries each trial starts without (outputs of a run)
    };
    Code code;
    // `capture:` W&B calls in a Python program are recorded into events.jsonl (the capture module
    // on PYTHONPATH, resources/python/orrery_capture/); false turns that off.
    bool capture = true;
    int line = 0;
};

// A word of a command with placeholders only the node it runs on can fill ({{node_rank}},
// {{master_addr}}, {{master_port}}): its pieces, text and placeholder names alternating, text
// first and last (possibly empty). The text is already rendered, so a parameter value that holds
// `{{node_rank}}` stays those bytes.
struct NodeWord {
    int index = 0;  // in RenderedCommand::argv
    QStringList pieces;
};

// What a command trial runs: its argv and environment, and where. Built by renderCommand.
struct RenderedCommand {
    QStringList argv;  // node-time placeholders shown as {{name}} (fillNodeWords fills them)
    QList<std::pair<QString, QString>> env;  // ORRERY_* variables in a fixed order, then the spec's `env:`
    QString workdir;  // as written in the spec (a cluster resolves it against the home directory)
    QString localWorkdir;  // absolute: where it runs on this machine
    QList<NodeWord> nodeWords;
    bool perNode = false;  // CommandSpec::Launch::PerNode
    bool capture = true;  // the W&B capture module goes on PYTHONPATH
    // The processes get RANK, WORLD_SIZE, ... (CommandSpec::distributedEnv, resolved for the
    // trial's layout); ORRERY_DISTRIBUTED says the same to the sbatch script.
    bool distributed = false;
    // Set where the program's directory is frozen at submission (`code.snapshot`, the default):
    // the executor runs the trial in a directory of its own made from the sweep's snapshot
    // (codesnapshot.h). Unset: the trial runs in `workdir` itself.
    std::optional<CommandSpec::Code> code;
};

// Who the trial is: what the builtin placeholders and ORRERY_* variables say.
struct CommandContext {
    QString runDir;
    QString sweep, experiment;
    int trial = 0, attempt = 0;
};

// The run dir's file of a command trial's params as W&B's agent writes it for wandb.init()
// (`wandb_version: 1`, then `key: {value: ...}`), named by WANDB_SWEEP_PARAM_PATH (both set by
// sweepplan.h taskLaunch).
inline constexpr char kWandbSweepParamsFile[] = "wandb-sweep-params.yaml";

// Whether a trial of this spec runs as a distributed job (CommandSpec::distributedEnv resolved):
// Always/Never as written; Auto when its layout is several processes or `launch:` is written.
bool commandIsDistributed(const SweepSpec &spec);
// The variables of a distributed job, which only such a trial's processes get.
QStringList distributedEnvNames();

// The builtin placeholders, in the order docs list them.
QStringList commandBuiltins();
// The builtins only the node a process runs on knows: node_rank, master_addr, master_port.
QStringList nodeBuiltins();
// argv with its node words filled from `values` (node_rank, master_addr, master_port).
QStringList fillNodeWords(const RenderedCommand &command, const QHash<QString, QString> &values);
// The environment variable of a parameter: ORRERY_PARAM_ and the key in capitals, every character
// other than a letter or digit made '_' (optim.lr → ORRERY_PARAM_OPTIM_LR).
QString paramEnvName(const QString &key);
// The placeholders ({{name}}) an argv element uses, trimmed; `malformed` is set for a '{{' without
// its '}}'.
QStringList placeholdersIn(const QString &element, bool *malformed = nullptr);

// Words as a POSIX shell would need them to read them back (for showing a command; Orrery never
// hands one to a shell): plain words as they are, others in single quotes.
QString displayCommand(const QStringList &words);

// The command of one trial. The spec must have been validated (parseSweepSpec): every placeholder
// is known. ORRERY_RESUME is 1 on a trial's second attempt on (its checkpoint in the run dir).
RenderedCommand renderCommand(const SweepSpec &spec, const TrialParams &params, const CommandContext &ctx);

// The points a chunk of standard output gives. Only whole lines are read: `consumed` is the bytes
// up to and including the last '\n' (the rest is read again with what follows). `lastStep` holds
// each metric's last step (from the store; updated here), for points whose line gives none.
struct StdoutMetrics {
    QList<std::pair<QString, MetricPoint>> points;
    qint64 consumed = 0;
    qint64 lines = 0;
};
struct CompiledMetricRule {
    QString name;
    QRegularExpression regex, step;  // step: invalid pattern when there is none
};
QList<CompiledMetricRule> compileMetricRules(const QList<MetricRule> &rules);
StdoutMetrics parseMetricLines(QByteArrayView data, const QList<CompiledMetricRule> &rules,
                               QHash<QString, qint64> &lastStep, qint64 timestampMs);

}  // namespace orrery::core
