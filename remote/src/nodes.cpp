// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/nodes.h"

#include <algorithm>
#include <initializer_list>

namespace orrery::remote {

NodeCondition nodeCondition(const QString &rawState)
{
    const QString state = rawState.trimmed().toLower();
    const auto startsWith = [&](std::initializer_list<const char *> words) {
        return std::any_of(words.begin(), words.end(),
                           [&](const char *w) { return state.startsWith(QLatin1String(w)); });
    };
    if (state.isEmpty() || state.endsWith(QLatin1Char('*')) || startsWith({"unknown", "not_responding"}))
        return NodeCondition::Unknown;
    if (startsWith({"down", "drain", "fail", "inval"}))
        return NodeCondition::Down;
    if (startsWith({"power", "future"}))
        return NodeCondition::Off;
    if (startsWith({"idle"}))
        return NodeCondition::Idle;
    if (startsWith({"mix"}))
        return NodeCondition::Mixed;
    if (startsWith({"alloc", "complet"}))
        return NodeCondition::Allocated;
    return NodeCondition::Other;
}

bool isNodeUp(const QString &state)
{
    switch (nodeCondition(state)) {
    case NodeCondition::Down:
    case NodeCondition::Unknown:
    case NodeCondition::Off:
        return false;
    case NodeCondition::Idle:
    case NodeCondition::Mixed:
    case NodeCondition::Allocated:
    case NodeCondition::Other:
        break;
    }
    return true;
}

QString conditionName(NodeCondition condition)
{
    switch (condition) {
    case NodeCondition::Idle:
        return QStringLiteral("idle");
    case NodeCondition::Mixed:
        return QStringLiteral("mixed");
    case NodeCondition::Allocated:
        return QStringLiteral("allocated");
    case NodeCondition::Down:
        return QStringLiteral("down");
    case NodeCondition::Unknown:
        return QStringLiteral("unknown");
    case NodeCondition::Off:
        return QStringLiteral("off");
    case NodeCondition::Other:
        break;
    }
    return QStringLiteral("other");
}

QList<NodeView> nodeViews(const slurm::ClusterInfo &info, const QList<core::SuspectNode> &suspects)
{
    QList<NodeView> views;
    for (const slurm::Node &n : info.nodes) {
        NodeView v{n, true, std::nullopt};
        for (const core::SuspectNode &s : suspects)
            if (s.node == n.name)
                v.suspect = s;
        views.append(v);
    }
    for (const core::SuspectNode &s : suspects) {
        const bool listed = std::any_of(info.nodes.begin(), info.nodes.end(),
                                        [&](const slurm::Node &n) { return n.name == s.node; });
        if (listed)
            continue;
        NodeView v;
        v.node.name = s.node;
        v.listed = false;
        v.suspect = s;
        views.append(v);
    }
    return views;
}

QString expiresIn(const core::SuspectNode &suspect, qint64 nowMs)
{
    if (suspect.expiresMs == 0)
        return QStringLiteral("never");
    const qint64 left = suspect.expiresMs - nowMs;
    if (left <= 0)
        return QStringLiteral("expired");
    if (left >= 3'600'000)
        return QStringLiteral("%1 h").arg((left + 1'800'000) / 3'600'000);
    return QStringLiteral("%1 min").arg(std::max<qint64>(1, (left + 30'000) / 60'000));
}

}  // namespace orrery::remote
