// SPDX-License-Identifier: GPL-3.0-or-later
#include "qualityplot.h"

#include "qcp.h"
#include "runcolors.h"
#include "samplefetcher.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace orrery::gui {

QualityPlot::QualityPlot(const VideoState &state, SampleFetcher *fetcher, ReferenceQuality *quality,
                         QObject *parent)
    : QObject(parent), m_state(state), m_fetcher(fetcher), m_quality(quality)
{ }

QWidget *QualityPlot::buildPanel(QWidget *page, const QFont &legendFont)
{
    auto *plotBar = new QHBoxLayout;
    m_metric = new QComboBox(page);
    m_metric->setObjectName(QStringLiteral("videoQualityMetric"));
    m_metric->addItems({tr("PSNR (dB) to the reference"), tr("SSIM to the reference")});
    connect(m_metric, &QComboBox::currentIndexChanged, this, &QualityPlot::update);
    plotBar->addWidget(m_metric);
    plotBar->addStretch(1);
    m_plot = new QCustomPlot(page);
    m_plot->setObjectName(QStringLiteral("videoQualityPlot"));
    m_plot->setMinimumHeight(140);
    m_plot->setMaximumHeight(180);
    m_plot->xAxis->setLabel(tr("step"));
    m_plot->legend->setVisible(true);
    // Right of the axis rect, not over it: inside, it covered the curves' last steps.
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(0, 1, m_plot->legend);
    m_plot->plotLayout()->setColumnStretchFactor(1, 0.001);
    m_plot->legend->setMargins(QMargins(4, 2, 4, 2));
    m_plot->legend->setFont(legendFont);
    auto *plotRow = new QWidget(page);
    auto *plotRowLayout = new QVBoxLayout(plotRow);
    plotRowLayout->setContentsMargins(0, 0, 0, 0);
    plotRowLayout->addLayout(plotBar);
    plotRowLayout->addWidget(m_plot);
    plotRow->setObjectName(QStringLiteral("videoQualityPanel"));
    plotRow->hide();
    return plotRow;
}

void QualityPlot::update()
{
    QWidget *panel = m_plot->parentWidget();
    const RunSamples *ref = m_state.reference ? m_state.samplesOf(m_state.reference) : nullptr;
    panel->setVisible(ref != nullptr && !m_state.strip);
    m_plot->clearGraphs();
    if (!ref || m_state.strip) {
        m_plot->replot();
        return;
    }
    const bool psnr = m_metric->currentIndex() == 0;
    m_plot->yAxis->setLabel(psnr ? tr("PSNR (dB)") : tr("SSIM"));
    m_plot->plotLayout()->setMargins(QMargins(0, 0, 0, 0));
    QList<ReferenceQuality::Job> missing;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const RunSamples &r : std::as_const(m_state.runs)) {
        if (r.run == m_state.reference)
            continue;
        QCPGraph *g = m_plot->addGraph();
        g->setName(r.name);
        g->setPen(QPen(runColor(r.run), 1.5));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
        for (qint64 step : std::as_const(m_state.steps)) {
            const std::optional<double> v = pointAt(r, *ref, step, psnr, missing);
            if (!v)
                continue;
            g->addData(double(step), *v);
            lo = std::min(lo, *v);
            hi = std::max(hi, *v);
        }
    }
    m_quality->request(missing);
    fitAxes(lo, hi);
    m_plot->replot();
}

std::optional<double> QualityPlot::pointAt(const RunSamples &r, const RunSamples &ref, qint64 step, bool psnr,
                                           QList<ReferenceQuality::Job> &missing) const
{
    // Only where both wrote a sample at this very step: a neighbour's is not this step's.
    const core::Artifact *mine = core::sampleAt(m_state.shownSamples(r), step),
                         *theirs = core::sampleAt(m_state.shownSamples(ref), step);
    const auto clip = mine ? m_fetcher->cache().local(r.cluster, *mine) : std::nullopt;
    const auto refClip = theirs ? m_fetcher->cache().local(ref.cluster, *theirs) : std::nullopt;
    if (!clip || !refClip)
        return std::nullopt;
    const ReferenceQuality::Job job{r.run, m_state.reference, step, *clip, *refClip};
    const ClipQuality *q = m_quality->find(job);
    if (!q) {
        missing << job;
        return std::nullopt;
    }
    const double v = psnr ? q->meanPsnr : q->meanSsim;
    if (!q->error.isEmpty() || !std::isfinite(v))
        return std::nullopt;  // identical clips: PSNR is infinite, not a point
    return v;
}

void QualityPlot::fitAxes(double lo, double hi)
{
    m_plot->rescaleAxes();
    if (std::isfinite(lo)) {
        const double pad = std::max(1e-3, 0.15 * (hi - lo));  // a dot is ~5 % of the short plot
        m_plot->yAxis->setRange(lo - pad, hi + pad);
    }
    // The first and last steps are never cut at the edge.
    const QCPRange x = m_plot->xAxis->range();
    const double xpad = std::max(1.0, 0.04 * x.size());
    m_plot->xAxis->setRange(x.lower - xpad, x.upper + xpad);
}

}  // namespace orrery::gui
