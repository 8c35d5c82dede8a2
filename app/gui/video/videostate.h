// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the Video tab shows, in one place for its parts: the shown runs' samples (readRunSamples),
// the series shown of them and the steps they were written at, the step chosen, the reference
// run, A and B, the tiles' order, whether the strip is shown and why a sample could not be
// fetched. VideoView alone writes it; VideoTiles and QualityPlot read it (they hold a reference to
// the view's) and ReviewChoosers is shown it. UI thread only.
#pragma once

#include "orrery/core/params.h"
#include "orrery/core/store.h"

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace orrery::gui {

// One run's samples, and what its tile says besides them.
struct RunSamples {
    core::RunId run = 0;
    QString name, cluster;
    core::Params params;
    bool baseline = false;
    QList<core::LatestMetric> metrics;
    QList<core::Artifact> videos, images;
    QHash<QString, QList<core::Artifact>> byKey;  // videos and images by media key, by step
};

// The samples of `runs` as the store holds them (a run it does not know is left out). Any thread
// that may read the store: VideoView::refresh calls it on the store's.
QList<RunSamples> readRunSamples(const core::TrackingStore &store, const QList<core::RunId> &runs);

// The order of the tiles after the baseline run (VideoView::Order).
enum class TileOrder { Selection, Metric, Psnr, Ssim, Name };

struct VideoState {
    core::RunId reference = 0, a = 0, b = 0;  // the pinned reference (0: none); the A and B boxes
    TileOrder order = TileOrder::Selection;
    bool strip = false;  // the current run's samples over steps instead of the runs
    QList<RunSamples> runs;  // the shown runs (selection order)
    std::optional<RunSamples> referenceRun;  // read too when it is not among them
    QList<qint64> steps;  // the slider's stops: where any run wrote a sample of the series shown
    QString mediaKey;  // the series shown (core::mediaKey)
    QStringList mediaKeys;  // those the runs have, in the Samples box's order
    qint64 step = -1;  // the stop chosen (-1: none)
    QHash<QString, QString> fetchErrors;  // why a sample could not be fetched, by remote path

    // The run's samples of the series shown, by step.
    const QList<core::Artifact> &shownSamples(const RunSamples &r) const;
    // The shown run `run`, else the reference run when it is `run`; nullptr: neither.
    const RunSamples *samplesOf(core::RunId run) const;
};

}  // namespace orrery::gui
