// SPDX-License-Identifier: GPL-3.0-or-later
//
// A sweep as one self-contained HTML file to share with someone who does not run Orrery
// (`orrery sweep report SWEEP -o report.html`, the window's File → Export report…): the overview
// (state, counts, best, GPU-hours, cost, goodput), the trials' table with the params that differ,
// the metric charts as vector SVG (the sweep's metric first, one curve per run as Compare draws
// it), parallel coordinates of the swept params and the metric, the params' importance, and the
// best runs' sample videos embedded. No network, no server, no script from elsewhere: it opens
// from a file in any browser.
//
// Reading (readSweepReport) and drawing (renderSweepReport) are apart: the media bytes are read
// between them by whoever can reach them (remote::SweepOperations::report: this machine's
// files, or a cluster's over the executor's batched read).
#pragma once

#include "orrery/core/goodput.h"
#include "orrery/core/importance.h"
#include "orrery/core/params.h"
#include "orrery/core/store.h"
#include "orrery/core/sweepoverview.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <optional>
#include <vector>

namespace orrery::core {

struct ReportOptions {
    std::optional<Price> price;  // the executor's, for the cost (remote::executorPrice)
    int videos = 4;  // the best runs whose newest sample video is embedded
    qint64 maxVideoBytes = 24 * 1024 * 1024;  // one video larger than this is linked, not embedded
    int charts = 6;  // metrics charted: the sweep's first, then those most runs logged
    int pointsPerCurve = 400;  // min/max buckets beyond this (spikes kept, as Compare draws)
    qint64 nowMs = 0;  // 0: this machine's clock
};

struct ReportRun {
    RunId run = 0;
    int trial = -1;
    QString name, state;
    Params params;
    std::optional<double> latest, best;  // the sweep's metric
    qint64 step = -1;
    Usage usage;
    QString colour;  // "#rrggbb": the same in every chart, table row and caption
};

struct ReportCurve {
    RunId run = 0;
    std::vector<std::pair<double, double>> points;  // (step, value)
};

struct ReportChart {
    QString metric;
    QList<ReportCurve> curves;
};

struct ReportMedia {
    RunId run = 0;
    QString runName;
    qint64 step = -1;
    Artifact artifact;  // its path relative to the run dir; where it lives
    QString source;  // the path the bytes are read from (a local copy, or the executor's file)
    QString mime;  // video/mp4, video/webm, image/gif, image/png, ...
    QByteArray data;  // filled by the caller; empty: linked by path instead, with `why`
    QString why;
};

struct SweepReport {
    SweepOverview overview;
    QString experiment;
    QList<SweptParam> swept;
    QStringList differing;  // params whose values differ between trials (the table's columns)
    QList<ReportRun> runs;  // by trial index
    QList<ReportChart> charts;
    ImportanceResult importance;
    QList<ReportMedia> media;  // the best runs' newest sample videos, best first
    qint64 generatedMs = 0;
};

// Everything but the media's bytes, in one read of the store.
SweepReport readSweepReport(const TrackingStore &store, const Sweep &sweep,
                            const ReportOptions &options = {});
// The HTML page (UTF-8). Pure: the same report gives the same bytes.
QByteArray renderSweepReport(const SweepReport &report);
// The MIME type of a sample file by its extension ("" when a browser cannot show it inline).
QString mediaMimeType(const QString &path);

}  // namespace orrery::core
