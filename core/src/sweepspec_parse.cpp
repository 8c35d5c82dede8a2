// SPDX-License-Identifier: GPL-3.0-or-later
//
// Sweep spec parsing: the spec's YAML read section by section into a SweepSpec, each problem at
// its line. yaml-cpp is PRIVATE to core (the sweepspec_*.cpp files and sweepprogress.cpp); every
// value leaves these files as a QVariant typed by the trainer's schema. The parameters are
// checked against the schema in sweepspec_validate.cpp.
#include "sweepspecparser.h"

#include "orrery/core/configfile.h"
#include "orrery/core/trainermetrics.h"
#include "orrery/core/usage.h"

#include "textutil.h"

#include <QDir>
#include <QFileInfo>
#include <QHash>
#include <QRegularExpression>
#include <QUrl>

#include <algorithm>

namespace orrery::core {

QString didYouMean(const QString &word, const QStringList &known)
{
    const QString hint = closestWord(word, known);
    return hint.isEmpty() ? QString() : QStringLiteral(" (did you mean '%1'?)").arg(hint);
}

std::optional<QString> SpecReader::text(const YAML::Node &n, const QString &what)
{
    if (!n.IsScalar()) {
        error(n, QStringLiteral("%1: expected a single value").arg(what));
        return std::nullopt;
    }
    const std::string &raw = n.Scalar();
    const std::optional<QString> s = decodeUtf8(QByteArray::fromStdString(raw));
    if (!s) {
        error(n, QStringLiteral("%1: the text is not valid UTF-8").arg(what));
        return std::nullopt;
    }
    if (s->contains(QChar(0))) {
        error(n, QStringLiteral("%1: the text contains a NUL character").arg(what));
        return std::nullopt;
    }
    return s;
}

std::optional<qint64> SpecReader::integer(const YAML::Node &n, const QString &what, qint64 minimum)
{
    const auto t = text(n, what);
    if (!t)
        return std::nullopt;
    const auto v = parseInteger(*t);
    if (!v || *v < minimum) {
        error(n,
              QStringLiteral("%1: expected an integer >= %2, got %3").arg(what).arg(minimum).arg(quoted(*t)));
        return std::nullopt;
    }
    return v;
}

std::optional<double> SpecReader::number(const YAML::Node &n, const QString &what)
{
    const auto t = text(n, what);
    if (!t)
        return std::nullopt;
    const auto v = parseDouble(*t);
    if (!v) {
        error(n, QStringLiteral("%1: expected a finite number, got %2").arg(what, quoted(*t)));
        return std::nullopt;
    }
    return v;
}

std::optional<QString> SpecReader::name(const YAML::Node &n, const QString &what)
{
    auto t = text(n, what);
    if (!t)
        return std::nullopt;
    QString why;
    if (t->isEmpty() || *t == QLatin1String(".") || *t == QLatin1String(".."))
        why = QStringLiteral("must not be empty, '.' or '..'");
    else if (t->contains(QLatin1Char('/')))
        why = QStringLiteral("must not contain '/' (it names a directory)");
    else if (containsControl(*t))
        why = QStringLiteral("must not contain control characters such as newlines (it names a directory "
                             "and a Slurm job)");
    if (!why.isEmpty()) {
        error(n, QStringLiteral("%1 %2 %3").arg(what, quoted(*t), why));
        return std::nullopt;
    }
    return t;
}

std::optional<QString> SpecReader::slurmValue(const YAML::Node &n, const QString &what)
{
    auto t = text(n, what);
    if (t && containsControl(*t)) {
        error(n,
              QStringLiteral("%1 %2 must not contain control characters such as newlines (it becomes "
                             "an #SBATCH line)")
                  .arg(what, quoted(*t)));
        return std::nullopt;
    }
    return t;
}

bool SpecReader::expectMap(const YAML::Node &map, const QString &what, const QStringList &allowed,
                           const QStringList &ignored)
{
    if (!map.IsMap()) {
        error(map, QStringLiteral("%1: expected a mapping (key: value)").arg(what));
        return false;
    }
    QSet<QString> seen;
    for (const auto &item : map) {
        const auto key = text(item.first, what + QStringLiteral(" key"));
        if (!key)
            continue;
        if (seen.contains(*key))
            error(item.first, QStringLiteral("%1: %2 is given twice").arg(what, quoted(*key)));
        seen.insert(*key);
        if (allowed.contains(*key) || ignored.contains(*key))
            continue;
        const QString hint = closestWord(*key, allowed);
        error(item.first,
              QStringLiteral("%1: unknown key %2%3; known keys: %4")
                  .arg(what, quoted(*key),
                       hint.isEmpty() ? QString() : QStringLiteral(" (did you mean '%1'?)").arg(hint),
                       allowed.join(QStringLiteral(", "))));
    }
    return true;
}

namespace {

// A `program` without a `command` is W&B's default command, `${env} ${interpreter} ${program}
// ${args}`; a spec with neither sweeps the bundled trainer.
bool runsOwnCommand(const YAML::Node &root)
{
    return root.IsMap() && (bool(root["command"]) || bool(root["program"]));
}

// W&B keys about W&B's own service (its web app, Launch jobs and schedulers; the sweeps config
// schema, github.com/wandb/sweeps src/sweeps/config/schema.json), accepted so W&B files load
// unchanged and reported as ignored (SweepSpec::warnings). `program` is not among them: it is the
// program of the sweep (with W&B's default command where there is no `command`).
const QStringList kIgnoredTopLevel{
    QStringLiteral("project"),    QStringLiteral("entity"),     QStringLiteral("description"),
    QStringLiteral("job"),        QStringLiteral("scheduler"),  QStringLiteral("image_uri"),
    QStringLiteral("controller"), QStringLiteral("apiVersion"), QStringLiteral("kind")};
// W&B's command when a spec names a `program` and no `command` (wandb_agent.py
// DEFAULT_SWEEP_COMMAND).
const QStringList kWandbDefaultCommand{QStringLiteral("${env}"), QStringLiteral("${interpreter}"),
                                       QStringLiteral("${program}"), QStringLiteral("${args}")};
// Files of Orrery's own in a run dir, which a config file must not be named as.
const QStringList kRunDirFiles{
    QStringLiteral("trial.yaml"),   QStringLiteral("events.jsonl"),       QStringLiteral("exit.json"),
    QStringLiteral("stdout.log"),   QStringLiteral("stderr.log"),         QStringLiteral("command.argv"),
    QStringLiteral("command.env"),  QStringLiteral("command.workdir"),    QStringLiteral("args.json"),
    QStringLiteral("command.late"), QLatin1String(kWandbSweepParamsFile), QStringLiteral("command.code"),
    QStringLiteral("work")};
const QStringList kTopLevel{QStringLiteral("name"),         QStringLiteral("experiment"),
                            QStringLiteral("trainer"),      QStringLiteral("method"),
                            QStringLiteral("metric"),       QStringLiteral("parameters"),
                            QStringLiteral("run_cap"),      QStringLiteral("early_terminate"),
                            QStringLiteral("resources"),    QStringLiteral("max_concurrent"),
                            QStringLiteral("retries"),      QStringLiteral("seed"),
                            QStringLiteral("command"),      QStringLiteral("workdir"),
                            QStringLiteral("metrics"),      QStringLiteral("budget"),
                            QStringLiteral("program"),      QStringLiteral("config_file"),
                            QStringLiteral("launch"),       QStringLiteral("capture"),
                            QStringLiteral("tensorboard"),  QStringLiteral("artifacts"),
                            QStringLiteral("health_check"), QStringLiteral("distributed_env"),
                            QStringLiteral("code"),         QStringLiteral("env")};
// Orrery's keys for hangs and notifications (docs/sweeps.md "Resilient sweeps"), kept apart
// from kTopLevel so that each resilience key's block stays its own.
const QStringList kHangAndNotifyKeys{QStringLiteral("hang_timeout"), QStringLiteral("notify")};
// W&B's command macros Orrery expands (each a whole element of `command`), as W&B's agent does
// (wandb_agent.py, wandb/sdk/launch/sweeps/utils.py create_sweep_command_args).
const QStringList kWandbMacros{QStringLiteral("${env}"),
                               QStringLiteral("${interpreter}"),
                               QStringLiteral("${program}"),
                               QStringLiteral("${args}"),
                               QStringLiteral("${args_no_hyphens}"),
                               QStringLiteral("${args_no_boolean_flags}"),
                               QStringLiteral("${args_no_equals}"),
                               QStringLiteral("${args_append_hydra}"),
                               QStringLiteral("${args_override_hydra}"),
                               QStringLiteral("${args_json}"),
                               QStringLiteral("${args_json_file}")};

// The spec's sections, each read into the spec with its problems in the reader.
class SpecParser {
public:
    SpecParser(SpecReader &reader, const TrainerSchema &schema) : m_reader(reader), m_schema(schema) { }

