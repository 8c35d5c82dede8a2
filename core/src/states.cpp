// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/states.h"

#include <array>

namespace orrery::core {

namespace {

struct TrialRow {
    TrialState state;
    const char *text;  // as stored in trials.state (schema: TEXT); never change one
    Phase phase;
    bool active;
};

// The one table. The order is the enum's.
constexpr std::array<TrialRow, 12> kTrials{{
    {TrialState::Pending, "pending", Phase::Queued, false},
    {TrialState::Queued, "queued", Phase::Queued, true},
    {TrialState::Running, "running", Phase::Running, true},
    {TrialState::Stopping, "stopping", Phase::Running, true},
    {TrialState::Cancelling, "cancelling", Phase::Running, true},
    {TrialState::Completed, "completed", Phase::Done, false},
    {TrialState::Failed, "failed", Phase::Failed, false},
    {TrialState::Preempted, "preempted", Phase::Queued, false},
    {TrialState::Stopped, "stopped", Phase::Stopped, false},
    {TrialState::Cancelled, "cancelled", Phase::Stopped, false},
    {TrialState::Lost, "lost", Phase::Failed, false},
    {TrialState::Unknown, "unknown", Phase::Queued, false},
}};

struct SweepRow {
    SweepState state;
    const char *text;
    bool active;
};

constexpr std::array<SweepRow, 7> kSweeps{{
    {SweepState::Pending, "pending", true},
    {SweepState::Running, "running", true},
    {SweepState::Cancelling, "cancelling", true},
    {SweepState::Finished, "finished", false},
    {SweepState::Failed, "failed", false},
    {SweepState::Cancelled, "cancelled", false},
    {SweepState::Unknown, "unknown", false},
}};

const TrialRow &row(TrialState s)
{
    return kTrials[static_cast<std::size_t>(s)];
}
const SweepRow &row(SweepState s)
{
    return kSweeps[static_cast<std::size_t>(s)];
}

static_assert(
    [] {
        for (std::size_t i = 0; i < kTrials.size(); ++i)
            if (static_cast<std::size_t>(kTrials[i].state) != i)
                return false;
        for (std::size_t i = 0; i < kSweeps.size(); ++i)
            if (static_cast<std::size_t>(kSweeps[i].state) != i)
                return false;
        return true;
    }(),
    "the state tables follow their enums' order");

}  // namespace

QString toText(TrialState state)
{
    return QString::fromLatin1(row(state).text);
}

QString toText(SweepState state)
{
    return QString::fromLatin1(row(state).text);
}

QString toText(Phase phase)
{
    switch (phase) {
    case Phase::Queued:
        return QStringLiteral("queued");
    case Phase::Running:
        return QStringLiteral("running");
    case Phase::Done:
        return QStringLiteral("done");
    case Phase::Failed:
        return QStringLiteral("failed");
    case Phase::Stopped:
        return QStringLiteral("stopped");
    }
    return {};
}

TrialState trialStateFromText(QStringView text)
{
    for (const TrialRow &r : kTrials)
        if (r.state != TrialState::Unknown && text == QLatin1String(r.text))
            return r.state;
    return TrialState::Unknown;
}

SweepState sweepStateFromText(QStringView text)
{
    for (const SweepRow &r : kSweeps)
        if (r.state != SweepState::Unknown && text == QLatin1String(r.text))
            return r.state;
    return SweepState::Unknown;
}

Phase phaseOf(TrialState state)
{
    return row(state).phase;
}

bool isActive(TrialState state)
{
    return row(state).active;
}

bool hasEnded(TrialState state)
{
    return !row(state).active && state != TrialState::Pending && state != TrialState::Unknown;
}

bool isActive(SweepState state)
{
    return row(state).active;
}

}  // namespace orrery::core
