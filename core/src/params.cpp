// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/core/params.h"

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
    QList<const Params *> known;
    QSet<QString> keys;
    for (const Params &p : runs)
        if (!p.isEmpty()) {
            known.append(&p);
            for (auto it = p.begin(); it != p.end(); ++it)
                keys.insert(it.key());
        }
    QStringList differing;
    if (known.size() < 2)
        return differing;
    for (const QString &key : keys) {
        const auto first = known.front()->constFind(key);
        for (const Params *p : known) {
            const auto value = p->constFind(key);
            const bool firstHas = first != known.front()->cend(), has = value != p->cend();
            if (has != firstHas || (has && *value != *first)) {
                differing.append(key);
                break;
            }
        }
    }
    differing.sort();
    return differing;
}

}  // namespace orrery::core
