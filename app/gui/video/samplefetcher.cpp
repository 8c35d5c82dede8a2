// SPDX-License-Identifier: GPL-3.0-or-later
#include "samplefetcher.h"

#include "postifalive.h"
#include "storewriter.h"

#include "orrery/remote/connection.h"
#include "orrery/remote/error.h"

#include <QFileInfo>
#include <QPointer>

namespace orrery::gui {

namespace {

QString key(const QString &cluster, const QString &remotePath)
{
    return cluster + QLatin1Char('\n') + remotePath;
}

// The store learns of the copy on the window's store writer; the view does not need to wait
// for it.
void recordLocalCopy(StoreWriter &writer, core::RunId run, const QString &path, const QString &local)
{
    const qint64 size = QFileInfo(local).size();
    writer.post([run, path, local, size](core::TrackingStore &store) {
        try {
            store.setArtifactLocalCopy(run, path, local, size);
        } catch (const core::StoreError &) {
            // Read-only or busy: the cache still holds the file, found again by path.
        }
    });
}

}  // namespace

SampleFetcher::SampleFetcher(QObject *parent) : QObject(parent)
{ }

SampleFetcher::~SampleFetcher()
{
    // Transfers in flight stop at their next chunk; their continuations are dropped with this
    // object.
    m_cancel->store(true);
}

std::shared_ptr<remote::Connection> SampleFetcher::connection(const QString &cluster, QString *error)
{
    if (m_source)
        return m_source(cluster, error);
    *error = tr("no connection to cluster %1 in this view").arg(cluster);
    return nullptr;
}

bool SampleFetcher::isFetching(const QString &cluster, const QString &remotePath) const
{
    return m_inFlight.contains(key(cluster, remotePath));
}

void SampleFetcher::fetch(core::RunId run, const QString &cluster, const core::Artifact &artifact)
{
    const QString k = key(cluster, artifact.remotePath);
    if (m_inFlight.contains(k))
        return;
    QString error;
    const std::shared_ptr<remote::Connection> c = connection(cluster, &error);
    if (!c) {
        Q_EMIT failed(run, artifact.remotePath, error);
        return;
    }
    if (m_inFlight.isEmpty())
        m_cancel->store(false);
    auto transfer = std::make_shared<Transfer>();
    m_inFlight.insert(k, transfer);
    ++m_started;
    report();

    QPointer<SampleFetcher> self(this);
    const auto cancel = m_cancel;
    auto progress = [self, transfer](qint64 done, qint64 total) {
        // On the connection's thread: hand the numbers to the UI thread.
        postIfAlive(self, [transfer, done, total](SampleFetcher *fetcher) {
            transfer->done = done;
            transfer->total = total;
            fetcher->report();
        });
    };
    thenIfAlive(
        m_cache.fetchOver(*c, cluster, artifact, progress, cancel), this,
        [this, k, run, artifact](const QString &local) {
            m_inFlight.remove(k);
            report();
            if (m_writer)
                recordLocalCopy(*m_writer, run, artifact.path, local);
            Q_EMIT fetched(run, artifact.remotePath, local);
        },
        [this, k, run, artifact](const std::exception &e) {
            m_inFlight.remove(k);
            report();
            const auto *remoteError = dynamic_cast<const remote::RemoteError *>(&e);
            Q_EMIT failed(run, artifact.remotePath,
                          remoteError ? remoteError->message() : tr("the transfer failed"));
        });
}

void SampleFetcher::cancel()
{
    m_cancel->store(true);
}

void SampleFetcher::report()
{
    qint64 done = 0, total = 0;
    for (const auto &t : std::as_const(m_inFlight)) {
        done += t->done;
        total += t->total;
    }
    Q_EMIT progress(done, total);
}

}  // namespace orrery::gui
