// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Video tab's "how close is each run to the reference run": per-frame PSNR and SSIM
// (media::QualityReference: luma, Wang et al.'s Gaussian 11x11 SSIM) of a run's sample clip
// against the pinned reference run's clip at the same step, frame i against frame i (a shorter
// clip holds its last frame, as on the clock), the reference's frame size when sizes differ.
//
// Clips are decoded and compared on the blocking pool, never on the UI thread; results come back
// to the UI thread as `computed()`, coalesced to one signal per batch. Results are cached by
// (run, reference run, step), each remembering the two files and their size and modification
// time it was computed from and the frame size it compared at: a new sample file (another
// nearest clip, or a file rewritten) is a miss and is computed again. UI thread only; the
// destructor cancels work in flight (the workers hold only shared state).
#pragma once

#include "imageops.h"

#include "orrery/core/store.h"

#include <QDateTime>
#include <QHash>
#include <QObject>
#include <QSet>

#include <atomic>
#include <memory>

namespace orrery::gui {

struct ClipQuality {
    QList<double> psnr, ssim;  // per frame of the clip (the clock's index)
    double meanPsnr = 0, meanSsim = 0;  // over frames; PSNR's mean of +inf frames is +inf
    QSize size;  // the frame size compared at (the reference's)
    QString error;  // a clip could not be decoded: no figures
};

class ReferenceQuality : public QObject {
    Q_OBJECT
public:
    struct Job {
        core::RunId run = 0, reference = 0;
        qint64 step = -1;  // the step the tile (or the curve's point) stands for
        QString clip, referenceClip;  // local files
    };
    explicit ReferenceQuality(QObject *parent = nullptr);
    ~ReferenceQuality() override;

    // The cached result for `job` when it still holds for its files; nullptr otherwise.
    const ClipQuality *find(const Job &job) const;
    // Queues the jobs not cached and not already in flight (one worker task per call).
    void request(const QList<Job> &jobs);
    int inFlight() const { return int(m_pending.size()); }
    qint64 computedCount() const { return m_computed; }  // clip pairs computed (tests: the cache)

    // Frames of `clip` against those of `reference`, decoded here (any thread; throws nothing).
    static ClipQuality compute(const QString &clip, const QString &reference);

Q_SIGNALS:
    void computed();

private:
    struct Stamp {
        QString path;
        qint64 size = -1;
        QDateTime modified;
        bool operator==(const Stamp &) const = default;
    };
    struct Entry {
        Stamp clip, reference;
        ClipQuality quality;
    };
    static Stamp stampOf(const QString &path);
    void store(const QList<std::pair<Job, Entry>> &done);  // a worker's results, on the UI thread
    static QString keyOf(const Job &job);

    QHash<QString, Entry> m_cache;
    QSet<QString> m_pending;
    qint64 m_computed = 0;
    std::shared_ptr<std::atomic<bool>> m_cancel = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace orrery::gui
