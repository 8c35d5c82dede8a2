// SPDX-License-Identifier: GPL-3.0-or-later
#include "videoview.h"

#include "fetchbar.h"
#include "playbackclock.h"
#include "qualityplot.h"
#include "reviewchoosers.h"
#include "runselection.h"
#include "samplefetcher.h"
#include "storereader.h"
#include "transportbar.h"
#include "videoexport.h"
#include "videotiles.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QShortcut>
#include <QSlider>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace orrery::gui {

namespace {

constexpr int kStripMode = 3;  // the mode box's entry after VideoGrid's three modes

}  // namespace

VideoView::VideoView(StoreReader *reader, RunSelection *selection, QWidget *parent)
    : QWidget(parent), m_reader(reader), m_selection(selection), m_clock(new PlaybackClock(this)),
      m_fetcher(new SampleFetcher(this)), m_grid(new VideoGrid(this)), m_quality(new ReferenceQuality(this))
{
    setObjectName(QStringLiteral("videoView"));
    // Each clip a tile opens: the clock follows it once it is open, the grid repaints for its
    // frames, and another sample of the run may stand in for a clip that cannot play.
    m_tiles = std::make_unique<VideoTiles>(m_state, m_fetcher, m_quality, [this](media::FrameSource *source) {
        connect(source, &media::FrameSource::opened, m_transport, &TransportBar::fitClockToTiles);
        connect(source, &media::FrameSource::failed, m_grid, qOverload<>(&QWidget::update));
        connect(source, &media::FrameSource::failed, this, &VideoView::rebuildTiles, Qt::QueuedConnection);
        connect(source, &media::FrameSource::frameReady, m_grid, qOverload<>(&QWidget::update));
    });
    buildUi();
    connect(m_selection, &RunSelection::changed, this, &VideoView::selectionChanged);
    connect(m_clock, &PlaybackClock::indexChanged, this, [this](int index) {
        m_grid->addSkipped(m_clock->skipped());
        m_clock->resetSkipped();
        m_grid->setFrameIndex(index, m_clock->isPlaying());
        m_transport->showClock();
    });
    connect(m_clock, &PlaybackClock::playingChanged, this, [this](bool playing) {
        m_grid->setFrameIndex(m_clock->index(), playing);
        m_transport->showClock();
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
                m_state.fetchErrors.remove(remotePath);
                rebuildTiles();
            });
    connect(m_fetcher, &SampleFetcher::failed, this,
            [this](core::RunId, const QString &remotePath, const QString &message) {
                m_state.fetchErrors.insert(remotePath, message);
                rebuildTiles();
            });
    connect(m_fetcher, &SampleFetcher::progress, m_fetchBar, &FetchBar::showProgress);
}

VideoView::~VideoView()
{
    cancelExport();
}

void VideoView::setRunsModel(const RunsTableModel *model)
{
    m_tiles->setRunsModel(model);
}

QCustomPlot *VideoView::qualityPlot() const
{
    return m_qualityPlot->plot();
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
    m_choosers = new ReviewChoosers(this);
    QHBoxLayout *review = m_choosers->build();
    buildStepControls(top);
    m_export = new VideoExport(m_grid, m_clock, m_selection, m_wipeSlider, this);
    m_export->addButton(top, [this] {
        showContactSheet(this, m_fetcher, m_state.runs, m_selection->current(), m_state.step);
    });
    layout->addLayout(top);
    review->addStretch(1);
    layout->addLayout(review);

    m_note = new QLabel(this);
    m_note->hide();
    layout->addWidget(m_note);
    layout->addWidget(buildStack(), 1);
    m_transport = new TransportBar(m_clock, m_grid, this);
    layout->addLayout(m_transport->build());
    m_fetchBar = new FetchBar(m_fetcher, this);
    layout->addWidget(m_fetchBar);
    connectControls();
    setFocusPolicy(Qt::StrongFocus);
    m_transport->showClock();
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
    m_qualityPlot = new QualityPlot(m_state, m_fetcher, m_quality, this);
    pageLayout->addWidget(m_qualityPlot->buildPanel(page, font()));
    m_stack->addWidget(page);
    return m_stack;
}

