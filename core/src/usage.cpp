// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/usage.h"

#include "orrery/core/format.h"

#include <QRegularExpression>

#include <cmath>
#include <limits>

namespace orrery::core {

namespace {

constexpr double kMsPerHour = 3600.0 * 1000.0;
// Rounding slack when comparing sums of hours with a budget (a budget of 8 fits two 4s).
constexpr double kSlack = 1e-9;

QString plural(qint64 n, const QString &word)
{
    return QStringLiteral("%1 %2%3").arg(n).arg(word, n == 1 ? QString() : QStringLiteral("s"));
}

}  // namespace

Usage &Usage::operator+=(const Usage &other)
{
    gpuHours += other.gpuHours;
    cpuHours += other.cpuHours;
    elapsedMs += other.elapsedMs;
    attempts += other.attempts;
    counting += other.counting;
    return *this;
}

Usage attemptUsage(const Trial &attempt, qint64 nowMs)
{
    Usage u;
    if (attempt.startedMs <= 0)
        return u;  // never seen running: it held nothing we know of
    const bool ended = attempt.endedMs > 0;
    const qint64 end = ended ? attempt.endedMs : nowMs;
    u.elapsedMs = std::max<qint64>(0, end - attempt.startedMs);
    u.gpuHours = double(u.elapsedMs) / kMsPerHour * std::max(0, attempt.gpus);
    u.cpuHours = double(u.elapsedMs) / kMsPerHour * std::max(0, attempt.cpus);
    u.attempts = 1;
    u.counting = ended ? 0 : 1;
    return u;
}

Usage usageOf(const QList<Trial> &attempts, qint64 nowMs)
{
    Usage total;
    for (const Trial &t : attempts)
        total += attemptUsage(t, nowMs);
    return total;
}

qint64 runningSinceMs(std::optional<qint64> elapsedMs, qint64 nowMs)
{
    return nowMs - std::max<qint64>(0, elapsedMs.value_or(0));
}

AttemptSpan endedAttemptSpan(qint64 startedMs, std::optional<qint64> elapsedMs, std::optional<qint64> exitMs,
                             qint64 nowMs, qint64 submittedMs, qint64 lastEventMs)
{
    AttemptSpan span{startedMs, nowMs};
    const qint64 elapsed = std::max<qint64>(0, elapsedMs.value_or(0));
    if (elapsedMs && startedMs > 0)
        span.endedMs = std::min(nowMs, startedMs + elapsed);
    else if (exitMs && *exitMs > startedMs && *exitMs <= nowMs)
        span.endedMs = *exitMs;
    if (startedMs <= 0 && elapsedMs)
        span.startedMs = span.endedMs - elapsed;
    if (span.startedMs > 0 && submittedMs > 0)
        span.startedMs = std::min(std::max(span.startedMs, submittedMs), nowMs);
    if (lastEventMs > span.endedMs && lastEventMs <= nowMs)
        span.endedMs = lastEventMs;
    span.endedMs = std::max(span.endedMs, span.startedMs);
    return span;
}

SlurmDuration parseSlurmDuration(const QString &textIn)
{
    const QString text = textIn.trimmed();
    SlurmDuration d;
    if (text.isEmpty() || text.compare(QLatin1String("UNLIMITED"), Qt::CaseInsensitive) == 0 ||
        text.compare(QLatin1String("INFINITE"), Qt::CaseInsensitive) == 0)
        return d;
    // Slurm's forms (sbatch(1) --time): minutes, minutes:seconds, hours:minutes:seconds,
    // days-hours, days-hours:minutes, days-hours:minutes:seconds. At most 9 digits a field.
    static const QRegularExpression form(
        QStringLiteral("^(?:(\\d{1,9})-)?(\\d{1,9})(?::(\\d{1,9}))?(?::(\\d{1,9}))?$"));
    const QRegularExpressionMatch m = form.match(text);
    if (!m.hasMatch()) {
        d.error = QStringLiteral("'%1' is not a Slurm time: use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
                                 "D-HH:MM:SS (e.g. \"02:00:00\", \"1-12:00:00\")")
                      .arg(text);
        return d;
    }
    const bool days = m.capturedLength(1) > 0;
    QList<qint64> f;  // the colon-separated fields
    for (int i = 2; i <= 4; ++i)
        if (m.capturedLength(i) > 0)
            f << m.captured(i).toLongLong();
    qint64 seconds = 0;
    if (days) {  // days-hours[:minutes[:seconds]]
        seconds = m.captured(1).toLongLong() * 86400 + f.value(0) * 3600 + f.value(1) * 60 + f.value(2);
    } else if (f.size() == 1) {  // minutes
        seconds = f[0] * 60;
    } else if (f.size() == 2) {  // minutes:seconds
        seconds = f[0] * 60 + f[1];
    } else {  // hours:minutes:seconds
        seconds = f[0] * 3600 + f[1] * 60 + f[2];
    }
    if (seconds == 0)  // Slurm: a time limit of zero is no limit
        return d;
    d.ms = seconds * 1000;
    return d;
}

QString formatHours(double hours)
{
    if (!std::isfinite(hours))
        return QStringLiteral("?");
    if (hours == 0)
        return QStringLiteral("0");
    if (std::abs(hours) >= 100)
        return QString::number(std::llround(hours));
    return QString::number(hours, 'g', 3);
}

QString formatCost(double gpuHours, const Price &price)
{
    const QString amount = QString::number(gpuHours * price.perGpuHour, 'f', 2);
    return price.currency.isEmpty() ? amount : amount + QLatin1Char(' ') + price.currency;
}

QString usageCell(const Usage &usage, const std::optional<Price> &price)
{
    if (usage.attempts == 0)
        return {};
    QString cell = formatHours(usage.gpuHours);
    if (price)
        cell += QStringLiteral(" · ") + formatCost(usage.gpuHours, *price);
    return cell;
}

QString describeUsage(const Usage &u, const std::optional<Price> &price)
{
    if (u.attempts == 0)
        return QStringLiteral("nothing has run yet");
    QString text = QStringLiteral("%1 GPU-hours, %2 CPU-hours over %3")
                       .arg(formatHours(u.gpuHours), formatHours(u.cpuHours),
                            plural(u.attempts, QStringLiteral("attempt")));
    if (u.counting > 0)
        text += QStringLiteral(" (%1 running)").arg(u.counting);
    if (price)
        text += QStringLiteral(": ") + formatCost(u.gpuHours, *price);
    return text;
}

QJsonObject usageJson(const Usage &u, const std::optional<Price> &price)
{
    QJsonObject o{{QStringLiteral("gpu_hours"), u.gpuHours},
                  {QStringLiteral("cpu_hours"), u.cpuHours},
                  {QStringLiteral("elapsed_s"), double(u.elapsedMs) / 1000.0},
                  {QStringLiteral("attempts"), u.attempts},
                  {QStringLiteral("running"), u.counting}};
    if (price) {
        o.insert(QStringLiteral("cost"), u.gpuHours * price->perGpuHour);
        o.insert(QStringLiteral("currency"), price->currency);
    }
    return o;
}

std::optional<double> worstGpuHours(const SweepResources &resources)
{
    const SlurmDuration limit = parseSlurmDuration(resources.time);
    if (!limit.ms)
        return std::nullopt;
    return double(*limit.ms) / kMsPerHour * allocatedGpus(resources);
}

WorstCase worstCase(const SweepSpec &spec, int trials, int firstPlanned)
{
    WorstCase w;
    w.trials = trials;
    w.gpusPerTrial = allocatedGpus(spec.resources);
    w.timeLimitMs = parseSlurmDuration(spec.resources.time).ms;
    if (const auto perTrial = worstGpuHours(spec.resources))
        w.gpuHours = *perTrial * trials;
    w.retries = spec.retries;
    w.budget = spec.budgetGpuHours;
    w.firstPlanned = firstPlanned;
    w.firstBatch = firstBatchSize(spec, firstPlanned);
    return w;
}

QString describeWorstCase(const WorstCase &w, const std::optional<Price> &price)
{
    bool rateSaid = false;  // "at 2.50 USD/GPU-hour" once
    auto money = [&](double hours) {
        if (!price)
            return QString();
        const QString rate =
            rateSaid ? QString() : QStringLiteral(" at %1/GPU-hour").arg(formatCost(1, *price));
        rateSaid = true;
        return QStringLiteral(" (%1%2)").arg(formatCost(hours, *price), rate);
    };
    QString text;
    if (w.gpusPerTrial == 0) {
        text = QStringLiteral("worst case: no GPUs asked for (resources.gpus_per_node: 0): 0 GPU-hours\n");
    } else if (!w.timeLimitMs) {
        text = QStringLiteral("worst case: %1 × %2: no time limit (resources.time): unbounded GPU-hours\n")
                   .arg(plural(w.trials, QStringLiteral("trial")),
                        plural(w.gpusPerTrial, QStringLiteral("GPU")));
    } else {
        text = QStringLiteral("worst case: %1 × %2 × %3 = %4 GPU-hours%5\n")
                   .arg(plural(w.trials, QStringLiteral("trial")), formatDuration(*w.timeLimitMs),
                        plural(w.gpusPerTrial, QStringLiteral("GPU")), formatHours(*w.gpuHours),
                        money(*w.gpuHours));
        if (w.retries > 0)
            text += QStringLiteral("  with retries (%1 each): up to %2 GPU-hours%3\n")
                        .arg(w.retries)
                        .arg(formatHours(*w.gpuHours * (1 + w.retries)))
                        .arg(money(*w.gpuHours * (1 + w.retries)));
    }
    if (w.budget) {
        text += QStringLiteral("budget: %1 GPU-hours%2: a trial is launched only while what the sweep used "
                               "and may still use fits\n")
                    .arg(formatHours(*w.budget), money(*w.budget));
        if (w.firstBatch < w.firstPlanned)
            text += QStringLiteral("  first batch: %1 of %2 trials (the rest as the budget allows)\n")
                        .arg(w.firstBatch)
                        .arg(w.firstPlanned);
    }
    return text;
}

QJsonObject worstCaseJson(const WorstCase &w, const std::optional<Price> &price)
{
    const auto orNull = [](const std::optional<double> &v) { return v ? QJsonValue(*v) : QJsonValue(); };
    const std::optional<double> withRetries =
        w.gpuHours ? std::optional(*w.gpuHours * (1 + w.retries)) : std::nullopt;
    QJsonObject o{
        {QStringLiteral("trials"), w.trials},
        {QStringLiteral("gpus_per_trial"), w.gpusPerTrial},
        {QStringLiteral("time_limit_s"),
         w.timeLimitMs ? QJsonValue(double(*w.timeLimitMs) / 1000.0) : QJsonValue()},
        {QStringLiteral("gpu_hours"), orNull(w.gpusPerTrial == 0 ? std::optional(0.0) : w.gpuHours)},
        {QStringLiteral("gpu_hours_with_retries"),
         orNull(w.gpusPerTrial == 0 ? std::optional(0.0) : withRetries)},
        {QStringLiteral("retries"), w.retries},
        {QStringLiteral("budget_gpu_hours"), orNull(w.budget)},
        {QStringLiteral("first_planned"), w.firstPlanned},
        {QStringLiteral("first_batch"), w.firstBatch}};
    if (price) {
        o.insert(QStringLiteral("cost"),
                 w.gpuHours ? QJsonValue(*w.gpuHours * price->perGpuHour) : QJsonValue());
        o.insert(QStringLiteral("cost_with_retries"),
                 withRetries ? QJsonValue(*withRetries * price->perGpuHour) : QJsonValue());
        o.insert(QStringLiteral("currency"), price->currency);
    }
    return o;
}

int BudgetState::room() const
{
    if (perAttempt <= 0)
        return std::numeric_limits<int>::max();
    const double left = budget - used - held;
    if (left + kSlack < perAttempt)
        return 0;
    return int(std::min<double>(std::floor((left + kSlack) / perAttempt), std::numeric_limits<int>::max()));
}

QString BudgetState::explain() const
{
    QString text =
        QStringLiteral("%1 of the budget's %2 GPU-hours used").arg(formatHours(used), formatHours(budget));
    if (held > 0)
        text += QStringLiteral(", %1 held by active trials").arg(formatHours(held));
    return text + QStringLiteral("; the next trial could use up to %1").arg(formatHours(perAttempt));
}

std::optional<BudgetState> budgetState(const SweepSpec &spec, const QList<Trial> &attempts, qint64 nowMs)
{
    if (!spec.budgetGpuHours)
        return std::nullopt;
    BudgetState b;
    b.budget = *spec.budgetGpuHours;
    const std::optional<qint64> limitMs = parseSlurmDuration(spec.resources.time).ms;
    b.perAttempt = worstGpuHours(spec.resources).value_or(0);
    for (const Trial &t : attempts) {
        const Usage u = attemptUsage(t, nowMs);
        b.used += u.gpuHours;
        if (t.isActive() && limitMs) {
            // An active attempt (queued ones too) may run to its limit: hold the rest of it.
            const double worst = double(*limitMs) / kMsPerHour * std::max(0, t.gpus);
            b.held += std::max(0.0, worst - u.gpuHours);
        }
    }
    return b;
}

int firstBatchSize(const SweepSpec &spec, int planned)
{
    const auto budget = budgetState(spec, {}, 0);
    return budget ? std::clamp(budget->room(), std::min(1, planned), planned) : planned;
}

}  // namespace orrery::core
