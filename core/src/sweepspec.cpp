// SPDX-License-Identifier: GPL-3.0-or-later
//
// The sweep spec's vocabulary: the names of distributions and methods, a spec error's text, what
// a trial is allocated and the health check's thresholds. The spec is parsed in
// sweepspec_parse.cpp, its parameters validated in sweepspec_validate.cpp, and what it writes
// rendered in sweepspec_render.cpp.
#include "orrery/core/sweepspec.h"

#include <algorithm>

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

}  // namespace orrery::core