// The choosers, the mode, the wipe, the step and the exports' reports; Space, ← and → while the
// tab has focus.
void VideoView::connectControls()
{
    connect(m_choosers, &ReviewChoosers::orderChosen, this, &VideoView::setOrder);
    connect(m_choosers, &ReviewChoosers::mediaKeyChosen, this, &VideoView::setMediaKey);
    connect(m_choosers, &ReviewChoosers::aChosen, this, [this](core::RunId a) { setABRuns(a, m_state.b); });
    connect(m_choosers, &ReviewChoosers::bChosen, this, [this](core::RunId b) { setABRuns(m_state.a, b); });
    connect(m_choosers, &ReviewChoosers::referenceChosen, this, &VideoView::setReference);
    connect(m_export, &VideoExport::progress, this, &VideoView::exportProgress);
    connect(m_export, &VideoExport::finished, this, &VideoView::exportFinished);
    connect(m_modeBox, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i == kStripMode)
            setStrip(true);
        else
            setMode(static_cast<VideoGrid::Mode>(i));
    });
    connect(m_wipeSlider, &QSlider::valueChanged, this, [this](int v) { m_grid->setWipe(v / 1000.0); });
    connect(m_stepSlider, &QSlider::valueChanged, this, [this](int i) {
        if (i >= 0 && i < m_state.steps.size() && m_state.steps[i] != m_state.step) {
            m_state.step = m_state.steps[i];
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
    if (m_state.strip) {
        m_state.strip = false;
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
    m_state.strip = on;
    rebuildTiles();
}

void VideoView::setABRuns(core::RunId a, core::RunId b)
{
    m_state.a = a;
    m_state.b = b;
    m_grid->setABRuns(a, b);
    m_choosers->showRuns(m_state);
}

void VideoView::setReference(core::RunId run)
{
    if (run == m_state.reference)
        return;
    m_state.reference = run;
    m_state.referenceRun.reset();
    m_choosers->showRuns(m_state);
    // A reference outside the shown runs is read with them.
    if (run != 0 && !m_state.samplesOf(run))
        refresh();
    else
        rebuildTiles();
}

void VideoView::setOrder(Order order)
{
    m_state.order = order;
    m_choosers->showOrder(order);
    rebuildTiles();
}

QString VideoView::hint() const
{
    return m_stack->currentWidget() == m_hint ? m_hint->text() : QString();
}

void VideoView::setStep(qint64 step)
{
    const QList<qint64> &steps = m_state.steps;
    if (steps.isEmpty())
        return;
    const auto it = std::min_element(steps.cbegin(), steps.cend(), [step](qint64 a, qint64 b) {
        return std::llabs(a - step) < std::llabs(b - step);
    });
    m_stepSlider->setValue(int(it - steps.cbegin()));  // rebuilds the tiles through valueChanged
}

void VideoView::selectionChanged(const QObject *source)
{
    m_grid->setCurrentRun(m_selection->current());
    QList<core::RunId> shown;
    for (const RunSamples &r : std::as_const(m_state.runs))
        shown << r.run;
    if (source == this && shown == m_selection->runs().mid(0, VideoGrid::kMaxTiles)) {
        if (m_state.strip)  // the strip is the current run's
            rebuildTiles();
        return;  // a click on a tile: only the current run changed
    }
    m_state.fetchErrors.clear();  // a new selection tries the unreachable again
    refresh();
}

void VideoView::refresh()
{
    const QList<core::RunId> all = m_selection->runs();
    const QList<core::RunId> runs = all.mid(0, VideoGrid::kMaxTiles);
    m_note->setVisible(all.size() > runs.size());
    m_note->setText(tr("Showing the first %1 of %2 selected runs.").arg(runs.size()).arg(all.size()));
    QList<core::RunId> read = runs;
    if (m_state.reference != 0 && !read.contains(m_state.reference))
        read << m_state.reference;  // the pinned reference stays pinned across selections
    const quint64 generation = ++m_generation;
    m_reader->read<QList<RunSamples>>(
        this, [read](const core::TrackingStore &store) { return readRunSamples(store, read); },
        [this, generation, runs](QList<RunSamples> got) {
            if (generation != m_generation)
                return;
            m_state.referenceRun.reset();
            if (m_state.reference != 0 && !runs.contains(m_state.reference))
                for (qsizetype i = 0; i < got.size(); ++i)
                    if (got[i].run == m_state.reference) {
                        m_state.referenceRun = got.takeAt(i);
                        break;
                    }
            showSamples(std::move(got));
        });
}

void VideoView::showSamples(QList<RunSamples> runs)
{
    // On the newest step (or none yet), the slider follows newer samples as they arrive; a step
    // the user chose stays (issue 31: it stayed on an old step when newer samples arrived).
    const bool onNewest = m_state.steps.isEmpty() || m_state.step == m_state.steps.back();
    m_state.runs = std::move(runs);
    QList<QList<core::Artifact>> all;
    for (const RunSamples &r : std::as_const(m_state.runs))
        all << r.videos + r.images;
    m_state.mediaKeys = core::mediaKeys(all);
    if (!m_state.mediaKeys.contains(m_state.mediaKey))
        m_state.mediaKey = m_state.mediaKeys.value(0);
    m_choosers->showMediaKeys(m_state.mediaKeys, m_state.mediaKey);
    QList<QList<core::Artifact>> shown;
    for (const RunSamples &r : std::as_const(m_state.runs))
        shown << m_state.shownSamples(r);
    m_state.steps = core::sampleSteps(shown);
    if (onNewest || !m_state.steps.contains(m_state.step))
        m_state.step = m_state.steps.isEmpty() ? -1 : m_state.steps.back();
    {
        const QSignalBlocker block(m_stepSlider);
        m_stepSlider->setRange(0, std::max<int>(0, int(m_state.steps.size()) - 1));
        m_stepSlider->setValue(std::max<int>(0, int(m_state.steps.indexOf(m_state.step))));
        m_stepSlider->setEnabled(m_state.steps.size() > 1);
    }
    m_choosers->showRuns(m_state);
    rebuildTiles();
    Q_EMIT samplesShown();
}

void VideoView::setMediaKey(const QString &key)
{
    if (key == m_state.mediaKey || !m_state.mediaKeys.contains(key))
        return;
    m_state.mediaKey = key;
    QList<RunSamples> runs = m_state.runs;
    showSamples(std::move(runs));  // the key's steps, its tiles
}

void VideoView::showTileMenu(core::RunId run, const QPoint &globalPos)
{
    auto *menu = new QMenu(this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    if (run == m_state.reference)
        menu->addAction(tr("Unpin the reference"), this, [this] { setReference(0); });
    else
        menu->addAction(tr("Pin as the reference"), this, [this, run] { setReference(run); });
    menu->addAction(tr("Show as A"), this, [this, run] {
        setABRuns(run, m_state.b);
        if (m_grid->mode() == VideoGrid::Mode::Grid)
            setMode(VideoGrid::Mode::Wipe);
    });
    menu->addAction(tr("Show as B"), this, [this, run] {
        setABRuns(m_state.a, run);
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
    const QList<qint64> &steps = m_state.steps;
    m_stepLabel->setText(m_state.step < 0 ? tr("no samples")
                                          : tr("step %1 (%2 of %3)")
                                                .arg(m_state.step)
                                                .arg(steps.indexOf(m_state.step) + 1)
                                                .arg(steps.size()));
    const QList<VideoTile> tiles =
        m_state.strip ? m_tiles->stripTiles(m_selection->current()) : m_tiles->runTiles();
    m_grid->setTiles(tiles);
    // Nothing to look at: say what to do rather than show an empty canvas.
    if (m_state.runs.isEmpty()) {
        m_hint->setText(tr("Select runs in the Runs table or a sweep in the tree: their sample videos show "
                           "here side by side, at one training step, on one clock."));
    } else if (steps.isEmpty()) {
        m_hint->setText(
            tr("None of the %n selected run(s) has written a sample (a video or an image) yet. The "
               "trainer writes one every sample.every steps (samples/step-N.mp4); they appear here as "
               "they come.",
               nullptr, int(m_state.runs.size())));
    }
    m_stack->setCurrentIndex(m_state.runs.isEmpty() || steps.isEmpty() ? 0 : 1);
    m_qualityPlot->update();
    m_transport->fitClockToTiles();
}

void VideoView::hideEvent(QHideEvent *event)
{
    m_clock->pause();  // nothing plays in a tab nobody sees
    QWidget::hideEvent(event);
}

bool VideoView::saveCurrentFrame(const QString &path, QString *error)
{
    return m_export->saveCurrentFrame(path, error);
}

bool VideoView::exportFramePng(const QString &path, QString *error)
{
    return m_export->exportFramePng(path, error);
}

void VideoView::exportMp4(const QString &path)
{
    m_export->exportMp4(path);
}

void VideoView::cancelExport()
{
    m_export->cancel();
}

}  // namespace orrery::gui
