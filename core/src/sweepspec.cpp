// SPDX-License-Identifier: GPL-3.0-or-later
//
// Sweep spec parsing and validation. yaml-cpp is PRIVATE to core (here and sweepprogress.cpp); every value
// leaves this file as a QVariant typed by the trainer's schema.
#include "orrery/core/sweepspec.h"

#include "orrery/core/configfile.h"
#include "orrery/core/pyvalue.h"
#include "orrery/core/trainermetrics.h"
#include "orrery/core/usage.h"

#include "textutil.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSet>
#include <QUrl>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>

namespace orrery::core {

QString toString(Distribution d)
{
    switch (d) {
    case Distribution::Constant:
        return QStringLiteral("constant");
    case Distribution::Categorical:
        return QStringLiteral("categorical");
    case Distribution::Uniform:
        return QStringLiteral("uniform");
    case Distribution::IntUniform:
        return QStringLiteral("int_uniform");
    case Distribution::QUniform:
        return QStringLiteral("q_uniform");
    case Distribution::LogUniform:
        return QStringLiteral("log_uniform");
    case Distribution::LogUniformValues:
        return QStringLiteral("log_uniform_values");
    case Distribution::QLogUniform:
        return QStringLiteral("q_log_uniform");
    case Distribution::QLogUniformValues:
        return QStringLiteral("q_log_uniform_values");
    case Distribution::Normal:
        return QStringLiteral("normal");
    case Distribution::QNormal:
        return QStringLiteral("q_normal");
    case Distribution::InvLogUniform:
        return QStringLiteral("inv_log_uniform");
    case Distribution::InvLogUniformValues:
        return QStringLiteral("inv_log_uniform_values");
    case Distribution::LogNormal:
        return QStringLiteral("log_normal");
    case Distribution::QLogNormal:
        return QStringLiteral("q_log_normal");
    }
    return {};
}

std::optional<Distribution> distributionFromString(const QString &name)
{
    for (int i = 0; i <= int(kLastDistribution); ++i)
        if (toString(Distribution(i)) == name)
            return Distribution(i);
    return std::nullopt;
}

QString toString(SearchMethod m)
{
    switch (m) {
    case SearchMethod::Grid:
        return QStringLiteral("grid");
    case SearchMethod::Random:
        return QStringLiteral("random");
    case SearchMethod::Bayes:
        return QStringLiteral("bayes");
    }
    return {};
}

QString SpecError::toString() const
{
    return line > 0 ? QStringLiteral("%1:%2: %3").arg(file).arg(line).arg(message)
                    : QStringLiteral("%1: %2").arg(file, message);
}

int allocatedGpus(const SweepResources &r)
{
    return std::max(1, r.nodes) * std::max(0, r.gpusPerNode);
}

int allocatedCpus(const SweepResources &r)
{
    return std::max(1, r.nodes) * std::max(1, r.gpusPerNode) * std::max(1, r.cpusPerTask);
}

QStringList healthCheckThresholdNames()
{
    // As orrery-train's HealthThresholds::set takes them (trainer/src/healthcheck.cpp).
    return {QStringLiteral("min_matmul_gflops"), QStringLiteral("min_memory_gbps"),
            QStringLiteral("min_busbw_gbps"),    QStringLiteral("memory_fraction"),
            QStringLiteral("cpu_memory_mb"),     QStringLiteral("matmul_tolerance"),
            QStringLiteral("timeout_s"),         QStringLiteral("max_ecc_errors")};
}

QStringList healthCheckArgs(const HealthCheckSpec &h)
{
    if (!h.enabled)
        return {};
    QStringList out{QStringLiteral("--health-check")};
    for (const auto &[name, value] : h.thresholds)
        out << QStringLiteral("--set") << name + QLatin1Char('=') + QString::number(value, 'g', 17);
    return out;
}

QString formatParamValue(const QVariant &value)
{
    switch (value.typeId()) {
    case QMetaType::Double:
        return formatDouble(value.toDouble());
    case QMetaType::Bool:
        return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QMetaType::LongLong:
        return QString::number(value.toLongLong());
    case QMetaType::QString:
        return value.toString();
    default:
        // A command's None and lists (pyvalue.h) as Python prints them.
        return pythonStr(value);
    }
}

namespace {

// A `program` without a `command` is W&B's default command, `${env} ${interpreter} ${program}
// ${args}`; a spec with neither sweeps the bundled trainer.
bool runsOwnCommand(const YAML::Node &root)
{
    return root.IsMap() && (bool(root["command"]) || bool(root["program"]));
}

}  // namespace

namespace {

using Type = ConfigKey::Type;

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
const QStringList kParamKeys{
    QStringLiteral("value"), QStringLiteral("values"), QStringLiteral("distribution"),
    QStringLiteral("min"),   QStringLiteral("max"),    QStringLiteral("mu"),
    QStringLiteral("sigma"), QStringLiteral("q"),      QStringLiteral("probabilities")};

bool isLog(Distribution d)
{
    return d == Distribution::LogUniform || d == Distribution::QLogUniform;
}
bool isQuantized(Distribution d)
{
    return d == Distribution::QUniform || d == Distribution::QLogUniform ||
        d == Distribution::QLogUniformValues || d == Distribution::QNormal || d == Distribution::QLogNormal;
}
bool isNormal(Distribution d)
{
    return d == Distribution::Normal || d == Distribution::QNormal || d == Distribution::LogNormal ||
        d == Distribution::QLogNormal;
}
bool usesMinMax(Distribution d)
{
    return d != Distribution::Constant && d != Distribution::Categorical && !isNormal(d);
}

// Collects every problem with its line; parsing goes on after an error where it can.
class Parser {
public:
    Parser(QString file, const TrainerSchema &schema) : m_file(std::move(file)), m_schema(schema) { }

    QList<SpecError> errors;

    void error(const YAML::Node &at, const QString &message) { error(lineOf(at), message); }
    void error(int line, const QString &message) { errors.append({m_file, line, message}); }

    static int lineOf(const YAML::Node &n) { return n.IsDefined() ? n.Mark().line + 1 : 0; }

    // The scalar's text as UTF-8; nullopt (and an error) for non-UTF-8 or a NUL byte.
    std::optional<QString> text(const YAML::Node &n, const QString &what)
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

    std::optional<qint64> integer(const YAML::Node &n, const QString &what, qint64 minimum)
    {
        const auto t = text(n, what);
        if (!t)
            return std::nullopt;
        const auto v = parseInteger(*t);
        if (!v || *v < minimum) {
            error(n,
                  QStringLiteral("%1: expected an integer >= %2, got %3")
                      .arg(what)
                      .arg(minimum)
                      .arg(quoted(*t)));
            return std::nullopt;
        }
        return v;
    }

    std::optional<double> number(const YAML::Node &n, const QString &what)
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

    // A name that becomes a directory and a Slurm job name: any printable text but no '/'.
    std::optional<QString> name(const YAML::Node &n, const QString &what)
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

    // A Slurm option value: any text without control characters (an #SBATCH line ends at a newline).
    std::optional<QString> slurmValue(const YAML::Node &n, const QString &what)
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

    // Checks that `map` is a mapping with only `allowed` keys; reports the others.
    bool expectMap(const YAML::Node &map, const QString &what, const QStringList &allowed,
                   const QStringList &ignored = {})
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

