// SPDX-License-Identifier: GPL-3.0-or-later
//
// The sweep spec parser's private half, shared by sweepspec_parse.cpp (the spec's sections) and
// sweepspec_validate.cpp (each parameter against the trainer's schema, the rules across keys).
// yaml-cpp is PRIVATE to core: no file outside core/src includes this header.
#pragma once

#include "orrery/core/sweepspec.h"

#include <QSet>

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <utility>

namespace orrery::core {

// The 1-based line of a node, as editors count (yaml-cpp's marks are 0-based); 0 for none.
inline int lineOf(const YAML::Node &n)
{
    return n.IsDefined() ? n.Mark().line + 1 : 0;
}

// " (did you mean 'X'?)" for the word of `known` nearest to `word`; empty when none is close.
QString didYouMean(const QString &word, const QStringList &known);

// Collects every problem (and warning) with its line, and reads the spec's scalars as typed
// values, reporting those that do not read; parsing goes on after an error where it can.
class SpecReader {
public:
    explicit SpecReader(QString file) : m_file(std::move(file)) { }

    QList<SpecError> errors;
    QList<SpecError> warnings;

    void error(const YAML::Node &at, const QString &message) { error(lineOf(at), message); }
    void error(int line, const QString &message) { errors.append({m_file, line, message}); }
    void warn(const YAML::Node &at, const QString &message)
    {
        warnings.append({m_file, lineOf(at), message});
    }

    // The scalar's text as UTF-8; nullopt (and an error) for non-UTF-8 or a NUL byte.
    std::optional<QString> text(const YAML::Node &n, const QString &what);
    std::optional<qint64> integer(const YAML::Node &n, const QString &what, qint64 minimum);
    std::optional<double> number(const YAML::Node &n, const QString &what);
    // A name that becomes a directory and a Slurm job name: any printable text but no '/'.
    std::optional<QString> name(const YAML::Node &n, const QString &what);
    // A Slurm option value: any text without control characters (an #SBATCH line ends at a newline).
    std::optional<QString> slurmValue(const YAML::Node &n, const QString &what);
    // Checks that `map` is a mapping with only `allowed` keys; reports the others.
    bool expectMap(const YAML::Node &map, const QString &what, const QStringList &allowed,
                   const QStringList &ignored = {});

private:
    QString m_file;
};

// `parameters:`: each swept key typed and checked against the trainer's schema, or for a
// spec that runs its own command typed by the values written (sweepspec_validate.cpp).
class ParamParser {
public:
    ParamParser(SpecReader &reader, const TrainerSchema &schema, bool command)
        : m_reader(reader), m_schema(schema), m_command(command)
    { }

    // Into spec.parameters: the parameters that are accepted (the others are in the errors).
    void parameters(const YAML::Node &params, int rootLine, SweepSpec &spec);

private:
    struct Block;

    void parameterGroup(const YAML::Node &params, const QStringList &path, QSet<QString> &seen,
                        SweepSpec &spec);
    std::optional<ParamSpec> parameter(const YAML::Node &keyNode, const YAML::Node &body,
                                       const QStringList &path);
    bool knownKey(const QString &keyText, const ConfigKey *key, int line);
    std::optional<Distribution> distribution(const Block &b);
    bool keysFit(const Block &b, Distribution d);
    std::optional<ParamSpec> constant(const Block &b, ParamSpec p);
    std::optional<ParamSpec> categorical(const Block &b, ParamSpec p);
    bool probabilities(const Block &b, const YAML::Node &probs, std::size_t count, ParamSpec &p);
    std::optional<ParamSpec> numeric(const Block &b, ParamSpec p);
    void quantum(const Block &b, ParamSpec &p);
    bool range(const Block &b, ParamSpec &p);
    bool normal(const Block &b, ParamSpec &p);
    std::optional<ParamSpec> unlessRefused(const Block &b, const ParamSpec &p) const;
    std::optional<QVariant> value(const YAML::Node &n, const ConfigKey &key);
    std::optional<QVariant> pyValue(const YAML::Node &n, const QString &what);

    SpecReader &m_reader;
    const TrainerSchema &m_schema;
    bool m_command = false;  // the spec runs its own command: parameters are not the trainer's
};

// The rules across keys, once every section is read: run_cap for random and bayes, a metric for
// bayes and early stopping, no distribution in a grid (sweepspec_validate.cpp).
void checkCrossKeys(SpecReader &reader, const YAML::Node &root, const SweepSpec &spec);

}  // namespace orrery::core
