// SPDX-License-Identifier: GPL-3.0-or-later
#include "imageops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace orrery::media {

QImage absoluteDifference(const QImage &aIn, const QImage &bIn)
{
    if (aIn.isNull() || bIn.isNull())
        return {};
    const QImage a = aIn.convertToFormat(QImage::Format_RGB32);
    QImage b = bIn.convertToFormat(QImage::Format_RGB32);
    if (b.size() != a.size())
        b = b.scaled(a.size(), Qt::IgnoreAspectRatio, Qt::FastTransformation);
    QImage out(a.size(), QImage::Format_RGB32);
    for (int y = 0; y < a.height(); ++y) {
        const auto *pa = reinterpret_cast<const QRgb *>(a.constScanLine(y));
        const auto *pb = reinterpret_cast<const QRgb *>(b.constScanLine(y));
        auto *po = reinterpret_cast<QRgb *>(out.scanLine(y));
        for (int x = 0; x < a.width(); ++x)
            po[x] = qRgb(std::abs(qRed(pa[x]) - qRed(pb[x])), std::abs(qGreen(pa[x]) - qGreen(pb[x])),
                         std::abs(qBlue(pa[x]) - qBlue(pb[x])));
    }
    return out;
}

QRect fitRect(QSize image, const QRect &area)
{
    if (image.isEmpty() || area.isEmpty())
        return {};
    QSize size;
    const int whole = std::min(area.width() / image.width(), area.height() / image.height());
    if (whole >= 1)
        size = image * whole;
    else
        size = image.scaled(area.size(), Qt::KeepAspectRatio);
    return QRect(area.x() + (area.width() - size.width()) / 2, area.y() + (area.height() - size.height()) / 2,
                 size.width(), size.height());
}

namespace {

// Wang et al.'s window: a Gaussian of sigma 1.5 cut at radius 5 (11 taps), as scipy's
// gaussian_filter(sigma=1.5, truncate=3.5) that scikit-image uses; weights sum to 1.
constexpr int kRadius = 5;
constexpr int kTaps = 2 * kRadius + 1;
constexpr double kPeak = 255;
constexpr double kC1 = (0.01 * kPeak) * (0.01 * kPeak);
constexpr double kC2 = (0.03 * kPeak) * (0.03 * kPeak);

const std::array<float, kTaps> &gaussian()
{
    static const std::array<float, kTaps> weights = [] {
        std::array<double, kTaps> w{};
        double sum = 0;
        for (int i = 0; i < kTaps; ++i)
            sum += w[size_t(i)] = std::exp(-0.5 * double((i - kRadius) * (i - kRadius)) / (1.5 * 1.5));
        std::array<float, kTaps> out{};
        for (int i = 0; i < kTaps; ++i)
            out[size_t(i)] = float(w[size_t(i)] / sum);
        return out;
    }();
    return weights;
}

// `src` (w x h) filtered by the window at the positions where it fits whole: (w-10) x (h-10).
// Separable, rows then columns. Each pass sums the 11 taps of 8 neighbouring outputs in a fixed
// block of 8 accumulators: GCC 12's -O2 vectorises such blocks (SLP) but not a loop of unknown
// length (measured: 4x slower as plain loops); the sums keep the taps' order, so the result does
// not depend on the vector width.
constexpr int kBlock = 8;

inline void filterSpan(const float *const *taps, int n, float *out)
{
    const auto &k = gaussian();
    int x = 0;
    for (; x + kBlock <= n; x += kBlock) {
        float acc[kBlock] = {};
        for (int t = 0; t < kTaps; ++t) {
            const float kt = k[size_t(t)];
            const float *p = taps[t] + x;
            for (int j = 0; j < kBlock; ++j)
                acc[j] += kt * p[j];
        }
        for (int j = 0; j < kBlock; ++j)
            out[x + j] = acc[j];
    }
    for (; x < n; ++x) {
        float acc = 0;
        for (int t = 0; t < kTaps; ++t)
            acc += k[size_t(t)] * taps[t][x];
        out[x] = acc;
    }
}

void filterValid(const float *src, int w, int h, std::vector<float> &rows, float *out)
{
    const int ow = w - 2 * kRadius, oh = h - 2 * kRadius;
    rows.resize(size_t(ow) * size_t(h));
    const float *taps[kTaps];
    for (int y = 0; y < h; ++y) {  // along the row: tap t of output x is src[x + t]
        for (int t = 0; t < kTaps; ++t)
            taps[t] = src + size_t(y) * size_t(w) + size_t(t);
        filterSpan(taps, ow, rows.data() + size_t(y) * size_t(ow));
    }
    for (int y = 0; y < oh; ++y) {  // down the column: tap t of output row y is row y + t
        for (int t = 0; t < kTaps; ++t)
            taps[t] = rows.data() + size_t(y + t) * size_t(ow);
        filterSpan(taps, ow, out + size_t(y) * size_t(ow));
    }
}

QImage resizedTo(const QImage &image, QSize size)
{
    return image.size() == size ? image : image.scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
}

}  // namespace

