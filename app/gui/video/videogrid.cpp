// SPDX-License-Identifier: GPL-3.0-or-later
#include "videogrid.h"

#include "imageops.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace orrery::gui {

namespace {

constexpr int kBorder = 3;
constexpr int kGap = 6;
const QColor kTileBackground(0x1e, 0x1e, 0x1e);

// One line: a second one made 8 tiles tall and was cut off (issue 31); the rest is in the tooltip.
int captionHeight(const QFontMetrics &fm)
{
    return fm.height() + 6;
}

QString qualityFigure(double value, bool psnr)
{
    if (std::isinf(value))
        return QStringLiteral("∞");
    if (std::isnan(value))
        return QStringLiteral("—");
    return psnr ? QString::number(value, 'f', 1) : QString::number(value, 'f', 3);
}

// The frame of `source` the clock's `index` means: a shorter clip holds its last frame.
int clampedIndex(const media::FrameSource &source, int index)
{
    const int n = source.info().frameCount;
    return n > 0 ? std::min(index, n - 1) : 0;
}

void drawCaption(QPainter &p, const QRect &r, const QString &text, bool otherStep)
{
    const QFontMetrics fm = p.fontMetrics();
    p.setPen(otherStep ? QColor(0xff, 0xc1, 0x07) : QColor(Qt::white));
    p.drawText(r.adjusted(4, 3, -4, 0), Qt::AlignLeft | Qt::AlignTop,
               fm.elidedText(text, Qt::ElideRight, r.width() - 8));
}

// A line of text on a dark band at the top or bottom of a picture.
void drawBadge(QPainter &p, const QRect &picture, const QString &text, bool top)
{
    if (text.isEmpty())
        return;
    const QFontMetrics fm = p.fontMetrics();
    const QString shown = fm.elidedText(text, Qt::ElideRight, picture.width() - 8);
    const QRect band(picture.left(), top ? picture.top() : picture.bottom() - fm.height() - 3,
                     std::min(picture.width(), fm.horizontalAdvance(shown) + 8), fm.height() + 4);
    p.fillRect(band, QColor(0, 0, 0, 170));
    p.setPen(Qt::white);
    p.drawText(band.adjusted(4, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, shown);
}

QString topBadge(const VideoTile &t)
{
    QStringList parts;
    if (t.baseline)
        parts << QStringLiteral("★ baseline");
    if (t.reference)
        parts << QStringLiteral("reference");
    if (!t.metric.isEmpty())
        parts << t.metric;
    return parts.join(QStringLiteral(" · "));
}

// PSNR/SSIM against the reference: the clip's mean, and this frame's while it has one.
QString qualityBadge(const VideoTile &t, int frame)
{
    if (t.reference || t.psnr.isEmpty())
        return {};
    QString s = QStringLiteral("PSNR %1 dB · SSIM %2")
                    .arg(qualityFigure(t.meanPsnr, true), qualityFigure(t.meanSsim, false));
    if (frame >= 0) {
        const qsizetype i = std::min<qsizetype>(frame, t.psnr.size() - 1);
        s += QStringLiteral("  (frame: %1 · %2)")
                 .arg(qualityFigure(t.psnr[i], true), qualityFigure(t.ssim.value(i), false));
    }
    return s;
}

void drawStatus(QPainter &p, const QRect &r, const QString &text)
{
    p.setPen(QColor(0xb0, 0xb0, 0xb0));
    p.drawText(r.adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap, text);
}

}  // namespace

VideoGrid::VideoGrid(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("videoGrid"));
    setMinimumSize(320, 240);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMouseTracking(false);
}