    // A command's parameter value as W&B's agent gets it: typed as PyYAML types it (pyvalue.h:
    // `1e-4` is text, `1.0e-4` a number, `yes` true, `~` None), lists kept as lists.
    std::optional<QVariant> pyValue(const YAML::Node &n, const QString &what)
    {
        if (!n.IsDefined() || n.IsNull())
            return QVariant::fromValue(nullptr);
        if (n.IsSequence()) {
            QVariantList list;
            for (const auto &item : n) {
                const auto v = pyValue(item, what);
                if (!v)
                    return std::nullopt;
                list.append(*v);
            }
            return QVariant(list);
        }
        if (n.IsMap()) {
            error(n,
                  QStringLiteral("%1: a mapping as a value is not supported; write it as nested "
                                 "`parameters:` (W&B's nested parameters)")
                      .arg(what));
            return std::nullopt;
        }
        const auto t = text(n, what);
        if (!t)
            return std::nullopt;
        // yaml-cpp tags a plain scalar "?" and a quoted one "!": only a plain one is resolved;
        // an explicit tag (`!!float 1e-5`) says the type, as it does to PyYAML.
        const std::string &tag = n.Tag();
        if (tag == "tag:yaml.org,2002:float" || tag == "tag:yaml.org,2002:int") {
            const auto d = parseDouble(*t);
            if (!d) {
                error(n, QStringLiteral("%1: %2 is not a number").arg(what, quoted(*t)));
                return std::nullopt;
            }
            return tag == "tag:yaml.org,2002:int" && *d == std::floor(*d) ? QVariant(qint64(*d))
                                                                          : QVariant(*d);
        }
        if (tag == "tag:yaml.org,2002:str")
            return *t;
        return pyyamlScalar(*t,
                            tag == "?" || tag == "tag:yaml.org,2002:bool" || tag == "tag:yaml.org,2002:null");
    }

    // A value for a trainer key, typed and range-checked by the schema.
    std::optional<QVariant> value(const YAML::Node &n, const ConfigKey &key)
    {
        const QString what = QStringLiteral("parameter %1").arg(key.key);
        if (m_command)
            return pyValue(n, what);
        const auto t = text(n, what);
        if (!t)
            return std::nullopt;
        QString why;
        QVariant v;
        switch (key.type) {
        case Type::Int:
            if (const auto i = parseInteger(*t))
                v = *i;
            else
                why = QStringLiteral("expected an integer");
            break;
        case Type::Float:
            if (const auto d = parseDouble(*t))
                v = *d;
            else
                why = QStringLiteral("expected a finite number");
            break;
        case Type::Bool:
            if (const auto b = parseBool(*t))
                v = *b;
            else
                why = QStringLiteral("expected true or false");
            break;
        case Type::String:
            v = *t;
            if (!key.choices.isEmpty() && !key.choices.contains(*t))
                why = QStringLiteral("must be one of %1").arg(key.choices.join(QStringLiteral(", ")));
            break;
        }
        if (why.isEmpty() && (key.type == Type::Int || key.type == Type::Float))
            why = rangeProblem(key, v.toDouble());
        if (!why.isEmpty()) {
            error(n, QStringLiteral("%1 = %2: %3").arg(what, quoted(*t), why));
            return std::nullopt;
        }
        return v;
    }

    // The type of a command's parameter from the values written: integers, numbers, true/false,
    // else text; int_uniform gives integers, the other distributions numbers.
    static ConfigKey inferredKey(const QString &name, const YAML::Node &body)
    {
        ConfigKey key;
        key.key = name;
        const auto typeOf = [](const YAML::Node &n) {
            if (!n.IsScalar())
                return Type::String;
            const QString t = QString::fromStdString(n.Scalar());
            if (parseInteger(t) && !t.contains(QLatin1Char('.')))
                return Type::Int;
            if (parseDouble(t))
                return Type::Float;
            const QString lower = t.toLower();
            if (lower == QLatin1String("true") || lower == QLatin1String("false"))
                return Type::Bool;
            return Type::String;
        };
        if (!body.IsMap())
            return key;
        if (const YAML::Node d = body["distribution"]; d && d.IsScalar()) {
            key.type = d.Scalar() == "int_uniform" ? Type::Int : Type::Float;
            if (d.Scalar() == "categorical" || d.Scalar() == "constant")
                key.type = Type::String;
            else
                return key;
        } else if (body["min"] || body["max"]) {
            key.type = typeOf(body["min"]) == Type::Int && typeOf(body["max"]) == Type::Int ? Type::Int
                                                                                            : Type::Float;
            return key;
        }
        QList<Type> types;
        if (const YAML::Node v = body["value"])
            types << typeOf(v);
        if (const YAML::Node vs = body["values"]; vs && vs.IsSequence())
            for (const auto &v : vs)
                types << typeOf(v);
        if (types.isEmpty())
            return key;
        const bool allInt = std::all_of(types.begin(), types.end(), [](Type t) { return t == Type::Int; });
        const bool allNumber = std::all_of(types.begin(), types.end(),
                                           [](Type t) { return t == Type::Int || t == Type::Float; });
        const bool allBool = std::all_of(types.begin(), types.end(), [](Type t) { return t == Type::Bool; });
        key.type = allInt ? Type::Int : allNumber ? Type::Float : allBool ? Type::Bool : Type::String;
        return key;
    }

    static QString rangeProblem(const ConfigKey &key, double v)
    {
        if ((key.min && v < *key.min) || (key.max && v > *key.max))
            return QStringLiteral("must be between %1 and %2")
                .arg(key.min ? formatDouble(*key.min) : QStringLiteral("-inf"),
                     key.max ? formatDouble(*key.max) : QStringLiteral("inf"));
        return {};
    }

