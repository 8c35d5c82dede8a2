// SPDX-License-Identifier: GPL-3.0-or-later
#include "videostate.h"

#include <algorithm>

namespace orrery::gui {

QList<RunSamples> readRunSamples(const core::TrackingStore &store, const QList<core::RunId> &runs)
{
    QList<RunSamples> out;
    for (core::RunId id : runs) {
        const auto run = store.run(id);
        if (!run)
            continue;
        const core::RunDetails details = store.details(id);
        RunSamples r;
        r.run = id;
        r.name = run->name;
        r.params = details.params;
        r.baseline = details.tags.value(QLatin1String(core::kBaselineTag)) == QLatin1String("true");
        r.metrics = details.metrics;
        r.cluster = store.clusterOf(id);
        r.videos = store.samples(id, QStringLiteral("video"));
        r.images = store.samples(id, QStringLiteral("image"));
        for (const QList<core::Artifact> *kind : {&r.videos, &r.images})
            for (const core::Artifact &a : *kind)
                r.byKey[core::mediaKey(a)].append(a);
        for (QList<core::Artifact> &series : r.byKey)
            std::stable_sort(
                series.begin(), series.end(),
                [](const core::Artifact &a, const core::Artifact &b) { return a.step < b.step; });
        out.append(r);
    }
    return out;
}

const QList<core::Artifact> &VideoState::shownSamples(const RunSamples &r) const
{
    static const QList<core::Artifact> none;
    const auto it = r.byKey.constFind(mediaKey);
    return it == r.byKey.cend() ? none : *it;
}

const RunSamples *VideoState::samplesOf(core::RunId run) const
{
    for (const RunSamples &r : runs)
        if (r.run == run)
            return &r;
    return referenceRun && referenceRun->run == run ? &*referenceRun : nullptr;
}

}  // namespace orrery::gui
