// SPDX-License-Identifier: GPL-3.0-or-later
//
// The tiles of the Video tab: up to 16 runs' sample clips, each framed in its run's colour, all at
// the one frame index the view's PlaybackClock gives (setFrameIndex). A tile keeps its clips'
// aspect ratio (the grid picks the column count that shows the pictures largest and sizes each
// tile to its picture), with one caption line under it — the run's name and the leading sweep's
// swept values, elided, the whole text in the tile's tooltip — and badges over the picture: the
// sweep metric's latest value and, with a reference run pinned, PSNR/SSIM against it (the clip's
// mean and the current frame's). A/B modes show two chosen tiles (setABRuns; the first two by
// default) in one frame: a wipe (A left of the divider, B right) or |A − B|. Frames are scaled
// nearest-neighbour at whole multiples where they fit, so a 32x32 sample stays crisp at 256 px.
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
    QString caption;  // the swept (else differing) params' values, "optim.lr=3e-4 · seed=1"
    QString metric;  // the sweep metric's latest value, "loss 0.412" (empty: none)
    bool baseline = false, reference = false;  // the starred baseline; the pinned reference
    QList<double> psnr, ssim;  // per frame against the reference (empty: none yet)
    double meanPsnr = 0, meanSsim = 0;
    qint64 step = -1;  // the sample's step (-1: none)
    bool otherStep = false;  // not the step the slider chose (the run's nearest): labelled
    bool stepInCaption = false;  // the caption names the step anyway (the strip's tiles)
    QString status;  // shown instead of a picture: "no samples yet", "fetching…", an error
    QString note;  // said after the caption: "samples cannot play: showing gen" (empty: none)
    std::shared_ptr<media::FrameSource> source;
};

// What one tile shows at one instant (the widget's paint and the MP4 export share the drawing).
struct TileFrame {
    const VideoTile *tile = nullptr;
    QImage image;  // null: the tile's status (or the source's error) is shown
    QString overlay;  // a note over the picture ("frame 3 is damaged")
    int frame = -1;  // the clip's frame index shown (its per-frame PSNR/SSIM)
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
    // The runs A/B modes compare (tiles of other runs, or 0: the first two tiles).
    void setABRuns(core::RunId a, core::RunId b);
    // The tiles drawn now: all of them in Grid mode, A and B in the A/B modes.
    QList<int> shownTiles() const;
    // Where each tile is drawn in the widget (Grid mode), and its caption line's full text.
    QList<QRect> tileRects() const;
    static QString captionText(const VideoTile &tile);

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
    void tileMenuRequested(core::RunId run, const QPoint &globalPos);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;
    bool event(QEvent *event) override;  // tooltips: a tile's whole caption

private:
    static QList<QRect> layout(const QRect &area, int count, QSize frame, int caption);
    int tileAt(const QPoint &pos) const;
    int visibleTiles() const;
    QList<TileFrame> shownFrames(int index) const;
    QList<int> abTiles() const;  // the tiles of A and B (whatever the mode)

    QList<VideoTile> m_tiles;
    QList<QImage> m_last;  // per tile: the frame painted last (shown while the next is late)
    QList<int> m_lastIndex;
    Mode m_mode = Mode::Grid;
    double m_wipe = 0.5;
    core::RunId m_current = 0;
    core::RunId m_a = 0, m_b = 0;
    int m_index = 0;
    bool m_playing = false;
    bool m_indexPainted = true;  // the current index reached the screen
    qint64 m_dropped = 0, m_painted = 0;
};

}  // namespace orrery::gui
