// SPDX-License-Identifier: GPL-3.0-or-later
// The sweep spec parser: table-driven, each row named after the case it pins. Errors must name
// the line and what is wrong; hostile text is data (kept verbatim) or refused, never interpreted.
#include "sweepsupport.h"
#include "testsupport.h"

#include "orrery/core/error.h"
#include "orrery/core/sweepspec.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QScopeGuard>
#include <QTemporaryDir>

#include <memory>
#include <type_traits>
#include <utility>

#include <yaml-cpp/yaml.h>

using namespace orrery::core;

namespace {

const TrainerSchema &schema()
{
    static const TrainerSchema s = orrery::test::trainerSchema();
    return s;
}

SpecParse parse(const QByteArray &yaml)
{
    return parseSweepSpec(yaml, QStringLiteral("sweep.yaml"), schema());
}

QString allErrors(const SpecParse &p)
{
    QStringList lines;
    for (const SpecError &e : p.errors)
        lines << e.toString();
    return lines.join(QLatin1Char('\n'));
}

// A parser in miniature, of a move-only value: `return value;` and `return Problem{...};` both
// make its Parsed.
Parsed<std::unique_ptr<int>> positive(int n)
{
    if (n <= 0)
        return Problem{QStringLiteral("%1 is not positive").arg(n)};
    return std::make_unique<int>(n);
}

}  // namespace