LumaPlane lumaOf(const QImage &image)
{
    LumaPlane out;
    if (image.isNull())
        return out;
    const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
    out.width = rgb.width();
    out.height = rgb.height();
    out.y.resize(size_t(out.width) * size_t(out.height));
    for (int y = 0; y < out.height; ++y) {
        const auto *p = reinterpret_cast<const QRgb *>(rgb.constScanLine(y));
        float *o = out.y.data() + size_t(y) * size_t(out.width);
        for (int x = 0; x < out.width; ++x)
            o[x] = 0.299f * float(qRed(p[x])) + 0.587f * float(qGreen(p[x])) + 0.114f * float(qBlue(p[x]));
    }
    return out;
}

QualityReference::QualityReference(const QImage &reference) : m_ref(lumaOf(reference))
{
    if (m_ref.width <= 2 * kRadius || m_ref.height <= 2 * kRadius)
        return;  // too small for the window: PSNR only
    const size_t valid = size_t(m_ref.width - 2 * kRadius) * size_t(m_ref.height - 2 * kRadius);
    std::vector<float> rows, sq(m_ref.y.size());
    for (size_t i = 0; i < sq.size(); ++i)
        sq[i] = m_ref.y[i] * m_ref.y[i];
    m_mu.resize(valid);
    m_sq.resize(valid);
    filterValid(m_ref.y.data(), m_ref.width, m_ref.height, rows, m_mu.data());
    filterValid(sq.data(), m_ref.width, m_ref.height, rows, m_sq.data());
}

FrameQuality QualityReference::compare(const QImage &frame) const
{
    if (isNull() || frame.isNull())
        return {};
    return compare(lumaOf(resizedTo(frame, size())));
}

FrameQuality QualityReference::compare(const LumaPlane &f) const
{
    if (isNull() || f.width != m_ref.width || f.height != m_ref.height)
        return {};
    FrameQuality q;
    double se = 0;
    for (size_t i = 0; i < f.y.size(); ++i) {
        const double d = double(f.y[i]) - double(m_ref.y[i]);
        se += d * d;
    }
    const double mse = se / double(f.y.size());
    q.psnr = mse == 0 ? std::numeric_limits<double>::infinity() : 10 * std::log10(kPeak * kPeak / mse);
    if (m_mu.empty()) {  // smaller than the window: SSIM is undefined; say 1 only for equal frames
        q.ssim = mse == 0 ? 1 : std::numeric_limits<double>::quiet_NaN();
        return q;
    }
    const int w = f.width, h = f.height;
    // Scratch kept per thread: a tile's 8 frames (and a worker's many clips) reuse it instead of
    // faulting in six fresh 256 KiB buffers per frame.
    thread_local std::vector<float> sq, cross, rows, mu, muSq, muCross;
    sq.resize(f.y.size());
    cross.resize(f.y.size());
    for (size_t i = 0; i < f.y.size(); ++i) {
        sq[i] = f.y[i] * f.y[i];
        cross[i] = f.y[i] * m_ref.y[i];
    }
    mu.resize(m_mu.size());
    muSq.resize(m_mu.size());
    muCross.resize(m_mu.size());
    filterValid(f.y.data(), w, h, rows, mu.data());
    filterValid(sq.data(), w, h, rows, muSq.data());
    filterValid(cross.data(), w, h, rows, muCross.data());
    double sum = 0;
    for (size_t i = 0; i < mu.size(); ++i) {
        const double ux = mu[i], uy = m_mu[i];
        const double vx = double(muSq[i]) - ux * ux, vy = double(m_sq[i]) - uy * uy;
        const double vxy = double(muCross[i]) - ux * uy;
        sum += ((2 * ux * uy + kC1) * (2 * vxy + kC2)) / ((ux * ux + uy * uy + kC1) * (vx + vy + kC2));
    }
    q.ssim = sum / double(mu.size());
    return q;
}

double psnr(const QImage &a, const QImage &b)
{
    return QualityReference(a).compare(b).psnr;
}

double ssim(const QImage &a, const QImage &b)
{
    return QualityReference(a).compare(b).ssim;
}

}  // namespace orrery::media
