// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Video tab's line for samples on their way from a cluster (SampleFetcher): how many files,
// how far the transfer is, and its Cancel. Hidden while nothing is in flight. UI thread only.
#pragma once

#include <QWidget>

class QLabel;
class QProgressBar;

namespace orrery::gui {

class SampleFetcher;

class FetchBar : public QWidget {
    Q_OBJECT
public:
    FetchBar(SampleFetcher *fetcher, QWidget *parent);

    // SampleFetcher::progress: shown while files are in flight.
    void showProgress(qint64 done, qint64 total);

private:
    SampleFetcher *m_fetcher;
    QLabel *m_label;
    QProgressBar *m_progress;
};

}  // namespace orrery::gui