void VideoGrid::setTiles(QList<VideoTile> tiles)
{
    if (tiles.size() > kMaxTiles)
        tiles.resize(kMaxTiles);
    // A tile keeps its last frame when its run stays (a step change swaps the clip under it).
    QList<QImage> last(tiles.size());
    QList<int> lastIndex(tiles.size(), -1);
    for (int i = 0; i < tiles.size(); ++i)
        for (int j = 0; j < m_tiles.size(); ++j)
            if (m_tiles[j].run == tiles[i].run && m_tiles[j].source == tiles[i].source) {
                last[i] = m_last.value(j);
                lastIndex[i] = m_lastIndex.value(j, -1);
            }
    m_tiles = std::move(tiles);
    m_last = std::move(last);
    m_lastIndex = std::move(lastIndex);
    for (const VideoTile &t : m_tiles)
        if (t.source && t.source->state() == media::FrameSource::State::Ready)
            t.source->setPlayhead(clampedIndex(*t.source, m_index));
    update();
}

void VideoGrid::setMode(Mode mode)
{
    m_mode = mode;
    update();
}

void VideoGrid::setWipe(double fraction)
{
    m_wipe = std::clamp(fraction, 0.0, 1.0);
    update();
}

void VideoGrid::setCurrentRun(core::RunId run)
{
    m_current = run;
    update();
}

void VideoGrid::setABRuns(core::RunId a, core::RunId b)
{
    m_a = a;
    m_b = b;
    update();
}

QList<int> VideoGrid::shownTiles() const
{
    if (m_mode != Mode::Grid)
        return abTiles();
    QList<int> out;
    for (int i = 0; i < m_tiles.size(); ++i)
        out << i;
    return out;
}

QList<int> VideoGrid::abTiles() const
{
    if (m_tiles.size() < 2)
        return m_tiles.isEmpty() ? QList<int>{} : QList<int>{0};
    auto indexOf = [this](core::RunId run, int fallback) {
        for (int i = 0; i < m_tiles.size(); ++i)
            if (run != 0 && m_tiles[i].run == run)
                return i;
        return fallback;
    };
    const int a = indexOf(m_a, 0);
    int b = indexOf(m_b, a == 1 ? 0 : 1);
    if (b == a)  // A and B the same run: A against the next one
        b = (a + 1) % int(m_tiles.size());
    return {a, b};
}

QList<TileFrame> VideoGrid::shownFrames(int index) const
{
    const QList<TileFrame> all = framesAt(index);
    QList<TileFrame> out;
    for (int i : shownTiles())
        out << all[i];
    return out;
}

int VideoGrid::visibleTiles() const
{
    return int(shownTiles().size());
}

void VideoGrid::setFrameIndex(int index, bool playing)
{
    // The previous index never reached the screen: every tile dropped it.
    if (playing && m_playing && !m_indexPainted && index != m_index)
        m_dropped += visibleTiles();
    m_index = index;
    m_playing = playing;
    m_indexPainted = false;
    for (const VideoTile &t : m_tiles)
        if (t.source && t.source->state() == media::FrameSource::State::Ready)
            t.source->setPlayhead(clampedIndex(*t.source, index));
    update();
}

void VideoGrid::addSkipped(qint64 framesPerTile)
{
    m_dropped += framesPerTile * visibleTiles();
}

void VideoGrid::resetCounters()
{
    m_dropped = 0;
    m_painted = 0;
}

QList<int> VideoGrid::shownIndexes() const
{
    return m_lastIndex;
}

QList<TileFrame> VideoGrid::framesAt(int index) const
{
    QList<TileFrame> out;
    for (const VideoTile &t : m_tiles) {
        TileFrame f{&t, {}, {}};
        if (t.source && t.source->state() == media::FrameSource::State::Ready) {
            const int i = clampedIndex(*t.source, index);
            f.frame = i;
            f.image = t.source->frame(i);
            if (f.image.isNull() && t.source->isDamaged(i))
                f.overlay = tr("frame %1 cannot be decoded: %2").arg(i + 1).arg(t.source->error());
        } else if (t.source && t.source->state() == media::FrameSource::State::Failed) {
            f.overlay = tr("cannot play this sample:\n%1").arg(t.source->error());
        }
        out.append(f);
    }
    return out;
}

