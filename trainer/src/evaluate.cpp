// SPDX-License-Identifier: GPL-3.0-or-later
#include "evaluate.h"

#include "flow.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace orrery::train {

namespace {

// Held-out samples live far from any training index.
constexpr std::uint64_t kHeldOut = 1ull << 50;
constexpr std::uint64_t kSampleNoise = 1ull << 51;

// The pixel count of the largest 8-connected part of the mask (smooth > 0.35), by flood fill.
double largestPart(const std::vector<float> &smooth, std::int64_t h, std::int64_t w, std::vector<int> &part)
{
    std::fill(part.begin(), part.end(), 0);
    std::vector<std::int64_t> stack;
    int label = 0;
    std::int64_t best = 0;
    for (std::int64_t start = 0; start < h * w; ++start) {
        if (part[std::size_t(start)] || smooth[std::size_t(start)] <= 0.35f)
            continue;
        part[std::size_t(start)] = ++label;
        stack.assign(1, start);
        std::int64_t size = 0;
        while (!stack.empty()) {
            const std::int64_t i = stack.back();
            stack.pop_back();
            ++size;
            const std::int64_t y = i / w, x = i % w;
            for (std::int64_t yy = std::max<std::int64_t>(0, y - 1); yy <= std::min(h - 1, y + 1); ++yy)
                for (std::int64_t xx = std::max<std::int64_t>(0, x - 1); xx <= std::min(w - 1, x + 1); ++xx) {
                    const std::int64_t j = yy * w + xx;
                    if (!part[std::size_t(j)] && smooth[std::size_t(j)] > 0.35f) {
                        part[std::size_t(j)] = label;
                        stack.push_back(j);
                    }
                }
        }
        best = std::max(best, size);
    }
    return double(best);
}

}  // namespace

