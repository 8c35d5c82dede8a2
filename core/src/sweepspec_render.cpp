// SPDX-License-Identifier: GPL-3.0-or-later
//
// What a parsed sweep spec writes: a parameter value as text, the health check's words, each
// trial's config or params file (nested as the trainer, PyYAML or W&B expect it), and the spec's
// text with a run_cap.
#include "orrery/core/sweepspec.h"

#include "orrery/core/configfile.h"
#include "orrery/core/pyvalue.h"

#include "textutil.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace orrery::core {

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

using FlatConfig = std::vector<std::pair<std::string, YAML::Node>>;

// The base config's values by dotted key (it may be nested or dotted, as the trainer accepts
// both). Throws std::runtime_error naming the base file when it is not a YAML mapping.
FlatConfig flattenConfig(const QByteArray &baseYaml, const QString &baseFile)
{
    FlatConfig flat;
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
    return flat;
}

// Each param replaces the base's value of its key, or joins as a new key.
void setParams(FlatConfig &flat, const TrialParams &params)
{
    for (const auto &[key, value] : params) {
        const std::string k = key.toStdString();
        YAML::Node v(formatParamValue(value).toStdString());
        const auto it = std::find_if(flat.begin(), flat.end(), [&](const auto &e) { return e.first == k; });
        if (it != flat.end())
            it->second = v;
        else
            flat.emplace_back(k, v);
    }
}

// The dotted keys written back nested (optim.lr → optim: {lr: ...}). Throws std::runtime_error
// where a key is both a value and a section.
YAML::Node nestConfig(const FlatConfig &flat, const QString &baseFile)
{
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
    return root;
}

}  // namespace

QByteArray renderTrialConfig(const QByteArray &baseYaml, const QString &baseFile, const TrialParams &params)
{
    // The base is flattened to dotted keys, the params replace or join them, and everything is
    // written back nested, so a key never appears twice in two spellings.
    FlatConfig flat = flattenConfig(baseYaml, baseFile);
    setParams(flat, params);
    YAML::Emitter e;
    e << nestConfig(flat, baseFile);
    return QByteArray(e.c_str()) + '\n';
}

Parsed<QByteArray> withRunCap(const QByteArray &yaml, int count)
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
    if (!edit.ok())
        return Problem{QStringLiteral("--count: the spec's run_cap cannot be set: %1").arg(edit.error)};
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

}  // namespace orrery::core