    void parse(const YAML::Node &root, SweepSpec &spec)
    {
        if (!root.IsMap()) {
            m_reader.error(
                root.IsDefined() && !root.IsNull() ? lineOf(root) : 0,
                QStringLiteral("a sweep spec is a YAML mapping (name:, method:, parameters:, ...)"));
            return;
        }
        parseNames(root, spec);
        m_command = runsOwnCommand(root);
        parseProgram(root, spec);
        parseMethod(root, spec);
        const YAML::Node metric = root["metric"];
        parseMetric(metric, spec);
        ParamParser(m_reader, m_schema, m_command).parameters(root["parameters"], lineOf(root), spec);
        parseCounts(root, spec);
        parseEarlyTerminate(root["early_terminate"], spec);
        parseResources(root["resources"], spec);
        parseBudget(root["budget"], spec);
        parseHangTimeout(root["hang_timeout"], spec);
        parseNotify(root["notify"], spec);
        parseConfigFile(root["config_file"], spec);
        parseCommand(root, spec);
        parseHealthCheck(root["health_check"], spec);
        // A metric the bundled trainer never logs would leave bayes, early stopping and "best"
        // waiting for nothing; said, not refused (a later trainer may log it). A command (the
        // user's own program) logs what it likes.
        if (!m_command && metric && metric["name"] && !spec.metricName.isEmpty())
            if (const QString w = trainerMetricWarning(spec.metricName); !w.isEmpty())
                m_reader.warn(metric["name"], w);
        checkCrossKeys(m_reader, root, spec);
    }

private:
    // The top level's keys (W&B's own said to be ignored), and the sweep's and experiment's names.
    void parseNames(const YAML::Node &root, SweepSpec &spec)
    {
        m_reader.expectMap(root, QStringLiteral("sweep"), kTopLevel + kHangAndNotifyKeys, kIgnoredTopLevel);
        for (const auto &item : root)
            if (item.first.IsScalar() &&
                kIgnoredTopLevel.contains(QString::fromStdString(item.first.Scalar())))
                m_reader.warn(item.first,
                              QStringLiteral("`%1` is W&B's (its web service); Orrery ignores it")
                                  .arg(QString::fromStdString(item.first.Scalar())));
        if (const YAML::Node n = root["name"]) {
            if (auto s = m_reader.name(n, QStringLiteral("name")))
                spec.name = *s;
        } else {
            spec.name = QFileInfo(spec.file).completeBaseName();
        }
        if (const YAML::Node n = root["experiment"]) {
            if (auto s = m_reader.name(n, QStringLiteral("experiment")))
                spec.experiment = *s;
        }
    }

    // What the sweep runs: W&B's `program`, not a Launch `job`, and the bundled trainer or a
    // program of the user's but not both.
    void parseProgram(const YAML::Node &root, SweepSpec &spec)
    {
        if (const YAML::Node n = root["program"]) {
            if (auto s = m_reader.text(n, QStringLiteral("program"))) {
                if (s->isEmpty() || containsControl(*s))
                    m_reader.error(
                        n,
                        QStringLiteral("program %1: expected a file name such as train.py").arg(quoted(*s)));
                else
                    spec.program = *s;
            }
        }
        if (root["job"] && !m_command)
            m_reader.error(
                root["job"],
                QStringLiteral("`job` is a W&B Launch job, which Orrery cannot run: name the script "
                               "it runs with `program: FILE` (or a `command`)"));
        if (root["trainer"] && m_command)
            m_reader.error(root["trainer"],
                           QStringLiteral("a sweep runs either the bundled trainer (`trainer`) or its own "
                                          "program (`command` or `program`), not both"));
        if (const YAML::Node n = root["trainer"]) {
            if (m_reader.expectMap(n, QStringLiteral("trainer"), {QStringLiteral("config")}) && n["config"]) {
                if (auto s = m_reader.text(n["config"], QStringLiteral("trainer.config")))
                    spec.trainerConfig = *s;
            }
        }
    }

