// SPDX-License-Identifier: GPL-3.0-or-later
#include "videoview.h"

#include "blockingpool.h"
#include "clipdecoder.h"
#include "clipencoder.h"
#include "playbackclock.h"
#include "qcp.h"
#include "runcolors.h"
#include "runselection.h"
#include "runstablemodel.h"
#include "samplefetcher.h"
#include "snapshot.h"
#include "storereader.h"

#include "orrery/core/params.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QProgressBar>
#include <QProgressDialog>
#include <QScrollArea>
#include <QShortcut>
#include <QSlider>
#include <QStackedWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>
#include <cmath>
#include <limits>

namespace orrery::gui {

namespace {

// Clips kept decoded beyond those on screen (each holds at most FrameSource's budget, and a
// trainer sample is ~2 MiB decoded): enough to move the step slider back and forth freely.
constexpr int kKeptSources = 48;
constexpr double kSpeeds[] = {0.25, 0.5, 1, 2, 4};
constexpr int kStripMode = 3;  // the mode box's entry after VideoGrid's three modes

QString captionOf(const core::Params &params, const QStringList &keys)
{
    QStringList parts;
    for (const QString &k : keys)
        parts << QStringLiteral("%1=%2").arg(k, params.value(k, QStringLiteral("—")));
    return parts.join(QStringLiteral(" · "));
}

}  // namespace

VideoView::VideoView(StoreReader *reader, RunSelection *selection, QWidget *parent)
    : QWidget(parent), m_reader(reader), m_selection(selection), m_clock(new PlaybackClock(this)),
      m_fetcher(new SampleFetcher(this)), m_grid(new VideoGrid(this)), m_quality(new ReferenceQuality(this))
{
    setObjectName(QStringLiteral("videoView"));
    buildUi();
    connect(m_selection, &RunSelection::changed, this, &VideoView::selectionChanged);
    connect(m_clock, &PlaybackClock::indexChanged, this, [this](int index) {
        m_grid->addSkipped(m_clock->skipped());
        m_clock->resetSkipped();
        m_grid->setFrameIndex(index, m_clock->isPlaying());
        updateTransport();
    });
    connect(m_clock, &PlaybackClock::playingChanged, this, [this](bool playing) {
        m_grid->setFrameIndex(m_clock->index(), playing);
        updateTransport();
    });
    connect(m_grid, &VideoGrid::tileClicked, this,
            [this](core::RunId run) { m_selection->select(m_selection->runs(), this, run); });
    connect(m_grid, &VideoGrid::tileMenuRequested, this, &VideoView::showTileMenu);
    connect(m_quality, &ReferenceQuality::computed, this, &VideoView::rebuildTiles);
    connect(m_grid, &VideoGrid::wipeMoved, this, [this](double f) {
        const QSignalBlocker block(m_wipeSlider);
        m_wipeSlider->setValue(int(std::lround(f * 1000)));
    });
    connect(m_fetcher, &SampleFetcher::fetched, this,
            [this](core::RunId, const QString &remotePath, const QString &) {
                m_fetchErrors.remove(remotePath);
                rebuildTiles();
            });
    connect(m_fetcher, &SampleFetcher::failed, this,
            [this](core::RunId, const QString &remotePath, const QString &message) {
                m_fetchErrors.insert(remotePath, message);
                rebuildTiles();
            });
    connect(m_fetcher, &SampleFetcher::progress, this, [this](qint64 done, qint64 total) {
        const int n = m_fetcher->inFlight();
        m_fetchBar->setVisible(n > 0);
        m_fetchLabel->setText(tr("Fetching %n sample file(s) from the cluster…", nullptr, n));
        m_fetchProgress->setRange(0, total > 0 ? 1000 : 0);
        if (total > 0)
            m_fetchProgress->setValue(int(1000 * done / total));
    });
}

VideoView::~VideoView()
{
    if (m_exportCancel)
        m_exportCancel->store(true);
}

void VideoView::buildUi()
{
    auto *layout = new QVBoxLayout(this);
    auto *top = new QHBoxLayout;
    m_modeBox = new QComboBox(this);
    m_modeBox->setObjectName(QStringLiteral("videoMode"));
    m_modeBox->addItems({tr("Grid"), tr("A/B wipe"), tr("A/B difference"), tr("Strip over steps")});
    m_modeBox->setToolTip(tr("A/B modes compare the runs chosen as A and B; the strip shows the current "
                             "run's samples over training steps, the same frame of each"));
    top->addWidget(m_modeBox);
    QHBoxLayout *review = buildChoosers();
    buildStepControls(top);
    buildExportMenu(top);
    layout->addLayout(top);
    review->addStretch(1);
    layout->addLayout(review);

    m_note = new QLabel(this);
    m_note->hide();
    layout->addWidget(m_note);
    layout->addWidget(buildStack(), 1);
    layout->addLayout(buildTransport());
    layout->addWidget(buildFetchBar());
    connectControls();
    setFocusPolicy(Qt::StrongFocus);
    updateTransport();
}

// A and B, the reference, the order and which samples: the review's choosers, on a row of their
// own (beside the transport they made the tab wider than the window).
QHBoxLayout *VideoView::buildChoosers()
{
    auto *review = new QHBoxLayout;
    auto chooser = [this, review](const QString &label, const QString &name, const QString &tip) {
        auto *l = new QLabel(label, this);
        auto *box = new QComboBox(this);
        box->setObjectName(name);
        box->setToolTip(tip);
        // A fixed width: run names are as long as users make them, and a box that grew to fit one
        // made the window wider than the screen.
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(9);
        l->setBuddy(box);
        review->addWidget(l);
        review->addWidget(box);
        return box;
    };
    m_aBox = chooser(tr("A"), QStringLiteral("videoA"), tr("The run shown as A (left of the divider)"));
    m_bBox = chooser(tr("B"), QStringLiteral("videoB"), tr("The run shown as B (right of the divider)"));
    m_refBox = chooser(tr("Reference"), QStringLiteral("videoReference"),
                       tr("Each tile's PSNR and SSIM against this run's sample at the same step"));
    m_orderBox = chooser(tr("Order"), QStringLiteral("videoOrder"),
                         tr("The baseline run first, then the tiles in this order"));
    m_orderBox->addItems(
        {tr("selection"), tr("sweep metric"), tr("PSNR to reference"), tr("SSIM to reference"), tr("name")});
    connect(m_orderBox, &QComboBox::currentIndexChanged, this,
            [this](int i) { setOrder(static_cast<Order>(i)); });
    m_keyBox = chooser(tr("Samples"), QStringLiteral("videoKey"),
                       tr("Which of the runs' videos or images to show (each series they log)"));
    connect(m_keyBox, &QComboBox::currentIndexChanged, this,
            [this] { setMediaKey(m_keyBox->currentData().toString()); });
    auto runChosen = [](QComboBox *box) { return box->currentData().value<core::RunId>(); };
    connect(m_aBox, &QComboBox::currentIndexChanged, this,
            [this, runChosen] { setABRuns(runChosen(m_aBox), m_b); });
    connect(m_bBox, &QComboBox::currentIndexChanged, this,
            [this, runChosen] { setABRuns(m_a, runChosen(m_bBox)); });
    connect(m_refBox, &QComboBox::currentIndexChanged, this,
            [this, runChosen] { setReference(runChosen(m_refBox)); });
    return review;
}

// The step the tiles show, and where A ends and B begins.
void VideoView::buildStepControls(QHBoxLayout *top)
{
    top->addWidget(new QLabel(tr("Step"), this));
    m_stepSlider = new QSlider(Qt::Horizontal, this);
    m_stepSlider->setObjectName(QStringLiteral("stepSlider"));
    m_stepSlider->setPageStep(1);
    m_stepSlider->setTickPosition(QSlider::TicksBelow);
    m_stepSlider->setMinimumWidth(160);
    m_stepSlider->setToolTip(tr("The training steps at which the selected runs wrote samples"));
    top->addWidget(m_stepSlider, 2);
    m_stepLabel = new QLabel(this);
    m_stepLabel->setMinimumWidth(120);
    top->addWidget(m_stepLabel);
    m_wipeSlider = new QSlider(Qt::Horizontal, this);
    m_wipeSlider->setRange(0, 1000);
    m_wipeSlider->setValue(500);
    m_wipeSlider->setToolTip(tr("Where A ends and B begins (or drag on the picture)"));
    m_wipeSlider->hide();
    top->addWidget(m_wipeSlider, 1);
}

// What leaves the tab as a file, under one button.
void VideoView::buildExportMenu(QHBoxLayout *top)
{
    // Four buttons of their own made the row (and
    // so the window) wider than a 1,440 px screen holds beside the docks.
    auto *exportButton = new QToolButton(this);
    exportButton->setObjectName(QStringLiteral("videoExport"));
    exportButton->setText(tr("Export"));
    exportButton->setToolTip(tr("A contact sheet, the current frame, the grid as PNG or as MP4"));
    exportButton->setPopupMode(QToolButton::InstantPopup);
    exportButton->setFocusPolicy(Qt::NoFocus);
    auto *exportMenu = new QMenu(exportButton);
    exportMenu->setToolTipsVisible(true);
    exportButton->setMenu(exportMenu);
    top->addWidget(exportButton);
    auto button = [this, exportMenu](const QString &text, const QString &tip, auto slot) {
        QAction *a = exportMenu->addAction(text, this, slot);
        a->setToolTip(tip);
        return a;
    };
    button(tr("Contact sheet…"), tr("The current run's contact sheet at this step (clips × frames)"),
           [this] { showContactSheet(); });
    button(tr("Save frame…"), tr("The current run's frame as PNG, at the sample's own size"), [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save frame"), QStringLiteral("frame.png"),
                                                          tr("PNG images (*.png)"));
        QString error;
        if (!path.isEmpty() && !saveCurrentFrame(path, &error))
            QMessageBox::warning(this, tr("Save frame"), error);
    });
    button(tr("Export PNG…"), tr("The grid as it is now"), [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export grid frame"), QStringLiteral("grid.png"), tr("PNG images (*.png)"));
        QString error;
        if (!path.isEmpty() && !exportFramePng(path, &error))
            QMessageBox::warning(this, tr("Export PNG"), error);
    });
    button(tr("Export MP4…"), tr("The whole grid, every frame, as a video"), [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export grid video"), QStringLiteral("grid.mp4"), tr("MP4 videos (*.mp4)"));
        if (path.isEmpty())
            return;
        auto *dialog =
            new QProgressDialog(tr("Encoding the grid…"), tr("Cancel"), 0, m_clock->frameCount(), this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->setMinimumDuration(300);
        connect(this, &VideoView::exportProgress, dialog, &QProgressDialog::setValue);
        connect(dialog, &QProgressDialog::canceled, this, &VideoView::cancelExport);
        connect(this, &VideoView::exportFinished, dialog, [this, dialog](bool ok, const QString &message) {
            dialog->close();
            if (!ok)
                QMessageBox::warning(this, tr("Export MP4"), message);
        });
        exportMp4(path);
    });
}

// The grid (with its quality plot), or what to do when there is nothing to show.
QWidget *VideoView::buildStack()
{
    // A black canvas said nothing: the hint says what to do.
    m_stack = new QStackedWidget(this);
    m_hint = new QLabel(m_stack);
    m_hint->setObjectName(QStringLiteral("videoHint"));
    m_hint->setAlignment(Qt::AlignCenter);
    m_hint->setWordWrap(true);
    m_hint->setMargin(24);
    m_stack->addWidget(m_hint);
    auto *page = new QWidget(m_stack);
    auto *pageLayout = new QVBoxLayout(page);
    pageLayout->setContentsMargins(0, 0, 0, 0);
    pageLayout->addWidget(m_grid, 1);
    auto *plotBar = new QHBoxLayout;
    m_plotMetric = new QComboBox(page);
    m_plotMetric->setObjectName(QStringLiteral("videoQualityMetric"));
    m_plotMetric->addItems({tr("PSNR (dB) to the reference"), tr("SSIM to the reference")});
    connect(m_plotMetric, &QComboBox::currentIndexChanged, this, &VideoView::updateQualityPlot);
    plotBar->addWidget(m_plotMetric);
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
    m_plot->legend->setFont(font());
    auto *plotRow = new QWidget(page);
    auto *plotRowLayout = new QVBoxLayout(plotRow);
    plotRowLayout->setContentsMargins(0, 0, 0, 0);
    plotRowLayout->addLayout(plotBar);
    plotRowLayout->addWidget(m_plot);
    plotRow->setObjectName(QStringLiteral("videoQualityPanel"));
    plotRow->hide();
    pageLayout->addWidget(plotRow);
    m_stack->addWidget(page);
    return m_stack;
}

// Play, frame by frame, the scrub bar, speed, loop and the dropped frames.
QHBoxLayout *VideoView::buildTransport()
{
    auto *transport = new QHBoxLayout;
    m_playButton = new QToolButton(this);
    m_playButton->setObjectName(QStringLiteral("playButton"));
    m_playButton->setFocusPolicy(Qt::NoFocus);
    m_playButton->setToolTip(tr("Play or pause every tile (Space)"));
    connect(m_playButton, &QToolButton::clicked, m_clock, &PlaybackClock::toggle);
    auto stepButton = [this, transport](const QString &text, int delta, const QString &tip) {
        auto *b = new QToolButton(this);
        b->setText(text);
        b->setToolTip(tip);
        b->setFocusPolicy(Qt::NoFocus);
        b->setAutoRepeat(true);
        connect(b, &QToolButton::clicked, m_clock, [this, delta] { m_clock->step(delta); });
        transport->addWidget(b);
    };
    transport->addWidget(m_playButton);
    stepButton(QStringLiteral("◀|"), -1, tr("Previous frame (←)"));
    stepButton(QStringLiteral("|▶"), 1, tr("Next frame (→)"));
    m_scrub = new QSlider(Qt::Horizontal, this);
    m_scrub->setObjectName(QStringLiteral("scrub"));
    m_scrub->setFocusPolicy(Qt::NoFocus);
    connect(m_scrub, &QSlider::valueChanged, m_clock, &PlaybackClock::seek);
    transport->addWidget(m_scrub, 1);
    m_frameLabel = new QLabel(this);
    m_frameLabel->setMinimumWidth(90);
    transport->addWidget(m_frameLabel);
    m_speedBox = new QComboBox(this);
    m_speedBox->setFocusPolicy(Qt::NoFocus);
    for (double s : kSpeeds)
        m_speedBox->addItem(QStringLiteral("%1×").arg(s), s);
    m_speedBox->setCurrentIndex(2);
    connect(m_speedBox, &QComboBox::currentIndexChanged, this,
            [this](int i) { m_clock->setSpeed(m_speedBox->itemData(i).toDouble()); });
    transport->addWidget(m_speedBox);
    m_loopBox = new QCheckBox(tr("Loop"), this);
    m_loopBox->setFocusPolicy(Qt::NoFocus);
    m_loopBox->setChecked(true);
    connect(m_loopBox, &QCheckBox::toggled, m_clock, &PlaybackClock::setLoop);
    transport->addWidget(m_loopBox);
    m_droppedLabel = new QLabel(this);
    m_droppedLabel->setObjectName(QStringLiteral("droppedFrames"));
    m_droppedLabel->setToolTip(tr("Frames a tile could not show in time while playing"));
    transport->addWidget(m_droppedLabel);
    return transport;
}

// A sample's transfer from the cluster, with its Cancel.
QWidget *VideoView::buildFetchBar()
{
    m_fetchBar = new QWidget(this);
    auto *fetch = new QHBoxLayout(m_fetchBar);
    fetch->setContentsMargins(0, 0, 0, 0);
    m_fetchLabel = new QLabel(m_fetchBar);
    m_fetchProgress = new QProgressBar(m_fetchBar);
    auto *cancel = new QToolButton(m_fetchBar);
    cancel->setText(tr("Cancel"));
    connect(cancel, &QToolButton::clicked, m_fetcher, &SampleFetcher::cancel);
    fetch->addWidget(m_fetchLabel);
    fetch->addWidget(m_fetchProgress, 1);
    fetch->addWidget(cancel);
    m_fetchBar->hide();
    return m_fetchBar;
}

// The mode, the wipe and the step; Space, ← and → while the tab has focus.
void VideoView::connectControls()
{
    connect(m_modeBox, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i == kStripMode)
            setStrip(true);
        else
            setMode(static_cast<VideoGrid::Mode>(i));
    });
    connect(m_wipeSlider, &QSlider::valueChanged, this, [this](int v) { m_grid->setWipe(v / 1000.0); });
    connect(m_stepSlider, &QSlider::valueChanged, this, [this](int i) {
        if (i >= 0 && i < m_steps.size() && m_steps[i] != m_step) {
            m_step = m_steps[i];
            rebuildTiles();
        }
    });

    // Keys while the Video tab (or anything in it) has focus.
    auto key = [this](QKeySequence seq, auto slot) {
        auto *s = new QShortcut(seq, this);
        s->setContext(Qt::WidgetWithChildrenShortcut);
        connect(s, &QShortcut::activated, this, slot);
    };
    key(QKeySequence(Qt::Key_Space), [this] { m_clock->toggle(); });
    key(QKeySequence(Qt::Key_Left), [this] { m_clock->step(-1); });
    key(QKeySequence(Qt::Key_Right), [this] { m_clock->step(1); });
}

