// SPDX-License-Identifier: GPL-3.0-or-later
//
// A cluster's nodes as Orrery shows them (docs/sweeps.md "Bad nodes kept out"): Slurm's word on
// each (sinfo) beside Orrery's own (the store's suspect list of that cluster). What
// `orrery cluster nodes`, the GUI's Cluster tab and the monitor show; they differ only in how.
#pragma once

#include "orrery/core/store.h"
#include "orrery/remote/slurmparse.h"

#include <QList>

#include <optional>

namespace orrery::remote {

struct NodeView {
    slurm::Node node;  // name only for a suspect sinfo does not list (gone, or a typo of the user's)
    bool listed = true;  // false: sinfo does not list it
    std::optional<core::SuspectNode> suspect;  // unexpired; nullopt: not suspect
};

// `info`'s nodes in its order, each with its entry of `suspects` (one cluster's, unexpired), then
// the suspects sinfo does not list. Pure.
QList<NodeView> nodeViews(const slurm::ClusterInfo &info, const QList<core::SuspectNode> &suspects);

// What Slurm's state word (sinfo's %T, maybe with a flag: "idle*", "mixed+drain") says of a node:
// the one rule the Cluster tab's colours, the monitor's "nodes up" and `orrery cluster nodes` use.
enum class NodeCondition {
    Idle,
    Mixed,
    Allocated,  // allocated or completing
    Down,  // down, drained or draining, failing, invalid
    Unknown,  // not responding ('*'), unknown, no state
    Off,  // powered down or powering, or "future" (not there yet)
    Other,  // up but not plainly: reserved, planned, maintenance, ...
};
NodeCondition nodeCondition(const QString &state);
// Takes work: idle, mixed, allocated, or up with a reservation or maintenance.
bool isNodeUp(const QString &state);
QString conditionName(NodeCondition condition);  // "idle", "down", ... for tables and JSON

// How long a suspect entry has left, for people: "never" (the user's), "23 h", "41 min", "expired".
QString expiresIn(const core::SuspectNode &suspect, qint64 nowMs);

}  // namespace orrery::remote
