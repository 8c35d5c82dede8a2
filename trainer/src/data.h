// SPDX-License-Identifier: GPL-3.0-or-later
//
// Training data: the bundled moving-shapes clips (several shapes and colours bouncing in the
// frame, labelled by shape and colour), generated on the fly, deterministic in (seed, sample
// index). Every random draw of a training sample — the clip, its noise, its flow time and whether
// its label is dropped — is a function of its global sample index, so 2 ranks with batch b see
// exactly what 1 rank with batch 2b sees, and a resumed run sees what an uninterrupted one did.
#pragma once

#include <torch/torch.h>

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace orrery::train {

// splitmix64: decorrelates nearby indices, so sample n and n+1 share nothing.
inline std::uint64_t mixSeed(std::uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

struct ShapesSpec {
    std::int64_t frames = 8, size = 32, classes = 8;
    std::uint64_t seed = 0;
    bool logitNormalTime = false;  // flow times logit-normal (SD3) instead of uniform
};

// The clip of sample `index` in [-1, 1], [3, T, H, W], and its label.
std::pair<torch::Tensor, std::int64_t> movingShapesClip(const ShapesSpec &spec, std::uint64_t index);

// What a class label means: shape 0 circle, 1 square, 2 triangle, 3 cross; colour index into
// kPalette (RGB in [0, 1]).
int shapeOf(std::int64_t label);
int colourOf(std::int64_t label);
extern const float kPalette[8][3];

struct Batch {
    torch::Tensor clips;  // x0 [B, 3, T, H, W]
    torch::Tensor noise;  // [B, 3, T, H, W]
    torch::Tensor t;  // flow time [B]: uniform, or logit-normal (SD3)
    torch::Tensor labels;  // [B], `classes` where dropped for classifier-free guidance
};

// Where a sample's clip comes from: moving shapes by default, or real video (videodata.h).
using ClipSource = std::function<std::pair<torch::Tensor, std::int64_t>(std::uint64_t index)>;

// One batch of the given global sample indices (what the workers call). `clips` defaults to the
// moving shapes of `spec`.
Batch makeBatch(const ShapesSpec &spec, std::uint64_t firstIndex, std::int64_t count, double labelDropout,
                const ClipSource &clips = {});

// Worker threads that prepare batches ahead of the training loop. Batches are requested by a
// sequence number; batch n holds samples [offset(n), offset(n) + batch). The owner's destructor
// stops and joins the workers. next() is called from one thread (the training loop).
class Loader {
public:
    using IndexFn = std::function<std::uint64_t(std::int64_t sequence)>;
    Loader(ShapesSpec spec, std::int64_t batch, double labelDropout, IndexFn firstIndexOf,
           std::int64_t firstSequence, int workers, int prefetch, ClipSource clips = {});
    ~Loader();
    Loader(const Loader &) = delete;
    Loader &operator=(const Loader &) = delete;

    // The next batch in sequence; `waitedSeconds` gets how long the caller waited for it.
    Batch next(double *waitedSeconds);
    // The number of the loader worker running on this thread (0..workers-1), -1 on any other
    // thread: a streamed ClipSource gives each worker its own shards.
    static int currentWorker();

private:
    void work(int worker);

    ShapesSpec m_spec;
    ClipSource m_clips;
    std::int64_t m_batch;
    double m_dropout;
    IndexFn m_firstIndexOf;
    int m_prefetch;
    std::mutex m_mutex;
    std::condition_variable m_ready, m_space;
    std::map<std::int64_t, Batch> m_done;
    std::int64_t m_nextToBuild, m_nextToTake;
    bool m_stop = false;
    std::exception_ptr m_error;  // a worker's failure, rethrown by next()
    std::vector<std::thread> m_threads;
};

}  // namespace orrery::train