void VideoView::setMode(VideoGrid::Mode mode)
{
    const QSignalBlocker block(m_modeBox);
    m_modeBox->setCurrentIndex(int(mode));
    m_wipeSlider->setVisible(mode == VideoGrid::Mode::Wipe);
    m_grid->setMode(mode);
    if (m_strip) {
        m_strip = false;
        rebuildTiles();
    }
}

void VideoView::setStrip(bool on)
{
    if (on) {
        setMode(VideoGrid::Mode::Grid);
        const QSignalBlocker block(m_modeBox);
        m_modeBox->setCurrentIndex(kStripMode);
    } else if (m_modeBox->currentIndex() == kStripMode) {
        const QSignalBlocker block(m_modeBox);
        m_modeBox->setCurrentIndex(0);
    }
    m_strip = on;
    rebuildTiles();
}

void VideoView::setABRuns(core::RunId a, core::RunId b)
{
    m_a = a;
    m_b = b;
    m_grid->setABRuns(a, b);
    updateChoosers();
}

void VideoView::setReference(core::RunId run)
{
    if (run == m_reference)
        return;
    m_reference = run;
    m_referenceRun.reset();
    updateChoosers();
    // A reference outside the shown runs is read with them.
    if (run != 0 && !samplesOf(run))
        refresh();
    else
        rebuildTiles();
}