    // `path`: the names of the W&B `parameters:` groups it is nested in (empty at the top).
    std::optional<ParamSpec> parameter(const YAML::Node &keyNode, const YAML::Node &body,
                                       const QStringList &path = {})
    {
        auto keyText = text(keyNode, QStringLiteral("parameter name"));
        if (!keyText)
            return std::nullopt;
        const QStringList wandbPath = path.isEmpty() ? QStringList() : path + QStringList{*keyText};
        if (!path.isEmpty())
            keyText = wandbPath.join(QLatin1Char('.'));
        const int line = lineOf(keyNode);
        // A command's parameters are its own: any key, typed by the values given.
        const std::optional<ConfigKey> inferred =
            m_command ? std::optional(inferredKey(*keyText, body)) : std::nullopt;
        const ConfigKey *key = inferred ? &*inferred : m_schema.find(*keyText);
        if (m_command && (keyText->isEmpty() || containsControl(*keyText))) {
            error(line,
                  QStringLiteral("parameter name %1: must not be empty or contain control characters")
                      .arg(quoted(*keyText)));
            return std::nullopt;
        }
        if (!key) {
            const QString hint = m_schema.closest(*keyText);
            error(line,
                  QStringLiteral("unknown trainer key %1%2; `orrery-train --print-schema` lists them all (a "
                                 "sweep of your own script names it: `program: train.py`)")
                      .arg(quoted(*keyText),
                           hint.isEmpty() ? QString() : QStringLiteral(" (did you mean '%1'?)").arg(hint)));
            return std::nullopt;
        }
        const QString what = QStringLiteral("parameter %1").arg(key->key);
        if (!body.IsMap()) {
            error(body.IsNull() ? line : lineOf(body),
                  QStringLiteral("%1: expected a mapping such as {values: [...]}, {value: X} or "
                                 "{distribution: uniform, min: A, max: B}")
                      .arg(what));
            return std::nullopt;
        }
        const int before = int(errors.size());
        expectMap(body, what, kParamKeys);
        ParamSpec p;
        p.key = key->key;
        p.wandbPath = wandbPath;
        p.line = line;
        p.type = key->type;
        if (key->min)
            p.lowerBound = *key->min;
        if (key->max)
            p.upperBound = *key->max;

        // The distribution: named, or inferred as W&B does (value → constant, values → categorical,
        // min/max → int_uniform for an integer key, else uniform).
        if (body["distribution"]) {
            const auto name = text(body["distribution"], what + QStringLiteral(": distribution"));
            if (!name)
                return std::nullopt;
            const auto d = distributionFromString(*name);
            if (!d) {
                QStringList known;
                for (int i = 0; i <= int(kLastDistribution); ++i)
                    known << toString(Distribution(i));
                error(body["distribution"],
                      QStringLiteral("%1: unknown distribution %2%3; supported: %4")
                          .arg(what, quoted(*name), didYouMean(*name, known),
                               known.join(QStringLiteral(", "))));
                return std::nullopt;
            }
            p.distribution = *d;
        } else if (body["value"]) {
            p.distribution = Distribution::Constant;
        } else if (body["values"]) {
            p.distribution = Distribution::Categorical;
        } else if (body["min"] && body["max"]) {
            p.distribution = key->type == Type::Int ? Distribution::IntUniform : Distribution::Uniform;
        } else {
            error(
                line,
                QStringLiteral("%1: give `value`, `values`, `min` and `max`, or a `distribution`").arg(what));
            return std::nullopt;
        }
        const Distribution d = p.distribution;
        const QString dn = toString(d);

        // Keys the distribution does not use are mistakes, not silently ignored.
        const QSet<QString> used = [&] {
            switch (d) {
            case Distribution::Constant:
                return QSet<QString>{QStringLiteral("value")};
            case Distribution::Categorical:
                return QSet<QString>{QStringLiteral("values"), QStringLiteral("probabilities")};
            case Distribution::Normal:
            case Distribution::LogNormal:
                return QSet<QString>{QStringLiteral("mu"), QStringLiteral("sigma")};
            case Distribution::QNormal:
            case Distribution::QLogNormal:
                return QSet<QString>{QStringLiteral("mu"), QStringLiteral("sigma"), QStringLiteral("q")};
            default:
                return isQuantized(d)
                    ? QSet<QString>{QStringLiteral("min"), QStringLiteral("max"), QStringLiteral("q")}
                    : QSet<QString>{QStringLiteral("min"), QStringLiteral("max")};
            }
        }();
        for (const auto &item : body) {
            const QString k = QString::fromStdString(item.first.Scalar());
            if (k != QLatin1String("distribution") && kParamKeys.contains(k) && !used.contains(k))
                error(item.first, QStringLiteral("%1: `%2` is not used by distribution %3").arg(what, k, dn));
        }
        for (const QString &k : used)
            if (k != QLatin1String("probabilities") && k != QLatin1String("q") && !body[k.toStdString()])
                error(line, QStringLiteral("%1: distribution %2 needs `%3`").arg(what, dn, k));
        if (int(errors.size()) != before)
            return std::nullopt;

        if ((key->type == Type::Bool || key->type == Type::String) && d != Distribution::Constant &&
            d != Distribution::Categorical) {
            error(body["distribution"],
                  QStringLiteral("%1 is a %2 key: use `value` or `values`, not distribution %3")
                      .arg(what, toString(key->type), dn));
            return std::nullopt;
        }

        if (d == Distribution::Constant) {
            if (const auto v = value(body["value"], *key))
                p.values = {*v};
            return int(errors.size()) == before ? std::optional(p) : std::nullopt;
        }
        if (d == Distribution::Categorical) {
            const YAML::Node values = body["values"];
            if (!values.IsSequence() || values.size() == 0) {
                error(values, QStringLiteral("%1: `values` must be a non-empty list").arg(what));
                return std::nullopt;
            }
            for (const auto &v : values)
                if (const auto x = value(v, *key))
                    p.values.append(*x);
            if (const YAML::Node probs = body["probabilities"]) {
                if (!probs.IsSequence() || probs.size() != values.size()) {
                    error(probs,
                          QStringLiteral("%1: `probabilities` must be a list of %2 numbers, one per value")
                              .arg(what)
                              .arg(values.size()));
                    return std::nullopt;
                }
                double sum = 0;
                for (const auto &x : probs) {
                    const auto pr = number(x, what + QStringLiteral(": probability"));
                    if (pr && *pr < 0)
                        error(x, QStringLiteral("%1: a probability must not be negative").arg(what));
                    if (pr) {
                        p.probabilities.append(*pr);
                        sum += *pr;
                    }
                }
                // W&B requires the probabilities to sum to 1; allow for decimal rounding.
                if (int(errors.size()) == before && std::abs(sum - 1) > 1e-6)
                    error(probs,
                          QStringLiteral("%1: the probabilities sum to %2, not 1")
                              .arg(what, formatDouble(sum)));
            }
            return int(errors.size()) == before ? std::optional(p) : std::nullopt;
        }

        // Numeric distributions.
        if (key->type == Type::Int && !isQuantized(d) && d != Distribution::IntUniform) {
            error(body["distribution"] ? body["distribution"] : keyNode,
                  QStringLiteral("%1 is an integer key but distribution %2 gives non-integer values; use "
                                 "int_uniform, or a q_* distribution with an integer q")
                      .arg(what, dn));
            return std::nullopt;
        }
        if (body["q"]) {
            const auto q = number(body["q"], what + QStringLiteral(": q"));
            if (q && *q <= 0)
                error(body["q"], QStringLiteral("%1: q must be positive").arg(what));
            if (q && key->type == Type::Int && *q != std::floor(*q))
                error(body["q"], QStringLiteral("%1 is an integer key: q must be an integer").arg(what));
            if (q)
                p.q = *q;
        }
        if (usesMinMax(d)) {
            const auto lo = number(body["min"], what + QStringLiteral(": min"));
            const auto hi = number(body["max"], what + QStringLiteral(": max"));
            if (!lo || !hi)
                return std::nullopt;
            p.min = *lo;
            p.max = *hi;
            if (!(p.min < p.max)) {
                error(body["min"],
                      QStringLiteral("%1: min (%2) must be below max (%3)")
                          .arg(what, formatDouble(p.min), formatDouble(p.max)));
                return std::nullopt;
            }
            if (d == Distribution::IntUniform && (p.min != std::floor(p.min) || p.max != std::floor(p.max))) {
                error(body["min"], QStringLiteral("%1: int_uniform needs integer min and max").arg(what));
                return std::nullopt;
            }
            if ((d == Distribution::LogUniformValues || d == Distribution::QLogUniformValues ||
                 d == Distribution::InvLogUniformValues) &&
                p.min <= 0) {
                error(body["min"],
                      QStringLiteral("%1: %2 needs min > 0 (it samples the logarithm)").arg(what, dn));
                return std::nullopt;
            }
            // The range in the key's own units must fit the schema's (inv_log_uniform's bounds are
            // of ln(1/x): x runs from exp(-max) to exp(-min)).
            const double a = isLog(d)              ? std::exp(p.min)
                : d == Distribution::InvLogUniform ? std::exp(-p.max)
                                                   : p.min;
            const double b = isLog(d)              ? std::exp(p.max)
                : d == Distribution::InvLogUniform ? std::exp(-p.min)
                                                   : p.max;
            for (const auto &[v, node] : {std::pair{a, body["min"]}, std::pair{b, body["max"]}}) {
                const QString why = rangeProblem(*key, v);
                if (!why.isEmpty())
                    error(node,
                          QStringLiteral("%1: the range [%2, %3] does not fit the key: values %4")
                              .arg(what, formatDouble(a), formatDouble(b), why));
            }
        } else {
            const auto mu = number(body["mu"], what + QStringLiteral(": mu"));
            const auto sigma = number(body["sigma"], what + QStringLiteral(": sigma"));
            if (!mu || !sigma)
                return std::nullopt;
            p.mu = *mu;
            p.sigma = *sigma;
            if (p.sigma <= 0)
                error(body["sigma"], QStringLiteral("%1: sigma must be positive").arg(what));
            // log_normal's mu is ln(x)'s mean: the typical value is exp(mu).
            const bool logNormal = d == Distribution::LogNormal || d == Distribution::QLogNormal;
            const QString why = rangeProblem(*key, logNormal ? std::exp(p.mu) : p.mu);
            if (!why.isEmpty())
                error(body["mu"], QStringLiteral("%1: mu %2").arg(what, why));
        }
        return int(errors.size()) == before ? std::optional(p) : std::nullopt;
    }

