// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/nodes.h"

#include <algorithm>

namespace orrery::remote {

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