void VideoView::setOrder(Order order)
{
    m_order = order;
    {
        const QSignalBlocker block(m_orderBox);
        m_orderBox->setCurrentIndex(int(order));
    }
    rebuildTiles();
}

QString VideoView::hint() const
{
    return m_stack->currentWidget() == m_hint ? m_hint->text() : QString();
}

void VideoView::setStep(qint64 step)
{
    if (m_steps.isEmpty())
        return;
    const auto it = std::min_element(m_steps.cbegin(), m_steps.cend(), [step](qint64 a, qint64 b) {
        return std::llabs(a - step) < std::llabs(b - step);
    });
    m_stepSlider->setValue(int(it - m_steps.cbegin()));  // rebuilds the tiles through valueChanged
}

void VideoView::selectionChanged(const QObject *source)
{
    m_grid->setCurrentRun(m_selection->current());
    QList<core::RunId> shown;
    for (const RunSamples &r : std::as_const(m_runs))
        shown << r.run;
    if (source == this && shown == m_selection->runs().mid(0, VideoGrid::kMaxTiles)) {
        if (m_strip)  // the strip is the current run's
            rebuildTiles();
        return;  // a click on a tile: only the current run changed
    }
    m_fetchErrors.clear();  // a new selection tries the unreachable again
    refresh();
}