    void parseMethod(const YAML::Node &root, SweepSpec &spec)
    {
        const YAML::Node n = root["method"];
        if (!n) {
            m_reader.error(lineOf(root), QStringLiteral("`method` is missing: grid, random or bayes"));
            return;
        }
        const auto m = m_reader.text(n, QStringLiteral("method"));
        if (m == QLatin1String("grid"))
            spec.method = SearchMethod::Grid;
        else if (m == QLatin1String("random"))
            spec.method = SearchMethod::Random;
        else if (m == QLatin1String("bayes"))
            spec.method = SearchMethod::Bayes;
        else if (m)
            m_reader.error(n,
                           QStringLiteral("method %1: expected grid, random or bayes%2")
                               .arg(quoted(*m),
                                    didYouMean(*m,
                                               {QStringLiteral("grid"), QStringLiteral("random"),
                                                QStringLiteral("bayes")})));
    }

    void parseMetric(const YAML::Node &metric, SweepSpec &spec)
    {
        if (!metric ||
            !m_reader.expectMap(metric, QStringLiteral("metric"),
                                {QStringLiteral("name"), QStringLiteral("goal"), QStringLiteral("target")},
                                {QStringLiteral("impute"), QStringLiteral("impute_while_running")}))
            return;
        for (const char *key : {"impute", "impute_while_running"})
            if (metric[key])
                m_reader.warn(
                    metric[key],
                    QStringLiteral("metric.%1 is W&B's; Orrery ignores it (a failed trial counts as "
                                   "the worst for bayes)")
                        .arg(QLatin1String(key)));
        if (const YAML::Node t = metric["target"])
            spec.metricTarget = m_reader.number(t, QStringLiteral("metric.target"));
        if (metric["name"]) {
            if (auto s = m_reader.text(metric["name"], QStringLiteral("metric.name")))
                spec.metricName = *s;
        } else {
            m_reader.error(metric, QStringLiteral("metric: `name` is missing (e.g. eval/loss)"));
        }
        if (const YAML::Node g = metric["goal"]) {
            const auto goal = m_reader.text(g, QStringLiteral("metric.goal"));
            if (goal == QLatin1String("minimize"))
                spec.goal = Goal::Minimize;
            else if (goal == QLatin1String("maximize"))
                spec.goal = Goal::Maximize;
            else if (goal)
                m_reader.error(
                    g, QStringLiteral("metric.goal %1: expected minimize or maximize").arg(quoted(*goal)));
        }
    }

    // run_cap, max_concurrent, retries and seed.
    void parseCounts(const YAML::Node &root, SweepSpec &spec)
    {
        if (const YAML::Node n = root["run_cap"]) {
            if (auto v = m_reader.integer(n, QStringLiteral("run_cap"), 1))
                spec.runCap = int(std::min<qint64>(*v, 1000000));
        }
        if (const YAML::Node n = root["max_concurrent"]) {
            if (auto v = m_reader.integer(n, QStringLiteral("max_concurrent"), 1))
                spec.maxConcurrent = int(std::min<qint64>(*v, 100000));
        }
        if (const YAML::Node n = root["retries"]) {
            if (auto v = m_reader.integer(n, QStringLiteral("retries"), 0))
                spec.retries = int(std::min<qint64>(*v, 1000));
        }
        if (const YAML::Node n = root["seed"]) {
            if (auto v = m_reader.integer(n, QStringLiteral("seed"), 0))
                spec.seed = quint64(*v);
        }
    }

