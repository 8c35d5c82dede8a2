// SPDX-License-Identifier: GPL-3.0-or-later
//
// Pixel operations of the video view that need no FFmpeg: the A/B difference image and the
// nearest-neighbour fit of a small sample into a tile.
#pragma once

#include <QImage>
#include <QRect>

namespace orrery::media {

// |a - b| per channel (RGB32). `b` is scaled to `a`'s size (nearest) when they differ. A clip
// against itself is black.
QImage absoluteDifference(const QImage &a, const QImage &b);

// Where an image of `image` size goes inside `area`: as large as fits, at a whole multiple of its
// size when it is smaller (a 32x32 sample becomes 256x256 of crisp 8x8 blocks), centred.
QRect fitRect(QSize image, const QRect &area);

}  // namespace orrery::media