QList<QRect> VideoGrid::layout(const QRect &area, int count, QSize frame, int caption)
{
    QList<QRect> out;
    if (count <= 0)
        return out;
    if (frame.isEmpty())
        frame = QSize(4, 1);  // the trainer's samples: 4 clips side by side
    // The column count that shows the pictures largest (tiles take the clips' shape).
    int bestCols = 1;
    double bestScale = -1;
    for (int cols = 1; cols <= count; ++cols) {
        const int rows = (count + cols - 1) / cols;
        const double w = double(area.width() - (cols - 1) * kGap) / cols - 2 * kBorder;
        const double h = double(area.height() - (rows - 1) * kGap) / rows - 2 * kBorder - caption;
        const double scale = std::min(w / frame.width(), h / frame.height());
        if (scale > bestScale) {
            bestScale = scale;
            bestCols = cols;
        }
    }
    // Each tile takes its picture's shape (plus border and caption), and the grid is centred: a
    // tile stretched to its cell made 8 tall tiles of small pictures (issue 31).
    const int rows = (count + bestCols - 1) / bestCols;
    const int cellW = (area.width() - (bestCols - 1) * kGap) / bestCols;
    const int cellH = (area.height() - (rows - 1) * kGap) / rows;
    const double scale = std::max(0.0, bestScale);
    const int w = std::min(cellW, int(std::floor(scale * frame.width())) + 2 * kBorder);
    const int h = std::min(cellH, int(std::floor(scale * frame.height())) + 2 * kBorder + caption);
    const int x0 = area.x() + (area.width() - (bestCols * w + (bestCols - 1) * kGap)) / 2;
    const int y0 = area.y() + (area.height() - (rows * h + (rows - 1) * kGap)) / 2;
    for (int i = 0; i < count; ++i)
        out.append(QRect(x0 + (i % bestCols) * (w + kGap), y0 + (i / bestCols) * (h + kGap), w, h));
    return out;
}

QImage VideoGrid::composeAB(const QImage &a, const QImage &b, Mode mode, double wipe)
{
    if (mode == Mode::Difference)
        return a.isNull() || b.isNull() ? QImage() : media::absoluteDifference(a, b);
    if (a.isNull() || b.isNull())
        return a.isNull() ? b : a;
    // A left of the divider, B (at A's size) right of it, at the samples' own resolution.
    QImage out = a.convertToFormat(QImage::Format_RGB32);
    const QImage right =
        b.size() == a.size() ? b : b.scaled(a.size(), Qt::IgnoreAspectRatio, Qt::FastTransformation);
    const int split = int(std::lround(std::clamp(wipe, 0.0, 1.0) * out.width()));
    QPainter p(&out);
    p.drawImage(QRect(split, 0, out.width() - split, out.height()), right,
                QRect(split, 0, out.width() - split, out.height()));
    return out;
}

QImage VideoGrid::currentABPicture() const
{
    const QList<TileFrame> all = framesAt(m_index);
    QList<TileFrame> frames;
    for (int i : abTiles())
        frames << all[i];
    if (frames.size() < 2)
        return {};
    return composeAB(frames[0].image, frames[1].image, m_mode == Mode::Grid ? Mode::Difference : m_mode,
                     m_wipe);
}

