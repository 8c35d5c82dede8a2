// SPDX-License-Identifier: GPL-3.0-or-later
//
// Suspect nodes: per cluster, the nodes Orrery keeps out of new submissions (docs/sweeps.md
// "Bad nodes kept out"; table suspect_nodes, schema v10).
#include "storeimpl.h"

#include <QDateTime>

#include <stdexcept>

namespace orrery::core {

using sql::Stmt;

namespace {
qint64 nowOr(qint64 nowMs)
{
    return nowMs > 0 ? nowMs : QDateTime::currentMSecsSinceEpoch();
}
}  // namespace

void SweepBook::addSuspectNode(const SuspectNode &node)
{
    if (node.cluster.trimmed().isEmpty() || node.node.trimmed().isEmpty())
        throw std::invalid_argument("a suspect node needs a cluster and a node name");
    d->guarded("addSuspectNode", [&] {
        Impl::Tx tx(*d);
        d->stmt("INSERT OR REPLACE INTO suspect_nodes (cluster, node, reason, source, since, expires) "
                "VALUES (?, ?, ?, ?, ?, ?)")
            .bind(1, utf8(node.cluster))
            .bind(2, utf8(node.node))
            .bind(3, utf8(node.reason))
            .bind(4, utf8(node.source))
            .bind(5, nowOr(node.sinceMs))
            .bind(6, node.expiresMs)
            .exec();
        tx.commit();
    });
}

QList<SuspectNode> SweepBook::suspectNodes(const QString &cluster, qint64 nowMs) const
{
    return d->guarded("suspectNodes", [&] {
        Stmt &s = d->stmt("SELECT node, reason, source, since, expires FROM suspect_nodes "
                          "WHERE cluster = ? AND (expires = 0 OR expires > ?) ORDER BY since, node");
        s.bind(1, utf8(cluster)).bind(2, nowOr(nowMs));
        QList<SuspectNode> out;
        while (s.step())
            out.append(SuspectNode{cluster, qstr(s.text(0)), qstr(s.text(1)), qstr(s.text(2)), s.int64(3),
                                   s.int64(4)});
        s.reset();
        return out;
    });
}

int SweepBook::clearSuspectNodes(const QString &cluster, const QString &node, qint64 nowMs)
{
    return d->guarded("clearSuspectNodes", [&] {
        Impl::Tx tx(*d);
        const qint64 now = nowOr(nowMs);
        d->stmt("DELETE FROM suspect_nodes WHERE cluster = ? AND (? = '' OR node = ?) "
                "AND (expires = 0 OR expires > ?)")
            .bind(1, utf8(cluster))
            .bind(2, utf8(node))
            .bind(3, utf8(node))
            .bind(4, now)
            .exec();
        const int n = sqlite3_changes(d->db.get());
        // Expired entries are of no use to anyone: they go with any clearing.
        d->stmt("DELETE FROM suspect_nodes WHERE cluster = ? AND expires != 0 AND expires <= ?")
            .bind(1, utf8(cluster))
            .bind(2, now)
            .exec();
        tx.commit();
        return n;
    });
}

}  // namespace orrery::core
