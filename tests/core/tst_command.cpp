// SPDX-License-Identifier: GPL-3.0-or-later
// Sweeping any training command (core/command.h): a trial's rendered argv and ORRERY_* variables,
// metrics read from standard output by regex, how a command is shown (checked against a real
// bash), and the events parser taking Python's bare NaN/Infinity.
#include "sweepsupport.h"
#include "testsupport.h"

#include "orrery/core/command.h"
#include "orrery/core/events.h"
#include "orrery/core/sweepspec.h"

#include <QCoreApplication>
#include <QProcess>

#include <cmath>
#include <string>

using namespace orrery::core;

namespace {

SweepSpec spec(const QByteArray &yaml)
{
    static const TrainerSchema schema = orrery::test::trainerSchema();
    const SpecParse p = parseSweepSpec(yaml, QStringLiteral("/home/u/proj/sweep.yaml"), schema);
    if (!p.spec) {
        QStringList lines;
        for (const SpecError &e : p.errors)
            lines << e.toString();
        qFatal("%s", qPrintable(lines.join(QLatin1Char('\n'))));
    }
    return *p.spec;
}

QString env(const RenderedCommand &c, const QString &name)
{
    for (const auto &[n, v] : c.env)
        if (n == name)
            return v;
    return QStringLiteral("<unset>");
}

const QString kHostile = QStringLiteral("a b'; $(touch /tmp/orrery-pwned) `id` \"q\" \\ *");

}  // namespace