    void parse(const YAML::Node &root, SweepSpec &spec)
    {
        if (!root.IsMap()) {
            error(root.IsDefined() && !root.IsNull() ? lineOf(root) : 0,
                  QStringLiteral("a sweep spec is a YAML mapping (name:, method:, parameters:, ...)"));
            return;
        }
        expectMap(root, QStringLiteral("sweep"), kTopLevel + kHangAndNotifyKeys, kIgnoredTopLevel);
        for (const auto &item : root)
            if (item.first.IsScalar() &&
                kIgnoredTopLevel.contains(QString::fromStdString(item.first.Scalar())))
                warn(item.first,
                     QStringLiteral("`%1` is W&B's (its web service); Orrery ignores it")
                         .arg(QString::fromStdString(item.first.Scalar())));
        if (const YAML::Node n = root["name"]) {
            if (auto s = name(n, QStringLiteral("name")))
                spec.name = *s;
        } else {
            spec.name = QFileInfo(spec.file).completeBaseName();
        }
        if (const YAML::Node n = root["experiment"]) {
            if (auto s = name(n, QStringLiteral("experiment")))
                spec.experiment = *s;
        }
        m_command = runsOwnCommand(root);
        if (const YAML::Node n = root["program"]) {
            if (auto s = text(n, QStringLiteral("program"))) {
                if (s->isEmpty() || containsControl(*s))
                    error(
                        n,
                        QStringLiteral("program %1: expected a file name such as train.py").arg(quoted(*s)));
                else
                    spec.program = *s;
            }
        }
        if (root["job"] && !m_command)
            error(
                root["job"],
                QStringLiteral("`job` is a W&B Launch job, which Orrery cannot run: name the script it runs "
                               "with `program: FILE` (or a `command`)"));
        if (root["trainer"] && m_command)
            error(root["trainer"],
                  QStringLiteral("a sweep runs either the bundled trainer (`trainer`) or its own program "
                                 "(`command` or `program`), not both"));
        if (const YAML::Node n = root["trainer"]) {
            if (expectMap(n, QStringLiteral("trainer"), {QStringLiteral("config")}) && n["config"]) {
                if (auto s = text(n["config"], QStringLiteral("trainer.config")))
                    spec.trainerConfig = *s;
            }
        }
        if (const YAML::Node n = root["method"]) {
            const auto m = text(n, QStringLiteral("method"));
            if (m == QLatin1String("grid"))
                spec.method = SearchMethod::Grid;
            else if (m == QLatin1String("random"))
                spec.method = SearchMethod::Random;
            else if (m == QLatin1String("bayes"))
                spec.method = SearchMethod::Bayes;
            else if (m)
                error(n,
                      QStringLiteral("method %1: expected grid, random or bayes%2")
                          .arg(quoted(*m),
                               didYouMean(*m,
                                          {QStringLiteral("grid"), QStringLiteral("random"),
                                           QStringLiteral("bayes")})));
        } else {
            error(lineOf(root), QStringLiteral("`method` is missing: grid, random or bayes"));
        }
        const YAML::Node metric = root["metric"];
        if (metric &&
            expectMap(metric, QStringLiteral("metric"),
                      {QStringLiteral("name"), QStringLiteral("goal"), QStringLiteral("target")},
                      {QStringLiteral("impute"), QStringLiteral("impute_while_running")})) {
            for (const char *key : {"impute", "impute_while_running"})
                if (metric[key])
                    warn(metric[key],
                         QStringLiteral("metric.%1 is W&B's; Orrery ignores it (a failed trial counts as the "
                                        "worst for bayes)")
                             .arg(QLatin1String(key)));
            if (const YAML::Node t = metric["target"])
                spec.metricTarget = number(t, QStringLiteral("metric.target"));
            if (metric["name"]) {
                if (auto s = text(metric["name"], QStringLiteral("metric.name")))
                    spec.metricName = *s;
            } else {
                error(metric, QStringLiteral("metric: `name` is missing (e.g. eval/loss)"));
            }
            if (const YAML::Node g = metric["goal"]) {
                const auto goal = text(g, QStringLiteral("metric.goal"));
                if (goal == QLatin1String("minimize"))
                    spec.goal = Goal::Minimize;
                else if (goal == QLatin1String("maximize"))
                    spec.goal = Goal::Maximize;
                else if (goal)
                    error(g,
                          QStringLiteral("metric.goal %1: expected minimize or maximize").arg(quoted(*goal)));
            }
        }
        parseParameters(root["parameters"], lineOf(root), spec);
        if (const YAML::Node n = root["run_cap"]) {
            if (auto v = integer(n, QStringLiteral("run_cap"), 1))
                spec.runCap = int(std::min<qint64>(*v, 1000000));
        }
        if (const YAML::Node n = root["max_concurrent"]) {
            if (auto v = integer(n, QStringLiteral("max_concurrent"), 1))
                spec.maxConcurrent = int(std::min<qint64>(*v, 100000));
        }
        if (const YAML::Node n = root["retries"]) {
            if (auto v = integer(n, QStringLiteral("retries"), 0))
                spec.retries = int(std::min<qint64>(*v, 1000));
        }
        if (const YAML::Node n = root["seed"]) {
            if (auto v = integer(n, QStringLiteral("seed"), 0))
                spec.seed = quint64(*v);
        }
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
                warn(metric["name"], w);

        // Cross-key rules.
        if (spec.method != SearchMethod::Grid && spec.runCap == 0 && root["method"])
            error(root["method"],
                  QStringLiteral("a %1 sweep needs run_cap, or `--count N` on the command line (as "
                                 "`wandb agent --count N`): it would never end otherwise")
                      .arg(toString(spec.method)));
        if ((spec.method == SearchMethod::Bayes || spec.earlyTerminate) && spec.metricName.isEmpty() &&
            !metric)
            error(lineOf(root),
                  QStringLiteral("%1 needs `metric: {name: ..., goal: minimize|maximize}`")
                      .arg(spec.method == SearchMethod::Bayes ? QStringLiteral("method bayes")
                                                              : QStringLiteral("early_terminate")));
        if (spec.method == SearchMethod::Grid) {
            for (const ParamSpec &p : spec.parameters)
                if (p.isDistribution())
                    error(p.line,
                          QStringLiteral("parameter %1: distribution %2 in a grid sweep; a grid needs "
                                         "`values` (or use method random or bayes)")
                              .arg(p.key, toString(p.distribution)));
        }
    }

    void parseParameters(const YAML::Node &params, int rootLine, SweepSpec &spec)
    {
        if (!params) {
            error(rootLine, QStringLiteral("`parameters` is missing: the trainer keys to sweep"));
            return;
        }
        if (!params.IsMap() || params.size() == 0) {
            error(params,
                  QStringLiteral("parameters: expected a mapping of trainer keys, e.g. optim.lr: "
                                 "{values: [1e-4, 3e-4]}"));
            return;
        }
        QSet<QString> seen;
        parameterGroup(params, {}, seen, spec);
    }

    // The parameters of one mapping; W&B's nested form (`optimizer: {parameters: {lr: ...}}`)
    // recurses, its keys dotted (optimizer.lr) and their nesting kept for W&B's macros.
    void parameterGroup(const YAML::Node &params, const QStringList &path, QSet<QString> &seen,
                        SweepSpec &spec)
    {
        for (const auto &item : params) {
            if (item.second.IsMap() && item.second["parameters"]) {
                const auto name = text(item.first, QStringLiteral("parameter name"));
                const YAML::Node inner = item.second["parameters"];
                if (!name)
                    continue;
                const QString dotted = (path + QStringList{*name}).join(QLatin1Char('.'));
                expectMap(item.second, QStringLiteral("parameter %1").arg(dotted),
                          {QStringLiteral("parameters")});
                if (!inner.IsMap() || inner.size() == 0) {
                    error(inner,
                          QStringLiteral("parameter %1: `parameters` must be a mapping of nested parameters")
                              .arg(dotted));
                    continue;
                }
                parameterGroup(inner, path + QStringList{*name}, seen, spec);
                continue;
            }
            auto p = parameter(item.first, item.second, path);
            if (!p)
                continue;
            if (seen.contains(p->key)) {
                error(p->line, QStringLiteral("parameter %1 is given twice").arg(p->key));
                continue;
            }
            seen.insert(p->key);
            spec.parameters.append(*p);
        }
    }