ClipQuality scoreClip(const torch::Tensor &clipIn, std::int64_t label, double expectedFill)
{
    // Plain loops over the pixels: a few thousand per frame, where tensor ops would cost more in
    // dispatch than in work.
    const auto clip = clipIn.detach().to(torch::kFloat32).cpu().contiguous();  // [3, T, H, W] in [-1, 1]
    const auto acc = clip.accessor<float, 4>();
    const auto frames = clip.size(1), h = clip.size(2), w = clip.size(3);
    const float *target = kPalette[colourOf(label)];
    std::vector<double> areas, fills, cx, cy;
    double colourErr = 0, coreErr = 0, cohesion = 0;
    std::vector<int> part(std::size_t(h * w));  // connected-part labels of the mask
    int present = 0;
    const double minArea = double(h * w) * 0.005, maxArea = double(h * w) * 0.5;
    std::vector<float> bright(std::size_t(h * w)), smooth(std::size_t(h * w));
    for (std::int64_t f = 0; f < frames; ++f) {
        // Brightness (max channel in [0, 1]), box-blurred 3x3: isolated noise pixels of a
        // half-denoised sample do not count as the object, a solid shape does.
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) {
                float m = -1.f;
                for (int ch = 0; ch < 3; ++ch)
                    m = std::max(m, acc[ch][f][y][x]);
                bright[std::size_t(y * w + x)] = (std::clamp(m, -1.f, 1.f) + 1.f) / 2.f;
            }
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) {
                float sum = 0.f;
                int n = 0;
                for (std::int64_t yy = std::max<std::int64_t>(0, y - 1); yy <= std::min(h - 1, y + 1); ++yy)
                    for (std::int64_t xx = std::max<std::int64_t>(0, x - 1); xx <= std::min(w - 1, x + 1);
                         ++xx, ++n)
                        sum += bright[std::size_t(yy * w + xx)];
                smooth[std::size_t(y * w + x)] = sum / float(n);
            }
        double area = 0, sx = 0, sy = 0, col[3] = {0, 0, 0}, core = 0, coreCol[3] = {0, 0, 0};
        std::int64_t x0 = w, x1 = -1, y0 = h, y1 = -1;
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) {
                float v[3];
                for (int ch = 0; ch < 3; ++ch)
                    v[ch] = (std::clamp(acc[ch][f][y][x], -1.f, 1.f) + 1.f) / 2.f;
                if (smooth[std::size_t(y * w + x)] <= 0.35f)  // the background is black
                    continue;
                area += 1;
                sx += double(x);
                sy += double(y);
                for (int ch = 0; ch < 3; ++ch)
                    col[ch] += v[ch];
                if (bright[std::size_t(y * w + x)] >= 0.6f) {
                    core += 1;
                    for (int ch = 0; ch < 3; ++ch)
                        coreCol[ch] += v[ch];
                }
                x0 = std::min(x0, x);
                x1 = std::max(x1, x);
                y0 = std::min(y0, y);
                y1 = std::max(y1, y);
            }
        if (area < minArea || area > maxArea)
            continue;
        ++present;
        fills.push_back(area / double((x1 - x0 + 1) * (y1 - y0 + 1)));
        areas.push_back(area);
        cx.push_back(sx / area);
        cy.push_back(sy / area);
        double e = 0, ce = 0;
        for (int ch = 0; ch < 3; ++ch) {
            e += std::pow(col[ch] / area - double(target[ch]), 2);
            ce += core > 0 ? std::pow(coreCol[ch] / core - double(target[ch]), 2) : 1.0;
        }
        colourErr += std::sqrt(e);
        coreErr += std::min(1.0, std::sqrt(ce));
        cohesion += largestPart(smooth, h, w, part) / area;
    }
    ClipQuality q;
    q.presence = double(present) / double(frames);
    if (present == 0) {
        q.colourError = q.shapeError = q.coreColourError = 1;
        q.areaCv = 1;
        q.motionJerk = double(w);
        return q;
    }
    q.colourError = colourErr / present;
    q.coreColourError = coreErr / present;
    q.cohesion = cohesion / present;
    double meanArea = 0, meanFill = 0;
    for (std::size_t i = 0; i < areas.size(); ++i) {
        meanArea += areas[i];
        meanFill += fills[i];
    }
    meanArea /= double(areas.size());
    meanFill /= double(fills.size());
    double var = 0;
    for (double a : areas)
        var += (a - meanArea) * (a - meanArea);
    q.areaCv = std::sqrt(var / double(areas.size())) / meanArea;
    q.shapeError = std::abs(meanFill - expectedFill);
    double jerk = 0;
    int n = 0;
    for (std::size_t i = 1; i + 1 < cx.size(); ++i, ++n)
        jerk += std::hypot(cx[i + 1] - 2 * cx[i] + cx[i - 1], cy[i + 1] - 2 * cy[i] + cy[i - 1]);
    q.motionJerk = n ? jerk / n : 0;
    q.score = q.presence * std::exp(-q.colourError / 0.15) * std::exp(-q.shapeError / 0.15) *
        std::exp(-q.areaCv / 0.25);
    return q;
}

Evaluator::Evaluator(const Config &c, const ShapesSpec &spec, const torch::Device &device, ClipSource clips)
    : m_c(c), m_spec(spec), m_device(device), m_clips(std::move(clips)), m_fill(4, 0.0)
{
    // The fill ratio of each shape in real clips, and the score real clips get (the ceiling).
    std::vector<int> counts(4, 0);
    std::vector<std::pair<torch::Tensor, std::int64_t>> real;
    for (std::uint64_t i = 0; i < 64; ++i)
        real.push_back(movingShapesClip(spec, kHeldOut + 1000 + i));
    for (const auto &[clip, label] : real) {
        const ClipQuality q = scoreClip(clip, label, 0);
        m_fill[std::size_t(shapeOf(label))] += q.shapeError;  // with expectedFill 0, shapeError is the fill
        ++counts[std::size_t(shapeOf(label))];
    }
    for (std::size_t s = 0; s < 4; ++s)
        m_fill[s] = counts[s] ? m_fill[s] / counts[s] : 0.5;
    double total = 0;
    for (const auto &[clip, label] : real)
        total += scoreClip(clip, label, m_fill[std::size_t(shapeOf(label))]).score;
    m_dataScore = total / double(real.size());
}