class TestCommand : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void placeholdersBecomeWholeOrPartWordsAndValuesStayOneArgument()
    {
        const SweepSpec s =
            spec("command: [python, train.py, --lr, \"{{optim.lr}}\", \"--out={{run_dir}}/x\", "
                 "--tag, \"{{tag}}\", \"{{trial}}-{{attempt}}-{{resume}}\"]\n"
                 "method: grid\nparameters:\n  optim.lr: {values: [0.001]}\n  tag: {value: x}\n");
        const TrialParams params{{QStringLiteral("optim.lr"), QVariant(0.001)},
                                 {QStringLiteral("tag"), kHostile}};
        const RenderedCommand c = renderCommand(
            s, params, {QStringLiteral("/r/s w/3"), QStringLiteral("sw"), QStringLiteral("ex"), 3, 2});
        const QStringList expected{QStringLiteral("python"),
                                   QStringLiteral("train.py"),
                                   QStringLiteral("--lr"),
                                   QStringLiteral("0.001"),
                                   QStringLiteral("--out=/r/s w/3/x"),
                                   QStringLiteral("--tag"),
                                   kHostile,
                                   QStringLiteral("3-2-1")};
        QCOMPARE(c.argv, expected);
        QCOMPARE(env(c, QStringLiteral("ORRERY_PARAM_OPTIM_LR")), QStringLiteral("0.001"));
        QCOMPARE(env(c, QStringLiteral("ORRERY_PARAM_TAG")), kHostile);
        QCOMPARE(env(c, QStringLiteral("ORRERY_RUN_DIR")), QStringLiteral("/r/s w/3"));
        QCOMPARE(env(c, QStringLiteral("ORRERY_RESUME")), QStringLiteral("1"));
        QCOMPARE(env(c, QStringLiteral("ORRERY_PARAMS_FILE")), QStringLiteral("/r/s w/3/trial.yaml"));
        // No workdir: the spec's directory here; a relative one is taken from there.
        QCOMPARE(c.localWorkdir, QStringLiteral("/home/u/proj"));
        QVERIFY(c.workdir.isEmpty());
        // The first attempt does not resume.
        QCOMPARE(env(renderCommand(s, params, {QStringLiteral("/r"), {}, {}, 0, 0}),
                     QStringLiteral("ORRERY_RESUME")),
                 QStringLiteral("0"));
    }

    // Launchers (docs/sweeps.md "Launchers"): {{nnodes}} and {{gpus_per_node}} come from the
    // resources; {{node_rank}}, {{master_addr}}, {{master_port}} only the node knows, so they stay
    // pieces of their word, filled there; a parameter value that spells one stays those bytes.
    void nodeBuiltinsAreFilledPerNodeAndValuesAreNot()
    {
        const SweepSpec s =
            spec("command: [torchrun, --nnodes, \"{{nnodes}}\", --nproc_per_node, "
                 "\"{{gpus_per_node}}\", \"--rdzv={{master_addr}}:{{master_port}}\", "
                 "--node_rank, \"{{node_rank}}\", \"--tag={{tag}}{{node_rank}}\", \"{{world_size}}\"]\n"
                 "launch: per_node\n"
                 "resources: {nodes: 2, gpus_per_node: 4}\n"
                 "method: grid\nparameters:\n  tag: {value: x}\n");
        const TrialParams params{{QStringLiteral("tag"), QStringLiteral("{{node_rank}}")}};
        const RenderedCommand c = renderCommand(s, params, {QStringLiteral("/r"), {}, {}, 0, 0});
        QVERIFY(c.perNode);
        QVERIFY(c.capture);
        QCOMPARE(env(c, QStringLiteral("ORRERY_CAPTURE")), QStringLiteral("1"));
        QCOMPARE(c.argv,
                 (QStringList{QStringLiteral("torchrun"), QStringLiteral("--nnodes"), QStringLiteral("2"),
                              QStringLiteral("--nproc_per_node"), QStringLiteral("4"),
                              QStringLiteral("--rdzv={{master_addr}}:{{master_port}}"),
                              QStringLiteral("--node_rank"), QStringLiteral("{{node_rank}}"),
                              QStringLiteral("--tag={{node_rank}}{{node_rank}}"), QStringLiteral("8")}));
        QCOMPARE(c.nodeWords.size(), 3);
        QCOMPARE(c.nodeWords[0].index, 5);
        QCOMPARE(c.nodeWords[0].pieces,
                 (QStringList{QStringLiteral("--rdzv="), QStringLiteral("master_addr"), QStringLiteral(":"),
                              QStringLiteral("master_port"), QString()}));
        const QStringList filled = fillNodeWords(c,
                                                 {{QStringLiteral("node_rank"), QStringLiteral("1")},
                                                  {QStringLiteral("master_addr"), QStringLiteral("10.0.0.7")},
                                                  {QStringLiteral("master_port"), QStringLiteral("12345")}});
        QCOMPARE(filled[5], QStringLiteral("--rdzv=10.0.0.7:12345"));
        QCOMPARE(filled[7], QStringLiteral("1"));
        // The parameter's own "{{node_rank}}" is text; only the spec's placeholder is filled.
        QCOMPARE(filled[8], QStringLiteral("--tag={{node_rank}}1"));
        // per_gpu is the default; capture: false leaves the module off.
        const SweepSpec plain =
            spec("command: [python, t.py]\ncapture: false\nmethod: grid\nparameters:\n  a: {value: 1}\n");
        const RenderedCommand p = renderCommand(plain, {{QStringLiteral("a"), QVariant(qint64(1))}},
                                                {QStringLiteral("/r"), {}, {}, 0, 0});
        QVERIFY(!p.perNode);
        QVERIFY(!p.capture);
        QCOMPARE(env(p, QStringLiteral("ORRERY_CAPTURE")), QStringLiteral("<unset>"));
        QVERIFY(p.nodeWords.isEmpty());
    }

    // docs/sweeps.md "Launchers": the variables of a distributed job only where there is one.
    // A trial of one process gets what `python train.py` would (many scripts read a set RANK or
    // LOCAL_RANK as "a launcher started me"); several processes, or a written `launch:`, get
    // them; `distributed_env:` forces either way.
    void distributedVariablesOnlyForADistributedTrial_data()
    {
        QTest::addColumn<QByteArray>("extra");
        QTest::addColumn<bool>("distributed");
        QTest::newRow("one process") << QByteArray() << false;
        QTest::newRow("one GPU") << QByteArray("resources: {gpus_per_node: 1}\n") << false;
        QTest::newRow("two GPUs, per_gpu") << QByteArray("resources: {gpus_per_node: 2}\n") << true;
        QTest::newRow("two nodes") << QByteArray("resources: {nodes: 2}\n") << true;
        QTest::newRow("per_node, one node, four GPUs")
            << QByteArray("launch: per_node\nresources: {gpus_per_node: 4}\n") << true;
        QTest::newRow("launch written, one process") << QByteArray("launch: per_gpu\n") << true;
        QTest::newRow("forced on") << QByteArray("distributed_env: always\n") << true;
        QTest::newRow("forced off, two nodes")
            << QByteArray("distributed_env: never\nresources: {nodes: 2}\n") << false;
        QTest::newRow("auto, two GPUs")
            << QByteArray("distributed_env: auto\nresources: {gpus_per_node: 2}\n") << true;
    }
    void distributedVariablesOnlyForADistributedTrial()
    {
        QFETCH(QByteArray, extra);
        QFETCH(bool, distributed);
        const SweepSpec s =
            spec("command: [python, train.py]\nmethod: grid\nparameters:\n  a: {value: 1}\n" + extra);
        QCOMPARE(commandIsDistributed(s), distributed);
        const RenderedCommand c =
            renderCommand(s, {{QStringLiteral("a"), QVariant(1)}},
                          {QStringLiteral("/r/0"), QStringLiteral("sw"), QStringLiteral("ex"), 0, 0});
        QCOMPARE(c.distributed, distributed);
        QCOMPARE(env(c, QStringLiteral("ORRERY_DISTRIBUTED")),
                 distributed ? QStringLiteral("1") : QStringLiteral("0"));
        for (const QString &name : distributedEnvNames())  // the executors set these, never the render
            QCOMPARE(env(c, name), QStringLiteral("<unset>"));
    }

    // `env:` values reach the program as they are written, after Orrery's own, never through a
    // shell (docs/sweeps.md "Any training command").
    void specEnvIsAppendedAsData()
    {
        const SweepSpec s =
            spec("command: [python, train.py]\nmethod: grid\nparameters:\n  a: {value: 1}\n"
                 "env:\n  WANDB_MODE: offline\n  HOSTILE: \"$(touch /tmp/orrery-pwned) `id`\"\n"
                 "  N: 3\n");
        const RenderedCommand c =
            renderCommand(s, {{QStringLiteral("a"), QVariant(1)}},
                          {QStringLiteral("/r/0"), QStringLiteral("sw"), QStringLiteral("ex"), 0, 0});
        QCOMPARE(env(c, QStringLiteral("WANDB_MODE")), QStringLiteral("offline"));
        QCOMPARE(env(c, QStringLiteral("HOSTILE")), QStringLiteral("$(touch /tmp/orrery-pwned) `id`"));
        QCOMPARE(env(c, QStringLiteral("N")), QStringLiteral("3"));
        QCOMPARE(c.env.back().first, QStringLiteral("N"));  // after Orrery's own
    }

    void wandbMacrosExpandAsWandbDoes()
    {
        const SweepSpec s =
            spec("program: train.py\ncommand: [\"${env}\", \"${interpreter}\", \"${program}\", "
                 "\"${args}\", \"${args_no_hyphens}\", \"${args_json}\"]\nworkdir: src\n"
                 "method: grid\nparameters:\n  lr: {values: [0.5]}\n  n: {values: [3]}\n");
        const TrialParams params{{QStringLiteral("lr"), QVariant(0.5)},
                                 {QStringLiteral("n"), QVariant(qint64(3))}};
        const RenderedCommand c = renderCommand(s, params, {QStringLiteral("/r"), {}, {}, 0, 0});
        const QStringList expected{QStringLiteral("/usr/bin/env"), QStringLiteral("python"),
                                   QStringLiteral("train.py"),     QStringLiteral("--lr=0.5"),
                                   QStringLiteral("--n=3"),        QStringLiteral("lr=0.5"),
                                   QStringLiteral("n=3"),          QStringLiteral("{\"lr\": 0.5, \"n\": 3}")};
        QCOMPARE(c.argv, expected);
        QCOMPARE(c.localWorkdir, QStringLiteral("/home/u/proj/src"));
        QCOMPARE(c.workdir, QStringLiteral("src"));
    }

    void environmentNames()
    {
        QCOMPARE(paramEnvName(QStringLiteral("optim.lr")), QStringLiteral("ORRERY_PARAM_OPTIM_LR"));
        QCOMPARE(paramEnvName(QStringLiteral("model/d-ff")), QStringLiteral("ORRERY_PARAM_MODEL_D_FF"));
        QCOMPARE(paramEnvName(QStringLiteral("é$x")), QStringLiteral("ORRERY_PARAM___X"));
    }

    // What `sweep plan` shows reads back in a real bash as the same words.
    void displayedCommandsReadBackInBash()
    {
        const QStringList words{QStringLiteral("python"), QStringLiteral("--x=1"), kHostile,
                                QStringLiteral(""),       QStringLiteral("it's"),  QStringLiteral("naïve")};
        QProcess bash;
        bash.start(QStringLiteral("bash"),
                   {QStringLiteral("-c"), QStringLiteral("printf '%s\\0' ") + displayCommand(words)});
        QVERIFY(bash.waitForFinished(10'000));
        QList<QByteArray> got = bash.readAllStandardOutput().split('\0');
        got.removeLast();
        QList<QByteArray> expected;
        for (const QString &w : words)
            expected << w.toUtf8();
        QCOMPARE(got, expected);
    }

    void metricLinesByRegex()
    {
        const QList<CompiledMetricRule> rules =
            compileMetricRules({{QStringLiteral("train/loss"), QStringLiteral("loss=([-+.0-9eE]+|nan|inf)"),
                                 QStringLiteral("step=(\\d+)"), 0},
                                {QStringLiteral("val/acc"), QStringLiteral("acc ([0-9.]+)"), {}, 0}});
        QHash<QString, qint64> last{{QStringLiteral("val/acc"), 6}};
        const QByteArray out = "starting\n"
                               "step=10 loss=0.5\n"
                               "progress 10%\rprogress 90%\rstep=11 loss=nan\n"
                               "acc 0.75\n"
                               "loss=0.25 (no step on this line)\n"
                               "acc 0.8\n"
                               "step=12 loss=0.1";  // not a whole line yet
        const StdoutMetrics m = parseMetricLines(out, rules, last, 1000);
        QCOMPARE(m.consumed, qint64(out.lastIndexOf('\n') + 1));
        QCOMPARE(m.lines, qint64(6));
        QCOMPARE(m.points.size(), 5);
        QCOMPARE(m.points[0].first, QStringLiteral("train/loss"));
        QCOMPARE(m.points[0].second.step, qint64(10));
        QCOMPARE(m.points[0].second.value, 0.5);
        QCOMPARE(m.points[1].second.step, qint64(11));  // after the '\r's: what the terminal showed
        QVERIFY(std::isnan(m.points[1].second.value));
        QCOMPARE(m.points[2].first, QStringLiteral("val/acc"));
        QCOMPARE(m.points[2].second.step, qint64(7));  // the step after the stored last one
        QCOMPARE(m.points[3].second.step, qint64(12));  // no step on its line: after the previous
        QCOMPARE(m.points[3].second.value, 0.25);
        QCOMPARE(m.points[4].second.step, qint64(8));
        QCOMPARE(m.points[4].second.timeMs, qint64(1000));
        QCOMPARE(last.value(QStringLiteral("train/loss")), qint64(12));
        // Nothing whole: nothing consumed, read again with what follows.
        QCOMPARE(parseMetricLines("step=13 loss=", rules, last, 0).consumed, qint64(0));
    }

    void eventsTakePythonsBareNonFiniteNumbers()
    {
        EventParser parser;
        Event ev;
        const auto parse = [&](const std::string &line) {
            std::string buffer = line + std::string(EventParser::kPadding, ' ');
            return parser.parse(std::string_view(buffer.data(), line.size()), buffer.size(), ev);
        };
        QCOMPARE(
            parse(R"({"v": 1, "t": 1.5, "kind": "metrics", "step": 3, "values": {"a": NaN, "b": Infinity, )"
                  R"("c": -Infinity, "d": 2}})"),
            std::string());
        QCOMPARE(ev.values.size(), std::size_t(4));
        QVERIFY(std::isnan(ev.values[0].second));
        QCOMPARE(ev.values[1].second, std::numeric_limits<double>::infinity());
        QCOMPARE(ev.values[2].second, -std::numeric_limits<double>::infinity());
        QCOMPARE(ev.values[3].second, 2.0);
        // The words inside a string are text, not numbers.
        QCOMPARE(parse(R"({"v":1,"t":1,"kind":"warning","message":"loss is NaN, Infinity"})"), std::string());
        QCOMPARE(std::string(ev.message), std::string("loss is NaN, Infinity"));
        // Still not JSON: a word that only starts like one.
        QVERIFY(!parse(R"({"v":1,"t":1,"kind":"metrics","step":1,"values":{"a":NaNa}})").empty());
        // A script's own tags (MLflow's set_tag, captured), nested ones flattened with dots.
        QCOMPARE(parse(R"({"v":1,"t":1,"kind":"tags","tags":{"team":"video","n":3,"x":{"y":"z"}}})"),
                 std::string());
        QCOMPARE(ev.kind, EventKind::Tags);
        QCOMPARE(ev.tags.size(), std::size_t(3));
        QCOMPARE(ev.tags[0], (std::pair<std::string, std::string>{"team", "video"}));
        QCOMPARE(ev.tags[1], (std::pair<std::string, std::string>{"n", "3"}));
        QCOMPARE(ev.tags[2], (std::pair<std::string, std::string>{"x.y", "z"}));
        QVERIFY(!parse(R"({"v":1,"t":1,"kind":"tags","tags":"team"})").empty());
    }
};

ORRERY_TEST_MAIN(TestCommand, QCoreApplication)
#include "tst_command.moc"