    // `env: {NAME: value, ...}` (command.h CommandSpec::env): names as a shell would take them,
    // none of Orrery's own (ORRERY_*, the distributed variables: distributed_env says those).
    void parseEnv(const YAML::Node &n, CommandSpec &c)
    {
        if (!n)
            return;
        if (!n.IsMap()) {
            m_reader.error(
                n, QStringLiteral("env: expected a mapping of variables, e.g. {WANDB_MODE: offline}"));
            return;
        }
        static const QRegularExpression name(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
        for (const auto &item : n) {
            const QString key = QString::fromStdString(item.first.Scalar());
            if (!name.match(key).hasMatch()) {
                m_reader.error(
                    item.first,
                    QStringLiteral("env: %1 is not a variable name (letters, digits, _)").arg(quoted(key)));
                continue;
            }
            if (key.startsWith(QLatin1String("ORRERY_")) || distributedEnvNames().contains(key)) {
                m_reader.error(
                    item.first,
                    QStringLiteral("env: %1 is Orrery's to set%2")
                        .arg(key,
                             key.startsWith(QLatin1String("ORRERY_"))
                                 ? QString()
                                 : QStringLiteral(" (distributed_env: always gives a trial all of them)")));
                continue;
            }
            if (!item.second.IsScalar()) {
                m_reader.error(
                    item.second,
                    QStringLiteral("env: %1: expected one value (text, a number, true or false)").arg(key));
                continue;
            }
            const QString value = QString::fromStdString(item.second.Scalar());
            if (value.contains(QChar(0))) {
                m_reader.error(item.second,
                               QStringLiteral("env: %1: a value cannot hold a NUL byte").arg(key));
                continue;
            }
            c.env.append({key, value});
        }
    }

    // `code: {snapshot: bool, link: [names], fresh: [names]}` (command.h CommandSpec::Code).
    void parseCode(const YAML::Node &n, CommandSpec &c)
    {
        if (!n)
            return;
        if (!m_reader.expectMap(
                n, QStringLiteral("code"),
                {QStringLiteral("snapshot"), QStringLiteral("link"), QStringLiteral("fresh")}))
            return;
        if (const YAML::Node s = n["snapshot"]) {
            if (!s.IsScalar() || (s.Scalar() != "true" && s.Scalar() != "false"))
                m_reader.error(s, QStringLiteral("code.snapshot: expected true or false"));
            else
                c.code.snapshot = s.Scalar() == "true";
        }
        for (const char *key : {"link", "fresh"}) {
            const YAML::Node l = n[key];
            if (!l)
                continue;
            QStringList &names = QLatin1String(key) == QLatin1String("link") ? c.code.link : c.code.fresh;
            if (!l.IsSequence()) {
                m_reader.error(
                    l,
                    QStringLiteral("code.%1: expected a list of paths relative to workdir, e.g. [data]")
                        .arg(QLatin1String(key)));
                continue;
            }
            for (const auto &item : l) {
                const auto t = m_reader.text(item, QStringLiteral("code.%1").arg(QLatin1String(key)));
                if (!t)
                    continue;
                const QString clean = QDir::cleanPath(*t);
                if (t->isEmpty() || containsControl(*t) || QDir::isAbsolutePath(clean) ||
                    clean == QLatin1String(".") || clean.startsWith(QLatin1String("..")))
                    m_reader.error(item,
                                   QStringLiteral("code.%1: %2 is not a path inside workdir")
                                       .arg(QLatin1String(key), quoted(*t)));
                else
                    names << clean;
            }
        }
    }

    // `command`, `workdir` and `metrics`: a program of the user's (command.h).
    void parseCommand(const YAML::Node &root, SweepSpec &spec)
    {
        refuseCommandKeys(root);
        if (!m_command)
            return;
        const YAML::Node n = root["command"];
        CommandSpec c;
        c.line = lineOf(n ? n : root["program"]);
        if (n && (!n.IsSequence() || n.size() == 0)) {
            m_reader.error(
                n,
                QStringLiteral("command: expected a list of words, e.g. [python, train.py, --lr, "
                               "\"{{optim.lr}}\"] (each word is one argument; no shell reads them)"));
            return;
        }
        const QStringList known = knownPlaceholders(spec);
        if (!n)
            c.argv = kWandbDefaultCommand;
        for (const auto &word : n)
            if (const auto t = m_reader.text(word, QStringLiteral("command")))
                c.argv << commandWord(word, *t, known, spec);
        if (!c.argv.isEmpty() && c.argv.front().isEmpty())
            m_reader.error(n, QStringLiteral("command: the program (the first word) is empty"));
        parseWorkdir(root["workdir"], c);
        parseLaunch(root, c);
        parseCode(root["code"], c);
        parseEnv(root["env"], c);
        if (const YAML::Node cap = root["capture"]) {
            if (!cap.IsScalar() || (cap.Scalar() != "true" && cap.Scalar() != "false"))
                m_reader.error(cap, QStringLiteral("capture: expected true or false"));
            else
                c.capture = cap.Scalar() == "true";
        }
        parseMetrics(root["metrics"], c);
        parseRunFiles(root, c);
        spec.command = c;
    }

    // The keys of a command in a sweep of the bundled trainer.
    void refuseCommandKeys(const YAML::Node &root)
    {
        for (const char *key : {"launch", "capture", "distributed_env", "code", "env"})
            if (root[key] && !m_command)
                m_reader.error(
                    root[key],
                    QStringLiteral("`%1` goes with a `command`; the bundled trainer starts its own ranks and "
                                   "writes its own events.jsonl")
                        .arg(QLatin1String(key)));
        for (const char *key : {"workdir", "metrics", "tensorboard", "artifacts"})
            if (root[key] && !m_command)
                m_reader.error(
                    root[key],
                    QStringLiteral("`%1` goes with a `command`; the bundled trainer runs in its run "
                                   "directory and writes its metrics to events.jsonl")
                        .arg(QLatin1String(key)));
    }

    // The {{key}} placeholders a command's words may name: the builtins, the config file and the
    // parameters, two of which must not become the same environment variable.
    QStringList knownPlaceholders(const SweepSpec &spec)
    {
        QStringList known = commandBuiltins();
        if (spec.configFile)
            known << QStringLiteral("config");
        QHash<QString, QString> envOwner;  // ORRERY_PARAM_X → the key that has it
        for (const ParamSpec &p : spec.parameters) {
            known << p.key;
            const QString env = paramEnvName(p.key);
            if (envOwner.contains(env))
                m_reader.error(
                    p.line,
                    QStringLiteral("parameters %1 and %2 both become the environment variable %3; rename one")
                        .arg(quoted(envOwner.value(env)), quoted(p.key), env));
            envOwner.insert(env, p.key);
        }
        return known;
    }

    // One word of `command`, as written: a W&B macro (a word of its own), or text whose {{key}}
    // placeholders are all known.
    QString commandWord(const YAML::Node &word, const QString &t, const QStringList &known,
                        const SweepSpec &spec)
    {
        if (t.startsWith(QLatin1String("${"))) {
            if (!kWandbMacros.contains(t))
                m_reader.error(word,
                               QStringLiteral("command: %1 is not a macro Orrery expands; known: %2 (each a "
                                              "word of its own), or {{key}} placeholders")
                                   .arg(quoted(t), kWandbMacros.join(QStringLiteral(", "))));
            else if (t == QLatin1String("${program}") && spec.program.isEmpty())
                m_reader.error(word, QStringLiteral("command: ${program} needs `program: FILE` in the spec"));
            return t;
        }
        bool malformed = false;
        for (const QString &name : placeholdersIn(t, &malformed))
            if (!known.contains(name))
                m_reader.error(word,
                               QStringLiteral("command: unknown placeholder {{%1}}%2; known: the parameters "
                                              "and %3")
                                   .arg(name, didYouMean(name, known),
                                        commandBuiltins().join(QStringLiteral(", ")) +
                                            (spec.configFile ? QStringLiteral(", config") : QString())));
        if (malformed)
            m_reader.error(word,
                           QStringLiteral("command: %1 opens a placeholder with {{ but does not close it")
                               .arg(quoted(t)));
        return t;
    }

    void parseWorkdir(const YAML::Node &w, CommandSpec &c)
    {
        if (!w)
            return;
        if (auto t = m_reader.text(w, QStringLiteral("workdir"))) {
            if (t->isEmpty() || containsControl(*t))
                m_reader.error(w, QStringLiteral("workdir %1: expected a directory").arg(quoted(*t)));
            else
                c.workdir = *t;
        }
    }

    // `launch` (docs/sweeps.md "Launchers") and `distributed_env`: how a trial's processes start.
    void parseLaunch(const YAML::Node &root, CommandSpec &c)
    {
        if (const YAML::Node l = root["launch"]) {
            const auto t = m_reader.text(l, QStringLiteral("launch"));
            c.launchWritten = bool(t);
            if (t && *t == QLatin1String("per_node"))
                c.launch = CommandSpec::Launch::PerNode;
            else if (t && *t != QLatin1String("per_gpu"))
                m_reader.error(
                    l,
                    QStringLiteral("launch %1: expected per_gpu (one process per GPU, each a rank) or "
                                   "per_node (one per node, for torchrun or accelerate launch)")
                        .arg(quoted(*t)));
        }
        if (const YAML::Node d = root["distributed_env"]) {
            const auto t = m_reader.text(d, QStringLiteral("distributed_env"));
            if (t && *t == QLatin1String("always"))
                c.distributedEnv = CommandSpec::DistributedEnv::Always;
            else if (t && *t == QLatin1String("never"))
                c.distributedEnv = CommandSpec::DistributedEnv::Never;
            else if (t && *t != QLatin1String("auto"))
                m_reader.error(
                    d,
                    QStringLiteral("distributed_env %1: expected auto (RANK, WORLD_SIZE, ... only for a "
                                   "trial of several processes or a written `launch:`), always or never")
                        .arg(quoted(*t)));
        }
    }

    // `metrics: [{name, regex, step_regex}]`: metrics read from the program's output by regex.
    void parseMetrics(const YAML::Node &m, CommandSpec &c)
    {
        if (!m)
            return;
        if (!m.IsSequence()) {
            m_reader.error(m,
                           QStringLiteral("metrics: expected a list such as [{name: train/loss, regex: "
                                          "'loss=([-+.0-9eE]+)'}]"));
            return;
        }
        QSet<QString> names;
        for (const auto &item : m) {
            if (!m_reader.expectMap(
                    item, QStringLiteral("metrics entry"),
                    {QStringLiteral("name"), QStringLiteral("regex"), QStringLiteral("step_regex")}))
                continue;
            if (!item["name"] || !item["regex"]) {
                m_reader.error(item, QStringLiteral("metrics entry: needs `name` and `regex`"));
                continue;
            }
            const MetricRule r = metricRule(item, names);
            if (!r.name.isEmpty() && !r.regex.isEmpty())
                c.metrics.append(r);
        }
    }

    // One `metrics` entry with its `name` and `regex`; `names`: the entries' names so far.
    MetricRule metricRule(const YAML::Node &item, QSet<QString> &names)
    {
        MetricRule r;
        r.line = lineOf(item);
        const auto name = m_reader.text(item["name"], QStringLiteral("metrics.name"));
        if (name && (name->isEmpty() || containsControl(*name)))
            m_reader.error(item["name"],
                           QStringLiteral("metrics.name %1: expected a metric name such as train/loss")
                               .arg(quoted(*name)));
        else if (name && names.contains(*name))
            m_reader.error(item["name"], QStringLiteral("metrics: %1 is given twice").arg(quoted(*name)));
        else if (name)
            r.name = *name;
        if (name)
            names.insert(*name);
        metricPattern(item, "regex", r.regex);
        if (item["step_regex"])
            metricPattern(item, "step_regex", r.stepRegex);
        return r;
    }

    // A metrics entry's regex (`key`), into `into` when it compiles and captures the number.
    void metricPattern(const YAML::Node &item, const char *key, QString &into)
    {
        const auto p = m_reader.text(item[key], QStringLiteral("metrics.%1").arg(QLatin1String(key)));
        if (!p)
            return;
        const QRegularExpression re(*p);
        if (!re.isValid())
            m_reader.error(item[key],
                           QStringLiteral("metrics.%1 %2: %3 at offset %4")
                               .arg(QLatin1String(key), quoted(*p), re.errorString())
                               .arg(re.patternErrorOffset()));
        else if (re.captureCount() < 1)
            m_reader.error(item[key],
                           QStringLiteral("metrics.%1 %2: put the number in a capture group, e.g. "
                                          "'loss=([-+.0-9eE]+)'")
                               .arg(QLatin1String(key), quoted(*p)));
        else
            into = *p;
    }

    // `tensorboard: {dir: ..}` and `artifacts: [{glob, step_regex}]`: files the program writes
    // (runfiles.h).
    void parseRunFiles(const YAML::Node &root, CommandSpec &c)
    {
        if (const YAML::Node tb = root["tensorboard"]; tb &&
            m_reader.expectMap(tb, QStringLiteral("tensorboard"), {QStringLiteral("dir")}) && tb["dir"]) {
            if (const auto dir = m_reader.text(tb["dir"], QStringLiteral("tensorboard.dir"));
                dir && !dir->isEmpty())
                c.tensorboardDir = *dir;
        }
        const YAML::Node a = root["artifacts"];
        if (!a)
            return;
        if (!a.IsSequence()) {
            m_reader.error(
                a,
                QStringLiteral("artifacts: expected a list such as [{glob: \"samples/*.mp4\", step_regex: "
                               "'step_(\\d+)'}]"));
            return;
        }
        for (const auto &item : a) {
            if (!m_reader.expectMap(item, QStringLiteral("artifacts entry"),
                                    {QStringLiteral("glob"), QStringLiteral("step_regex")}))
                continue;
            ArtifactRule r;
            r.line = lineOf(item);
            const auto glob =
                item["glob"] ? m_reader.text(item["glob"], QStringLiteral("artifacts.glob")) : std::nullopt;
            if (!glob || glob->isEmpty()) {
                m_reader.error(item,
                               QStringLiteral("artifacts entry: needs a `glob` such as \"samples/*.mp4\""));
                continue;
            }
            r.glob = *glob;
            if (item["step_regex"]) {
                const auto p = m_reader.text(item["step_regex"], QStringLiteral("artifacts.step_regex"));
                const QRegularExpression re(p.value_or(QString()));
                if (!p || !re.isValid() || re.captureCount() < 1) {
                    m_reader.error(
                        item["step_regex"],
                        QStringLiteral("artifacts.step_regex: expected a regex with the step in a capture "
                                       "group, e.g. 'step_(\\d+)'"));
                    continue;
                }
                r.stepRegex = *p;
            }
            c.artifacts.append(r);
        }
    }

    void parseEarlyTerminate(const YAML::Node &n, SweepSpec &spec)
    {
        if (!n)
            return;
        const QString what = QStringLiteral("early_terminate");
        if (!m_reader.expectMap(n, what,
                                {QStringLiteral("type"), QStringLiteral("min_iter"),
                                 QStringLiteral("max_iter"), QStringLiteral("s"), QStringLiteral("eta"),
                                 QStringLiteral("strict"), QStringLiteral("min_step"),
                                 QStringLiteral("min_trials")}))
            return;
        EarlyTerminate et;
        const auto type = n["type"] ? m_reader.text(n["type"], what + QStringLiteral(".type")) : std::nullopt;
        if (type == QLatin1String("hyperband")) {
            et.type = EarlyTerminate::Type::Hyperband;
            parseHyperband(n, what, et);
        } else if (type == QLatin1String("median")) {
            et.type = EarlyTerminate::Type::Median;
            if (n["min_step"]) {
                if (auto v = m_reader.integer(n["min_step"], what + QStringLiteral(".min_step"), 0))
                    et.minStep = *v;
            }
            if (n["min_trials"]) {
                if (auto v = m_reader.integer(n["min_trials"], what + QStringLiteral(".min_trials"), 1))
                    et.minTrials = int(std::min<qint64>(*v, 1000000));
            }
        } else if (type) {
            m_reader.error(n["type"],
                           what +
                               QStringLiteral(".type %1: expected hyperband or median").arg(quoted(*type)));
            return;
        } else if (!n["type"]) {
            m_reader.error(n, what + QStringLiteral(": `type` is missing (hyperband or median)"));
            return;
        }
        spec.earlyTerminate = et;
    }

    // Hyperband's rungs (min_iter, or max_iter and s), eta and strict.
    void parseHyperband(const YAML::Node &n, const QString &what, EarlyTerminate &et)
    {
        if (n["eta"]) {
            const auto eta = m_reader.number(n["eta"], what + QStringLiteral(".eta"));
            if (eta && *eta <= 1)
                m_reader.error(n["eta"], what + QStringLiteral(".eta must be greater than 1"));
            else if (eta)
                et.eta = *eta;
        }
        if (const YAML::Node strict = n["strict"]) {
            const auto t = m_reader.text(strict, what + QStringLiteral(".strict"));
            const auto b = t ? parseBool(*t) : std::nullopt;
            if (t && !b)
                m_reader.error(strict, what + QStringLiteral(".strict: expected true or false"));
            et.strict = b.value_or(false);
        }
        if (n["min_iter"]) {
            if (auto v = m_reader.integer(n["min_iter"], what + QStringLiteral(".min_iter"), 1))
                et.minIter = int(std::min<qint64>(*v, 1 << 30));
        } else if (n["max_iter"] && n["s"]) {
            if (auto v = m_reader.integer(n["max_iter"], what + QStringLiteral(".max_iter"), 1))
                et.maxIter = int(std::min<qint64>(*v, 1 << 30));
            if (auto v = m_reader.integer(n["s"], what + QStringLiteral(".s"), 1))
                et.s = int(std::min<qint64>(*v, 64));
        } else {
            m_reader.error(n, what + QStringLiteral(": hyperband needs min_iter, or max_iter and s"));
        }
    }

    void parseResources(const YAML::Node &n, SweepSpec &spec)
    {
        if (!n)
            return;
        const QString what = QStringLiteral("resources");
        if (!m_reader.expectMap(n, what,
                                {QStringLiteral("nodes"), QStringLiteral("gpus_per_node"),
                                 QStringLiteral("cpus_per_task"), QStringLiteral("mem"),
                                 QStringLiteral("time"), QStringLiteral("partition"),
                                 QStringLiteral("account")}))
            return;
        SweepResources &r = spec.resources;
        const auto count = [&](const char *key, qint64 minimum, int &into) {
            if (n[key])
                if (auto v = m_reader.integer(n[key], what + QLatin1Char('.') + QLatin1String(key), minimum))
                    into = int(std::min<qint64>(*v, 1 << 20));
        };
        count("nodes", 1, r.nodes);
        count("gpus_per_node", 0, r.gpusPerNode);
        count("cpus_per_task", 1, r.cpusPerTask);
        const auto str = [&](const char *key, QString &into) {
            if (n[key])
                if (auto v = m_reader.slurmValue(n[key], what + QLatin1Char('.') + QLatin1String(key)))
                    into = *v;
        };
        str("mem", r.mem);
        str("time", r.time);
        if (const SlurmDuration t = parseSlurmDuration(r.time); !t.ok()) {
            m_reader.error(n["time"], what + QStringLiteral(".time: ") + t.error);
            r.time.clear();
        }
        str("partition", r.partition);
        str("account", r.account);
    }

    // Orrery's `budget: {gpu_hours: N}` (docs/sweeps.md "GPU-hours and cost"), after resources:
    // a budget needs a time limit and GPUs, and room for at least one trial.
    void parseBudget(const YAML::Node &n, SweepSpec &spec)
    {
        if (!n || !m_reader.expectMap(n, QStringLiteral("budget"), {QStringLiteral("gpu_hours")}))
            return;
        const YAML::Node h = n["gpu_hours"];
        if (!h) {
            m_reader.error(n,
                           QStringLiteral("budget: `gpu_hours` is missing (e.g. budget: {gpu_hours: 100})"));
            return;
        }
        const auto v = m_reader.number(h, QStringLiteral("budget.gpu_hours"));
        if (!v)
            return;
        const SweepResources &r = spec.resources;
        const auto worst = worstGpuHours(r);
        if (*v <= 0)
            m_reader.error(
                h, QStringLiteral("budget.gpu_hours must be greater than 0, got %1").arg(formatHours(*v)));
        else if (allocatedGpus(r) == 0)
            m_reader.error(
                h,
                QStringLiteral("budget.gpu_hours: the trials ask for no GPUs (resources.gpus_per_node "
                               "is 0), so nothing would count against the budget"));
        else if (!worst)
            m_reader.error(
                h,
                QStringLiteral("budget.gpu_hours needs a time limit (resources.time, e.g. \"02:00:00\"): "
                               "without one a trial's GPU-hours are unbounded"));
        else if (*worst > *v * (1 + 1e-12))
            m_reader.error(
                h,
                QStringLiteral("budget.gpu_hours %1 is less than one trial could use (%2 × %3 GPUs = %4 "
                               "GPU-hours): no trial would start")
                    .arg(formatHours(*v), r.time)
                    .arg(allocatedGpus(r))
                    .arg(formatHours(*worst)));
        else
            spec.budgetGpuHours = *v;
    }

    // `health_check: true|false|{threshold: value, ...}` (docs/sweeps.md "Health check"). Read
    // after the command: unset, it is on for the bundled trainer and off for a command (whose
    // cluster may not have orrery-train deployed).
    void parseHealthCheck(const YAML::Node &n, SweepSpec &spec)
    {
        HealthCheckSpec &h = spec.healthCheck;
        h.enabled = !m_command;
        if (!n)
            return;
        h.line = lineOf(n);
        if (n.IsScalar() && (n.Scalar() == "true" || n.Scalar() == "false")) {
            h.enabled = n.Scalar() == "true";
            return;
        }
        if (!n.IsMap()) {
            m_reader.error(n,
                           QStringLiteral("health_check: expected true, false or thresholds such as "
                                          "{min_matmul_gflops: 5000, min_busbw_gbps: 10}"));
            return;
        }
        if (!m_reader.expectMap(n, QStringLiteral("health_check"), healthCheckThresholdNames()))
            return;
        h.enabled = true;
        for (const auto &item : n) {
            const QString key = QString::fromStdString(item.first.Scalar());
            if (!healthCheckThresholdNames().contains(key))
                continue;  // reported by expectMap
            const auto v = m_reader.number(item.second, QStringLiteral("health_check.") + key);
            if (!v)
                continue;
            if (*v < 0)
                m_reader.error(item.second,
                               QStringLiteral("health_check.%1 must be at least 0, got %2").arg(key).arg(*v));
            else if (key == QLatin1String("memory_fraction") && (*v <= 0 || *v > 0.95))
                m_reader.error(
                    item.second,
                    QStringLiteral("health_check.memory_fraction takes a fraction of the GPU's free memory "
                                   "in (0, 0.95], got %1")
                        .arg(*v));
            else
                h.thresholds.append({key, *v});
        }
    }

    // Orrery's `hang_timeout: 10m` (docs/sweeps.md "Hangs"): how long a running attempt may show
    // no progress before it is ended and resumed; `auto` (or no key) derives it from the attempt's
    // own pace (sweeprules.h hangLimits). Under a minute is allowed (tests use seconds) but
    // warned about: a checkpoint or an evaluation easily pauses the output that long.
    void parseHangTimeout(const YAML::Node &n, SweepSpec &spec)
    {
        if (!n)
            return;
        const auto t = m_reader.text(n, QStringLiteral("hang_timeout"));
        if (!t || t->trimmed() == QLatin1String("auto"))
            return;
        const Parsed<qint64> ms = parseHangDuration(*t);
        if (!ms) {
            m_reader.error(n, QStringLiteral("hang_timeout %1: %2").arg(quoted(*t), ms.problem()));
            return;
        }
        if (*ms < 60'000)
            m_reader.warn(
                n,
                QStringLiteral("hang_timeout %1 is under a minute: a checkpoint, an evaluation or a slow "
                               "start may show no progress that long, and the attempt is then ended")
                    .arg(quoted(*t)));
        spec.hangTimeoutMs = *ms;
    }

    // Orrery's `notify:` (docs/sweeps.md "Notifications"): a command as a list of words or a
    // string (split into words as a shell would, without running one), or an http(s) URL.
    void parseNotify(const YAML::Node &n, SweepSpec &spec)
    {
        if (!n)
            return;
        QStringList words;
        if (n.IsSequence()) {
            for (const YAML::Node &w : n) {
                const auto s = m_reader.text(w, QStringLiteral("notify"));
                if (!s)
                    return;
                words << *s;
            }
        } else {
            const auto s = m_reader.text(n, QStringLiteral("notify"));
            if (!s)
                return;
            words << *s;
        }
        const Parsed<NotifyTarget> target = parseNotifyTarget(words);
        if (!target) {
            m_reader.error(n, QStringLiteral("notify: %1").arg(target.problem()));
            return;
        }
        spec.notify = *target;
    }

    // Orrery's `config_file: FILE` or `{base: FILE, allow_new_keys: false}` (configfile.h): the
    // program's own config, each trial's copy with its parameters set. The base is read and the
    // parameters' paths checked by parseSweepSpecAt, which knows where the spec is.
    void parseConfigFile(const YAML::Node &n, SweepSpec &spec)
    {
        if (!n)
            return;
        const QString what = QStringLiteral("config_file");
        SweepSpec::ConfigFile cf;
        cf.line = lineOf(n);
        // yaml-cpp's assignment writes through to the node: reset() re-points instead.
        YAML::Node base;
        base.reset(n);
        if (n.IsMap()) {
            if (!m_reader.expectMap(n, what, {QStringLiteral("base"), QStringLiteral("allow_new_keys")}))
                return;
            base.reset(n["base"]);
            if (!base) {
                m_reader.error(
                    n,
                    what + QStringLiteral(": `base` is missing (the config file each trial gets a copy of)"));
                return;
            }
            if (const YAML::Node a = n["allow_new_keys"]) {
                const auto t = m_reader.text(a, what + QStringLiteral(".allow_new_keys"));
                const auto b = t ? parseBool(*t) : std::nullopt;
                if (t && !b)
                    m_reader.error(a, what + QStringLiteral(".allow_new_keys: expected true or false"));
                cf.allowNewKeys = b.value_or(false);
            }
        }
        const auto file = m_reader.text(base, what);
        if (!file)
            return;
        cf.base = *file;
        cf.fileName = QFileInfo(*file).fileName();
        if (file->isEmpty() || containsControl(*file) || cf.fileName.isEmpty())
            m_reader.error(base, QStringLiteral("%1 %2: expected a file name").arg(what, quoted(*file)));
        else if (!configFormatOf(*file))
            m_reader.error(base,
                           QStringLiteral("%1 %2: Orrery edits YAML (.yaml, .yml) and JSON (.json) configs")
                               .arg(what, quoted(*file)));
        else if (kRunDirFiles.contains(cf.fileName))
            m_reader.error(base,
                           QStringLiteral("%1 %2: a run dir has Orrery's own %3; rename the config")
                               .arg(what, quoted(*file), cf.fileName));
        if (!m_command)
            m_reader.error(n,
                           QStringLiteral("%1 goes with a `command` or `program` (the bundled trainer takes "
                                          "`trainer: {config: ...}`)")
                               .arg(what));
        spec.configFile = cf;
    }

    SpecReader &m_reader;
    const TrainerSchema &m_schema;
    bool m_command = false;  // the spec runs its own command: parameters are not the trainer's
};

}  // namespace

SpecParse parseSweepSpec(const QByteArray &yaml, const QString &file, const TrainerSchema &schema)
{
    SpecParse result;
    SweepSpec spec;
    spec.file = file;
    spec.experiment = QStringLiteral("Default");
    SpecReader reader(file);
    try {
        const YAML::Node root = YAML::Load(yaml.toStdString());
        SpecParser(reader, schema).parse(root, spec);
    } catch (const YAML::Exception &e) {
        // yaml-cpp's marks are 0-based; editors count from 1.
        reader.error(e.mark.line >= 0 ? e.mark.line + 1 : 0,
                     QStringLiteral("malformed YAML: %1").arg(escapeControl(QString::fromStdString(e.msg))));
    }
    result.errors = reader.errors;
    std::stable_sort(result.errors.begin(), result.errors.end(),
                     [](const SpecError &a, const SpecError &b) { return a.line < b.line; });
    spec.warnings = reader.warnings;
    if (result.errors.isEmpty())
        result.spec = spec;
    return result;
}

bool specRunsOwnCommand(const QByteArray &yaml)
{
    try {
        return runsOwnCommand(YAML::Load(yaml.toStdString()));
    } catch (const YAML::Exception &) {
        return false;
    }
}

// --- hang_timeout and notify (docs/sweeps.md "Resilient sweeps") ------------------------------

namespace {

// Words as a POSIX shell splits them: blanks separate, single quotes keep everything, double
// quotes keep everything but a backslash before `"`, `\`, `$` or a backtick, a backslash outside
// quotes keeps the next character. Nothing is expanded. nullopt for unbalanced quotes.
std::optional<QStringList> shellWords(const QString &text)
{
    QStringList words;
    QString word;
    bool inWord = false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (c == QLatin1Char('\'')) {
            const qsizetype end = text.indexOf(QLatin1Char('\''), i + 1);
            if (end < 0)
                return std::nullopt;
            word += text.mid(i + 1, end - i - 1);
            inWord = true;
            i = end;
        } else if (c == QLatin1Char('"')) {
            qsizetype j = i + 1;
            for (; j < text.size() && text[j] != QLatin1Char('"'); ++j) {
                if (text[j] == QLatin1Char('\\') && j + 1 < text.size() &&
                    QStringLiteral("\"\\$`").contains(text[j + 1]))
                    ++j;
                word += text[j];
            }
            if (j >= text.size())
                return std::nullopt;
            inWord = true;
            i = j;
        } else if (c == QLatin1Char('\\')) {
            if (i + 1 < text.size())
                word += text[++i];
            inWord = true;
        } else if (c == QLatin1Char(' ') || c == QLatin1Char('\t') || c == QLatin1Char('\n')) {
            if (inWord)
                words << word;
            word.clear();
            inWord = false;
        } else {
            word += c;
            inWord = true;
        }
    }
    if (inWord)
        words << word;
    return words;
}

}  // namespace

Parsed<NotifyTarget> parseNotifyTarget(const QStringList &words)
{
    QStringList argv = words;
    if (words.size() == 1) {
        const QString w = words.front().trimmed();
        if (w.startsWith(QLatin1String("http://")) || w.startsWith(QLatin1String("https://"))) {
            const QUrl url(w, QUrl::StrictMode);
            if (!url.isValid() || url.host().isEmpty())
                return Problem{QStringLiteral("%1 is not a valid URL (e.g. https://hooks.example.org/orrery)")
                                   .arg(quoted(w))};
            NotifyTarget t;
            t.url = w;
            return t;
        }
        const auto split = shellWords(words.front());
        if (!split)
            return Problem{QStringLiteral("%1 has an unbalanced quote").arg(quoted(words.front()))};
        argv = *split;
    }
    if (argv.isEmpty() || argv.front().isEmpty())
        return Problem{QStringLiteral("expected a command (a list of words, or a string) or an http(s) URL")};
    for (const QString &w : argv)
        if (w.contains(QChar(0)))
            return Problem{QStringLiteral("a command word holds a NUL byte")};
    NotifyTarget t;
    t.command = argv;
    return t;
}

Parsed<qint64> parseHangDuration(const QString &text)
{
    const QString t = text.trimmed();
    auto fail = []() -> Parsed<qint64> {
        return Problem{QStringLiteral("expected a duration such as 90s, 10m, 1h or 1h30m, or auto")};
    };
    if (t.isEmpty())
        return fail();
    bool plain = false;
    const qint64 seconds = t.toLongLong(&plain);
    if (plain)
        return seconds > 0 && seconds < 365LL * 86400 ? Parsed<qint64>(seconds * 1000) : fail();
    static const QRegularExpression re(QStringLiteral("^(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?$"));
    const QRegularExpressionMatch m = re.match(t);
    if (!m.hasMatch())
        return fail();
    const qint64 h = m.captured(1).toLongLong(), min = m.captured(2).toLongLong(),
                 s = m.captured(3).toLongLong();
    if (h > 24 * 365 || min > 60 * 24 * 365 || s > 86400LL * 365)
        return fail();
    const qint64 ms = ((h * 60 + min) * 60 + s) * 1000;
    return ms > 0 ? Parsed<qint64>(ms) : fail();
}

}  // namespace orrery::core