namespace {

// A and B in one picture over their two captions: A left of the divider and B right of it, or
// |A − B|.
void paintAB(QPainter &p, const QRect &area, const TileFrame &a, const TileFrame &b, VideoGrid::Mode mode,
             double wipe, int caption)
{
    const QRect picture = area.adjusted(kBorder, kBorder, -kBorder, -kBorder - caption);
    p.fillRect(picture, kTileBackground);
    const QImage picture2 = VideoGrid::composeAB(a.image, b.image, mode, wipe);
    if (picture2.isNull()) {
        drawStatus(p, picture,
                   mode == VideoGrid::Mode::Difference
                       ? VideoGrid::tr("both A and B need a frame for their difference")
                       : (a.tile->status.isEmpty() ? b.tile->status : a.tile->status));
    } else {
        const QRect target = media::fitRect(picture2.size(), picture);
        p.drawImage(target, picture2);
        if (mode == VideoGrid::Mode::Wipe) {
            const int split = target.x() + int(std::lround(wipe * target.width()));
            p.setPen(QPen(Qt::white, 2));
            p.drawLine(split, picture.top(), split, picture.bottom());
        }
    }
    const QRect captions(area.left(), area.bottom() - caption, area.width(), caption + 1);
    const int half = captions.width() / 2;
    const QString la =
        (mode == VideoGrid::Mode::Difference ? QStringLiteral("|A − B|  A: ") : QStringLiteral("A: ")) +
        VideoGrid::captionText(*a.tile);
    const QString lb = QStringLiteral("B: ") + VideoGrid::captionText(*b.tile);
    p.fillRect(captions.adjusted(0, 0, -half, 0), a.tile->color.darker(250));
    p.fillRect(captions.adjusted(half, 0, 0, 0), b.tile->color.darker(250));
    drawCaption(p, captions.adjusted(0, 0, -half, 0), la, a.tile->otherStep);
    drawCaption(p, captions.adjusted(half, 0, 0, 0), lb, b.tile->otherStep);
}

// One tile in `r`, framed in its run's colour (wider for the current run): its frame or status,
// its badges and its caption line.
void paintTile(QPainter &p, const QRect &r, const TileFrame &f, bool current, int caption)
{
    const int border = current ? kBorder + 2 : kBorder;
    p.fillRect(r, f.tile->color);
    const QRect inner = r.adjusted(border, border, -border, -border);
    p.fillRect(inner, kTileBackground);
    const QRect picture = inner.adjusted(0, 0, 0, -caption);
    if (!f.image.isNull())
        p.drawImage(media::fitRect(f.image.size(), picture), f.image);
    else
        drawStatus(p, picture, f.tile->status);
    if (!f.overlay.isEmpty())
        drawStatus(p, picture, f.overlay);
    drawBadge(p, picture, topBadge(*f.tile), true);
    drawBadge(p, picture, qualityBadge(*f.tile, f.image.isNull() ? -1 : f.frame), false);
    drawCaption(p, QRect(inner.left(), inner.bottom() - caption + 1, inner.width(), caption),
                VideoGrid::captionText(*f.tile), f.tile->otherStep);
}

}  // namespace

void VideoGrid::paintFrames(QPainter &p, const QRect &area, const QList<TileFrame> &frames, Mode mode,
                            double wipe, core::RunId current)
{
    p.fillRect(area, QColor(0x12, 0x12, 0x12));
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);  // nearest-neighbour, always
    if (frames.isEmpty()) {
        drawStatus(p, area, tr("Select runs (in the table or the tree) to see their samples side by side."));
        return;
    }
    const QFontMetrics fm = p.fontMetrics();
    const int caption = captionHeight(fm);

    if (mode != Mode::Grid && frames.size() >= 2) {
        paintAB(p, area, frames[0], frames[1], mode, wipe, caption);
        return;
    }

    QSize frameSize;
    for (const TileFrame &f : frames)
        if (!f.image.isNull() && frameSize.isEmpty())
            frameSize = f.image.size();
    const QList<QRect> rects = layout(area, int(frames.size()), frameSize, caption);
    for (int i = 0; i < frames.size(); ++i)
        paintTile(p, rects[i], frames[i], frames[i].tile->run == current, caption);
}

QString VideoGrid::captionText(const VideoTile &tile)
{
    QString text = tile.title;
    // The chosen step is the slider's: a caption names a step only where it is another one.
    if (tile.step >= 0 && (tile.otherStep || tile.stepInCaption))
        text += tile.otherStep ? QStringLiteral(" · step %1 (nearest)").arg(tile.step)
                               : QStringLiteral(" · step %1").arg(tile.step);
    if (!tile.caption.isEmpty())
        text += QStringLiteral(" · ") + tile.caption;
    if (!tile.note.isEmpty())
        text += QStringLiteral(" · ") + tile.note;
    return text;
}