class TestSweepSpec : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void architectureExample()
    {
        const SpecParse p = parse(R"(name: lr-vs-temporal-depth
experiment: moving-shapes
method: grid            # grid | random | bayes
metric: {name: eval/loss, goal: minimize}
parameters:
  optim.lr: {values: [1e-4, 3e-4, 1e-3]}
  model.temporal_layers: {values: [1, 2]}
  seed: {value: 7}
run_cap: 24
early_terminate: {type: hyperband, min_iter: 3, eta: 3}
resources: {nodes: 1, gpus_per_node: 1, cpus_per_task: 8, time: "02:00:00", partition: gpu}
max_concurrent: 4
retries: 2
)");
        QVERIFY2(p.spec, qPrintable(allErrors(p)));
        const SweepSpec &s = *p.spec;
        QCOMPARE(s.name, QStringLiteral("lr-vs-temporal-depth"));
        QCOMPARE(s.experiment, QStringLiteral("moving-shapes"));
        QVERIFY(s.method == SearchMethod::Grid);
        QCOMPARE(s.metricName, QStringLiteral("eval/loss"));
        QVERIFY(s.goal == Goal::Minimize);
        QCOMPARE(s.parameters.size(), 3);
        QCOMPARE(s.parameters[0].key, QStringLiteral("optim.lr"));
        QCOMPARE(s.parameters[0].line, 6);
        QVERIFY(s.parameters[0].distribution == Distribution::Categorical);
        QCOMPARE(s.parameters[0].values, (QVariantList{1e-4, 3e-4, 1e-3}));
        QCOMPARE(s.parameters[1].values, (QVariantList{qint64(1), qint64(2)}));
        QVERIFY(s.parameters[2].distribution == Distribution::Constant);
        QCOMPARE(s.parameters[2].values, (QVariantList{qint64(7)}));
        QCOMPARE(s.runCap, 24);
        QVERIFY(s.earlyTerminate);
        QCOMPARE(s.earlyTerminate->minIter, 3);
        QCOMPARE(s.earlyTerminate->eta, 3.0);
        QCOMPARE(s.resources.gpusPerNode, 1);
        QCOMPARE(s.resources.cpusPerTask, 8);
        QCOMPARE(s.resources.time, QStringLiteral("02:00:00"));
        QCOMPARE(s.resources.partition, QStringLiteral("gpu"));
        QCOMPARE(s.maxConcurrent, 4);
        QCOMPARE(s.retries, 2);
    }

    void distributions_data()
    {
        QTest::addColumn<QByteArray>("param");
        QTest::addColumn<int>("distribution");
        QTest::addColumn<double>("min");
        QTest::addColumn<double>("max");
        const auto row = [](const char *name, const char *param, Distribution d, double lo, double hi) {
            QTest::newRow(name) << QByteArray(param) << int(d) << lo << hi;
        };
        row("uniform", "optim.lr: {distribution: uniform, min: 0.0001, max: 0.01}", Distribution::Uniform,
            1e-4, 1e-2);
        row("min-max-on-float-key-is-uniform", "optim.lr: {min: 0.0001, max: 0.01}", Distribution::Uniform,
            1e-4, 1e-2);
        row("min-max-on-int-key-is-int_uniform", "model.temporal_layers: {min: 0, max: 4}",
            Distribution::IntUniform, 0, 4);
        row("int_uniform", "model.temporal_layers: {distribution: int_uniform, min: 1, max: 3}",
            Distribution::IntUniform, 1, 3);
        row("log_uniform_values", "optim.lr: {distribution: log_uniform_values, min: 1e-5, max: 1e-2}",
            Distribution::LogUniformValues, 1e-5, 1e-2);
        row("log_uniform-bounds-are-natural-logs",
            "optim.lr: {distribution: log_uniform, min: -11.5, max: -4.6}", Distribution::LogUniform, -11.5,
            -4.6);
        row("q_uniform", "optim.weight_decay: {distribution: q_uniform, min: 0, max: 1, q: 0.1}",
            Distribution::QUniform, 0, 1);
        row("q_uniform-on-int-key", "train.batch_size: {distribution: q_uniform, min: 4, max: 32, q: 4}",
            Distribution::QUniform, 4, 32);
        row("q_log_uniform_values",
            "train.batch_size: {distribution: q_log_uniform_values, min: 2, max: 64, q: 2}",
            Distribution::QLogUniformValues, 2, 64);
        row("normal", "optim.beta1: {distribution: normal, mu: 0.9, sigma: 0.02}", Distribution::Normal, 0,
            0);
        // W&B's other distributions (its sweeps' params.py).
        row("inv_log_uniform-bounds-ln-of-1-over-x",
            "optim.lr: {distribution: inv_log_uniform, min: 4.6, max: 11.5}", Distribution::InvLogUniform,
            4.6, 11.5);
        row("inv_log_uniform_values",
            "optim.lr: {distribution: inv_log_uniform_values, min: 1.0e-5, max: 0.01}",
            Distribution::InvLogUniformValues, 1e-5, 1e-2);
        row("log_normal", "optim.lr: {distribution: log_normal, mu: -7, sigma: 1}", Distribution::LogNormal,
            0, 0);
        row("q_log_normal", "train.batch_size: {distribution: q_log_normal, mu: 3, sigma: 0.5, q: 2}",
            Distribution::QLogNormal, 0, 0);
        row("categorical-with-probabilities",
            "train.precision: {distribution: categorical, values: [fp32, bf16], probabilities: [0.25, 0.75]}",
            Distribution::Categorical, 0, 0);
    }
    void distributions()
    {
        QFETCH(QByteArray, param);
        QFETCH(int, distribution);
        QFETCH(double, min);
        QFETCH(double, max);
        const SpecParse p = parse("method: random\nrun_cap: 4\nparameters:\n  " + param + "\n");
        QVERIFY2(p.spec, qPrintable(allErrors(p)));
        const ParamSpec &ps = p.spec->parameters.value(0);
        QCOMPARE(int(ps.distribution), distribution);
        if (ps.isDistribution() && ps.distribution != Distribution::Normal &&
            ps.distribution != Distribution::LogNormal && ps.distribution != Distribution::QLogNormal) {
            QCOMPARE(ps.min, min);
            QCOMPARE(ps.max, max);
        }
    }

    // Each bad spec: the line the error must name and a part of its message.
    void errors_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("message");
        const auto row = [](const char *name, const char *yaml, int line, const char *message) {
            QTest::newRow(name) << QByteArray(yaml) << line << QString::fromUtf8(message);
        };
        row("malformed-yaml-unclosed-flow-map",
            "method: grid\nparameters:\n  optim.lr: {values: [1, 2]\nrun_cap: 3\n", 4, "malformed YAML");
        row("malformed-yaml-bad-indentation",
            "method: grid\nparameters:\n  optim.lr: {values: [1e-4]}\n bad: 1\n", 4, "malformed YAML");
        row("not-a-mapping", "- a\n- b\n", 1, "a sweep spec is a YAML mapping");
        row("empty-file", "", 0, "a sweep spec is a YAML mapping");
        row("method-missing", "parameters:\n  optim.lr: {values: [1e-4]}\n", 1, "`method` is missing");
        row("method-misspelt", "method: bayse\nrun_cap: 3\nparameters:\n  optim.lr: {values: [1e-4]}\n", 1,
            "did you mean 'bayes'?");
        row("unknown-top-level-key", "method: grid\nrun_cpa: 3\nparameters:\n  optim.lr: {values: [1e-4]}\n",
            2, "unknown key 'run_cpa' (did you mean 'run_cap'?)");
        row("unknown-trainer-key-suggests", "method: grid\nparameters:\n  optim.lrr: {values: [1e-4]}\n", 3,
            "unknown trainer key 'optim.lrr' (did you mean 'optim.lr'?)");
        row("unknown-trainer-key-leaf-only", "method: grid\nparameters:\n  lr: {values: [1e-4]}\n", 3,
            "(did you mean 'optim.lr'?)");
        row("unknown-parameter-field", "method: grid\nparameters:\n  optim.lr: {valeus: [1e-4]}\n", 3,
            "unknown key 'valeus' (did you mean 'values'?)");
        row("value-out-of-range", "method: grid\nparameters:\n  optim.lr: {values: [1e-4, 99]}\n", 3,
            "optim.lr = '99': must be between 0 and 10");
        row("int-key-given-float", "method: grid\nparameters:\n  model.temporal_layers: {values: [1, 1.5]}\n",
            3, "expected an integer");
        row("string-key-not-a-choice", "method: grid\nparameters:\n  train.precision: {values: [fp16]}\n", 3,
            "must be one of auto, fp32, bf16");
        row("bool-key-given-text", "method: grid\nparameters:\n  model.reference_frame: {value: maybe}\n", 3,
            "expected true or false");
        row("min-above-max",
            "method: random\nrun_cap: 2\nparameters:\n  optim.lr:\n    distribution: uniform\n    min: 0.1\n "
            "   "
            "max: 0.01\n",
            6, "min (0.1) must be below max (0.01)");
        row("range-does-not-fit-key",
            "method: random\nrun_cap: 2\nparameters:\n  optim.lr: {min: 0.001, max: 50}\n", 4,
            "does not fit the key");
        row("log-uniform-range-does-not-fit",
            "method: random\nrun_cap: 2\nparameters:\n  optim.lr: {distribution: log_uniform, min: -5, max: "
            "5}\n",
            4, "does not fit the key");
        row("log_uniform_values-needs-positive-min",
            "method: random\nrun_cap: 2\nparameters:\n  optim.weight_decay: {distribution: "
            "log_uniform_values, min: 0, "
            "max: 1}\n",
            4, "needs min > 0");
        row("float-distribution-on-int-key",
            "method: random\nrun_cap: 2\nparameters:\n  model.temporal_layers: {distribution: uniform, min: "
            "0, max: "
            "4}\n",
            4, "gives non-integer values");
        row("distribution-on-string-key",
            "method: random\nrun_cap: 2\nparameters:\n  train.precision: {distribution: uniform, min: 0, "
            "max: 1}\n",
            4, "use `value` or `values`");
        row("distribution-in-grid", "method: grid\nparameters:\n  optim.lr: {min: 0.001, max: 0.01}\n", 3,
            "distribution uniform in a grid sweep");
        row("unknown-distribution",
            "method: random\nrun_cap: 2\nparameters:\n  optim.lr: {distribution: loguniform, min: 0.1, max: "
            "1}\n",
            4, "did you mean 'log_uniform'?");
        row("field-not-used-by-distribution",
            "method: random\nrun_cap: 2\nparameters:\n  optim.lr: {distribution: uniform, min: 0, max: 1, "
            "mu: 3}\n",
            4, "`mu` is not used by distribution uniform");
        row("probabilities-do-not-sum-to-one",
            "method: random\nrun_cap: 2\nparameters:\n  train.precision: {values: [fp32, bf16], "
            "probabilities: [0.5, "
            "0.6]}\n",
            4, "sum to 1.1, not 1");
        row("probabilities-count-mismatch",
            "method: random\nrun_cap: 2\nparameters:\n  train.precision: {values: [fp32, bf16], "
            "probabilities: [1]}\n",
            4, "a list of 2 numbers");
        row("random-without-run_cap", "method: random\nparameters:\n  optim.lr: {min: 0.001, max: 0.01}\n", 1,
            "needs run_cap");
        row("bayes-without-metric",
            "method: bayes\nrun_cap: 5\nparameters:\n  optim.lr: {min: 0.001, max: 0.01}\n", 1,
            "needs `metric");
        row("bad-goal",
            "method: grid\nmetric: {name: eval/loss, goal: lowest}\nparameters:\n  seed: {value: 1}\n", 2,
            "expected minimize or maximize");
        row("parameter-given-twice", "method: grid\nparameters:\n  seed: {value: 1}\n  seed: {value: 2}\n", 4,
            "is given twice");
        row("parameter-not-a-mapping", "method: grid\nparameters:\n  seed: 7\n", 3, "expected a mapping");
        row("empty-values", "method: grid\nparameters:\n  seed: {values: []}\n", 3, "non-empty list");
        row("hyperband-without-min_iter",
            "method: grid\nmetric: {name: eval/loss}\nearly_terminate: {type: hyperband}\nparameters:\n  "
            "seed: {value: "
            "1}\n",
            3, "hyperband needs min_iter");
        row("eta-not-above-one",
            "method: grid\nmetric: {name: eval/loss}\nearly_terminate: {type: hyperband, min_iter: 1, eta: "
            "1}\nparameters:\n  seed: {value: 1}\n",
            3, "eta must be greater than 1");
        row("negative-retries", "method: grid\nretries: -1\nparameters:\n  seed: {value: 1}\n", 2,
            "expected an integer >= 0");
        row("zero-max-concurrent", "method: grid\nmax_concurrent: 0\nparameters:\n  seed: {value: 1}\n", 2,
            "expected an integer >= 1");
        row("resources-unknown-key", "method: grid\nresources: {gpus: 2}\nparameters:\n  seed: {value: 1}\n",
            2, "did you mean 'gpus_per_node'?");
        row("newline-in-partition",
            "method: grid\nresources: {partition: \"gpu\\n#SBATCH --uid=0\"}\nparameters:\n  seed: {value: "
            "1}\n",
            2, "must not contain control characters");
        row("newline-in-name", "name: \"a\\nb\"\nmethod: grid\nparameters:\n  seed: {value: 1}\n", 1,
            "'a\\nb' must not contain control characters");
        row("slash-in-experiment", "experiment: ../../etc\nmethod: grid\nparameters:\n  seed: {value: 1}\n",
            1, "must not contain '/'");
        row("non-utf8-value", "method: grid\nparameters:\n  data.kind: {value: \"\xff\xfe\"}\n", 3,
            "not valid UTF-8");
        row("non-utf8-key", "method: grid\nparameters:\n  \xff\xfe: {value: 1}\n", 3, "not valid UTF-8");
        row("nul-in-value", "method: grid\nparameters:\n  data.kind: {value: \"a\\0b\"}\n", 3, "NUL");
        row("dollar-paren-key-is-just-unknown",
            "method: grid\nparameters:\n  \"$(touch /tmp/x)\": {value: 1}\n", 3,
            "unknown trainer key '$(touch /tmp/x)'");
        // A sweep of the user's own command (docs/sweeps.md "Any training command").
        row("command-launch-unknown-mode",
            "command: [torchrun, t.py]\nmethod: grid\nlaunch: per_task\nparameters:\n  a: {value: 1}\n", 3,
            "launch 'per_task': expected per_gpu (one process per GPU, each a rank) or per_node");
        row("command-capture-not-a-bool",
            "command: [python, t.py]\nmethod: grid\nparameters:\n  a: {value: 1}\ncapture: maybe\n", 5,
            "capture: expected true or false");
        row("command-distributed-env-unknown",
            "command: [python, t.py]\nmethod: grid\nparameters:\n  a: {value: 1}\ndistributed_env: yes\n", 5,
            "distributed_env 'yes': expected auto");
        row("distributed-env-without-a-command",
            "method: grid\ndistributed_env: always\nparameters:\n  optim.lr: {value: 1e-4}\n", 2,
            "`distributed_env` goes with a `command`");
        row("code-snapshot-not-a-bool",
            "command: [python, t.py]\nmethod: grid\nparameters:\n  a: {value: 1}\ncode: {snapshot: maybe}\n",
            5, "code.snapshot: expected true or false");
        row("code-link-outside-workdir",
            "command: [python, t.py]\nmethod: grid\nparameters:\n  a: {value: 1}\ncode:\n  link: [../data]\n",
            6, "code.link: '../data' is not a path inside workdir");
        row("code-fresh-absolute",
            "command: [python, t.py]\nmethod: grid\nparameters:\n  a: {value: 1}\ncode:\n  fresh: [/out]\n",
            6, "code.fresh: '/out' is not a path inside workdir");
        row("code-unknown-key",
            "command: [python, t.py]\nmethod: grid\nparameters:\n  a: {value: 1}\ncode: {copy: true}\n", 5,
            "copy");
        row("env-not-a-mapping",
            "command: [python, t.py]\nmethod: grid\nparameters:\n  a: {value: 1}\nenv: "
            "[WANDB_MODE=offline]\n",
            5, "env: expected a mapping of variables");
        row("env-bad-name",
            "command: [python, t.py]\nmethod: grid\nparameters:\n  a: {value: 1}\nenv:\n  \"A-B\": x\n", 6,
            "env: 'A-B' is not a variable name");
        row("env-orrerys-own",
            "command: [python, t.py]\nmethod: grid\nparameters:\n  a: {value: 1}\nenv:\n  ORRERY_RUN_DIR: "
            "/x\n",
            6, "env: ORRERY_RUN_DIR is Orrery's to set");
        row("env-a-distributed-variable",
            "command: [python, t.py]\nmethod: grid\nparameters:\n  a: {value: 1}\nenv:\n  RANK: \"0\"\n", 6,
            "distributed_env: always gives a trial all of them");
        row("env-a-list-value",
            "command: [python, t.py]\nmethod: grid\nparameters:\n  a: {value: 1}\nenv:\n  X: [1, 2]\n", 6,
            "env: X: expected one value");
        row("env-without-a-command",
            "method: grid\nenv: {WANDB_MODE: offline}\nparameters:\n  optim.lr: {value: 1e-4}\n", 2,
            "`env` goes with a `command`");
        row("launch-without-a-command",
            "method: grid\nlaunch: per_node\nparameters:\n  optim.lr: {value: 1e-4}\n", 2,
            "`launch` goes with a `command`");
        row("command-unknown-placeholder",
            "command: [python, t.py, --lr, \"{{lrr}}\"]\nmethod: grid\nparameters:\n  lr: {values: [1]}\n", 1,
            "unknown placeholder {{lrr}} (did you mean 'lr'?)");
        row("command-unclosed-placeholder",
            "command: [python, \"{{lr\"]\nmethod: grid\nparameters:\n  lr: {values: [1]}\n", 1,
            "opens a placeholder with {{ but does not close it");
        row("command-not-a-list",
            "command: python train.py\nmethod: grid\nparameters:\n  lr: {values: [1]}\n", 1,
            "command: expected a list of words");
        row("command-and-trainer",
            "trainer: {config: x.yaml}\ncommand: [a]\nmethod: grid\nparameters:\n  lr: {values: [1]}\n", 1,
            "either the bundled trainer");
        row("command-unknown-wandb-macro",
            "command: [python, \"${envvar:HOME}\"]\nmethod: grid\nparameters:\n  lr: {values: [1]}\n", 1,
            "${envvar:HOME}' is not a macro Orrery expands");
        row("command-program-macro-needs-program",
            "command: [python, \"${program}\"]\nmethod: grid\nparameters:\n  lr: {values: [1]}\n", 1,
            "${program} needs `program: FILE`");
        row("command-params-sharing-an-environment-variable",
            "command: [a]\nmethod: grid\nparameters:\n  a.b: {values: [1]}\n  a_b: {values: [2]}\n", 5,
            "both become the environment variable ORRERY_PARAM_A_B");
        row("metrics-without-command",
            "method: grid\nmetrics: [{name: l, regex: 'l=(.*)'}]\nparameters:\n  seed: {values: [1]}\n", 2,
            "`metrics` goes with a `command`");
        row("metrics-regex-invalid",
            "command: [a]\nmethod: grid\nmetrics:\n  - {name: l, regex: 'loss=([0-9'}\nparameters:\n  x: "
            "{value: 1}\n",
            4, "metrics.regex 'loss=([0-9'");
        row("metrics-regex-without-group",
            "command: [a]\nmethod: grid\nmetrics:\n  - {name: l, regex: 'loss=[0-9]+'}\nparameters:\n  x: "
            "{value: 1}\n",
            4, "put the number in a capture group");
        row("metrics-entry-needs-a-regex",
            "command: [a]\nmethod: grid\nmetrics:\n  - {name: l}\nparameters:\n  x: {value: 1}\n", 4,
            "needs `name` and `regex`");
        row("metrics-name-twice",
            "command: [a]\nmethod: grid\nmetrics:\n  - {name: l, regex: 'a=(1)'}\n  - {name: l, regex: "
            "'b=(1)'}\nparameters:\n  x: {value: 1}\n",
            5, "'l' is given twice");
        row("workdir-without-command", "method: grid\nworkdir: /tmp\nparameters:\n  seed: {values: [1]}\n", 2,
            "`workdir` goes with a `command`");
        row("leading-dash-value-is-checked-as-data",
            "method: grid\nparameters:\n  train.device: {value: --help}\n", 3,
            "'--help': must be one of auto, cpu, cuda");
        // Time limits (Slurm syntax) and the GPU-hour budget (docs/sweeps.md "GPU-hours and cost").
        row("time-malformed",
            "method: grid\nresources: {gpus_per_node: 1,\n  time: 2h}\nparameters:\n  seed: {value: 1}\n", 3,
            "resources.time: '2h' is not a Slurm time");
        row("budget-not-a-mapping",
            "method: grid\nresources: {gpus_per_node: 1, time: \"1:00:00\"}\nbudget: 100\nparameters:\n  "
            "seed: {value: 1}\n",
            3, "budget: expected a mapping");
        row("budget-unknown-key",
            "method: grid\nresources: {gpus_per_node: 1, time: \"1:00:00\"}\nbudget: {gpu_hour: "
            "5}\nparameters:\n  seed: "
            "{value: 1}\n",
            3, "did you mean 'gpu_hours'?");
        row("budget-negative",
            "method: grid\nresources: {gpus_per_node: 1, time: \"1:00:00\"}\nparameters:\n  seed: {value: "
            "1}\nbudget:\n  "
            "gpu_hours: -5\n",
            6, "budget.gpu_hours must be greater than 0, got -5");
        row("budget-zero",
            "method: grid\nresources: {gpus_per_node: 1, time: \"1:00:00\"}\nbudget: {gpu_hours: "
            "0}\nparameters:\n  seed: "
            "{value: 1}\n",
            3, "must be greater than 0");
        row("budget-not-a-number",
            "method: grid\nresources: {gpus_per_node: 1, time: \"1:00:00\"}\nbudget: {gpu_hours: "
            "lots}\nparameters:\n  "
            "seed: {value: 1}\n",
            3, "budget.gpu_hours: expected a finite number, got 'lots'");
        row("budget-infinite",
            "method: grid\nresources: {gpus_per_node: 1, time: \"1:00:00\"}\nbudget: {gpu_hours: "
            ".inf}\nparameters:\n  "
            "seed: {value: 1}\n",
            3, "expected a finite number");
        row("budget-without-time-limit",
            "method: grid\nresources: {gpus_per_node: 4}\nbudget: {gpu_hours: 100}\nparameters:\n  seed: "
            "{value: 1}\n",
            3, "budget.gpu_hours needs a time limit (resources.time");
        row("budget-without-gpus",
            "method: grid\nresources: {time: \"1:00:00\"}\nbudget: {gpu_hours: 100}\nparameters:\n  seed: "
            "{value: 1}\n",
            3, "the trials ask for no GPUs");
        row("budget-smaller-than-one-trial",
            "method: grid\nresources: {nodes: 2, gpus_per_node: 4, time: \"02:00:00\"}\nbudget: {gpu_hours: "
            "10}\n"
            "parameters:\n  seed: {value: 1}\n",
            3, "budget.gpu_hours 10 is less than one trial could use (02:00:00 × 8 GPUs = 16 GPU-hours)");
        // health_check (docs/sweeps.md "Health check"), each error at the key's or the value's line.
        row("health-check-not-a-bool-or-mapping",
            "method: grid\nhealth_check: yes-please\nparameters:\n  seed: {value: 1}\n", 2,
            "health_check: expected true, false or thresholds");
        row("health-check-unknown-threshold",
            "method: grid\nhealth_check:\n  min_matmul_gflops: 10\n  min_speed: 3\nparameters:\n  seed: "
            "{value: 1}\n",
            4, "min_speed");
        row("health-check-negative-threshold",
            "method: grid\nhealth_check: {min_busbw_gbps: -1}\nparameters:\n  seed: {value: 1}\n", 2,
            "health_check.min_busbw_gbps must be at least 0");
        row("health-check-fraction-too-large",
            "method: grid\nhealth_check: {memory_fraction: 1.5}\nparameters:\n  seed: {value: 1}\n", 2,
            "memory_fraction takes a fraction");
        row("health-check-not-a-number",
            "method: grid\nhealth_check: {timeout_s: soon}\nparameters:\n  seed: {value: 1}\n", 2,
            "health_check.timeout_s: expected a finite number");
    }

    void healthCheckIsOnForTheTrainerAndOptInForACommand()
    {
        const SpecParse trainer = parse("method: grid\nparameters:\n  seed: {value: 1}\n");
        QVERIFY2(trainer.spec, qPrintable(allErrors(trainer)));
        QVERIFY(trainer.spec->healthCheck.enabled);
        QCOMPARE(healthCheckArgs(trainer.spec->healthCheck), QStringList{QStringLiteral("--health-check")});
        const SpecParse off = parse("method: grid\nhealth_check: false\nparameters:\n  seed: {value: 1}\n");
        QVERIFY2(off.spec, qPrintable(allErrors(off)));
        QVERIFY(!off.spec->healthCheck.enabled);
        QVERIFY(healthCheckArgs(off.spec->healthCheck).isEmpty());
        const SpecParse command =
            parse("command: [python, t.py]\nmethod: grid\nparameters:\n  lr: {value: 1}\n");
        QVERIFY2(command.spec, qPrintable(allErrors(command)));
        QVERIFY(!command.spec->healthCheck.enabled);
        // A mapping of thresholds turns it on, and the trainer gets them as --set words, in order.
        const SpecParse opted = parse("command: [python, t.py]\nmethod: grid\nparameters:\n  lr: {value: 1}\n"
                                      "health_check: {min_matmul_gflops: 5000, memory_fraction: 0.25}\n");
        QVERIFY2(opted.spec, qPrintable(allErrors(opted)));
        QVERIFY(opted.spec->healthCheck.enabled);
        QCOMPARE(opted.spec->healthCheck.line, 5);
        QCOMPARE(healthCheckArgs(opted.spec->healthCheck),
                 (QStringList{QStringLiteral("--health-check"), QStringLiteral("--set"),
                              QStringLiteral("min_matmul_gflops=5000"), QStringLiteral("--set"),
                              QStringLiteral("memory_fraction=0.25")}));
    }

    void budgetAndTimeLimitParse()
    {
        const SpecParse p =
            parse("method: grid\nresources: {nodes: 2, gpus_per_node: 4, time: \"1-00:00:00\"}\n"
                  "budget: {gpu_hours: 500}\nparameters:\n  seed: {value: 1}\n");
        QVERIFY2(p.spec, qPrintable(allErrors(p)));
        QCOMPARE(p.spec->budgetGpuHours.value_or(-1), 500.0);
        QCOMPARE(p.spec->resources.time, QStringLiteral("1-00:00:00"));
        // No budget, and Slurm's own words for no limit.
        const SpecParse q =
            parse("method: grid\nresources: {time: UNLIMITED}\nparameters:\n  seed: {value: 1}\n");
        QVERIFY2(q.spec, qPrintable(allErrors(q)));
        QVERIFY(!q.spec->budgetGpuHours);
    }
    void hangTimeoutAndNotify()
    {
        const QByteArray grid = "method: grid\nparameters:\n  seed: {value: 1}\n";
        {
            const SpecParse p = parse(grid);
            QVERIFY(p.spec);
            QVERIFY(!p.spec->hangTimeoutMs);
            QVERIFY(!p.spec->notify);
        }
        {
            const SpecParse p = parse(grid + "hang_timeout: 1h30m\nnotify: [notify-send, \"a b\"]\n");
            QVERIFY2(p.spec, qPrintable(p.errors.value(0).toString()));
            QCOMPARE(*p.spec->hangTimeoutMs, qint64(90 * 60'000));
            QCOMPARE(p.spec->notify->command,
                     (QStringList{QStringLiteral("notify-send"), QStringLiteral("a b")}));
            QVERIFY(p.spec->warnings.isEmpty());
        }
        {
            const SpecParse p =
                parse(grid + "hang_timeout: 20s\nnotify: \"sh -c 'cat > \\\"$0\\\"' out.json\"\n");
            QVERIFY2(p.spec, qPrintable(p.errors.value(0).toString()));
            QCOMPARE(*p.spec->hangTimeoutMs, qint64(20'000));
            QCOMPARE(p.spec->notify->command,
                     (QStringList{QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("cat > \"$0\""),
                                  QStringLiteral("out.json")}));
            QCOMPARE(p.spec->warnings.size(), 1);  // under a minute
            QVERIFY(p.spec->warnings.front().message.contains(QStringLiteral("under a minute")));
        }
        {
            const SpecParse p = parse(grid + "hang_timeout: auto\nnotify: https://hooks.example.org/x?y=1\n");
            QVERIFY(p.spec);
            QVERIFY(!p.spec->hangTimeoutMs);
            QCOMPARE(p.spec->notify->url, QStringLiteral("https://hooks.example.org/x?y=1"));
            QVERIFY(p.spec->notify->command.isEmpty());
        }
        const QList<std::pair<QByteArray, QString>> bad{
            {"hang_timeout: 10 minutes\n", QStringLiteral("hang_timeout '10 minutes': expected a duration")},
            {"hang_timeout: 0s\n", QStringLiteral("hang_timeout '0s': expected a duration")},
            {"notify: \"\"\n", QStringLiteral("notify: expected a command")},
            {"notify: \"echo 'x\"\n", QStringLiteral("has an unbalanced quote")},
            {"notify: \"http://\"\n", QStringLiteral("is not a valid URL")},
        };
        for (const auto &[yaml, message] : bad) {
            const SpecParse p = parse(grid + yaml);
            QVERIFY2(!p.spec, yaml.constData());
            QVERIFY2(p.errors.front().message.contains(message), qPrintable(p.errors.front().message));
            QCOMPARE(p.errors.front().line, 4);
        }
    }

    void errors()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(int, line);
        QFETCH(QString, message);
        const SpecParse p = parse(yaml);
        QVERIFY(!p.spec);
        QVERIFY(!p.errors.isEmpty());
        bool found = false;
        for (const SpecError &e : p.errors)
            found = found || (e.line == line && e.message.contains(message));
        QVERIFY2(found,
                 qPrintable(
                     QStringLiteral("expected line %1 '%2', got:\n%3").arg(line).arg(message, allErrors(p))));
        for (const SpecError &e : p.errors)
            QVERIFY2(!e.message.contains(QLatin1Char('\n')), qPrintable(e.message));  // one line each
    }

    void errorTextNamesFileAndLine()
    {
        const SpecParse p = parse("method: grid\nparameters:\n  optim.lrr: {values: [1]}\n");
        QCOMPARE(p.errors.size(), 1);
        QVERIFY(p.errors[0].toString().startsWith(QStringLiteral("sweep.yaml:3: unknown trainer key")));
    }

    void allErrorsAreReportedAtOnce()
    {
        const SpecParse p =
            parse("method: grid\nparameters:\n  optim.lrr: {values: [1]}\n  seed: {value: -1}\n");
        QCOMPARE(p.errors.size(), 2);
        QCOMPARE(p.errors[0].line, 3);
        QCOMPARE(p.errors[1].line, 4);
    }

    void hostileStringValuesAreKeptVerbatim()
    {
        // A string key without choices takes any text: it is data, written to trial.yaml quoted.
        const QByteArray hostile = "'$(touch /tmp/orrery-pwned)`id`\"; --rm -rf * \\ #x";
        YAML::Emitter e;
        e << YAML::BeginMap << YAML::Key << "method" << YAML::Value << "grid" << YAML::Key << "name"
          << YAML::Value << "-rf $(x) 'q'" << YAML::Key << "parameters" << YAML::Value << YAML::BeginMap
          << YAML::Key << "model.channel_mult" << YAML::Value << YAML::BeginMap << YAML::Key << "value"
          << YAML::Value << hostile.toStdString() << YAML::EndMap << YAML::EndMap << YAML::EndMap;
        const SpecParse p = parse(QByteArray(e.c_str()));
        QVERIFY2(p.spec, qPrintable(allErrors(p)));
        QCOMPARE(p.spec->name, QStringLiteral("-rf $(x) 'q'"));
        QCOMPARE(p.spec->parameters[0].values.value(0).toString(), QString::fromUtf8(hostile));
    }

    void wandbOnlyKeysAreIgnored()
    {
        // W&B's service keys are accepted and reported, one warning each at its line; without
        // `program` or `command` the bundled trainer runs.
        const SpecParse p = parse("project: x\nentity: y\ndescription: d\ncontroller: {type: local}\n"
                                  "scheduler: {num_workers: 2}\n"
                                  "method: grid\nparameters:\n  seed: {values: [1, 2]}\n");
        QVERIFY2(p.spec, qPrintable(allErrors(p)));
        QVERIFY(!p.spec->command);
        QCOMPARE(p.spec->warnings.size(), 5);
        QCOMPARE(p.spec->warnings[0].line, 1);
        QVERIFY(p.spec->warnings[0].message.contains(QLatin1String("`project` is W&B's")));
        QCOMPARE(p.spec->warnings[4].line, 5);
        // A W&B Launch job without the script it runs cannot run here: said at its line.
        const SpecParse job =
            parse("job: wandb/jobs/train:latest\nmethod: grid\nparameters:\n  seed: {values: [1]}\n");
        QVERIFY(!job.spec);
        QVERIFY(allErrors(job).contains(QLatin1String("sweep.yaml:1: `job` is a W&B Launch job")));
    }

    // W&B's `program` alone is its default command: ${env} ${interpreter} ${program} ${args}; the
    // parameters are the program's, not the trainer's.
    void programAloneIsWandbsDefaultCommand()
    {
        const SpecParse p = parse("program: train.py\nmethod: grid\nparameters:\n  learning_rate: {values: "
                                  "[0.1]}\n  optimizer: {values: [adam]}\n");
        QVERIFY2(p.spec, qPrintable(allErrors(p)));
        QVERIFY(p.spec->command);
        QCOMPARE(p.spec->command->argv,
                 (QStringList{QStringLiteral("${env}"), QStringLiteral("${interpreter}"),
                              QStringLiteral("${program}"), QStringLiteral("${args}")}));
        const RenderedCommand c = renderCommand(*p.spec,
                                                {{QStringLiteral("learning_rate"), QVariant(0.1)},
                                                 {QStringLiteral("optimizer"), QStringLiteral("adam")}},
                                                {QStringLiteral("/r"), {}, {}, 0, 0});
        QCOMPARE(
            c.argv,
            (QStringList{QStringLiteral("/usr/bin/env"), QStringLiteral("python"), QStringLiteral("train.py"),
                         QStringLiteral("--learning_rate=0.1"), QStringLiteral("--optimizer=adam")}));
        // With the bundled trainer's `trainer:` it is one or the other.
        const SpecParse both =
            parse("program: train.py\ntrainer: {config: x.yaml}\nmethod: grid\nparameters:\n"
                  "  lr: {values: [1]}\n");
        QVERIFY(!both.spec);
        QVERIFY(allErrors(both).contains(QLatin1String("not both")));
    }

    // What a stored spec sweeps, without a schema: the same rule as the parser's (a `program`
    // alone is a command sweep too), not a line that looks like one.
    void storedSpecSaysWhetherItRunsAnOwnCommand()
    {
        QVERIFY(specRunsOwnCommand("command: [python, train.py]\nmethod: grid\n"));
        QVERIFY(specRunsOwnCommand("program: train.py\nmethod: grid\n"));
        QVERIFY(specRunsOwnCommand("{method: grid, command: [sh, x.sh]}"));
        QVERIFY(!specRunsOwnCommand("trainer: {config: base.yaml}\nmethod: grid\n"));
        // A key named command under another one is not the spec's; text that is not YAML runs
        // nothing of its own.
        QVERIFY(!specRunsOwnCommand("trainer: {config: base.yaml}\nparameters:\n  command: {values: [a]}\n"));
        QVERIFY(!specRunsOwnCommand("{not: yaml"));
    }

    // W&B's nested parameters: dotted keys here, nested where W&B nests them.
    void nestedParametersBecomeDottedKeys()
    {
        const SpecParse p =
            parse("program: train.py\nmethod: grid\nparameters:\n  batch_size: {values: [32]}\n"
                  "  optimizer:\n    parameters:\n      lr: {values: [0.001]}\n"
                  "      nadam:\n        parameters:\n          beta: {values: [0.9]}\n");
        QVERIFY2(p.spec, qPrintable(allErrors(p)));
        QCOMPARE(p.spec->parameters.size(), 3);
        QCOMPARE(p.spec->parameters[1].key, QStringLiteral("optimizer.lr"));
        QCOMPARE(p.spec->parameters[1].line, 7);
        QCOMPARE(p.spec->parameters[2].key, QStringLiteral("optimizer.nadam.beta"));
        QCOMPARE(p.spec->parameters[2].wandbPath,
                 (QStringList{QStringLiteral("optimizer"), QStringLiteral("nadam"), QStringLiteral("beta")}));
        QCOMPARE(p.spec->parameters[0].wandbPath, QStringList());
    }

    // W&B's metric.target and hyperband's strict; --count's run_cap.
    void targetStrictAndCount()
    {
        const SpecParse p =
            parse("program: t.py\nmethod: random\nrun_cap: 5\nmetric: {name: loss, goal: minimize, "
                  "target: 0.1, impute: worst}\nearly_terminate: {type: hyperband, min_iter: 2, "
                  "strict: true}\nparameters:\n  lr: {min: 0.1, max: 1.0}\n");
        QVERIFY2(p.spec, qPrintable(allErrors(p)));
        QCOMPARE(p.spec->metricTarget.value_or(-1), 0.1);
        QVERIFY(p.spec->earlyTerminate && p.spec->earlyTerminate->strict);
        QCOMPARE(p.spec->warnings.size(), 1);  // metric.impute
        // Without run_cap the error names --count.
        const SpecParse open =
            parse("program: t.py\nmethod: random\nparameters:\n  lr: {min: 0.1, max: 1.0}\n");
        QVERIFY(!open.spec);
        QVERIFY2(allErrors(open).contains(QLatin1String("--count N")), qPrintable(allErrors(open)));
        // --count adds run_cap (or keeps a smaller one), text edited in place.
        QCOMPARE(withRunCap("program: t.py  # mine\nmethod: random\n", 7).valueOr(QByteArray()),
                 QByteArray("program: t.py  # mine\nmethod: random\nrun_cap: 7\n"));
        QCOMPARE(withRunCap("run_cap: 3 # few\nmethod: random\n", 7).valueOr(QByteArray()),
                 QByteArray("run_cap: 3 # few\nmethod: random\n"));
        QCOMPARE(withRunCap("run_cap: 30\nmethod: random\n", 7).valueOr(QByteArray()),
                 QByteArray("run_cap: 7\nmethod: random\n"));
    }

    // core::Parsed (error.h), what the spec's own parsers return: the value or the problem, never
    // both; a move-only value moves in and out of it.
    void parsedIsAValueOrAProblem()
    {
        const Parsed<qint64> hang = parseHangDuration(QStringLiteral("1h30m"));
        QVERIFY(hang.ok());
        QVERIFY(bool(hang));
        QCOMPARE(hang.value(), qint64(5'400'000));
        QCOMPARE(*hang, qint64(5'400'000));
        QVERIFY(hang.problem().isEmpty());
        QCOMPARE(hang.valueOr(-1), qint64(5'400'000));

        const Parsed<qint64> words = parseHangDuration(QStringLiteral("10 minutes"));
        QVERIFY(!words.ok());
        QVERIFY(!words);
        QCOMPARE(words.problem(),
                 QStringLiteral("expected a duration such as 90s, 10m, 1h or 1h30m, or auto"));
        QCOMPARE(words.valueOr(-1), qint64(-1));

        Parsed<QStringList> list = QStringList{QStringLiteral("a")};
        list->append(QStringLiteral("b"));
        (*list).append(QStringLiteral("c"));
        list.value().append(QStringLiteral("d"));
        QCOMPARE(list->size(), 4);
        QCOMPARE(std::as_const(list).value(),
                 (QStringList{QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c"),
                              QStringLiteral("d")}));

        Parsed<std::unique_ptr<int>> owned = positive(5);
        QVERIFY2(owned, qPrintable(owned.problem()));
        QCOMPARE(**owned, 5);
        QCOMPARE(*owned->get(), 5);
        Parsed<std::unique_ptr<int>> moved = std::move(owned);
        QVERIFY(moved);
        const std::unique_ptr<int> taken = std::move(*moved);
        QCOMPARE(*taken, 5);
        QVERIFY(moved.ok() && !moved.value());  // moved out: still ok, the pointer empty
        const Parsed<std::unique_ptr<int>> refused = positive(0);
        QVERIFY(!refused);
        QCOMPARE(refused.problem(), QStringLiteral("0 is not positive"));
        static_assert(!std::is_copy_constructible_v<Parsed<std::unique_ptr<int>>>);
        static_assert(std::is_nothrow_move_constructible_v<Parsed<std::unique_ptr<int>>>);
        static_assert(!std::is_convertible_v<Parsed<int>, bool>);  // `if (parsed)`, not `bool b = parsed`
    }

    // A command's parameters are any keys (no trainer schema), typed by the values written; its
    // words, working directory and output metrics are kept as written.
    void commandParamsAreTypedByTheirValues()
    {
        const SpecParse p =
            parse("program: train.py\n"
                  "command: [\"${env}\", python, \"${program}\", --lr, \"{{ lr }}\", \"--out={{run_dir}}\", "
                  "\"${args}\"]\n"
                  "workdir: ~/project\n"
                  "method: random\nrun_cap: 3\n"
                  "metrics:\n  - {name: train/loss, regex: 'loss=([-+.0-9eE]+)', step_regex: 'step=(\\d+)'}\n"
                  "parameters:\n"
                  "  lr: {distribution: log_uniform_values, min: 1e-5, max: 1e-1}\n"
                  "  layers: {values: [2, 4]}\n"
                  "  width: {distribution: int_uniform, min: 8, max: 64}\n"
                  "  dropout: {values: [0, 0.1]}\n"
                  "  amp: {values: [true, false]}\n"
                  "  optimiser: {values: [adam, \"sgd; rm -rf ~\"]}\n");
        QVERIFY2(p.spec, qPrintable(allErrors(p)));
        QVERIFY(p.spec->command);
        QCOMPARE(p.spec->program, QStringLiteral("train.py"));
        QCOMPARE(p.spec->command->argv.size(), 7);
        QCOMPARE(p.spec->command->argv[4], QStringLiteral("{{ lr }}"));
        QCOMPARE(p.spec->command->workdir, QStringLiteral("~/project"));
        QCOMPARE(p.spec->command->metrics.size(), 1);
        QCOMPARE(p.spec->command->metrics[0].stepRegex, QStringLiteral("step=(\\d+)"));
        const QList<ConfigKey::Type> types{ConfigKey::Type::Float, ConfigKey::Type::Int,
                                           ConfigKey::Type::Int,   ConfigKey::Type::Float,
                                           ConfigKey::Type::Bool,  ConfigKey::Type::String};
        QCOMPARE(p.spec->parameters.size(), types.size());
        for (qsizetype i = 0; i < types.size(); ++i)
            QVERIFY2(p.spec->parameters[i].type == types[i], qPrintable(p.spec->parameters[i].key));
        QCOMPARE(p.spec->parameters[5].values.value(1).toString(), QStringLiteral("sgd; rm -rf ~"));
    }

    void integersWrittenAsExponents()
    {
        const SpecParse p = parse("method: grid\nparameters:\n  train.steps: {values: [1e3, 2000]}\n");
        QVERIFY2(p.spec, qPrintable(allErrors(p)));
        QCOMPARE(p.spec->parameters[0].values, (QVariantList{qint64(1000), qint64(2000)}));
    }

    void baseConfigIsResolvedAgainstTheSpecFile()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile base(dir.filePath(QStringLiteral("base.yaml")));
        QVERIFY(base.open(QIODevice::WriteOnly));
        base.write("train: {steps: 10}\n");
        base.close();
        QFile spec(dir.filePath(QStringLiteral("s.yaml")));
        QVERIFY(spec.open(QIODevice::WriteOnly));
        spec.write("trainer: {config: base.yaml}\nmethod: grid\nparameters:\n  seed: {value: 1}\n");
        spec.close();
        const SpecParse p = loadSweepSpec(spec.fileName(), schema());
        QVERIFY2(p.spec, qPrintable(allErrors(p)));
        QCOMPARE(p.spec->trainerConfig, base.fileName());
        QCOMPARE(p.spec->name, QStringLiteral("s"));

        QFile missing(dir.filePath(QStringLiteral("m.yaml")));
        QVERIFY(missing.open(QIODevice::WriteOnly));
        missing.write("trainer: {config: nope.yaml}\nmethod: grid\nparameters:\n  seed: {value: 1}\n");
        missing.close();
        const SpecParse q = loadSweepSpec(missing.fileName(), schema());
        QVERIFY(!q.spec);
        QVERIFY(allErrors(q).contains(QStringLiteral("does not exist")));
    }

    void trialConfigNestsParamsOverTheBase()
    {
        const QByteArray base = "model:\n  channels: 64\n  heads: 2\noptim.lr: 0.5\ntrain: {steps: 10}\n";
        const TrialParams params{{QStringLiteral("optim.lr"), 3e-4},
                                 {QStringLiteral("model.heads"), qint64(8)},
                                 {QStringLiteral("seed"), qint64(7)},
                                 {QStringLiteral("data.kind"), QStringLiteral("a'b\"c\n$(x)")},
                                 {QStringLiteral("model.reference_frame"), true}};
        const QByteArray out = renderTrialConfig(base, QStringLiteral("base.yaml"), params);
        const YAML::Node n = YAML::Load(out.toStdString());
        QCOMPARE(n["model"]["channels"].as<int>(), 64);
        QCOMPARE(n["model"]["heads"].as<int>(), 8);
        QCOMPARE(n["optim"]["lr"].as<double>(), 3e-4);
        QVERIFY(!n["optim.lr"]);  // the dotted spelling of the base was replaced, not duplicated
        QCOMPARE(n["train"]["steps"].as<int>(), 10);
        QCOMPARE(n["seed"].as<int>(), 7);
        QCOMPARE(QByteArray::fromStdString(n["data"]["kind"].as<std::string>()), QByteArray("a'b\"c\n$(x)"));
        QCOMPARE(n["model"]["reference_frame"].as<bool>(), true);
    }

    void trialConfigRefusesABaseThatIsNotAMapping()
    {
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 renderTrialConfig("- a\n", QStringLiteral("base.yaml"), TrialParams{}));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 renderTrialConfig("a: [1\n", QStringLiteral("base.yaml"), TrialParams{}));
    }

    // TrainerSchema::load() asks the trainer once per build of it: a second load reads the cache;
    // a trainer with another size, a damaged cache file or a failing trainer are asked again (a
    // failure is not kept). A shell script stands in for the trainer, counting its asks.
    void theTrainersSchemaIsAskedOncePerBuildOfIt()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString trainer = dir.filePath(QStringLiteral("orrery-train")),
                      asks = dir.filePath(QStringLiteral("asks")),
                      cache = dir.filePath(QStringLiteral("cache"));
        const auto writeTrainer = [&](const QByteArray &extra) {
            QFile f(trainer);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("#!/bin/sh\n" + extra + "echo asked >> '" + asks.toUtf8() + "'\ncat '" +
                    orrery::test::sourceFile(QStringLiteral("tests/data/trainer-schema.json")).toUtf8() +
                    "'\n");
            f.close();
            QVERIFY(f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        };
        const auto askCount = [&] {
            QFile f(asks);
            return f.open(QIODevice::ReadOnly) ? f.readAll().count('\n') : 0;
        };
        const QByteArray oldTrainer = qgetenv("ORRERY_TRAINER"), oldCache = qgetenv("ORRERY_CACHE_DIR");
        const auto restore = qScopeGuard([&] {
            qputenv("ORRERY_TRAINER", oldTrainer);
            oldCache.isNull() ? qunsetenv("ORRERY_CACHE_DIR") : qputenv("ORRERY_CACHE_DIR", oldCache);
        });
        qputenv("ORRERY_TRAINER", trainer.toUtf8());
        qputenv("ORRERY_CACHE_DIR", cache.toUtf8());

        writeTrainer({});
        const auto first = TrainerSchema::load();
        QVERIFY2(first, qPrintable(first.problem()));
        QVERIFY(first->find(QStringLiteral("optim.lr")));
        QCOMPARE(askCount(), 1);
        const auto second = TrainerSchema::load();
        QVERIFY2(second, qPrintable(second.problem()));
        QCOMPARE(second->keys().size(), first->keys().size());
        QCOMPARE(askCount(), 1);  // from the cache

        writeTrainer("# rebuilt\n");  // another size
        QVERIFY(TrainerSchema::load());
        QCOMPARE(askCount(), 2);
        QVERIFY(TrainerSchema::load());
        QCOMPARE(askCount(), 2);

        const QStringList files = QDir(cache + QStringLiteral("/trainer-schema")).entryList(QDir::Files);
        QCOMPARE(files.size(), 1);  // one file a trainer, rewritten
        QFile damaged(cache + QStringLiteral("/trainer-schema/") + files.first());
        QVERIFY(damaged.open(QIODevice::ReadWrite));
        const QByteArray bytes = damaged.readAll();
        QVERIFY(damaged.resize(bytes.size() / 2));
        damaged.close();
        QVERIFY(TrainerSchema::load());
        QCOMPARE(askCount(), 3);

        writeTrainer("echo broken >&2; exit 3\n");
        const auto failed = TrainerSchema::load();
        QVERIFY(!failed);
        QVERIFY2(failed.problem().contains(QLatin1String("broken")), qPrintable(failed.problem()));
        const auto again = TrainerSchema::load();  // asked again: a failure is not kept
        QVERIFY(!again);
    }

    void floatsRoundTrip()
    {
        for (const double v : {3e-4, 0.1, 1.0 / 3, 1e-300, 123456789.125}) {
            const QString t = formatParamValue(v);
            QCOMPARE(t.toDouble(), v);
        }
        QCOMPARE(formatParamValue(qint64(12)), QStringLiteral("12"));
        QCOMPARE(formatParamValue(true), QStringLiteral("true"));
    }
};

ORRERY_TEST_MAIN(TestSweepSpec, QCoreApplication)
#include "tst_sweepspec.moc"
