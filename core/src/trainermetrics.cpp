// SPDX-License-Identifier: GPL-3.0-or-later
//
// The bundled trainer's metric names (trainermetrics.h).
#include "orrery/core/trainermetrics.h"

#include "textutil.h"

#include <QRegularExpression>

namespace orrery::core {

namespace {

// A placeholder's pattern: the trainer writes flow times with %.2g ("0.1", "1e-05") and node and
// rank numbers as integers.
QString pattern(const QString &name)
{
    static const QRegularExpression placeholder(QStringLiteral("<([tnr])>"));
    QString re;
    qsizetype from = 0;
    for (auto it = placeholder.globalMatch(name); it.hasNext();) {
        const auto m = it.next();
        re += QRegularExpression::escape(name.mid(from, m.capturedStart() - from));
        re += m.captured(1) == QLatin1String("t") ? QStringLiteral("[0-9.eE+-]+") : QStringLiteral("[0-9]+");
        from = m.capturedEnd();
    }
    re += QRegularExpression::escape(name.mid(from));
    return QRegularExpression::anchoredPattern(re);
}

}  // namespace

QStringList trainerMetricNames()
{
    return {
        // trainer/src/train.cpp: every train.log_every steps (perf/gpu_mem_gb on CUDA; the _max
        // ones with several ranks).
        QStringLiteral("train/loss"),
        QStringLiteral("train/lr"),
        QStringLiteral("train/grad_norm"),
        QStringLiteral("perf/samples_per_s"),
        QStringLiteral("perf/step_time_s"),
        QStringLiteral("perf/data_wait_frac"),
        QStringLiteral("perf/peak_rss_gb"),
        QStringLiteral("perf/peak_rss_gb_max"),
        QStringLiteral("perf/optimizer_state_mb_max"),
        QStringLiteral("perf/gpu_mem_gb"),
        // trainer/src/evaluate.cpp: every train.eval_every steps and at the end.
        QStringLiteral("eval/loss"),
        QStringLiteral("eval/loss_t<t>"),
        QStringLiteral("eval/sample_presence"),
        QStringLiteral("eval/sample_colour_error"),
        QStringLiteral("eval/sample_core_colour_error"),
        QStringLiteral("eval/sample_cohesion"),
        QStringLiteral("eval/sample_shape_error"),
        QStringLiteral("eval/sample_area_cv"),
        QStringLiteral("eval/sample_motion_jerk"),
        QStringLiteral("eval/sample_score"),
        QStringLiteral("eval/data_score"),
        // trainer/src/sysmetrics.h: `system` events every train.system_every_s seconds.
        QStringLiteral("node<n>/cpu_pct"),
        QStringLiteral("node<n>/rss_gb"),
        QStringLiteral("gpu<r>/util"),
        QStringLiteral("gpu<r>/mem_gb"),
        QStringLiteral("gpu<r>/power_w"),
    };
}

bool isTrainerMetric(const QString &name)
{
    for (const QString &known : trainerMetricNames()) {
        if (!known.contains(QLatin1Char('<'))) {
            if (name == known)
                return true;
        } else if (QRegularExpression(pattern(known)).match(name).hasMatch()) {
            return true;
        }
    }
    return false;
}

QString trainerMetricWarning(const QString &name)
{
    if (isTrainerMetric(name))
        return {};
    // The placeholders as the trainer's defaults write them, so a typo of one is recognised too.
    QStringList known;
    for (QString k : trainerMetricNames())
        known << k.replace(QStringLiteral("<t>"), QStringLiteral("0.5"))
                     .replace(QStringLiteral("<n>"), QStringLiteral("0"))
                     .replace(QStringLiteral("<r>"), QStringLiteral("0"));
    const QString closest = closestWord(name, known);
    return QStringLiteral("%1 is not a metric orrery-train logs; %2")
        .arg(escapeControl(name),
             closest.isEmpty()
                 ? QStringLiteral("it logs %1 (docs/trainer.md)")
                       .arg(QStringList{QStringLiteral("train/loss"), QStringLiteral("eval/loss"),
                                        QStringLiteral("eval/sample_score"), QStringLiteral("...")}
                                .join(QStringLiteral(", ")))
                 : QStringLiteral("did you mean %1?").arg(closest));
}

}  // namespace orrery::core
