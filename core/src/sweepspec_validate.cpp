// SPDX-License-Identifier: GPL-3.0-or-later
//
// Sweep spec validation: each parameter typed and range-checked against the trainer's schema (or
// typed by its values, for a command), the rules across keys, and what a spec at a path refers
// to on disk (its trainer.config, its config_file's base).
#include "sweepspecparser.h"

#include "orrery/core/configfile.h"
#include "orrery/core/pyvalue.h"

#include "textutil.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <cmath>

namespace orrery::core {

namespace {

using Type = ConfigKey::Type;

const QStringList kParamKeys{
    QStringLiteral("value"), QStringLiteral("values"), QStringLiteral("distribution"),
    QStringLiteral("min"),   QStringLiteral("max"),    QStringLiteral("mu"),
    QStringLiteral("sigma"), QStringLiteral("q"),      QStringLiteral("probabilities")};

bool isLog(Distribution d)
{
    return d == Distribution::LogUniform || d == Distribution::QLogUniform;
}
bool usesMinMax(Distribution d)
{
    return d != Distribution::Constant && d != Distribution::Categorical && !isNormal(d);
}

// The keys a distribution uses; the others of kParamKeys are mistakes, not silently ignored.
QSet<QString> keysUsedBy(Distribution d)
{
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
}

// The type of a command's parameter from the values written: integers, numbers, true/false,
// else text; int_uniform gives integers, the other distributions numbers.
ConfigKey inferredKey(const QString &name, const YAML::Node &body)
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
        key.type =
            typeOf(body["min"]) == Type::Int && typeOf(body["max"]) == Type::Int ? Type::Int : Type::Float;
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
    const bool allNumber =
        std::all_of(types.begin(), types.end(), [](Type t) { return t == Type::Int || t == Type::Float; });
    const bool allBool = std::all_of(types.begin(), types.end(), [](Type t) { return t == Type::Bool; });
    key.type = allInt ? Type::Int : allNumber ? Type::Float : allBool ? Type::Bool : Type::String;
    return key;
}

QString rangeProblem(const ConfigKey &key, double v)
{
    if ((key.min && v < *key.min) || (key.max && v > *key.max))
        return QStringLiteral("must be between %1 and %2")
            .arg(key.min ? formatDouble(*key.min) : QStringLiteral("-inf"),
                 key.max ? formatDouble(*key.max) : QStringLiteral("inf"));
    return {};
}

}  // namespace

// One parameter's block as its steps read it, and how many errors there were before it (a step
// that adds one refuses the parameter).
struct ParamParser::Block {
    const YAML::Node &keyNode;
    const YAML::Node &body;
    const ConfigKey &key;
    QString what;  // "parameter optim.lr", for messages
    int line = 0;
    int before = 0;
};

void ParamParser::parameters(const YAML::Node &params, int rootLine, SweepSpec &spec)
{
    if (!params) {
        m_reader.error(rootLine, QStringLiteral("`parameters` is missing: the trainer keys to sweep"));
        return;
    }
    if (!params.IsMap() || params.size() == 0) {
        m_reader.error(params,
                       QStringLiteral("parameters: expected a mapping of trainer keys, e.g. optim.lr: "
                                      "{values: [1e-4, 3e-4]}"));
        return;
    }
    QSet<QString> seen;
    parameterGroup(params, {}, seen, spec);
}

