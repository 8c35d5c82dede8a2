// SPDX-License-Identifier: GPL-3.0-or-later
//
// Pixel operations of the video view that need no FFmpeg: the A/B difference image, the
// nearest-neighbour fit of a small sample into a tile, and the full-reference quality of a frame
// against a reference frame (PSNR and SSIM, the Video tab's "how close is this run to the
// reference run").
//
// Which PSNR and SSIM: both on luma, Y = 0.299 R + 0.587 G + 0.114 B (BT.601, as floats, no
// rounding), peak 255. SSIM is Wang et al. 2004: a Gaussian 11x11 window of sigma 1.5, K1 0.01,
// K2 0.03, the mean of the SSIM map over the positions where the whole window fits (what
// scikit-image's structural_similarity(gaussian_weights=True, sigma=1.5,
// use_sample_covariance=False, data_range=255) averages: it crops the same 5-pixel border).
// Pure functions; safe on any thread.
#pragma once

#include <QImage>
#include <QRect>

#include <vector>

namespace orrery::media {

// |a - b| per channel (RGB32). `b` is scaled to `a`'s size (nearest) when they differ. A clip
// against itself is black.
QImage absoluteDifference(const QImage &a, const QImage &b);

// Where an image of `image` size goes inside `area`: as large as fits, at a whole multiple of its
// size when it is smaller (a 32x32 sample becomes 256x256 of crisp 8x8 blocks), centred.
QRect fitRect(QSize image, const QRect &area);

struct FrameQuality {
    double psnr = 0;  // dB; +inf when the frames are identical
    double ssim = 0;  // 1 when identical
};

// A frame's luma plane (see above), row-major.
struct LumaPlane {
    int width = 0, height = 0;
    std::vector<float> y;
};
LumaPlane lumaOf(const QImage &image);

// A reference frame with its SSIM statistics (local mean and mean square) computed once, so that
// comparing many tiles with one reference frame filters the reference once.
class QualityReference {
public:
    QualityReference() = default;
    explicit QualityReference(const QImage &reference);
    bool isNull() const { return m_ref.y.empty(); }
    QSize size() const { return {m_ref.width, m_ref.height}; }
    // `frame` against the reference; a frame of another size is resized to the reference's
    // (bilinear) first. Null frames give {0, 0}.
    FrameQuality compare(const QImage &frame) const;
    FrameQuality compare(const LumaPlane &frame) const;  // of the reference's size

private:
    LumaPlane m_ref;
    std::vector<float> m_mu, m_sq;  // Gaussian-filtered y and y² over the valid positions
};

// One-off comparisons (the same computation as QualityReference).
double psnr(const QImage &a, const QImage &b);
double ssim(const QImage &a, const QImage &b);

}  // namespace orrery::media
