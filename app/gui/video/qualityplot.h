// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Video tab's curves of closeness to the reference run over steps, under the grid: the mean
// PSNR or SSIM (the panel's chooser) of each other shown run's sample against the reference's,
// one point where both wrote a sample of the series shown at that very step. Shown while a
// reference is pinned, not in the strip. It reads the view's VideoState; what ReferenceQuality
// has not computed yet is asked of it (its computed() makes the view update the tiles and this).
// UI thread only.
#pragma once

#include "referencequality.h"
#include "videostate.h"

#include <QObject>

#include <optional>

class QComboBox;
class QCustomPlot;
class QFont;
class QWidget;

namespace orrery::gui {

class SampleFetcher;

class QualityPlot : public QObject {
    Q_OBJECT
public:
    QualityPlot(const VideoState &state, SampleFetcher *fetcher, ReferenceQuality *quality,
                QObject *parent = nullptr);

    // The panel ("videoQualityPanel", hidden until update() shows it): the chooser over the plot,
    // both `page`'s children; the legend in `legendFont`.
    QWidget *buildPanel(QWidget *page, const QFont &legendFont);
    QCustomPlot *plot() const { return m_plot; }

    // Shows or hides the panel and draws its curves from the state.
    void update();

private:
    // The run's point at `step`; a comparison not computed yet goes to `missing`.
    std::optional<double> pointAt(const RunSamples &r, const RunSamples &ref, qint64 step, bool psnr,
                                  QList<ReferenceQuality::Job> &missing) const;
    void fitAxes(double lo, double hi);

    const VideoState &m_state;
    SampleFetcher *m_fetcher;
    ReferenceQuality *m_quality;
    QComboBox *m_metric = nullptr;
    QCustomPlot *m_plot = nullptr;
};

}  // namespace orrery::gui