QList<QRect> VideoGrid::tileRects() const
{
    QSize frameSize;
    for (const QImage &image : m_last)
        if (!image.isNull() && frameSize.isEmpty())
            frameSize = image.size();
    for (const VideoTile &t : m_tiles)
        if (frameSize.isEmpty() && t.source && t.source->state() == media::FrameSource::State::Ready)
            frameSize = QSize(t.source->info().width, t.source->info().height);
    return layout(rect(), int(m_tiles.size()), frameSize, captionHeight(fontMetrics()));
}

void VideoGrid::paintEvent(QPaintEvent *)
{
    const QList<int> shown = shownTiles();
    QList<TileFrame> frames = shownFrames(m_index);
    const bool newIndex = !m_indexPainted;
    for (int k = 0; k < frames.size(); ++k) {
        const int i = shown[k];
        const VideoTile &t = m_tiles[i];
        if (!frames[k].image.isNull()) {
            m_last[i] = frames[k].image;
            m_lastIndex[i] = t.source ? clampedIndex(*t.source, m_index) : -1;
        } else if (t.source && t.source->state() == media::FrameSource::State::Ready) {
            // Late: show the previous frame; while playing, that is a dropped frame.
            if (newIndex && m_playing && !t.source->isDamaged(clampedIndex(*t.source, m_index)))
                ++m_dropped;
            frames[k].image = m_last[i];
        }
    }
    if (newIndex)
        ++m_painted;
    m_indexPainted = true;
    QPainter p(this);
    paintFrames(p, rect(), frames, m_mode, m_wipe, m_current);
}

QImage VideoGrid::render(QSize size)
{
    QImage image(size, QImage::Format_RGB32);
    QPainter p(&image);
    p.setFont(font());
    paintFrames(p, QRect(QPoint(0, 0), size), shownFrames(m_index), m_mode, m_wipe, 0);
    return image;
}

int VideoGrid::tileAt(const QPoint &pos) const
{
    if (m_mode != Mode::Grid)
        return -1;
    const QList<QRect> rects = tileRects();
    for (int i = 0; i < rects.size(); ++i)
        if (rects[i].contains(pos))
            return i;
    return -1;
}

void VideoGrid::mousePressEvent(QMouseEvent *event)
{
    if (m_mode == Mode::Wipe && event->button() == Qt::LeftButton) {
        setWipe(double(event->position().x()) / std::max(1, width()));
        Q_EMIT wipeMoved(m_wipe);
        return;
    }
    if (const int i = tileAt(event->position().toPoint()); i >= 0)
        Q_EMIT tileClicked(m_tiles[i].run);
}

void VideoGrid::mouseMoveEvent(QMouseEvent *event)
{
    if (m_mode == Mode::Wipe && (event->buttons() & Qt::LeftButton)) {
        setWipe(double(event->position().x()) / std::max(1, width()));
        Q_EMIT wipeMoved(m_wipe);
    }
}

void VideoGrid::contextMenuEvent(QContextMenuEvent *event)
{
    int i = tileAt(event->pos());
    if (i < 0 && m_mode != Mode::Grid && !m_tiles.isEmpty())  // A/B: the half under the pointer
        i = abTiles().value(event->pos().x() < width() / 2 ? 0 : 1, 0);
    if (i >= 0)
        Q_EMIT tileMenuRequested(m_tiles[i].run, event->globalPos());
}

bool VideoGrid::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const int i = tileAt(help->pos());
        if (i < 0) {
            QToolTip::hideText();
            event->ignore();
            return true;
        }
        const VideoTile &t = m_tiles[i];
        QStringList lines{captionText(t)};
        if (!topBadge(t).isEmpty())
            lines << topBadge(t);
        if (!qualityBadge(t, -1).isEmpty())
            lines << qualityBadge(t, -1);
        QToolTip::showText(help->globalPos(), lines.join(QLatin1Char('\n')), this);
        return true;
    }
    return QWidget::event(event);
}

void VideoGrid::mouseDoubleClickEvent(QMouseEvent *event)
{
    if (const int i = tileAt(event->position().toPoint()); i >= 0)
        Q_EMIT tileDoubleClicked(m_tiles[i].run);
}

}  // namespace orrery::gui
