// SPDX-License-Identifier: GPL-3.0-or-later
#include "framesource.h"

#include <QPointer>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

namespace orrery::media {

struct FrameSource::Worker {
    FrameSource *owner;
    QString path;
    qint64 budget;

    mutable std::mutex mutex;
    std::condition_variable wake;
    bool stop = false;
    State state = State::Opening;
    ClipInfo info;
    QString error;
    int capacity = 0;
    int playhead = 0;
    bool loop = true;
    std::unordered_map<int, QImage> frames;
    std::set<int> damaged;
    std::atomic<qint64> decoded{0};
    std::thread thread;

    // The frames to hold, nearest the playhead first: ahead of it, then behind it.
    std::vector<int> window() const
    {
        std::vector<int> out;
        const int n = info.frameCount;
        if (n <= 0)
            return out;
        const int head = std::min(playhead, n - 1);  // a shorter clip holds its last frame
        const int behind = capacity >= n ? 0 : capacity / 4;
        const int ahead = capacity >= n ? n : capacity - behind;
        out.reserve(size_t(capacity));
        for (int i = 0; i < ahead; ++i) {
            int f = head + i;
            if (f >= n) {
                if (!loop)
                    break;
                f %= n;
            }
            out.push_back(f);
        }
        for (int i = 1; i <= behind && head - i >= 0; ++i)
            out.push_back(head - i);
        return out;
    }

    void post(std::function<void(FrameSource *)> f)
    {
        QMetaObject::invokeMethod(
            owner,
            [o = QPointer<FrameSource>(owner), f = std::move(f)] {
                if (o)
                    f(o.data());
            },
            Qt::QueuedConnection);
    }

    void run()
    {
        std::unique_ptr<ClipDecoder> decoder;
        try {
            decoder = ClipDecoder::open(path);
        } catch (const MediaError &e) {
            std::lock_guard lock(mutex);
            state = State::Failed;
            error = e.message();
            post([message = error](FrameSource *o) { Q_EMIT o->failed(message); });
            return;
        }
        {
            std::lock_guard lock(mutex);
            info = decoder->info();
            const qint64 frameBytes = std::max<qint64>(1, qint64(info.width) * info.height * 4);
            capacity = int(std::clamp<qint64>(budget / frameBytes, 2, info.frameCount));
            state = State::Ready;
        }
        post([](FrameSource *o) { Q_EMIT o->opened(); });

        while (true) {
            int todo = -1;
            {
                std::unique_lock lock(mutex);
                wake.wait(lock, [&] {
                    if (stop)
                        return true;
                    const std::vector<int> want = window();
                    // Evict what left the window (nothing, for a clip that fits).
                    if (frames.size() >= size_t(capacity)) {
                        const std::set<int> keep(want.begin(), want.end());
                        std::erase_if(frames, [&](const auto &kv) { return !keep.contains(kv.first); });
                    }
                    for (int f : want)
                        if (!frames.contains(f) && !damaged.contains(f)) {
                            todo = f;
                            return true;
                        }
                    return false;
                });
                if (stop)
                    return;
            }
            QImage image;
            QString failure;
            try {
                image = decoder->frame(todo);
            } catch (const MediaError &e) {
                failure = e.message();
            }
            ++decoded;
            std::lock_guard lock(mutex);
            if (image.isNull()) {
                damaged.insert(todo);
                error = failure;
            } else {
                frames.emplace(todo, std::move(image));
            }
            if (todo == std::min(playhead, info.frameCount - 1))
                post([todo](FrameSource *o) { Q_EMIT o->frameReady(todo); });
        }
    }
};

FrameSource::FrameSource(const QString &path, qint64 budgetBytes, QObject *parent)
    : QObject(parent), d(std::make_unique<Worker>())
{
    d->owner = this;
    d->path = path;
    d->budget = std::max<qint64>(budgetBytes, 1);
    d->thread = std::thread([w = d.get()] { w->run(); });
}

FrameSource::~FrameSource()
{
    {
        std::lock_guard lock(d->mutex);
        d->stop = true;
    }
    d->wake.notify_all();
    d->thread.join();
}

QString FrameSource::path() const
{
    return d->path;
}

FrameSource::State FrameSource::state() const
{
    std::lock_guard lock(d->mutex);
    return d->state;
}

ClipInfo FrameSource::info() const
{
    std::lock_guard lock(d->mutex);
    return d->info;
}

QString FrameSource::error() const
{
    std::lock_guard lock(d->mutex);
    return d->error;
}

int FrameSource::capacity() const
{
    std::lock_guard lock(d->mutex);
    return d->capacity;
}

QImage FrameSource::frame(int index) const
{
    std::lock_guard lock(d->mutex);
    const auto it = d->frames.find(index);
    return it == d->frames.end() ? QImage() : it->second;
}

bool FrameSource::isDamaged(int index) const
{
    std::lock_guard lock(d->mutex);
    return d->damaged.contains(index);
}

void FrameSource::setPlayhead(int index, bool loop)
{
    {
        std::lock_guard lock(d->mutex);
        if (d->playhead == index && d->loop == loop)
            return;
        d->playhead = std::max(0, index);
        d->loop = loop;
    }
    d->wake.notify_one();
}

qint64 FrameSource::decodedCount() const
{
    return d->decoded.load();
}

}  // namespace orrery::media
