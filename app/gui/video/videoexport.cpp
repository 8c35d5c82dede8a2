// SPDX-License-Identifier: GPL-3.0-or-later
#include "videoexport.h"

#include "blockingpool.h"
#include "clipdecoder.h"
#include "clipencoder.h"
#include "playbackclock.h"
#include "postifalive.h"
#include "runselection.h"
#include "samplefetcher.h"
#include "videogrid.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QPointer>
#include <QProgressDialog>
#include <QScrollArea>
#include <QSlider>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>
#include <cmath>
#include <vector>

namespace orrery::gui {

namespace {

// The grid as the MP4 export draws it, copied on the UI thread: the worker never reads the grid.
struct GridFilm {
    QList<VideoTile> tiles;
    QList<QString> paths;  // each tile's clip (empty: none)
    int frames = 0, fps = 1;
    QSize size;
    VideoGrid::Mode mode = VideoGrid::Mode::Grid;
    QList<int> abShown;  // the tiles the A/B modes draw
    double wipe = 0.5;
    QFont font;
};

GridFilm filmOf(const VideoGrid &grid, const PlaybackClock &clock, double wipe)
{
    GridFilm film;
    film.tiles = grid.tiles();
    for (const VideoTile &t : film.tiles)
        film.paths << (t.source ? t.source->path() : QString());
    film.frames = clock.frameCount();
    film.fps = std::max(1, int(std::lround(clock.fps())));
    film.size = grid.size();
    film.mode = grid.mode();
    film.abShown = grid.shownTiles();
    film.wipe = wipe;
    film.font = grid.font();
    return film;
}

// The tiles drawn (the A/B modes: A and B) and a decoder of each one's clip, opened on the
// worker; a clip that cannot be opened says why on its tile.
struct FilmClips {
    QList<VideoTile> drawn;
    std::vector<std::unique_ptr<media::ClipDecoder>> decoders;  // per drawn tile; null: no clip
};

FilmClips openClips(const GridFilm &film)
{
    FilmClips clips;
    clips.drawn = film.tiles;
    for (int i = 0; i < film.paths.size(); ++i) {
        clips.decoders.emplace_back();
        if (film.paths[i].isEmpty())
            continue;
        try {
            clips.decoders.back() = media::ClipDecoder::open(film.paths[i]);
        } catch (const media::MediaError &e) {
            clips.drawn[i].status = e.message();
        }
    }
    if (film.mode != VideoGrid::Mode::Grid) {
        QList<VideoTile> ab;
        for (int i : film.abShown)
            ab << clips.drawn[i];
        clips.drawn = ab;
        std::vector<std::unique_ptr<media::ClipDecoder>> abDecoders;
        for (int i : film.abShown)
            abDecoders.push_back(std::move(clips.decoders[size_t(i)]));
        clips.decoders = std::move(abDecoders);
    }
    return clips;
}

// Frame `f` of every drawn tile (a shorter clip: its last) into `canvas`, as the grid draws it.
void drawFrame(FilmClips &clips, const GridFilm &film, int f, QImage &canvas)
{
    QList<TileFrame> frameSet;
    for (int i = 0; i < clips.drawn.size(); ++i) {
        TileFrame tf{&clips.drawn[i], {}, {}};
        if (auto &d = clips.decoders[size_t(i)]) {
            try {
                tf.image = d->frame(std::min(f, d->info().frameCount - 1));
            } catch (const media::MediaError &e) {
                tf.overlay = e.message();
            }
        }
        frameSet << tf;
    }
    QPainter p(&canvas);
    p.setFont(film.font);
    VideoGrid::paintFrames(p, canvas.rect(), frameSet, film.mode, film.wipe);
    p.end();
}

// The sheet in a dialog, at whole multiples only, nearest-neighbour: every sample pixel stays a
// crisp square.
void openSheetDialog(QWidget *parent, const QString &title, const QImage &image)
{
    auto *dialog = new QDialog(parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(title);
    auto *layout = new QVBoxLayout(dialog);
    auto *zoom = new QComboBox(dialog);
    auto *label = new QLabel(dialog);
    auto *scroll = new QScrollArea(dialog);
    scroll->setWidget(label);
    for (int z : {1, 2, 4, 8})
        zoom->addItem(QStringLiteral("%1×").arg(z), z);
    auto apply = [image, label, zoom] {
        const int z = zoom->currentData().toInt();
        label->setPixmap(QPixmap::fromImage(
            image.scaled(image.size() * z, Qt::IgnoreAspectRatio, Qt::FastTransformation)));
        label->adjustSize();
    };
    QObject::connect(zoom, &QComboBox::currentIndexChanged, dialog, apply);
    const int fit = std::clamp(1100 / std::max(1, image.width()), 1, 8);
    zoom->setCurrentIndex(fit >= 8 ? 3 : fit >= 4 ? 2 : fit >= 2 ? 1 : 0);
    apply();
    layout->addWidget(zoom);
    layout->addWidget(scroll, 1);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog->resize(1200, 700);
    dialog->show();
}

}  // namespace

VideoExport::VideoExport(VideoGrid *grid, PlaybackClock *clock, RunSelection *selection, const QSlider *wipe,
                         QWidget *view)
    : QObject(view), m_grid(grid), m_clock(clock), m_selection(selection), m_wipe(wipe), m_view(view)
{ }

VideoExport::~VideoExport()
{
    cancel();
}

// What leaves the tab as a file, under one button.
void VideoExport::addButton(QHBoxLayout *top, std::function<void()> contactSheet)
{
    // Four buttons of their own made the row (and
    // so the window) wider than a 1,440 px screen holds beside the docks.
    auto *exportButton = new QToolButton(m_view);
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
           std::move(contactSheet));
    button(tr("Save frame…"), tr("The current run's frame as PNG, at the sample's own size"), [this] {
        const QString path = QFileDialog::getSaveFileName(
            m_view, tr("Save frame"), QStringLiteral("frame.png"), tr("PNG images (*.png)"));
        QString error;
        if (!path.isEmpty() && !saveCurrentFrame(path, &error))
            QMessageBox::warning(m_view, tr("Save frame"), error);
    });
    button(tr("Export PNG…"), tr("The grid as it is now"), [this] {
        const QString path = QFileDialog::getSaveFileName(
            m_view, tr("Export grid frame"), QStringLiteral("grid.png"), tr("PNG images (*.png)"));
        QString error;
        if (!path.isEmpty() && !exportFramePng(path, &error))
            QMessageBox::warning(m_view, tr("Export PNG"), error);
    });
    button(tr("Export MP4…"), tr("The whole grid, every frame, as a video"), [this] { askMp4(); });
}

void VideoExport::askMp4()
{
    const QString path = QFileDialog::getSaveFileName(m_view, tr("Export grid video"),
                                                      QStringLiteral("grid.mp4"), tr("MP4 videos (*.mp4)"));
    if (path.isEmpty())
        return;
    auto *dialog =
        new QProgressDialog(tr("Encoding the grid…"), tr("Cancel"), 0, m_clock->frameCount(), m_view);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setMinimumDuration(300);
    connect(this, &VideoExport::progress, dialog, &QProgressDialog::setValue);
    connect(dialog, &QProgressDialog::canceled, this, &VideoExport::cancel);
    connect(this, &VideoExport::finished, dialog, [this, dialog](bool ok, const QString &message) {
        dialog->close();
        if (!ok)
            QMessageBox::warning(m_view, tr("Export MP4"), message);
    });
    exportMp4(path);
}

bool VideoExport::saveCurrentFrame(const QString &path, QString *error)
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

bool VideoExport::exportFramePng(const QString &path, QString *error)
{
    const QImage image = m_grid->render(m_grid->size());
    if (!image.save(path, "PNG")) {
        if (error)
            *error = tr("Cannot write %1.").arg(path);
        return false;
    }
    return true;
}

void VideoExport::exportMp4(const QString &path)
{
    cancel();
    const GridFilm film = filmOf(*m_grid, *m_clock, m_wipe->value() / 1000.0);
    if (film.frames == 0) {
        Q_EMIT finished(false, tr("No sample is playing."));
        return;
    }
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    m_cancel = cancelled;
    QPointer<VideoExport> self(this);
    auto report = [self](auto f) { postIfAlive(self, f); };
    (void)QtConcurrent::run(blockingPool(), [=] {
        try {
            FilmClips clips = openClips(film);
            media::ClipEncoder encoder(path, film.size, film.fps);
            QImage canvas(film.size, QImage::Format_RGB32);
            for (int f = 0; f < film.frames; ++f) {
                if (cancelled->load()) {
                    report([](VideoExport *x) { Q_EMIT x->finished(false, tr("Cancelled.")); });
                    return;  // the encoder removes its partial file
                }
                drawFrame(clips, film, f, canvas);
                encoder.add(canvas);
                report([f, frames = film.frames](VideoExport *x) { Q_EMIT x->progress(f + 1, frames); });
            }
            encoder.finish();
            report([path](VideoExport *x) { Q_EMIT x->finished(true, path); });
        } catch (const media::MediaError &e) {
            report([message = e.message()](VideoExport *x) { Q_EMIT x->finished(false, message); });
        }
    });
}

void VideoExport::cancel()
{
    if (m_cancel)
        m_cancel->store(true);
}

void showContactSheet(QWidget *parent, SampleFetcher *fetcher, const QList<RunSamples> &runs,
                      core::RunId current, qint64 step)
{
    const RunSamples *run = nullptr;
    for (const RunSamples &r : runs)
        if (!run || r.run == current)
            run = &r;
    const core::Artifact *sheet = run ? core::nearestSample(run->images, step) : nullptr;
    if (!sheet) {
        QMessageBox::information(parent, VideoExport::tr("Contact sheet"),
                                 VideoExport::tr("This run has no contact sheet."));
        return;
    }
    const auto local = fetcher->cache().local(run->cluster, *sheet);
    if (!local) {
        if (run->cluster.isEmpty()) {
            QMessageBox::warning(parent, VideoExport::tr("Contact sheet"),
                                 VideoExport::tr("The file is missing:\n%1").arg(sheet->remotePath));
        } else {
            fetcher->fetch(run->run, run->cluster, *sheet);
            QMessageBox::information(
                parent, VideoExport::tr("Contact sheet"),
                VideoExport::tr("Fetching it from %1; open it again in a moment.").arg(run->cluster));
        }
        return;
    }
    const QImage image(*local);
    if (image.isNull()) {
        QMessageBox::warning(parent, VideoExport::tr("Contact sheet"),
                             VideoExport::tr("%1 is not a readable image.").arg(*local));
        return;
    }
    openSheetDialog(parent,
                    VideoExport::tr("%1 — contact sheet, step %2 (rows: clips, columns: frames)")
                        .arg(run->name)
                        .arg(sheet->step),
                    image);
}

}  // namespace orrery::gui