// The parameters of one mapping; W&B's nested form (`optimizer: {parameters: {lr: ...}}`)
// recurses, its keys dotted (optimizer.lr) and their nesting kept for W&B's macros.
void ParamParser::parameterGroup(const YAML::Node &params, const QStringList &path, QSet<QString> &seen,
                                 SweepSpec &spec)
{
    for (const auto &item : params) {
        if (item.second.IsMap() && item.second["parameters"]) {
            const auto name = m_reader.text(item.first, QStringLiteral("parameter name"));
            const YAML::Node inner = item.second["parameters"];
            if (!name)
                continue;
            const QString dotted = (path + QStringList{*name}).join(QLatin1Char('.'));
            m_reader.expectMap(item.second, QStringLiteral("parameter %1").arg(dotted),
                               {QStringLiteral("parameters")});
            if (!inner.IsMap() || inner.size() == 0) {
                m_reader.error(
                    inner,
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
            m_reader.error(p->line, QStringLiteral("parameter %1 is given twice").arg(p->key));
            continue;
        }
        seen.insert(p->key);
        spec.parameters.append(*p);
    }
}

// `path`: the names of the W&B `parameters:` groups it is nested in (empty at the top).
std::optional<ParamSpec> ParamParser::parameter(const YAML::Node &keyNode, const YAML::Node &body,
                                                const QStringList &path)
{
    auto keyText = m_reader.text(keyNode, QStringLiteral("parameter name"));
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
    if (!knownKey(*keyText, key, line))
        return std::nullopt;
    const QString what = QStringLiteral("parameter %1").arg(key->key);
    if (!body.IsMap()) {
        m_reader.error(body.IsNull() ? line : lineOf(body),
                       QStringLiteral("%1: expected a mapping such as {values: [...]}, {value: X} or "
                                      "{distribution: uniform, min: A, max: B}")
                           .arg(what));
        return std::nullopt;
    }
    const Block b{keyNode, body, *key, what, line, int(m_reader.errors.size())};
    m_reader.expectMap(body, what, kParamKeys);
    ParamSpec p;
    p.key = key->key;
    p.wandbPath = wandbPath;
    p.line = line;
    p.type = key->type;
    if (key->min)
        p.lowerBound = *key->min;
    if (key->max)
        p.upperBound = *key->max;
    const std::optional<Distribution> d = distribution(b);
    if (!d || !keysFit(b, *d))
        return std::nullopt;
    p.distribution = *d;
    if (*d == Distribution::Constant)
        return constant(b, p);
    if (*d == Distribution::Categorical)
        return categorical(b, p);
    return numeric(b, p);
}

// A command's key that cannot be a name, or a key the trainer's schema does not have.
bool ParamParser::knownKey(const QString &keyText, const ConfigKey *key, int line)
{
    if (m_command && (keyText.isEmpty() || containsControl(keyText))) {
        m_reader.error(line,
                       QStringLiteral("parameter name %1: must not be empty or contain control characters")
                           .arg(quoted(keyText)));
        return false;
    }
    if (!key) {
        const QString hint = m_schema.closest(keyText);
        m_reader.error(
            line,
            QStringLiteral("unknown trainer key %1%2; `orrery-train --print-schema` lists them all (a "
                           "sweep of your own script names it: `program: train.py`)")
                .arg(quoted(keyText),
                     hint.isEmpty() ? QString() : QStringLiteral(" (did you mean '%1'?)").arg(hint)));
        return false;
    }
    return true;
}

// The distribution: named, or inferred as W&B does (value → constant, values → categorical,
// min/max → int_uniform for an integer key, else uniform).
std::optional<Distribution> ParamParser::distribution(const Block &b)
{
    const YAML::Node &body = b.body;
    if (body["distribution"]) {
        const auto name = m_reader.text(body["distribution"], b.what + QStringLiteral(": distribution"));
        if (!name)
            return std::nullopt;
        const auto d = distributionFromString(*name);
        if (!d) {
            QStringList known;
            for (int i = 0; i <= int(kLastDistribution); ++i)
                known << toString(Distribution(i));
            m_reader.error(
                body["distribution"],
                QStringLiteral("%1: unknown distribution %2%3; supported: %4")
                    .arg(b.what, quoted(*name), didYouMean(*name, known), known.join(QStringLiteral(", "))));
            return std::nullopt;
        }
        return d;
    }
    if (body["value"])
        return Distribution::Constant;
    if (body["values"])
        return Distribution::Categorical;
    if (body["min"] && body["max"])
        return b.key.type == Type::Int ? Distribution::IntUniform : Distribution::Uniform;
    m_reader.error(
        b.line,
        QStringLiteral("%1: give `value`, `values`, `min` and `max`, or a `distribution`").arg(b.what));
    return std::nullopt;
}

// The block has the keys the distribution uses and no others, and the key's type takes it.
bool ParamParser::keysFit(const Block &b, Distribution d)
{
    const QString dn = toString(d);
    const QSet<QString> used = keysUsedBy(d);
    for (const auto &item : b.body) {
        const QString k = QString::fromStdString(item.first.Scalar());
        if (k != QLatin1String("distribution") && kParamKeys.contains(k) && !used.contains(k))
            m_reader.error(item.first,
                           QStringLiteral("%1: `%2` is not used by distribution %3").arg(b.what, k, dn));
    }
    for (const QString &k : used)
        if (k != QLatin1String("probabilities") && k != QLatin1String("q") && !b.body[k.toStdString()])
            m_reader.error(b.line, QStringLiteral("%1: distribution %2 needs `%3`").arg(b.what, dn, k));
    if (int(m_reader.errors.size()) != b.before)
        return false;
    if ((b.key.type == Type::Bool || b.key.type == Type::String) && d != Distribution::Constant &&
        d != Distribution::Categorical) {
        m_reader.error(b.body["distribution"],
                       QStringLiteral("%1 is a %2 key: use `value` or `values`, not distribution %3")
                           .arg(b.what, toString(b.key.type), dn));
        return false;
    }
    return true;
}

std::optional<ParamSpec> ParamParser::constant(const Block &b, ParamSpec p)
{
    if (const auto v = value(b.body["value"], b.key))
        p.values = {*v};
    return unlessRefused(b, p);
}

std::optional<ParamSpec> ParamParser::categorical(const Block &b, ParamSpec p)
{
    const YAML::Node values = b.body["values"];
    if (!values.IsSequence() || values.size() == 0) {
        m_reader.error(values, QStringLiteral("%1: `values` must be a non-empty list").arg(b.what));
        return std::nullopt;
    }
    for (const auto &v : values)
        if (const auto x = value(v, b.key))
            p.values.append(*x);
    if (const YAML::Node probs = b.body["probabilities"]) {
        if (!probabilities(b, probs, values.size(), p))
            return std::nullopt;
    }
    return unlessRefused(b, p);
}

// `probabilities`, one per value; false where the list does not match the values.
bool ParamParser::probabilities(const Block &b, const YAML::Node &probs, std::size_t count, ParamSpec &p)
{
    if (!probs.IsSequence() || probs.size() != count) {
        m_reader.error(probs,
                       QStringLiteral("%1: `probabilities` must be a list of %2 numbers, one per value")
                           .arg(b.what)
                           .arg(count));
        return false;
    }
    double sum = 0;
    for (const auto &x : probs) {
        const auto pr = m_reader.number(x, b.what + QStringLiteral(": probability"));
        if (pr && *pr < 0)
            m_reader.error(x, QStringLiteral("%1: a probability must not be negative").arg(b.what));
        if (pr) {
            p.probabilities.append(*pr);
            sum += *pr;
        }
    }
    // W&B requires the probabilities to sum to 1; allow for decimal rounding.
    if (int(m_reader.errors.size()) == b.before && std::abs(sum - 1) > 1e-6)
        m_reader.error(
            probs, QStringLiteral("%1: the probabilities sum to %2, not 1").arg(b.what, formatDouble(sum)));
    return true;
}

// The numeric distributions: min and max, or mu and sigma, and q.
std::optional<ParamSpec> ParamParser::numeric(const Block &b, ParamSpec p)
{
    const Distribution d = p.distribution;
    if (b.key.type == Type::Int && !isQuantized(d) && d != Distribution::IntUniform) {
        m_reader.error(
            b.body["distribution"] ? b.body["distribution"] : b.keyNode,
            QStringLiteral("%1 is an integer key but distribution %2 gives non-integer values; use "
                           "int_uniform, or a q_* distribution with an integer q")
                .arg(b.what, toString(d)));
        return std::nullopt;
    }
    quantum(b, p);
    if (usesMinMax(d) ? !range(b, p) : !normal(b, p))
        return std::nullopt;
    return unlessRefused(b, p);
}

void ParamParser::quantum(const Block &b, ParamSpec &p)
{
    const YAML::Node &body = b.body;
    if (!body["q"])
        return;
    const auto q = m_reader.number(body["q"], b.what + QStringLiteral(": q"));
    if (q && *q <= 0)
        m_reader.error(body["q"], QStringLiteral("%1: q must be positive").arg(b.what));
    if (q && b.key.type == Type::Int && *q != std::floor(*q))
        m_reader.error(body["q"], QStringLiteral("%1 is an integer key: q must be an integer").arg(b.what));
    if (q)
        p.q = *q;
}

// `min` and `max`: in order, integers for int_uniform, positive for the *_values logarithms, and
// in the key's own units within the schema's range. False where the parameter is refused at once.
bool ParamParser::range(const Block &b, ParamSpec &p)
{
    const YAML::Node &body = b.body;
    const Distribution d = p.distribution;
    const QString dn = toString(d);
    const auto lo = m_reader.number(body["min"], b.what + QStringLiteral(": min"));
    const auto hi = m_reader.number(body["max"], b.what + QStringLiteral(": max"));
    if (!lo || !hi)
        return false;
    p.min = *lo;
    p.max = *hi;
    if (!(p.min < p.max)) {
        m_reader.error(body["min"],
                       QStringLiteral("%1: min (%2) must be below max (%3)")
                           .arg(b.what, formatDouble(p.min), formatDouble(p.max)));
        return false;
    }
    if (d == Distribution::IntUniform && (p.min != std::floor(p.min) || p.max != std::floor(p.max))) {
        m_reader.error(body["min"], QStringLiteral("%1: int_uniform needs integer min and max").arg(b.what));
        return false;
    }
    if ((d == Distribution::LogUniformValues || d == Distribution::QLogUniformValues ||
         d == Distribution::InvLogUniformValues) &&
        p.min <= 0) {
        m_reader.error(body["min"],
                       QStringLiteral("%1: %2 needs min > 0 (it samples the logarithm)").arg(b.what, dn));
        return false;
    }
    // The range in the key's own units must fit the schema's (inv_log_uniform's bounds are
    // of ln(1/x): x runs from exp(-max) to exp(-min)).
    const double lower = isLog(d)          ? std::exp(p.min)
        : d == Distribution::InvLogUniform ? std::exp(-p.max)
                                           : p.min;
    const double upper = isLog(d)          ? std::exp(p.max)
        : d == Distribution::InvLogUniform ? std::exp(-p.min)
                                           : p.max;
    for (const auto &[v, node] : {std::pair{lower, body["min"]}, std::pair{upper, body["max"]}}) {
        const QString why = rangeProblem(b.key, v);
        if (!why.isEmpty())
            m_reader.error(node,
                           QStringLiteral("%1: the range [%2, %3] does not fit the key: values %4")
                               .arg(b.what, formatDouble(lower), formatDouble(upper), why));
    }
    return true;
}

// `mu` and `sigma`; false where the parameter is refused at once.
bool ParamParser::normal(const Block &b, ParamSpec &p)
{
    const YAML::Node &body = b.body;
    const auto mu = m_reader.number(body["mu"], b.what + QStringLiteral(": mu"));
    const auto sigma = m_reader.number(body["sigma"], b.what + QStringLiteral(": sigma"));
    if (!mu || !sigma)
        return false;
    p.mu = *mu;
    p.sigma = *sigma;
    if (p.sigma <= 0)
        m_reader.error(body["sigma"], QStringLiteral("%1: sigma must be positive").arg(b.what));
    // log_normal's mu is ln(x)'s mean: the typical value is exp(mu).
    const bool logNormal =
        p.distribution == Distribution::LogNormal || p.distribution == Distribution::QLogNormal;
    const QString why = rangeProblem(b.key, logNormal ? std::exp(p.mu) : p.mu);
    if (!why.isEmpty())
        m_reader.error(body["mu"], QStringLiteral("%1: mu %2").arg(b.what, why));
    return true;
}

// The parameter, unless a step found a problem with it since the block began.
std::optional<ParamSpec> ParamParser::unlessRefused(const Block &b, const ParamSpec &p) const
{
    return int(m_reader.errors.size()) == b.before ? std::optional(p) : std::nullopt;
}

// A value for a trainer key, typed and range-checked by the schema.
std::optional<QVariant> ParamParser::value(const YAML::Node &n, const ConfigKey &key)
{
    const QString what = QStringLiteral("parameter %1").arg(key.key);
    if (m_command)
        return pyValue(n, what);
    const auto t = m_reader.text(n, what);
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
        m_reader.error(n, QStringLiteral("%1 = %2: %3").arg(what, quoted(*t), why));
        return std::nullopt;
    }
    return v;
}

// A command's parameter value as W&B's agent gets it: typed as PyYAML types it (pyvalue.h:
// `1e-4` is text, `1.0e-4` a number, `yes` true, `~` None), lists kept as lists.
std::optional<QVariant> ParamParser::pyValue(const YAML::Node &n, const QString &what)
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
        m_reader.error(n,
                       QStringLiteral("%1: a mapping as a value is not supported; write it as nested "
                                      "`parameters:` (W&B's nested parameters)")
                           .arg(what));
        return std::nullopt;
    }
    const auto t = m_reader.text(n, what);
    if (!t)
        return std::nullopt;
    // yaml-cpp tags a plain scalar "?" and a quoted one "!": only a plain one is resolved;
    // an explicit tag (`!!float 1e-5`) says the type, as it does to PyYAML.
    const std::string &tag = n.Tag();
    if (tag == "tag:yaml.org,2002:float" || tag == "tag:yaml.org,2002:int") {
        const auto d = parseDouble(*t);
        if (!d) {
            m_reader.error(n, QStringLiteral("%1: %2 is not a number").arg(what, quoted(*t)));
            return std::nullopt;
        }
        return tag == "tag:yaml.org,2002:int" && *d == std::floor(*d) ? QVariant(qint64(*d)) : QVariant(*d);
    }
    if (tag == "tag:yaml.org,2002:str")
        return *t;
    return pyyamlScalar(*t, tag == "?" || tag == "tag:yaml.org,2002:bool" || tag == "tag:yaml.org,2002:null");
}

void checkCrossKeys(SpecReader &reader, const YAML::Node &root, const SweepSpec &spec)
{
    if (spec.method != SearchMethod::Grid && spec.runCap == 0 && root["method"])
        reader.error(root["method"],
                     QStringLiteral("a %1 sweep needs run_cap, or `--count N` on the command line (as "
                                    "`wandb agent --count N`): it would never end otherwise")
                         .arg(toString(spec.method)));
    if ((spec.method == SearchMethod::Bayes || spec.earlyTerminate) && spec.metricName.isEmpty() &&
        !root["metric"])
        reader.error(lineOf(root),
                     QStringLiteral("%1 needs `metric: {name: ..., goal: minimize|maximize}`")
                         .arg(spec.method == SearchMethod::Bayes ? QStringLiteral("method bayes")
                                                                 : QStringLiteral("early_terminate")));
    if (spec.method == SearchMethod::Grid) {
        for (const ParamSpec &p : spec.parameters)
            if (p.isDistribution())
                reader.error(p.line,
                             QStringLiteral("parameter %1: distribution %2 in a grid sweep; a grid needs "
                                            "`values` (or use method random or bayes)")
                                 .arg(p.key, toString(p.distribution)));
    }
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

}  // namespace orrery::core
