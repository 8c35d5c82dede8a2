// SPDX-License-Identifier: GPL-3.0-or-later
#include "fetchbar.h"

#include "samplefetcher.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QToolButton>

namespace orrery::gui {

FetchBar::FetchBar(SampleFetcher *fetcher, QWidget *parent) : QWidget(parent), m_fetcher(fetcher)
{
    auto *fetch = new QHBoxLayout(this);
    fetch->setContentsMargins(0, 0, 0, 0);
    m_label = new QLabel(this);
    m_progress = new QProgressBar(this);
    auto *cancel = new QToolButton(this);
    cancel->setText(tr("Cancel"));
    connect(cancel, &QToolButton::clicked, m_fetcher, &SampleFetcher::cancel);
    fetch->addWidget(m_label);
    fetch->addWidget(m_progress, 1);
    fetch->addWidget(cancel);
    hide();
}

void FetchBar::showProgress(qint64 done, qint64 total)
{
    const int n = m_fetcher->inFlight();
    setVisible(n > 0);
    m_label->setText(tr("Fetching %n sample file(s) from the cluster…", nullptr, n));
    m_progress->setRange(0, total > 0 ? 1000 : 0);
    if (total > 0)
        m_progress->setValue(int(1000 * done / total));
}

}  // namespace orrery::gui
