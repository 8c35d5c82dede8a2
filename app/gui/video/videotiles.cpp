// SPDX-License-Identifier: GPL-3.0-or-later
#include "videotiles.h"

#include "referencequality.h"
#include "runcolors.h"
#include "runstablemodel.h"
#include "samplefetcher.h"
#include "snapshot.h"

#include "orrery/core/params.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace orrery::gui {

namespace {

// Clips kept decoded beyond those on screen (each holds at most FrameSource's budget, and a
// trainer sample is ~2 MiB decoded): enough to move the step slider back and forth freely.
constexpr int kKeptSources = 48;

QString captionOf(const core::Params &params, const QStringList &keys)
{
    QStringList parts;
    for (const QString &k : keys)
        parts << QStringLiteral("%1=%2").arg(k, params.value(k, QStringLiteral("—")));
    return parts.join(QStringLiteral(" · "));
}

}  // namespace

VideoTiles::VideoTiles(const VideoState &state, SampleFetcher *fetcher, ReferenceQuality *quality,
                       ClipOpened opened)
    : m_state(state), m_fetcher(fetcher), m_quality(quality), m_opened(std::move(opened))
{ }

QList<VideoTile> VideoTiles::runTiles()
{
    const QStringList keys = captionKeys();
    QList<VideoTile> tiles;
    for (const RunSamples &r : std::as_const(m_state.runs)) {
        VideoTile t = tileFor(r, m_state.step);
        t.caption = captionOf(r.params, keys);
        tiles.append(t);
    }
    applyQuality(tiles);
    sortTiles(tiles);
    return tiles;
}

// Captions: the leading sweep's swept params (what the sweep asks about), else those that
// differ between the shown runs.
QStringList VideoTiles::captionKeys() const
{
    QList<core::RunId> ids;
    QList<core::Params> params;
    for (const RunSamples &r : std::as_const(m_state.runs)) {
        ids << r.run;
        params << r.params;
    }
    const SweepNode *leading = m_runsModel ? m_runsModel->sweeps().leadingSweep(ids) : nullptr;
    return leading && !leading->swept.isEmpty() ? core::keysOf(leading->swept)
                                                : core::differingParams(params);
}

// The baseline first, then the chosen order (stable: ties keep the selection's order).
void VideoTiles::sortTiles(QList<VideoTile> &tiles) const
{
    const auto metricOf = [this](const VideoTile &t) {
        const SweepNode *sweep = m_runsModel ? m_runsModel->sweeps().sweepOf(t.run) : nullptr;
        const RunSamples *r = m_state.samplesOf(t.run);
        if (sweep && r)
            for (const core::LatestMetric &m : r->metrics)
                if (m.key == sweep->sweep.metricName && std::isfinite(m.last.value))
                    return sweep->sweep.metricGoal == core::Goal::Maximize ? -m.last.value : m.last.value;
        return std::numeric_limits<double>::infinity();  // none: last
    };
    const auto qualityOf = [](const VideoTile &t, bool psnr) {
        if (t.reference)
            return -std::numeric_limits<double>::infinity();  // the reference itself leads
        if (t.psnr.isEmpty())
            return std::numeric_limits<double>::infinity();
        return -(psnr ? t.meanPsnr : t.meanSsim);  // closer to the reference first
    };
    std::stable_sort(tiles.begin(), tiles.end(), [&](const VideoTile &a, const VideoTile &b) {
        if (a.baseline != b.baseline)
            return a.baseline;
        switch (m_state.order) {
        case TileOrder::Selection:
            return false;
        case TileOrder::Metric:
            return metricOf(a) < metricOf(b);
        case TileOrder::Psnr:
            return qualityOf(a, true) < qualityOf(b, true);
        case TileOrder::Ssim:
            return qualityOf(a, false) < qualityOf(b, false);
        case TileOrder::Name:
            return QString::localeAwareCompare(a.title, b.title) < 0;
        }
        return false;
    });
}

QList<VideoTile> VideoTiles::stripTiles(core::RunId current)
{
    const RunSamples *run = m_state.samplesOf(current);
    if (!run || run->run == (m_state.referenceRun ? m_state.referenceRun->run : 0))
        run = m_state.runs.isEmpty() ? nullptr : &m_state.runs.front();
    QList<VideoTile> tiles;
    if (!run)
        return tiles;
    const QList<core::Artifact> &videos = m_state.shownSamples(*run);
    const qsizetype n = videos.size();
    const qsizetype shown = std::min<qsizetype>(n, VideoGrid::kMaxTiles);
    for (qsizetype i = 0; i < shown; ++i) {
        const qsizetype k = shown == 1 ? n - 1 : i * (n - 1) / (shown - 1);
        VideoTile t = tileFor(*run, videos[k].step);
        t.otherStep = false;
        t.stepInCaption = true;
        tiles.append(t);
    }
    return tiles;
}

