// SPDX-License-Identifier: GPL-3.0-or-later
#include "data.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace orrery::train {

const float kPalette[8][3] = {
    {1.0f, 0.2f, 0.2f}, {0.2f, 0.9f, 1.0f}, {0.3f, 1.0f, 0.3f}, {1.0f, 0.9f, 0.2f},
    {0.9f, 0.3f, 1.0f}, {1.0f, 0.6f, 0.1f}, {0.3f, 0.4f, 1.0f}, {1.0f, 1.0f, 1.0f},
};

int shapeOf(std::int64_t label)
{
    return int(label % 4);
}
int colourOf(std::int64_t label)
{
    return int((label / 4) % 8);
}

namespace {

bool inside(int shape, float dx, float dy, float r)
{
    switch (shape) {
    case 0:
        return dx * dx + dy * dy <= r * r;
    case 1:
        return std::abs(dx) <= r * 0.85f && std::abs(dy) <= r * 0.85f;
    case 2:  // upward triangle
        return dy <= r * 0.8f && dy >= -r && std::abs(dx) <= (dy + r) * 0.6f;
    default:  // cross
        return (std::abs(dx) <= r * 0.3f && std::abs(dy) <= r) ||
            (std::abs(dy) <= r * 0.3f && std::abs(dx) <= r);
    }
}

}  // namespace

std::pair<torch::Tensor, std::int64_t> movingShapesClip(const ShapesSpec &spec, std::uint64_t index)
{
    std::mt19937_64 rng(mixSeed(spec.seed * 0x100000001b3ull ^ mixSeed(index)));
    std::uniform_real_distribution<float> u(0.f, 1.f);
    const auto label = std::int64_t(rng() % std::uint64_t(spec.classes));
    const int shape = shapeOf(label);
    const float *colour = kPalette[colourOf(label)];
    const auto size = float(spec.size);
    const float r = size * (0.12f + 0.08f * u(rng));
    float x = r + u(rng) * (size - 2 * r), y = r + u(rng) * (size - 2 * r);
    const float speed = size / 32.f * (0.8f + 1.6f * u(rng));
    const float angle = 6.2831853f * u(rng);
    float vx = speed * std::cos(angle), vy = speed * std::sin(angle);

    const auto n = spec.size;
    auto clip = torch::full({3, spec.frames, n, n}, -1.0f);
    auto acc = clip.accessor<float, 4>();
    for (std::int64_t f = 0; f < spec.frames; ++f) {
        const auto x0 = std::max<std::int64_t>(0, std::int64_t(x - r - 1)),
                   x1 = std::min<std::int64_t>(n, std::int64_t(x + r + 2));
        const auto y0 = std::max<std::int64_t>(0, std::int64_t(y - r - 1)),
                   y1 = std::min<std::int64_t>(n, std::int64_t(y + r + 2));
        for (std::int64_t py = y0; py < y1; ++py)
            for (std::int64_t px = x0; px < x1; ++px)
                if (inside(shape, float(px) + 0.5f - x, float(py) + 0.5f - y, r))
                    for (int c = 0; c < 3; ++c)
                        acc[c][f][py][px] = colour[c] * 2.f - 1.f;
        // Constant velocity, bouncing off the borders.
        x += vx;
        y += vy;
        if (x < r || x > size - r) {
            vx = -vx;
            x = std::clamp(x, r, size - r);
        }
        if (y < r || y > size - r) {
            vy = -vy;
            y = std::clamp(y, r, size - r);
        }
    }
    return {clip, label};
}

Batch makeBatch(const ShapesSpec &spec, std::uint64_t firstIndex, std::int64_t count, double labelDropout,
                const ClipSource &source)
{
    std::vector<torch::Tensor> clips, noise;
    std::vector<float> t;
    std::vector<std::int64_t> labels;
    for (std::int64_t i = 0; i < count; ++i) {
        const std::uint64_t index = firstIndex + std::uint64_t(i);
        auto [clip, label] = source ? source(index) : movingShapesClip(spec, index);
        // The sample's own generator: its noise, time and label dropout depend on nothing else.
        const std::uint64_t s = mixSeed(mixSeed(spec.seed ^ 0x5eedull) ^ index);
        auto gen = at::detail::createCPUGenerator(s);
        noise.push_back(torch::randn(clip.sizes(), gen));
        std::mt19937_64 rng(s);
        std::uniform_real_distribution<double> u(0., 1.);
        if (spec.logitNormalTime) {
            std::normal_distribution<float> normal(0.f, 1.f);
            t.push_back(1.f / (1.f + std::exp(-normal(rng))));
        } else {
            t.push_back(float(u(rng)));
        }
        labels.push_back(u(rng) < labelDropout ? spec.classes : label);
        clips.push_back(std::move(clip));
    }
    return {torch::stack(clips), torch::stack(noise), torch::tensor(t), torch::tensor(labels)};
}

Loader::Loader(ShapesSpec spec, std::int64_t batch, double labelDropout, IndexFn firstIndexOf,
               std::int64_t firstSequence, int workers, int prefetch, ClipSource clips)
    : m_spec(spec), m_clips(std::move(clips)), m_batch(batch), m_dropout(labelDropout),
      m_firstIndexOf(std::move(firstIndexOf)), m_prefetch(std::max(prefetch, 1)),
      m_nextToBuild(firstSequence), m_nextToTake(firstSequence)
{
    for (int i = 0; i < std::max(workers, 1); ++i)
        m_threads.emplace_back([this, i] { work(i); });
}

Loader::~Loader()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_space.notify_all();
    m_ready.notify_all();
    for (auto &t : m_threads)
        t.join();
}

namespace {
thread_local int t_worker = -1;
}

int Loader::currentWorker()
{
    return t_worker;
}

void Loader::work(int worker)
{
    t_worker = worker;
    for (;;) {
        std::int64_t seq;
        {
            std::unique_lock lock(m_mutex);
            m_space.wait(lock, [&] { return m_stop || m_nextToBuild < m_nextToTake + m_prefetch; });
            if (m_stop)
                return;
            seq = m_nextToBuild++;
        }
        Batch b;
        try {
            b = makeBatch(m_spec, m_firstIndexOf(seq), m_batch, m_dropout, m_clips);
        } catch (...) {
            {
                std::lock_guard lock(m_mutex);
                m_error = std::current_exception();
            }
            m_ready.notify_all();
            return;
        }
        {
            std::lock_guard lock(m_mutex);
            m_done.emplace(seq, std::move(b));
        }
        m_ready.notify_all();
    }
}

Batch Loader::next(double *waitedSeconds)
{
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock lock(m_mutex);
    m_ready.wait(lock, [&] { return m_done.count(m_nextToTake) > 0 || m_error; });
    if (!m_done.count(m_nextToTake))
        std::rethrow_exception(m_error);
    Batch b = std::move(m_done.at(m_nextToTake));
    m_done.erase(m_nextToTake++);
    lock.unlock();
    m_space.notify_all();
    if (waitedSeconds)
        *waitedSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return b;
}

}  // namespace orrery::train
