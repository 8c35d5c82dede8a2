// SPDX-License-Identifier: GPL-3.0-or-later
//
// The tiles of the Video tab: up to 16 runs' sample clips, each framed in its run's colour and
// captioned with its name and the params that differ, all at the one frame index the view's
// PlaybackClock gives (setFrameIndex). A/B modes show the first two tiles in one frame: a wipe
// (A left of the divider, B right) or |A − B|. Frames are scaled nearest-neighbour at whole
// multiples where they fit, so a 32x32 sample stays crisp at 256 px.
//
// Dropped frames are counted where they happen, in painting: a tile whose frame for the clock's
// index was not decoded in time shows its previous frame and counts one; an index the clock
// moved past before it was painted counts one per tile. UI thread only; the frames come from
// each tile's FrameSource (decoded on its own thread).
#pragma once

#include "framesource.h"

#include "orrery/core/store.h"

#include <QColor>
#include <QImage>
#include <QList>
#include <QString>
#include <QWidget>

#include <memory>

namespace orrery::gui {

struct VideoTile {
    core::RunId run = 0;
    QColor color;
    QString title;  // the run's name
    QString caption;  // the params that differ, "optim.lr=3e-4 · seed=1"
    qint64 step = -1;  // the sample's step (-1: none)
    bool otherStep = false;  // not the step the slider chose (the run's nearest): labelled
    QString status;  // shown instead of a picture: "no samples yet", "fetching…", an error
    std::shared_ptr<media::FrameSource> source;
};

// What one tile shows at one instant (the widget's paint and the MP4 export share the drawing).
struct TileFrame {
    const VideoTile *tile = nullptr;
    QImage image;  // null: the tile's status (or the source's error) is shown
    QString overlay;  // a note over the picture ("frame 3 is damaged")
};

class VideoGrid : public QWidget {
    Q_OBJECT
public:
    enum class Mode { Grid, Wipe, Difference };
    static constexpr int kMaxTiles = 16;

    explicit VideoGrid(QWidget *parent = nullptr);

    void setTiles(QList<VideoTile> tiles);
    const QList<VideoTile> &tiles() const { return m_tiles; }
    void setMode(Mode mode);
    Mode mode() const { return m_mode; }
    void setWipe(double fraction);  // 0..1: where the A/B divider is
    void setCurrentRun(core::RunId run);

    // The clock's index: every tile shows this frame (a shorter clip, its last).
    void setFrameIndex(int index, bool playing);
    int frameIndex() const { return m_index; }
    // The frame each tile showed when last painted (tests: all equal the clock's index).
    QList<int> shownIndexes() const;
    void addSkipped(qint64 framesPerTile);  // the clock's skipped frames
    qint64 dropped() const { return m_dropped; }
    qint64 paintedFrames() const { return m_painted; }
    void resetCounters();

    // The grid as it is now, drawn into an image of `size` (export as PNG).
    QImage render(QSize size);
    // The frame `index` of each tile from its source, or its status (what a paint would show).
    QList<TileFrame> framesAt(int index) const;
    // The A/B picture at the samples' resolution: A left of `wipe` and B right of it, or |A − B|.
    static QImage composeAB(const QImage &a, const QImage &b, Mode mode, double wipe);
    // That picture for the first two tiles at the clock's index (Grid mode: their difference).
    QImage currentABPicture() const;
    // Draws `frames` into `area`: the one drawing code of the widget and the MP4 export.
    static void paintFrames(QPainter &painter, const QRect &area, const QList<TileFrame> &frames, Mode mode,
                            double wipe, core::RunId current = 0);

Q_SIGNALS:
    void tileClicked(core::RunId run);
    void tileDoubleClicked(core::RunId run);
    void wipeMoved(double fraction);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;

private:
    static QList<QRect> layout(const QRect &area, int count, QSize frame, int caption);
    int tileAt(const QPoint &pos) const;
    int visibleTiles() const;

    QList<VideoTile> m_tiles;
    QList<QImage> m_last;  // per tile: the frame painted last (shown while the next is late)
    QList<int> m_lastIndex;
    Mode m_mode = Mode::Grid;
    double m_wipe = 0.5;
    core::RunId m_current = 0;
    int m_index = 0;
    bool m_playing = false;
    bool m_indexPainted = true;  // the current index reached the screen
    qint64 m_dropped = 0, m_painted = 0;
};

}  // namespace orrery::gui
