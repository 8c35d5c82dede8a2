// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Video tab's tiles, made from its state (VideoState): each shown run's sample nearest the
// chosen step (or, in the strip, the current run's samples over steps), with its caption (the
// leading sweep's swept params, else those that differ), its sweep metric, its PSNR/SSIM to the
// reference (ReferenceQuality, asked for what it has not cached) and in the order chosen, the
// baseline run first. A sample not in the local cache is fetched (SampleFetcher) and its tile
// says so; a clip that cannot be decoded gives way to another series' sample at that step.
//
// Decoded clips are kept by local path while a tile shows them or recently did, so moving the
// step slider back and forth does not decode again; each clip opened is handed to the view's
// ClipOpened first (the clock and the grid follow its signals). UI thread only.
#pragma once

#include "videogrid.h"
#include "videostate.h"

#include <QCoreApplication>
#include <QHash>
#include <QList>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

namespace orrery::gui {

class ReferenceQuality;
class RunsTableModel;
class SampleFetcher;

class VideoTiles {
    Q_DECLARE_TR_FUNCTIONS(VideoTiles)
public:
    using ClipOpened = std::function<void(media::FrameSource *)>;

    VideoTiles(const VideoState &state, SampleFetcher *fetcher, ReferenceQuality *quality, ClipOpened opened);

    // The window's runs model: each run's sweep (its metric and swept params). Optional.
    void setRunsModel(const RunsTableModel *model) { m_runsModel = model; }

    // The shown runs' tiles at the chosen step.
    QList<VideoTile> runTiles();
    // The samples over steps of `current` (else of the first shown run): at most a grid's worth,
    // evenly spread, the latest always in.
    QList<VideoTile> stripTiles(core::RunId current);

private:
    QStringList captionKeys() const;
    VideoTile tileFor(const RunSamples &r, qint64 step);
    void showSample(VideoTile &t, const RunSamples &r, const core::Artifact &a);
    void standIn(VideoTile &t, const RunSamples &r, qint64 step);
    std::optional<QString> localClip(const RunSamples &r, qint64 step) const;
    void applyQuality(QList<VideoTile> &tiles);
    void sortTiles(QList<VideoTile> &tiles) const;
    std::shared_ptr<media::FrameSource> sourceFor(const QString &path);

    const VideoState &m_state;
    SampleFetcher *m_fetcher;
    ReferenceQuality *m_quality;
    ClipOpened m_opened;
    const RunsTableModel *m_runsModel = nullptr;
    // Decoded clips by local path, kept while a tile shows them or recently did.
    QHash<QString, std::shared_ptr<media::FrameSource>> m_sources;
    QList<QString> m_sourceOrder;  // least recently used first
};

}  // namespace orrery::gui
