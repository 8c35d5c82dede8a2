// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/params.h"

#include "orrery/core/store.h"

#include <yaml-cpp/yaml.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

namespace orrery::core {

Params paramsFromJson(const QString &json)
{
    Params out;
    const QJsonObject o = QJsonDocument::fromJson(json.toUtf8()).object();
    for (auto it = o.begin(); it != o.end(); ++it)
        // 15 significant digits: what a person typed (0.0003, not 3e-04), without binary noise.
        out.insert(it.key(),
                   it.value().isDouble() ? QString::number(it.value().toDouble(), 'g', 15)
                                         : it.value().toVariant().toString());
    return out;
}

QStringList differingParams(const QList<Params> &runs)
{
    // Each run's params against the first's, both maps walked in key order at once: a key one
    // of them lacks, or holds another value under, differs. (A lookup per key per run was 35 ms
    // for 10 sweeps of 5,000 runs, bench_runs_scale; this is one pass.)
    const Params *first = nullptr;
    QSet<QString> differing;
    for (const Params &p : runs) {
        if (p.isEmpty())
            continue;
        if (!first) {
            first = &p;
            continue;
        }
        auto a = first->cbegin(), b = p.cbegin();
        while (a != first->cend() || b != p.cend()) {
            if (b == p.cend() || (a != first->cend() && a.key() < b.key())) {
                differing.insert(a.key());
                ++a;
            } else if (a == first->cend() || b.key() < a.key()) {
                differing.insert(b.key());
                ++b;
            } else {
                if (a.value() != b.value())
                    differing.insert(a.key());
                ++a;
                ++b;
            }
        }
    }
    QStringList out(differing.cbegin(), differing.cend());
    out.sort();
    return out;
}

namespace {

bool isLogDistribution(const std::string &name)
{
    return name == "log_uniform" || name == "log_uniform_values" || name == "q_log_uniform" ||
        name == "q_log_uniform_values" || name == "log_normal" || name == "q_log_normal";
}

// Positive numbers spanning at least a factor of 10: a log axis reads them better.
bool spansDecades(const YAML::Node &values)
{
    double lo = 0, hi = 0;
    int n = 0;
    for (const YAML::Node &v : values) {
        if (!v.IsScalar())
            return false;
        bool ok = false;
        const double x = QString::fromStdString(v.Scalar()).toDouble(&ok);
        if (!ok || !(x > 0))
            return false;
        lo = n == 0 ? x : std::min(lo, x);
        hi = n == 0 ? x : std::max(hi, x);
        ++n;
    }
    return n >= 2 && hi >= 10 * lo;
}

// Walks a `parameters:` mapping (W&B's nested groups recursively). False when it is not one.
bool collectSwept(const YAML::Node &parameters, const QString &prefix, QList<SweptParam> *out)
{
    if (!parameters.IsMap())
        return false;
    for (const auto &entry : parameters) {
        if (!entry.first.IsScalar())
            return false;
        const QString key = prefix + QString::fromStdString(entry.first.Scalar());
        const YAML::Node &spec = entry.second;
        if (!spec.IsMap())
            continue;  // `key: 3`: a constant written bare
        if (const YAML::Node nested = spec["parameters"]; nested && nested.IsMap()) {
            if (!collectSwept(nested, key + QLatin1Char('.'), out))
                return false;
            continue;
        }
        const YAML::Node values = spec["values"];
        const YAML::Node distribution = spec["distribution"];
        const std::string dist =
            distribution && distribution.IsScalar() ? distribution.Scalar() : std::string();
        if (values && values.IsSequence()) {
            if (values.size() >= 2)
                out->append({key, isLogDistribution(dist) || spansDecades(values)});
            continue;
        }
        if (spec["value"] || dist == "constant")
            continue;
        if (!dist.empty() || spec["min"] || spec["max"] || spec["mu"])
            out->append({key, isLogDistribution(dist)});
    }
    return true;
}

}  // namespace

QList<SweptParam> sweptParams(const Sweep &sweep, const QList<Trial> &trials)
{
    QList<SweptParam> out;
    try {
        const YAML::Node root = YAML::Load(sweep.spec.toStdString());
        if (root.IsMap() && collectSwept(root["parameters"], QString(), &out))
            return out;
    } catch (const YAML::Exception &) {
        // Fall through to what the trials say.
    }
    out.clear();
    QList<Params> params;
    params.reserve(trials.size());
    for (const Trial &t : trials)
        params.append(paramsFromJson(t.params));
    for (const QString &key : differingParams(params))
        out.append({key, false});
    return out;
}

QStringList keysOf(const QList<SweptParam> &params)
{
    QStringList keys;
    keys.reserve(params.size());
    for (const SweptParam &p : params)
        keys.append(p.key);
    return keys;
}

}  // namespace orrery::core