void VideoView::refresh()
{
    const QList<core::RunId> all = m_selection->runs();
    const QList<core::RunId> runs = all.mid(0, VideoGrid::kMaxTiles);
    m_note->setVisible(all.size() > runs.size());
    m_note->setText(tr("Showing the first %1 of %2 selected runs.").arg(runs.size()).arg(all.size()));
    QList<core::RunId> read = runs;
    if (m_reference != 0 && !read.contains(m_reference))
        read << m_reference;  // the pinned reference stays pinned across selections
    const quint64 generation = ++m_generation;
    m_reader->read<QList<RunSamples>>(
        this,
        [read](const core::TrackingStore &store) {
            QList<RunSamples> out;
            for (core::RunId id : read) {
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
        },
        [this, generation, runs](QList<RunSamples> got) {
            if (generation != m_generation)
                return;
            m_referenceRun.reset();
            if (m_reference != 0 && !runs.contains(m_reference))
                for (qsizetype i = 0; i < got.size(); ++i)
                    if (got[i].run == m_reference) {
                        m_referenceRun = got.takeAt(i);
                        break;
                    }
            showSamples(std::move(got));
        });
}

void VideoView::showSamples(QList<RunSamples> runs)
{
    // On the newest step (or none yet), the slider follows newer samples as they arrive; a step
    // the user chose stays (issue 31: it stayed on an old step when newer samples arrived).
    const bool onNewest = m_steps.isEmpty() || m_step == m_steps.back();
    m_runs = std::move(runs);
    QList<QList<core::Artifact>> all;
    for (const RunSamples &r : std::as_const(m_runs))
        all << r.videos + r.images;
    m_mediaKeys = core::mediaKeys(all);
    if (!m_mediaKeys.contains(m_mediaKey))
        m_mediaKey = m_mediaKeys.value(0);
    {
        const QSignalBlocker block(m_keyBox);
        m_keyBox->clear();
        for (const QString &key : std::as_const(m_mediaKeys))
            m_keyBox->addItem(key, key);
        m_keyBox->setCurrentIndex(std::max<int>(0, int(m_mediaKeys.indexOf(m_mediaKey))));
        m_keyBox->setEnabled(m_mediaKeys.size() > 1);
    }
    QList<QList<core::Artifact>> shown;
    for (const RunSamples &r : std::as_const(m_runs))
        shown << shownSamples(r);
    m_steps = core::sampleSteps(shown);
    if (onNewest || !m_steps.contains(m_step))
        m_step = m_steps.isEmpty() ? -1 : m_steps.back();
    {
        const QSignalBlocker block(m_stepSlider);
        m_stepSlider->setRange(0, std::max<int>(0, int(m_steps.size()) - 1));
        m_stepSlider->setValue(std::max<int>(0, int(m_steps.indexOf(m_step))));
        m_stepSlider->setEnabled(m_steps.size() > 1);
    }
    updateChoosers();
    rebuildTiles();
    Q_EMIT samplesShown();
}

const QList<core::Artifact> &VideoView::shownSamples(const RunSamples &r) const
{
    static const QList<core::Artifact> none;
    const auto it = r.byKey.constFind(m_mediaKey);
    return it == r.byKey.cend() ? none : *it;
}

void VideoView::setMediaKey(const QString &key)
{
    if (key == m_mediaKey || !m_mediaKeys.contains(key))
        return;
    m_mediaKey = key;
    QList<RunSamples> runs = m_runs;
    showSamples(std::move(runs));  // the key's steps, its tiles
}

const VideoView::RunSamples *VideoView::samplesOf(core::RunId run) const
{
    for (const RunSamples &r : m_runs)
        if (r.run == run)
            return &r;
    return m_referenceRun && m_referenceRun->run == run ? &*m_referenceRun : nullptr;
}

void VideoView::updateChoosers()
{
    // Refilled only when the runs changed: the boxes call this from their own signals.
    auto fill = [this](QComboBox *box, core::RunId chosen, const QString &none, bool withReference) {
        QList<std::pair<QString, core::RunId>> items{{none, 0}};
        for (const RunSamples &r : std::as_const(m_runs))
            items.push_back({r.name, r.run});
        if (withReference && m_referenceRun)
            items.push_back({m_referenceRun->name, m_referenceRun->run});
        const QSignalBlocker block(box);
        bool same = box->count() == items.size();
        for (int i = 0; same && i < box->count(); ++i)
            same = box->itemData(i).value<core::RunId>() == items[i].second;
        if (!same) {
            box->clear();
            for (const auto &[name, run] : items)
                box->addItem(name, QVariant::fromValue<core::RunId>(run));
        }
        box->setCurrentIndex(std::max(0, box->findData(QVariant::fromValue<core::RunId>(chosen))));
    };
    fill(m_aBox, m_a, tr("first"), false);
    fill(m_bBox, m_b, tr("second"), false);
    fill(m_refBox, m_reference, tr("none"), true);
}

std::shared_ptr<media::FrameSource> VideoView::sourceFor(const QString &path)
{
    m_sourceOrder.removeAll(path);
    m_sourceOrder.append(path);
    if (auto it = m_sources.find(path); it != m_sources.end())
        return *it;
    auto source = std::make_shared<media::FrameSource>(path);
    connect(source.get(), &media::FrameSource::opened, this, &VideoView::updateClock);
    connect(source.get(), &media::FrameSource::failed, m_grid, qOverload<>(&QWidget::update));
    // Another sample of the run at that step may stand in for a clip that cannot play.
    connect(source.get(), &media::FrameSource::failed, this, &VideoView::rebuildTiles, Qt::QueuedConnection);
    connect(source.get(), &media::FrameSource::frameReady, m_grid, qOverload<>(&QWidget::update));
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

std::optional<QString> VideoView::localClip(const RunSamples &r, qint64 step)
{
    const core::Artifact *a = core::nearestSample(shownSamples(r), step);
    if (!a)
        return std::nullopt;
    return m_fetcher->cache().local(r.cluster, *a);
}

VideoTile VideoView::tileFor(const RunSamples &r, qint64 step)
{
    VideoTile t;
    t.run = r.run;
    t.color = runColor(r.run);
    t.title = r.name;
    t.baseline = r.baseline;
    t.reference = r.run == m_reference;
    const SweepNode *sweep = m_runsModel ? m_runsModel->sweeps().sweepOf(r.run) : nullptr;
    if (sweep && !sweep->sweep.metricName.isEmpty())
        for (const core::LatestMetric &m : r.metrics)
            if (m.key == sweep->sweep.metricName)
                t.metric = QStringLiteral("%1 %2").arg(m.key, QString::number(m.last.value, 'g', 4));
    const core::Artifact *a = core::nearestSample(shownSamples(r), step);
    if (!a) {
        t.status = m_mediaKeys.size() > 1 && !r.byKey.isEmpty() ? tr("no %1 samples").arg(m_mediaKey)
                                                                : tr("no samples yet");
        return t;
    }
    t.step = a->step;
    t.otherStep = a->step != step;
    if (const auto local = m_fetcher->cache().local(r.cluster, *a)) {
        t.source = sourceFor(*local);
        if (t.source->state() == media::FrameSource::State::Failed) {
            // A clip that cannot be decoded (an mp4 of a codec this FFmpeg lacks, a damaged file)
            // gives way to another sample of the run at that step: TensorBoard's GIF beside it.
            // In the Samples box's order (videos before images), not the hash's.
            for (const QString &key : std::as_const(m_mediaKeys)) {
                const auto series = r.byKey.constFind(key);
                const core::Artifact *other = key == m_mediaKey || series == r.byKey.cend()
                    ? nullptr
                    : core::sampleAt(*series, a->step);
                const auto otherLocal = other ? m_fetcher->cache().local(r.cluster, *other) : std::nullopt;
                if (!otherLocal)
                    continue;
                auto source = sourceFor(*otherLocal);
                if (source->state() == media::FrameSource::State::Failed)
                    continue;
                t.note = tr("%1 cannot play: showing %2").arg(m_mediaKey, key);
                t.source = source;
                break;
            }
        }
    } else if (r.cluster.isEmpty()) {
        t.status = tr("the sample is missing:\n%1").arg(a->remotePath.isEmpty() ? a->path : a->remotePath);
    } else if (m_fetchErrors.contains(a->remotePath)) {
        t.status = tr("cannot fetch it from %1:\n%2").arg(r.cluster, m_fetchErrors.value(a->remotePath));
    } else {
        t.status = tr("fetching from %1…").arg(r.cluster);
        m_fetcher->fetch(r.run, r.cluster, *a);
    }
    return t;
}

QList<VideoTile> VideoView::runTiles()
{
    // Captions: the leading sweep's swept params (what the sweep asks about), else those that
    // differ between the shown runs.
    QList<core::RunId> ids;
    QList<core::Params> params;
    for (const RunSamples &r : std::as_const(m_runs)) {
        ids << r.run;
        params << r.params;
    }
    const SweepNode *leading = m_runsModel ? m_runsModel->sweeps().leadingSweep(ids) : nullptr;
    const QStringList keys =
        leading && !leading->swept.isEmpty() ? core::keysOf(leading->swept) : core::differingParams(params);
    QList<VideoTile> tiles;
    for (const RunSamples &r : std::as_const(m_runs)) {
        VideoTile t = tileFor(r, m_step);
        t.caption = captionOf(r.params, keys);
        tiles.append(t);
    }
    applyQuality(tiles);

    // The baseline first, then the chosen order (stable: ties keep the selection's order).
    const auto metricOf = [this](const VideoTile &t) {
        const SweepNode *sweep = m_runsModel ? m_runsModel->sweeps().sweepOf(t.run) : nullptr;
        const RunSamples *r = samplesOf(t.run);
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
        switch (m_order) {
        case Order::Selection:
            return false;
        case Order::Metric:
            return metricOf(a) < metricOf(b);
        case Order::Psnr:
            return qualityOf(a, true) < qualityOf(b, true);
        case Order::Ssim:
            return qualityOf(a, false) < qualityOf(b, false);
        case Order::Name:
            return QString::localeAwareCompare(a.title, b.title) < 0;
        }
        return false;
    });
    return tiles;
}

QList<VideoTile> VideoView::stripTiles()
{
    // The current run's samples over steps: at most a grid's worth, evenly spread, the latest
    // always in.
    const RunSamples *run = samplesOf(m_selection->current());
    if (!run || run->run == (m_referenceRun ? m_referenceRun->run : 0))
        run = m_runs.isEmpty() ? nullptr : &m_runs.front();
    QList<VideoTile> tiles;
    if (!run)
        return tiles;
    const QList<core::Artifact> &videos = shownSamples(*run);
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

void VideoView::applyQuality(QList<VideoTile> &tiles)
{
    const RunSamples *ref = m_reference ? samplesOf(m_reference) : nullptr;
    if (!ref)
        return;
    QList<ReferenceQuality::Job> missing;
    for (VideoTile &t : tiles) {
        if (!t.source || t.reference)
            continue;
        const auto refClip = localClip(*ref, m_step);
        if (!refClip)
            continue;
        const ReferenceQuality::Job job{t.run, m_reference, m_step, t.source->path(), *refClip};
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

void VideoView::updateQualityPlot()
{
    QWidget *panel = m_plot->parentWidget();
    const RunSamples *ref = m_reference ? samplesOf(m_reference) : nullptr;
    panel->setVisible(ref != nullptr && !m_strip);
    m_plot->clearGraphs();
    if (!ref || m_strip) {
        m_plot->replot();
        return;
    }
    const bool psnr = m_plotMetric->currentIndex() == 0;
    m_plot->yAxis->setLabel(psnr ? tr("PSNR (dB)") : tr("SSIM"));
    m_plot->plotLayout()->setMargins(QMargins(0, 0, 0, 0));
    QList<ReferenceQuality::Job> missing;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const RunSamples &r : std::as_const(m_runs)) {
        if (r.run == m_reference)
            continue;
        QCPGraph *g = m_plot->addGraph();
        g->setName(r.name);
        g->setPen(QPen(runColor(r.run), 1.5));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
        for (qint64 step : std::as_const(m_steps)) {
            // Only where both wrote a sample at this very step: a neighbour's is not this step's.
            const core::Artifact *mine = core::sampleAt(shownSamples(r), step),
                                 *theirs = core::sampleAt(shownSamples(*ref), step);
            const auto clip = mine ? m_fetcher->cache().local(r.cluster, *mine) : std::nullopt;
            const auto refClip = theirs ? m_fetcher->cache().local(ref->cluster, *theirs) : std::nullopt;
            if (!clip || !refClip)
                continue;
            const ReferenceQuality::Job job{r.run, m_reference, step, *clip, *refClip};
            const ClipQuality *q = m_quality->find(job);
            if (!q) {
                missing << job;
                continue;
            }
            const double v = psnr ? q->meanPsnr : q->meanSsim;
            if (!q->error.isEmpty() || !std::isfinite(v))
                continue;  // identical clips: PSNR is infinite, not a point
            g->addData(double(step), v);
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    m_quality->request(missing);
    m_plot->rescaleAxes();
    if (std::isfinite(lo)) {
        const double pad = std::max(1e-3, 0.15 * (hi - lo));  // a dot is ~5 % of the short plot
        m_plot->yAxis->setRange(lo - pad, hi + pad);
    }
    // The first and last steps are never cut at the edge.
    const QCPRange x = m_plot->xAxis->range();
    const double xpad = std::max(1.0, 0.04 * x.size());
    m_plot->xAxis->setRange(x.lower - xpad, x.upper + xpad);
    m_plot->replot();
}

void VideoView::showTileMenu(core::RunId run, const QPoint &globalPos)
{
    auto *menu = new QMenu(this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    if (run == m_reference)
        menu->addAction(tr("Unpin the reference"), this, [this] { setReference(0); });
    else
        menu->addAction(tr("Pin as the reference"), this, [this, run] { setReference(run); });
    menu->addAction(tr("Show as A"), this, [this, run] {
        setABRuns(run, m_b);
        if (m_grid->mode() == VideoGrid::Mode::Grid)
            setMode(VideoGrid::Mode::Wipe);
    });
    menu->addAction(tr("Show as B"), this, [this, run] {
        setABRuns(m_a, run);
        if (m_grid->mode() == VideoGrid::Mode::Grid)
            setMode(VideoGrid::Mode::Wipe);
    });
    menu->addAction(tr("Strip of this run over steps"), this, [this, run] {
        m_selection->select(m_selection->runs(), this, run);
        setStrip(true);
    });
    menu->popup(globalPos);
}

void VideoView::rebuildTiles()
{
    m_stepLabel->setText(
        m_step < 0
            ? tr("no samples")
            : tr("step %1 (%2 of %3)").arg(m_step).arg(m_steps.indexOf(m_step) + 1).arg(m_steps.size()));
    const QList<VideoTile> tiles = m_strip ? stripTiles() : runTiles();
    m_grid->setTiles(tiles);
    // Nothing to look at: say what to do rather than show an empty canvas.
    if (m_runs.isEmpty()) {
        m_hint->setText(tr("Select runs in the Runs table or a sweep in the tree: their sample videos show "
                           "here side by side, at one training step, on one clock."));
    } else if (m_steps.isEmpty()) {
        m_hint->setText(
            tr("None of the %n selected run(s) has written a sample (a video or an image) yet. The "
               "trainer writes one every sample.every steps (samples/step-N.mp4); they appear here as "
               "they come.",
               nullptr, int(m_runs.size())));
    }
    m_stack->setCurrentIndex(m_runs.isEmpty() || m_steps.isEmpty() ? 0 : 1);
    updateQualityPlot();
    updateClock();
}

void VideoView::updateClock()
{
    int frames = 0;
    double fps = 0;
    for (const VideoTile &t : m_grid->tiles())
        if (t.source && t.source->state() == media::FrameSource::State::Ready) {
            const media::ClipInfo info = t.source->info();
            frames = std::max(frames, info.frameCount);
            if (fps <= 0)
                fps = info.fps;
        }
    m_clock->setFrameCount(frames);
    if (fps > 0 && fps != m_clock->fps())
        m_clock->setFps(fps);
    m_grid->setFrameIndex(m_clock->index(), m_clock->isPlaying());
    updateTransport();
}

void VideoView::updateTransport()
{
    const int n = m_clock->frameCount();
    m_playButton->setText(m_clock->isPlaying() ? tr("Pause") : tr("Play"));
    m_playButton->setEnabled(n > 0);
    {
        const QSignalBlocker block(m_scrub);
        m_scrub->setRange(0, std::max(0, n - 1));
        m_scrub->setValue(m_clock->index());
        m_scrub->setEnabled(n > 1);
    }
    m_frameLabel->setText(n > 0 ? tr("frame %1 / %2").arg(m_clock->index() + 1).arg(n) : QString());
    m_droppedLabel->setText(tr("dropped %1").arg(m_grid->dropped()));
}

void VideoView::hideEvent(QHideEvent *event)
{
    m_clock->pause();  // nothing plays in a tab nobody sees
    QWidget::hideEvent(event);
}

bool VideoView::saveCurrentFrame(const QString &path, QString *error)
{
    // The current run's tile, else the first that plays.
    const VideoTile *tile = nullptr;
    for (const VideoTile &t : m_grid->tiles())
        if (t.source && t.source->state() == media::FrameSource::State::Ready &&
            (!tile || t.run == m_selection->current()))
            tile = &t;
    if (!tile) {
        if (error)
            *error = tr("No sample is playing.");
        return false;
    }
    const int index = std::min(m_clock->index(), tile->source->info().frameCount - 1);
    const QImage image = tile->source->frame(index);
    if (image.isNull() || !image.save(path, "PNG")) {
        if (error)
            *error = image.isNull() ? tr("Frame %1 is not decoded yet.").arg(index + 1)
                                    : tr("Cannot write %1.").arg(path);
        return false;
    }
    return true;
}

bool VideoView::exportFramePng(const QString &path, QString *error)
{
    const QImage image = m_grid->render(m_grid->size());
    if (!image.save(path, "PNG")) {
        if (error)
            *error = tr("Cannot write %1.").arg(path);
        return false;
    }
    return true;
}

void VideoView::exportMp4(const QString &path)
{
    cancelExport();
    const QList<VideoTile> tiles = m_grid->tiles();
    QList<QString> paths;
    for (const VideoTile &t : tiles)
        paths << (t.source ? t.source->path() : QString());
    const int frames = m_clock->frameCount();
    const int fps = std::max(1, int(std::lround(m_clock->fps())));
    if (frames == 0) {
        Q_EMIT exportFinished(false, tr("No sample is playing."));
        return;
    }
    const QSize size = m_grid->size();
    const auto mode = m_grid->mode();
    const QList<int> abShown = m_grid->shownTiles();
    const double wipe = m_wipeSlider->value() / 1000.0;
    const QFont font = m_grid->font();
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    m_exportCancel = cancel;
    QPointer<VideoView> self(this);
    auto report = [self](auto f) {
        QMetaObject::invokeMethod(
            self.data(),
            [self, f] {
                if (self)
                    f(self.data());
            },
            Qt::QueuedConnection);
    };
    (void)QtConcurrent::run(blockingPool(), [=] {
        try {
            std::vector<std::unique_ptr<media::ClipDecoder>> decoders;
            QList<VideoTile> drawn = tiles;
            for (int i = 0; i < paths.size(); ++i) {
                decoders.emplace_back();
                if (paths[i].isEmpty())
                    continue;
                try {
                    decoders.back() = media::ClipDecoder::open(paths[i]);
                } catch (const media::MediaError &e) {
                    drawn[i].status = e.message();
                }
            }
            if (mode != VideoGrid::Mode::Grid) {
                QList<VideoTile> ab;
                for (int i : abShown)
                    ab << drawn[i];
                drawn = ab;
                std::vector<std::unique_ptr<media::ClipDecoder>> abDecoders;
                for (int i : abShown)
                    abDecoders.push_back(std::move(decoders[size_t(i)]));
                decoders = std::move(abDecoders);
            }
            media::ClipEncoder encoder(path, size, fps);
            QImage canvas(size, QImage::Format_RGB32);
            for (int f = 0; f < frames; ++f) {
                if (cancel->load()) {
                    report([](VideoView *v) { Q_EMIT v->exportFinished(false, tr("Cancelled.")); });
                    return;  // the encoder removes its partial file
                }
                QList<TileFrame> frameSet;
                for (int i = 0; i < drawn.size(); ++i) {
                    TileFrame tf{&drawn[i], {}, {}};
                    if (auto &d = decoders[size_t(i)]) {
                        try {
                            tf.image = d->frame(std::min(f, d->info().frameCount - 1));
                        } catch (const media::MediaError &e) {
                            tf.overlay = e.message();
                        }
                    }
                    frameSet << tf;
                }
                QPainter p(&canvas);
                p.setFont(font);
                VideoGrid::paintFrames(p, canvas.rect(), frameSet, mode, wipe);
                p.end();
                encoder.add(canvas);
                report([f, frames](VideoView *v) { Q_EMIT v->exportProgress(f + 1, frames); });
            }
            encoder.finish();
            report([path](VideoView *v) { Q_EMIT v->exportFinished(true, path); });
        } catch (const media::MediaError &e) {
            report([message = e.message()](VideoView *v) { Q_EMIT v->exportFinished(false, message); });
        }
    });
}

void VideoView::cancelExport()
{
    if (m_exportCancel)
        m_exportCancel->store(true);
}

void VideoView::showContactSheet()
{
    const core::RunId current = m_selection->current();
    const RunSamples *run = nullptr;
    for (const RunSamples &r : std::as_const(m_runs))
        if (!run || r.run == current)
            run = &r;
    const core::Artifact *sheet = run ? core::nearestSample(run->images, m_step) : nullptr;
    if (!sheet) {
        QMessageBox::information(this, tr("Contact sheet"), tr("This run has no contact sheet."));
        return;
    }
    const auto local = m_fetcher->cache().local(run->cluster, *sheet);
    if (!local) {
        if (run->cluster.isEmpty()) {
            QMessageBox::warning(this, tr("Contact sheet"),
                                 tr("The file is missing:\n%1").arg(sheet->remotePath));
        } else {
            m_fetcher->fetch(run->run, run->cluster, *sheet);
            QMessageBox::information(this, tr("Contact sheet"),
                                     tr("Fetching it from %1; open it again in a moment.").arg(run->cluster));
        }
        return;
    }
    const QImage image(*local);
    if (image.isNull()) {
        QMessageBox::warning(this, tr("Contact sheet"), tr("%1 is not a readable image.").arg(*local));
        return;
    }
    auto *dialog = new QDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(
        tr("%1 — contact sheet, step %2 (rows: clips, columns: frames)").arg(run->name).arg(sheet->step));
    auto *layout = new QVBoxLayout(dialog);
    auto *zoom = new QComboBox(dialog);
    auto *label = new QLabel(dialog);
    auto *scroll = new QScrollArea(dialog);
    scroll->setWidget(label);
    for (int z : {1, 2, 4, 8})
        zoom->addItem(QStringLiteral("%1×").arg(z), z);
    // Whole multiples only, nearest-neighbour: every sample pixel stays a crisp square.
    auto apply = [image, label, zoom] {
        const int z = zoom->currentData().toInt();
        label->setPixmap(QPixmap::fromImage(
            image.scaled(image.size() * z, Qt::IgnoreAspectRatio, Qt::FastTransformation)));
        label->adjustSize();
    };
    connect(zoom, &QComboBox::currentIndexChanged, dialog, apply);
    const int fit = std::clamp(1100 / std::max(1, image.width()), 1, 8);
    zoom->setCurrentIndex(fit >= 8 ? 3 : fit >= 4 ? 2 : fit >= 2 ? 1 : 0);
    apply();
    layout->addWidget(zoom);
    layout->addWidget(scroll, 1);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog->resize(1200, 700);
    dialog->show();
}

}  // namespace orrery::gui