torch::Tensor Evaluator::samples(DenoiserImpl &model, std::int64_t count)
{
    std::vector<std::int64_t> labels;
    for (std::int64_t i = 0; i < count; ++i)
        labels.push_back(i % m_spec.classes);
    // The same noise at every evaluation, so samples of successive steps are comparable.
    auto gen = at::detail::createCPUGenerator(m_spec.seed ^ kSampleNoise);
    const auto noise = torch::randn({count, 3, m_spec.frames, m_spec.size, m_spec.size}, gen).to(m_device);
    torch::Tensor reference;
    if (m_c.b("model.reference_frame")) {
        std::vector<torch::Tensor> refs;
        for (std::int64_t i = 0; i < count; ++i)
            refs.push_back((m_clips ? m_clips(kSampleNoise + std::uint64_t(i))
                                    : movingShapesClip(m_spec, kSampleNoise + std::uint64_t(i)))
                               .first.select(1, 0));
        reference = torch::stack(refs).to(m_device);
    }
    return sampleFlow(model, noise, torch::tensor(labels).to(m_device), m_spec.classes,
                      int(m_c.i("sample.steps")), m_c.f("sample.guidance"), m_c.f("sample.time_power"),
                      m_c.b("sample.clip_x0"), reference);
}

std::vector<std::pair<std::string, double>> Evaluator::evaluate(DenoiserImpl &model)
{
    torch::NoGradGuard ng;
    std::vector<std::pair<std::string, double>> out;
    const auto times = m_c.list("eval.timesteps");
    const auto B = m_c.i("train.batch_size");
    std::vector<double> sums(times.size(), 0.0);
    for (std::int64_t b = 0; b < m_c.i("eval.batches"); ++b) {
        const Batch batch = makeBatch(m_spec, kHeldOut + std::uint64_t(b * B), B, 0.0, m_clips);
        const auto x0 = batch.clips.to(m_device), noise = batch.noise.to(m_device),
                   labels = batch.labels.to(m_device);
        const auto ref = m_c.b("model.reference_frame") ? x0.select(2, 0) : torch::Tensor();
        for (std::size_t i = 0; i < times.size(); ++i) {
            const auto t = torch::full({B}, times[i], x0.options());
            const auto v = model.forward(noisyInput(x0, noise, t), t, labels, ref).to(torch::kFloat32);
            sums[i] += torch::mse_loss(v, velocityTarget(x0, noise)).item<double>();
        }
    }
    double mean = 0;
    for (std::size_t i = 0; i < times.size(); ++i) {
        char name[64];
        std::snprintf(name, sizeof name, "eval/loss_t%.2g", times[i]);
        const double l = sums[i] / double(m_c.i("eval.batches"));
        out.emplace_back(name, l);
        mean += l / double(times.size());
    }
    out.emplace_back("eval/loss", mean);

    if (m_clips)
        return out;
    const auto count = std::max<std::int64_t>(m_c.i("sample.count"), 8);
    const auto clips = samples(model, count);
    ClipQuality sum;
    for (std::int64_t i = 0; i < count; ++i) {
        const auto label = i % m_spec.classes;
        const ClipQuality q = scoreClip(clips[i], label, m_fill[std::size_t(shapeOf(label))]);
        sum.presence += q.presence / double(count);
        sum.colourError += q.colourError / double(count);
        sum.coreColourError += q.coreColourError / double(count);
        sum.cohesion += q.cohesion / double(count);
        sum.shapeError += q.shapeError / double(count);
        sum.areaCv += q.areaCv / double(count);
        sum.motionJerk += q.motionJerk / double(count);
        sum.score += q.score / double(count);
    }
    out.insert(out.end(),
               {{"eval/sample_presence", sum.presence},
                {"eval/sample_colour_error", sum.colourError},
                {"eval/sample_core_colour_error", sum.coreColourError},
                {"eval/sample_cohesion", sum.cohesion},
                {"eval/sample_shape_error", sum.shapeError},
                {"eval/sample_area_cv", sum.areaCv},
                {"eval/sample_motion_jerk", sum.motionJerk},
                {"eval/sample_score", sum.score},
                {"eval/data_score", m_dataScore}});
    return out;
}

}  // namespace orrery::train
