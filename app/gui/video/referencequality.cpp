// SPDX-License-Identifier: GPL-3.0-or-later
#include "referencequality.h"

#include "blockingpool.h"
#include "clipdecoder.h"
#include "postifalive.h"

#include <QFileInfo>
#include <QPointer>
#include <QtConcurrent>

#include <cmath>
#include <limits>

namespace orrery::gui {

ReferenceQuality::ReferenceQuality(QObject *parent) : QObject(parent)
{ }

ReferenceQuality::~ReferenceQuality()
{
    m_cancel->store(true);
}

ReferenceQuality::Stamp ReferenceQuality::stampOf(const QString &path)
{
    const QFileInfo info(path);
    return {path, info.exists() ? info.size() : -1, info.lastModified()};
}

QString ReferenceQuality::keyOf(const Job &job)
{
    return QStringLiteral("%1|%2|%3").arg(job.run).arg(job.reference).arg(job.step);
}

const ClipQuality *ReferenceQuality::find(const Job &job) const
{
    const auto it = m_cache.constFind(keyOf(job));
    if (it == m_cache.constEnd() || !(it->clip == stampOf(job.clip)) ||
        !(it->reference == stampOf(job.referenceClip)))
        return nullptr;
    return &it->quality;
}

void ReferenceQuality::request(const QList<Job> &jobs)
{
    QList<Job> todo;
    for (const Job &j : jobs) {
        const QString key = keyOf(j);
        if (j.clip.isEmpty() || j.referenceClip.isEmpty() || m_pending.contains(key) || find(j))
            continue;
        m_pending.insert(key);
        todo << j;
    }
    if (todo.isEmpty())
        return;
    QPointer<ReferenceQuality> self(this);
    const auto cancel = m_cancel;
    (void)QtConcurrent::run(blockingPool(), [self, cancel, todo] {
        QList<std::pair<Job, Entry>> done;
        for (const Job &j : todo) {
            if (cancel->load())
                return;
            // Stamped before decoding: a file rewritten meanwhile is a miss next time.
            Entry e{stampOf(j.clip), stampOf(j.referenceClip), compute(j.clip, j.referenceClip)};
            done.push_back({j, std::move(e)});
        }
        postIfAlive(self, [done](ReferenceQuality *q) { q->store(done); });
    });
}

void ReferenceQuality::store(const QList<std::pair<Job, Entry>> &done)
{
    for (const auto &[job, entry] : done) {
        const QString key = keyOf(job);
        m_pending.remove(key);
        m_cache.insert(key, entry);
        ++m_computed;
    }
    Q_EMIT computed();
}

ClipQuality ReferenceQuality::compute(const QString &clip, const QString &reference)
{
    ClipQuality out;
    try {
        auto ref = media::ClipDecoder::open(reference);
        auto dec = media::ClipDecoder::open(clip);
        const int refFrames = ref->info().frameCount, frames = dec->info().frameCount;
        if (refFrames <= 0 || frames <= 0) {
            out.error = QStringLiteral("no frames");
            return out;
        }
        // Each reference frame filtered once, whatever number of clip frames it is compared with.
        QList<media::QualityReference> refs;
        for (int i = 0; i < std::min(refFrames, frames); ++i)
            refs << media::QualityReference(ref->frame(i));
        double sumPsnr = 0, sumSsim = 0;
        for (int i = 0; i < frames; ++i) {
            const media::FrameQuality q =
                refs[std::min<qsizetype>(i, refs.size() - 1)].compare(dec->frame(i));
            out.psnr << q.psnr;
            out.ssim << q.ssim;
            sumPsnr += q.psnr;
            sumSsim += q.ssim;
        }
        out.size = refs.front().size();
        out.meanPsnr = sumPsnr / frames;
        out.meanSsim = sumSsim / frames;
    } catch (const media::MediaError &e) {
        out.error = e.message();
    }
    return out;
}

}  // namespace orrery::gui