    // `env: {NAME: value, ...}` (command.h CommandSpec::env): names as a shell would take them,
    // none of Orrery's own (ORRERY_*, the distributed variables: distributed_env says those).
    void parseEnv(const YAML::Node &n, CommandSpec &c)
    {
        if (!n)
            return;
        if (!n.IsMap()) {
            error(n, QStringLiteral("env: expected a mapping of variables, e.g. {WANDB_MODE: offline}"));
            return;
        }
        static const QRegularExpression name(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
        for (const auto &item : n) {
            const QString key = QString::fromStdString(item.first.Scalar());
            if (!name.match(key).hasMatch()) {
                error(item.first,
                      QStringLiteral("env: %1 is not a variable name (letters, digits, _)").arg(quoted(key)));
                continue;
            }
            if (key.startsWith(QLatin1String("ORRERY_")) || distributedEnvNames().contains(key)) {
                error(item.first,
                      QStringLiteral("env: %1 is Orrery's to set%2")
                          .arg(key,
                               key.startsWith(QLatin1String("ORRERY_"))
                                   ? QString()
                                   : QStringLiteral(" (distributed_env: always gives a trial all of them)")));
                continue;
            }
            if (!item.second.IsScalar()) {
                error(item.second,
                      QStringLiteral("env: %1: expected one value (text, a number, true or false)").arg(key));
                continue;
            }
            const QString value = QString::fromStdString(item.second.Scalar());
            if (value.contains(QChar(0))) {
                error(item.second, QStringLiteral("env: %1: a value cannot hold a NUL byte").arg(key));
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
        if (!expectMap(n, QStringLiteral("code"),
                       {QStringLiteral("snapshot"), QStringLiteral("link"), QStringLiteral("fresh")}))
            return;
        if (const YAML::Node s = n["snapshot"]) {
            if (!s.IsScalar() || (s.Scalar() != "true" && s.Scalar() != "false"))
                error(s, QStringLiteral("code.snapshot: expected true or false"));
            else
                c.code.snapshot = s.Scalar() == "true";
        }
        for (const char *key : {"link", "fresh"}) {
            const YAML::Node l = n[key];
            if (!l)
                continue;
            QStringList &names = QLatin1String(key) == QLatin1String("link") ? c.code.link : c.code.fresh;
            if (!l.IsSequence()) {
                error(l,
                      QStringLiteral("code.%1: expected a list of paths relative to workdir, e.g. [data]")
                          .arg(QLatin1String(key)));
                continue;
            }
            for (const auto &item : l) {
                const auto t = text(item, QStringLiteral("code.%1").arg(QLatin1String(key)));
                if (!t)
                    continue;
                const QString clean = QDir::cleanPath(*t);
                if (t->isEmpty() || containsControl(*t) || QDir::isAbsolutePath(clean) ||
                    clean == QLatin1String(".") || clean.startsWith(QLatin1String("..")))
                    error(item,
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
        for (const char *key : {"launch", "capture", "distributed_env", "code", "env"})
            if (root[key] && !m_command)
                error(
                    root[key],
                    QStringLiteral("`%1` goes with a `command`; the bundled trainer starts its own ranks and "
                                   "writes its own events.jsonl")
                        .arg(QLatin1String(key)));
        for (const char *key : {"workdir", "metrics", "tensorboard", "artifacts"})
            if (root[key] && !m_command)
                error(root[key],
                      QStringLiteral("`%1` goes with a `command`; the bundled trainer runs in its run "
                                     "directory and writes its metrics to events.jsonl")
                          .arg(QLatin1String(key)));
        if (!m_command)
            return;
        const YAML::Node n = root["command"];
        CommandSpec c;
        c.line = lineOf(n ? n : root["program"]);
        if (n && (!n.IsSequence() || n.size() == 0)) {
            error(n,
                  QStringLiteral("command: expected a list of words, e.g. [python, train.py, --lr, "
                                 "\"{{optim.lr}}\"] (each word is one argument; no shell reads them)"));
            return;
        }
        QStringList known = commandBuiltins();
        if (spec.configFile)
            known << QStringLiteral("config");
        QHash<QString, QString> envOwner;  // ORRERY_PARAM_X → the key that has it
        for (const ParamSpec &p : spec.parameters) {
            known << p.key;
            const QString env = paramEnvName(p.key);
            if (envOwner.contains(env))
                error(
                    p.line,
                    QStringLiteral("parameters %1 and %2 both become the environment variable %3; rename one")
                        .arg(quoted(envOwner.value(env)), quoted(p.key), env));
            envOwner.insert(env, p.key);
        }
        if (!n)
            c.argv = kWandbDefaultCommand;
        for (const auto &word : n) {
            const auto t = text(word, QStringLiteral("command"));
            if (!t)
                continue;
            if (t->startsWith(QLatin1String("${"))) {
                if (!kWandbMacros.contains(*t))
                    error(word,
                          QStringLiteral("command: %1 is not a macro Orrery expands; known: %2 (each a word "
                                         "of its own), or {{key}} placeholders")
                              .arg(quoted(*t), kWandbMacros.join(QStringLiteral(", "))));
                else if (*t == QLatin1String("${program}") && spec.program.isEmpty())
                    error(word, QStringLiteral("command: ${program} needs `program: FILE` in the spec"));
                c.argv << *t;
                continue;
            }
            bool malformed = false;
            for (const QString &name : placeholdersIn(*t, &malformed))
                if (!known.contains(name))
                    error(word,
                          QStringLiteral("command: unknown placeholder {{%1}}%2; known: the parameters and "
                                         "%3")
                              .arg(name, didYouMean(name, known),
                                   commandBuiltins().join(QStringLiteral(", ")) +
                                       (spec.configFile ? QStringLiteral(", config") : QString())));
            if (malformed)
                error(word,
                      QStringLiteral("command: %1 opens a placeholder with {{ but does not close it")
                          .arg(quoted(*t)));
            c.argv << *t;
        }
        if (!c.argv.isEmpty() && c.argv.front().isEmpty())
            error(n, QStringLiteral("command: the program (the first word) is empty"));
        if (const YAML::Node w = root["workdir"]) {
            if (auto t = text(w, QStringLiteral("workdir"))) {
                if (t->isEmpty() || containsControl(*t))
                    error(w, QStringLiteral("workdir %1: expected a directory").arg(quoted(*t)));
                else
                    c.workdir = *t;
            }
        }
        if (const YAML::Node l = root["launch"]) {  // docs/sweeps.md "Launchers"
            const auto t = text(l, QStringLiteral("launch"));
            c.launchWritten = bool(t);
            if (t && *t == QLatin1String("per_node"))
                c.launch = CommandSpec::Launch::PerNode;
            else if (t && *t != QLatin1String("per_gpu"))
                error(l,
                      QStringLiteral("launch %1: expected per_gpu (one process per GPU, each a rank) or "
                                     "per_node (one per node, for torchrun or accelerate launch)")
                          .arg(quoted(*t)));
        }
        if (const YAML::Node d = root["distributed_env"]) {
            const auto t = text(d, QStringLiteral("distributed_env"));
            if (t && *t == QLatin1String("always"))
                c.distributedEnv = CommandSpec::DistributedEnv::Always;
            else if (t && *t == QLatin1String("never"))
                c.distributedEnv = CommandSpec::DistributedEnv::Never;
            else if (t && *t != QLatin1String("auto"))
                error(d,
                      QStringLiteral("distributed_env %1: expected auto (RANK, WORLD_SIZE, ... only for a "
                                     "trial of several processes or a written `launch:`), always or never")
                          .arg(quoted(*t)));
        }
        parseCode(root["code"], c);
        parseEnv(root["env"], c);
        if (const YAML::Node cap = root["capture"]) {
            if (!cap.IsScalar() || (cap.Scalar() != "true" && cap.Scalar() != "false"))
                error(cap, QStringLiteral("capture: expected true or false"));
            else
                c.capture = cap.Scalar() == "true";
        }
        if (const YAML::Node m = root["metrics"]) {
            if (!m.IsSequence()) {
                error(m,
                      QStringLiteral("metrics: expected a list such as [{name: train/loss, regex: "
                                     "'loss=([-+.0-9eE]+)'}]"));
            } else {
                QSet<QString> names;
                for (const auto &item : m) {
                    if (!expectMap(
                            item, QStringLiteral("metrics entry"),
                            {QStringLiteral("name"), QStringLiteral("regex"), QStringLiteral("step_regex")}))
                        continue;
                    MetricRule r;
                    r.line = lineOf(item);
                    if (!item["name"] || !item["regex"]) {
                        error(item, QStringLiteral("metrics entry: needs `name` and `regex`"));
                        continue;
                    }
                    const auto name = text(item["name"], QStringLiteral("metrics.name"));
                    if (name && (name->isEmpty() || containsControl(*name)))
                        error(item["name"],
                              QStringLiteral("metrics.name %1: expected a metric name such as "
                                             "train/loss")
                                  .arg(quoted(*name)));
                    else if (name && names.contains(*name))
                        error(item["name"], QStringLiteral("metrics: %1 is given twice").arg(quoted(*name)));
                    else if (name)
                        r.name = *name;
                    if (name)
                        names.insert(*name);
                    const auto pattern = [&](const char *key, QString &into) {
                        const auto p = text(item[key], QStringLiteral("metrics.%1").arg(QLatin1String(key)));
                        if (!p)
                            return;
                        const QRegularExpression re(*p);
                        if (!re.isValid())
                            error(item[key],
                                  QStringLiteral("metrics.%1 %2: %3 at offset %4")
                                      .arg(QLatin1String(key), quoted(*p), re.errorString())
                                      .arg(re.patternErrorOffset()));
                        else if (re.captureCount() < 1)
                            error(item[key],
                                  QStringLiteral("metrics.%1 %2: put the number in a capture group, e.g. "
                                                 "'loss=([-+.0-9eE]+)'")
                                      .arg(QLatin1String(key), quoted(*p)));
                        else
                            into = *p;
                    };
                    pattern("regex", r.regex);
                    if (item["step_regex"])
                        pattern("step_regex", r.stepRegex);
                    if (!r.name.isEmpty() && !r.regex.isEmpty())
                        c.metrics.append(r);
                }
            }
        }
        parseRunFiles(root, c);
        spec.command = c;
    }

    // `tensorboard: {dir: ..}` and `artifacts: [{glob, step_regex}]`: files the program writes
    // (runfiles.h).
    void parseRunFiles(const YAML::Node &root, CommandSpec &c)
    {
        if (const YAML::Node tb = root["tensorboard"];
            tb && expectMap(tb, QStringLiteral("tensorboard"), {QStringLiteral("dir")}) && tb["dir"]) {
            if (const auto dir = text(tb["dir"], QStringLiteral("tensorboard.dir")); dir && !dir->isEmpty())
                c.tensorboardDir = *dir;
        }
        const YAML::Node a = root["artifacts"];
        if (!a)
            return;
        if (!a.IsSequence()) {
            error(a,
                  QStringLiteral("artifacts: expected a list such as [{glob: \"samples/*.mp4\", step_regex: "
                                 "'step_(\\d+)'}]"));
            return;
        }
        for (const auto &item : a) {
            if (!expectMap(item, QStringLiteral("artifacts entry"),
                           {QStringLiteral("glob"), QStringLiteral("step_regex")}))
                continue;
            ArtifactRule r;
            r.line = lineOf(item);
            const auto glob =
                item["glob"] ? text(item["glob"], QStringLiteral("artifacts.glob")) : std::nullopt;
            if (!glob || glob->isEmpty()) {
                error(item, QStringLiteral("artifacts entry: needs a `glob` such as \"samples/*.mp4\""));
                continue;
            }
            r.glob = *glob;
            if (item["step_regex"]) {
                const auto p = text(item["step_regex"], QStringLiteral("artifacts.step_regex"));
                const QRegularExpression re(p.value_or(QString()));
                if (!p || !re.isValid() || re.captureCount() < 1) {
                    error(item["step_regex"],
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
        if (!expectMap(n, what,
                       {QStringLiteral("type"), QStringLiteral("min_iter"), QStringLiteral("max_iter"),
                        QStringLiteral("s"), QStringLiteral("eta"), QStringLiteral("strict"),
                        QStringLiteral("min_step"), QStringLiteral("min_trials")}))
            return;
        EarlyTerminate et;
        const auto type = n["type"] ? text(n["type"], what + QStringLiteral(".type")) : std::nullopt;
        if (type == QLatin1String("hyperband")) {
            et.type = EarlyTerminate::Type::Hyperband;
            if (n["eta"]) {
                const auto eta = number(n["eta"], what + QStringLiteral(".eta"));
                if (eta && *eta <= 1)
                    error(n["eta"], what + QStringLiteral(".eta must be greater than 1"));
                else if (eta)
                    et.eta = *eta;
            }
            if (const YAML::Node strict = n["strict"]) {
                const auto t = text(strict, what + QStringLiteral(".strict"));
                const auto b = t ? parseBool(*t) : std::nullopt;
                if (t && !b)
                    error(strict, what + QStringLiteral(".strict: expected true or false"));
                et.strict = b.value_or(false);
            }
            if (n["min_iter"]) {
                if (auto v = integer(n["min_iter"], what + QStringLiteral(".min_iter"), 1))
                    et.minIter = int(std::min<qint64>(*v, 1 << 30));
            } else if (n["max_iter"] && n["s"]) {
                if (auto v = integer(n["max_iter"], what + QStringLiteral(".max_iter"), 1))
                    et.maxIter = int(std::min<qint64>(*v, 1 << 30));
                if (auto v = integer(n["s"], what + QStringLiteral(".s"), 1))
                    et.s = int(std::min<qint64>(*v, 64));
            } else {
                error(n, what + QStringLiteral(": hyperband needs min_iter, or max_iter and s"));
            }
        } else if (type == QLatin1String("median")) {
            et.type = EarlyTerminate::Type::Median;
            if (n["min_step"]) {
                if (auto v = integer(n["min_step"], what + QStringLiteral(".min_step"), 0))
                    et.minStep = *v;
            }
            if (n["min_trials"]) {
                if (auto v = integer(n["min_trials"], what + QStringLiteral(".min_trials"), 1))
                    et.minTrials = int(std::min<qint64>(*v, 1000000));
            }
        } else if (type) {
            error(n["type"],
                  what + QStringLiteral(".type %1: expected hyperband or median").arg(quoted(*type)));
            return;
        } else if (!n["type"]) {
            error(n, what + QStringLiteral(": `type` is missing (hyperband or median)"));
            return;
        }
        spec.earlyTerminate = et;
    }

    void parseResources(const YAML::Node &n, SweepSpec &spec)
    {
        if (!n)
            return;
        const QString what = QStringLiteral("resources");
        if (!expectMap(n, what,
                       {QStringLiteral("nodes"), QStringLiteral("gpus_per_node"),
                        QStringLiteral("cpus_per_task"), QStringLiteral("mem"), QStringLiteral("time"),
                        QStringLiteral("partition"), QStringLiteral("account")}))
            return;
        SweepResources &r = spec.resources;
        const auto count = [&](const char *key, qint64 minimum, int &into) {
            if (n[key])
                if (auto v = integer(n[key], what + QLatin1Char('.') + QLatin1String(key), minimum))
                    into = int(std::min<qint64>(*v, 1 << 20));
        };
        count("nodes", 1, r.nodes);
        count("gpus_per_node", 0, r.gpusPerNode);
        count("cpus_per_task", 1, r.cpusPerTask);
        const auto str = [&](const char *key, QString &into) {
            if (n[key])
                if (auto v = slurmValue(n[key], what + QLatin1Char('.') + QLatin1String(key)))
                    into = *v;
        };
        str("mem", r.mem);
        str("time", r.time);
        if (const SlurmDuration t = parseSlurmDuration(r.time); !t.ok()) {
            error(n["time"], what + QStringLiteral(".time: ") + t.error);
            r.time.clear();
        }
        str("partition", r.partition);
        str("account", r.account);
    }

    // Orrery's `budget: {gpu_hours: N}` (docs/sweeps.md "GPU-hours and cost"), after resources:
    // a budget needs a time limit and GPUs, and room for at least one trial.
    void parseBudget(const YAML::Node &n, SweepSpec &spec)
    {
        if (!n || !expectMap(n, QStringLiteral("budget"), {QStringLiteral("gpu_hours")}))
            return;
        const YAML::Node h = n["gpu_hours"];
        if (!h) {
            error(n, QStringLiteral("budget: `gpu_hours` is missing (e.g. budget: {gpu_hours: 100})"));
            return;
        }
        const auto v = number(h, QStringLiteral("budget.gpu_hours"));
        if (!v)
            return;
        const SweepResources &r = spec.resources;
        const auto worst = worstGpuHours(r);
        if (*v <= 0)
            error(h, QStringLiteral("budget.gpu_hours must be greater than 0, got %1").arg(formatHours(*v)));
        else if (allocatedGpus(r) == 0)
            error(h,
                  QStringLiteral("budget.gpu_hours: the trials ask for no GPUs (resources.gpus_per_node "
                                 "is 0), so nothing would count against the budget"));
        else if (!worst)
            error(h,
                  QStringLiteral("budget.gpu_hours needs a time limit (resources.time, e.g. \"02:00:00\"): "
                                 "without one a trial's GPU-hours are unbounded"));
        else if (*worst > *v * (1 + 1e-12))
            error(h,
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
            error(n,
                  QStringLiteral("health_check: expected true, false or thresholds such as "
                                 "{min_matmul_gflops: 5000, min_busbw_gbps: 10}"));
            return;
        }
        if (!expectMap(n, QStringLiteral("health_check"), healthCheckThresholdNames()))
            return;
        h.enabled = true;
        for (const auto &item : n) {
            const QString key = QString::fromStdString(item.first.Scalar());
            if (!healthCheckThresholdNames().contains(key))
                continue;  // reported by expectMap
            const auto v = number(item.second, QStringLiteral("health_check.") + key);
            if (!v)
                continue;
            if (*v < 0)
                error(item.second,
                      QStringLiteral("health_check.%1 must be at least 0, got %2").arg(key).arg(*v));
            else if (key == QLatin1String("memory_fraction") && (*v <= 0 || *v > 0.95))
                error(item.second,
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
        const auto t = text(n, QStringLiteral("hang_timeout"));
        if (!t || t->trimmed() == QLatin1String("auto"))
            return;
        QString why;
        const std::optional<qint64> ms = parseHangDuration(*t, &why);
        if (!ms) {
            error(n, QStringLiteral("hang_timeout %1: %2").arg(quoted(*t), why));
            return;
        }
        if (*ms < 60'000)
            warn(n,
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
                const auto s = text(w, QStringLiteral("notify"));
                if (!s)
                    return;
                words << *s;
            }
        } else {
            const auto s = text(n, QStringLiteral("notify"));
            if (!s)
                return;
            words << *s;
        }
        QString why;
        const std::optional<NotifyTarget> target = parseNotifyTarget(words, &why);
        if (!target) {
            error(n, QStringLiteral("notify: %1").arg(why));
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
            if (!expectMap(n, what, {QStringLiteral("base"), QStringLiteral("allow_new_keys")}))
                return;
            base.reset(n["base"]);
            if (!base) {
                error(n,
                      what +
                          QStringLiteral(": `base` is missing (the config file each trial gets a copy of)"));
                return;
            }
            if (const YAML::Node a = n["allow_new_keys"]) {
                const auto t = text(a, what + QStringLiteral(".allow_new_keys"));
                const auto b = t ? parseBool(*t) : std::nullopt;
                if (t && !b)
                    error(a, what + QStringLiteral(".allow_new_keys: expected true or false"));
                cf.allowNewKeys = b.value_or(false);
            }
        }
        const auto file = text(base, what);
        if (!file)
            return;
        cf.base = *file;
        cf.fileName = QFileInfo(*file).fileName();
        if (file->isEmpty() || containsControl(*file) || cf.fileName.isEmpty())
            error(base, QStringLiteral("%1 %2: expected a file name").arg(what, quoted(*file)));
        else if (!configFormatOf(*file))
            error(base,
                  QStringLiteral("%1 %2: Orrery edits YAML (.yaml, .yml) and JSON (.json) configs")
                      .arg(what, quoted(*file)));
        else if (kRunDirFiles.contains(cf.fileName))
            error(base,
                  QStringLiteral("%1 %2: a run dir has Orrery's own %3; rename the config")
                      .arg(what, quoted(*file), cf.fileName));
        if (!m_command)
            error(n,
                  QStringLiteral("%1 goes with a `command` or `program` (the bundled trainer takes "
                                 "`trainer: {config: ...}`)")
                      .arg(what));
        spec.configFile = cf;
    }

    void warn(const YAML::Node &at, const QString &message)
    {
        warnings.append({m_file, lineOf(at), message});
    }
    QList<SpecError> warnings;

private:
    static QString didYouMean(const QString &word, const QStringList &known)
    {
        const QString hint = closestWord(word, known);
        return hint.isEmpty() ? QString() : QStringLiteral(" (did you mean '%1'?)").arg(hint);
    }

    QString m_file;
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
    Parser parser(file, schema);
    try {
        const YAML::Node root = YAML::Load(yaml.toStdString());
        parser.parse(root, spec);
    } catch (const YAML::Exception &e) {
        // yaml-cpp's marks are 0-based; editors count from 1.
        parser.error(e.mark.line >= 0 ? e.mark.line + 1 : 0,
                     QStringLiteral("malformed YAML: %1").arg(escapeControl(QString::fromStdString(e.msg))));
    }
    result.errors = parser.errors;
    std::stable_sort(result.errors.begin(), result.errors.end(),
                     [](const SpecError &a, const SpecError &b) { return a.line < b.line; });
    spec.warnings = parser.warnings;
    if (result.errors.isEmpty())
        result.spec = spec;
    return result;
}

SpecParse loadSweepSpec(const QString &path, const TrainerSchema &schema)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {std::nullopt, {{path, 0, QStringLiteral("cannot read the file: %1").arg(f.errorString())}}};
    return parseSweepSpecAt(f.readAll(), path, schema);
}

SpecParse parseSweepSpecAt(const QByteArray &yaml, const QString &path, const TrainerSchema &schema)
{
    SpecParse parsed = parseSweepSpec(yaml, path, schema);
    // A command's working directory is relative to the spec file's (command.h): keep where it is,
    // wherever the sweep is followed from.
    if (parsed.spec && parsed.spec->command)
        parsed.spec->file = QFileInfo(path).absoluteFilePath();
    // A relative base config is relative to the spec file, so a sweep runs from any directory.
    if (parsed.spec && !parsed.spec->trainerConfig.isEmpty()) {
        QString &config = parsed.spec->trainerConfig;
        config = QFileInfo(path).dir().absoluteFilePath(config);
        if (!QFileInfo(config).isFile())
            parsed.errors.append(
                {path, 0, QStringLiteral("trainer.config %1 does not exist").arg(quoted(config))});
    }
    // A config-file sweep's base: relative to the spec, readable, and holding every parameter's
    // path (unless new keys are allowed), each refusal at its parameter's line.
    if (parsed.spec && parsed.spec->configFile) {
        SweepSpec::ConfigFile &cf = *parsed.spec->configFile;
        cf.base = QFileInfo(path).dir().absoluteFilePath(cf.base);
        QFile f(cf.base);
        if (!f.open(QIODevice::ReadOnly)) {
            parsed.errors.append(
                {path, cf.line,
                 QStringLiteral("config_file %1 cannot be read: %2").arg(quoted(cf.base), f.errorString())});
        } else {
            const QByteArray base = f.readAll();
            const ConfigFormat format = configFormatOf(cf.base).value_or(ConfigFormat::Yaml);
            for (const ParamSpec &p : parsed.spec->parameters) {
                const QVariant probe = p.values.isEmpty() ? QVariant(p.min) : p.values.front();
                const ConfigEdit edit = setConfigValues(base, format, {{p.key, probe}}, cf.allowNewKeys);
                if (!edit.ok())
                    parsed.errors.append({path, p.line,
                                          QStringLiteral("parameter %1: config_file %2: %3")
                                              .arg(p.key, QFileInfo(cf.base).fileName(), edit.error)});
            }
        }
    }
    if (!parsed.errors.isEmpty())
        parsed.spec.reset();
    return parsed;
}

QByteArray renderTrialConfig(const QByteArray &baseYaml, const QString &baseFile, const TrialParams &params)
{
    // The base is flattened to dotted keys (it may be nested or dotted, as the trainer accepts
    // both), the params replace or join them, and everything is written back nested, so a key
    // never appears twice in two spellings.
    std::vector<std::pair<std::string, YAML::Node>> flat;
    const std::function<void(const YAML::Node &, const std::string &)> walk = [&](const YAML::Node &node,
                                                                                  const std::string &prefix) {
        for (const auto &item : node) {
            const std::string key = prefix.empty() ? item.first.Scalar() : prefix + "." + item.first.Scalar();
            if (item.second.IsMap())
                walk(item.second, key);
            else
                flat.emplace_back(key, item.second);
        }
    };
    try {
        const YAML::Node base = YAML::Load(baseYaml.toStdString());
        if (base.IsDefined() && !base.IsNull()) {
            if (!base.IsMap())
                throw std::runtime_error(
                    QStringLiteral("%1: a trainer config is a YAML mapping of keys to values")
                        .arg(baseFile)
                        .toStdString());
            walk(base, {});
        }
    } catch (const YAML::Exception &e) {
        throw std::runtime_error(QStringLiteral("%1:%2: malformed YAML: %3")
                                     .arg(baseFile)
                                     .arg(e.mark.line + 1)
                                     .arg(escapeControl(QString::fromStdString(e.msg)))
                                     .toStdString());
    }
    for (const auto &[key, value] : params) {
        const std::string k = key.toStdString();
        YAML::Node v(formatParamValue(value).toStdString());
        const auto it = std::find_if(flat.begin(), flat.end(), [&](const auto &e) { return e.first == k; });
        if (it != flat.end())
            it->second = v;
        else
            flat.emplace_back(k, v);
    }
    YAML::Node root(YAML::NodeType::Map);
    for (const auto &[key, value] : flat) {
        std::vector<std::string> parts;
        for (const QString &part : QString::fromStdString(key).split(QLatin1Char('.')))
            parts.push_back(part.toStdString());
        // yaml-cpp's operator[] returns proxies: walk with reset() to keep references valid.
        YAML::Node node = root;
        for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
            YAML::Node child = node[parts[i]];
            if (child.IsDefined() && !child.IsMap() && !child.IsNull())
                throw std::runtime_error(QStringLiteral("%1: %2 is both a value and a section")
                                             .arg(baseFile, QString::fromStdString(parts[i]))
                                             .toStdString());
            if (!child.IsMap())
                node[parts[i]] = YAML::Node(YAML::NodeType::Map);
            YAML::Node next = node[parts[i]];
            node.reset(next);
        }
        node[parts.back()] = value;
    }
    YAML::Emitter e;
    e << root;
    return QByteArray(e.c_str()) + '\n';
}

}  // namespace orrery::core

namespace orrery::core {

bool specRunsOwnCommand(const QByteArray &yaml)
{
    try {
        return runsOwnCommand(YAML::Load(yaml.toStdString()));
    } catch (const YAML::Exception &) {
        return false;
    }
}

std::optional<QByteArray> withRunCap(const QByteArray &yaml, int count, QString *error)
{
    // The spec's own run_cap, where it has one: W&B's --count bounds the runs one agent starts,
    // so the sweep runs at most the smaller of the two.
    int cap = count;
    try {
        const YAML::Node root = YAML::Load(yaml.toStdString());
        if (root.IsMap() && root["run_cap"] && root["run_cap"].IsScalar())
            if (const auto v = parseInteger(QString::fromStdString(root["run_cap"].Scalar())); v && *v > 0)
                cap = int(std::min<qint64>(*v, count));
    } catch (const YAML::Exception &) {
        return yaml;  // the parser says what is wrong, at its line
    }
    const ConfigEdit edit =
        setConfigValues(yaml, ConfigFormat::Yaml, {{QStringLiteral("run_cap"), qint64(cap)}}, true);
    if (!edit.ok()) {
        if (error)
            *error = QStringLiteral("--count: the spec's run_cap cannot be set: %1").arg(edit.error);
        return std::nullopt;
    }
    return edit.text;
}

QByteArray trialParamsFile(const SweepSpec &spec, const QByteArray &baseYaml, const TrialParams &params)
{
    if (!spec.command)
        return renderTrialConfig(baseYaml, spec.trainerConfig, params);
    return pythonYamlMapping(nestParams(spec, params, false));
}

QByteArray wandbSweepParamsFile(const SweepSpec &spec, const TrialParams &params)
{
    PyDict file;
    for (const auto &[name, value] : nestParams(spec, params, true))
        file.append({name, QVariant::fromValue(PyDict{{QStringLiteral("value"), value}})});
    return "wandb_version: 1\n\n" + (file.isEmpty() ? QByteArray() : pythonYamlMapping(file));
}

PyDict nestParams(const SweepSpec &spec, const TrialParams &params, bool asWandb)
{
    PyDict root;
    const std::function<void(PyDict &, const QStringList &, qsizetype, const QVariant &)> put =
        [&](PyDict &into, const QStringList &parts, qsizetype i, const QVariant &value) {
            auto it =
                std::find_if(into.begin(), into.end(), [&](const auto &e) { return e.first == parts[i]; });
            if (i + 1 == parts.size()) {
                if (it != into.end())
                    it->second = value;
                else
                    into.append({parts[i], value});
                return;
            }
            if (it == into.end() || it->second.metaType() != QMetaType::fromType<PyDict>()) {
                if (it == into.end()) {
                    into.append({parts[i], QVariant::fromValue(PyDict())});
                    it = into.end() - 1;
                } else {
                    it->second = QVariant::fromValue(PyDict());
                }
            }
            PyDict inner = it->second.value<PyDict>();
            put(inner, parts, i + 1, value);
            it->second = QVariant::fromValue(inner);
        };
    for (const auto &[key, value] : params) {
        QStringList parts = key.split(QLatin1Char('.'));
        if (asWandb) {
            const QString &name = key;  // a structured binding is not captured by clang 15
            const auto p = std::find_if(spec.parameters.begin(), spec.parameters.end(),
                                        [&name](const ParamSpec &ps) { return ps.key == name; });
            parts = p != spec.parameters.end() && !p->wandbPath.isEmpty() ? p->wandbPath : QStringList{key};
        }
        put(root, parts, 0, value);
    }
    return root;
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

std::optional<NotifyTarget> parseNotifyTarget(const QStringList &words, QString *why)
{
    auto fail = [why](const QString &message) {
        if (why)
            *why = message;
        return std::nullopt;
    };
    QStringList argv = words;
    if (words.size() == 1) {
        const QString w = words.front().trimmed();
        if (w.startsWith(QLatin1String("http://")) || w.startsWith(QLatin1String("https://"))) {
            const QUrl url(w, QUrl::StrictMode);
            if (!url.isValid() || url.host().isEmpty())
                return fail(QStringLiteral("%1 is not a valid URL (e.g. https://hooks.example.org/orrery)")
                                .arg(quoted(w)));
            NotifyTarget t;
            t.url = w;
            return t;
        }
        const auto split = shellWords(words.front());
        if (!split)
            return fail(QStringLiteral("%1 has an unbalanced quote").arg(quoted(words.front())));
        argv = *split;
    }
    if (argv.isEmpty() || argv.front().isEmpty())
        return fail(QStringLiteral("expected a command (a list of words, or a string) or an http(s) URL"));
    for (const QString &w : argv)
        if (w.contains(QChar(0)))
            return fail(QStringLiteral("a command word holds a NUL byte"));
    NotifyTarget t;
    t.command = argv;
    return t;
}

std::optional<qint64> parseHangDuration(const QString &text, QString *why)
{
    const QString t = text.trimmed();
    auto fail = [why, &t]() -> std::optional<qint64> {
        if (why)
            *why = QStringLiteral("expected a duration such as 90s, 10m, 1h or 1h30m, or auto");
        (void)t;
        return std::nullopt;
    };
    if (t.isEmpty())
        return fail();
    bool plain = false;
    const qint64 seconds = t.toLongLong(&plain);
    if (plain)
        return seconds > 0 && seconds < 365LL * 86400 ? std::optional<qint64>(seconds * 1000) : fail();
    static const QRegularExpression re(QStringLiteral("^(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?$"));
    const QRegularExpressionMatch m = re.match(t);
    if (!m.hasMatch())
        return fail();
    const qint64 h = m.captured(1).toLongLong(), min = m.captured(2).toLongLong(),
                 s = m.captured(3).toLongLong();
    if (h > 24 * 365 || min > 60 * 24 * 365 || s > 86400LL * 365)
        return fail();
    const qint64 ms = ((h * 60 + min) * 60 + s) * 1000;
    return ms > 0 ? std::optional<qint64>(ms) : fail();
}

}  // namespace orrery::core