VideoTile VideoTiles::tileFor(const RunSamples &r, qint64 step)
{
    VideoTile t;
    t.run = r.run;
    t.color = runColor(r.run);
    t.title = r.name;
    t.baseline = r.baseline;
    t.reference = r.run == m_state.reference;
    const SweepNode *sweep = m_runsModel ? m_runsModel->sweeps().sweepOf(r.run) : nullptr;
    if (sweep && !sweep->sweep.metricName.isEmpty())
        for (const core::LatestMetric &m : r.metrics)
            if (m.key == sweep->sweep.metricName)
                t.metric = QStringLiteral("%1 %2").arg(m.key, QString::number(m.last.value, 'g', 4));
    const core::Artifact *a = core::nearestSample(m_state.shownSamples(r), step);
    if (!a) {
        t.status = m_state.mediaKeys.size() > 1 && !r.byKey.isEmpty()
            ? tr("no %1 samples").arg(m_state.mediaKey)
            : tr("no samples yet");
        return t;
    }
    t.step = a->step;
    t.otherStep = a->step != step;
    showSample(t, r, *a);
    return t;
}

// The sample's clip when it is here, else what the tile waits for (a fetch from the run's
// cluster, started here) or what went wrong.
void VideoTiles::showSample(VideoTile &t, const RunSamples &r, const core::Artifact &a)
{
    if (const auto local = m_fetcher->cache().local(r.cluster, a)) {
        t.source = sourceFor(*local);
        if (t.source->state() == media::FrameSource::State::Failed)
            standIn(t, r, a.step);
    } else if (r.cluster.isEmpty()) {
        t.status = tr("the sample is missing:\n%1").arg(a.remotePath.isEmpty() ? a.path : a.remotePath);
    } else if (m_state.fetchErrors.contains(a.remotePath)) {
        t.status = tr("cannot fetch it from %1:\n%2").arg(r.cluster, m_state.fetchErrors.value(a.remotePath));
    } else {
        t.status = tr("fetching from %1…").arg(r.cluster);
        m_fetcher->fetch(r.run, r.cluster, a);
    }
}

// A clip that cannot be decoded (an mp4 of a codec this FFmpeg lacks, a damaged file) gives way
// to another sample of the run at that step: TensorBoard's GIF beside it. In the Samples box's
// order (videos before images), not the hash's.
void VideoTiles::standIn(VideoTile &t, const RunSamples &r, qint64 step)
{
    for (const QString &key : std::as_const(m_state.mediaKeys)) {
        const auto series = r.byKey.constFind(key);
        const core::Artifact *other =
            key == m_state.mediaKey || series == r.byKey.cend() ? nullptr : core::sampleAt(*series, step);
        const auto otherLocal = other ? m_fetcher->cache().local(r.cluster, *other) : std::nullopt;
        if (!otherLocal)
            continue;
        auto source = sourceFor(*otherLocal);
        if (source->state() == media::FrameSource::State::Failed)
            continue;
        t.note = tr("%1 cannot play: showing %2").arg(m_state.mediaKey, key);
        t.source = source;
        return;
    }
}

std::optional<QString> VideoTiles::localClip(const RunSamples &r, qint64 step) const
{
    const core::Artifact *a = core::nearestSample(m_state.shownSamples(r), step);
    if (!a)
        return std::nullopt;
    return m_fetcher->cache().local(r.cluster, *a);
}

void VideoTiles::applyQuality(QList<VideoTile> &tiles)
{
    const RunSamples *ref = m_state.reference ? m_state.samplesOf(m_state.reference) : nullptr;
    if (!ref)
        return;
    QList<ReferenceQuality::Job> missing;
    for (VideoTile &t : tiles) {
        if (!t.source || t.reference)
            continue;
        const auto refClip = localClip(*ref, m_state.step);
        if (!refClip)
            continue;
        const ReferenceQuality::Job job{t.run, m_state.reference, m_state.step, t.source->path(), *refClip};
        if (const ClipQuality *q = m_quality->find(job); q && q->error.isEmpty()) {
            t.psnr = q->psnr;
            t.ssim = q->ssim;
            t.meanPsnr = q->meanPsnr;
            t.meanSsim = q->meanSsim;
        } else if (!q) {
            missing << job;
        }
    }
    m_quality->request(missing);
}

std::shared_ptr<media::FrameSource> VideoTiles::sourceFor(const QString &path)
{
    m_sourceOrder.removeAll(path);
    m_sourceOrder.append(path);
    if (auto it = m_sources.find(path); it != m_sources.end())
        return *it;
    auto source = std::make_shared<media::FrameSource>(path);
    m_opened(source.get());
    m_sources.insert(path, source);
    // Forget the least recently shown clips that no tile uses.
    for (int i = 0; m_sources.size() > kKeptSources && i < m_sourceOrder.size();) {
        const QString old = m_sourceOrder[i];
        if (m_sources.value(old).use_count() > 1) {  // a tile holds it
            ++i;
            continue;
        }
        m_sources.remove(old);
        m_sourceOrder.removeAt(i);
    }
    return source;
}

}  // namespace orrery::gui
