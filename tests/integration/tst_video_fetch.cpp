// SPDX-License-Identifier: GPL-3.0-or-later
// The Video tab on a run trained on the fixture cluster: its sample is fetched over SFTP into the
// local cache once (the store records the copy; opening it again starts no transfer, even with
// the remote file gone), and a cluster that cannot be reached is an error tile, not a frozen
// window. The sample is a real trainer MP4 (the decoder's fuzz seed).
#include "remotesupport.h"
#include "testsupport.h"
#include "videosupport.h"

#include "clipdecoder.h"
#include "samplefetcher.h"
#include "videogrid.h"
#include "videoview.h"

#include "orrery/core/store.h"
#include "orrery/remote/profile.h"

#include <QApplication>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUuid>

using namespace orrery;
using namespace orrery::gui;

class TestVideoFetch : public QObject {
    Q_OBJECT
    orrery::test::TestCluster m_cluster;
    QTemporaryDir m_dir;
    QString m_db, m_remoteDir, m_profile, m_offline;
    core::RunId m_run = 0, m_offlineRun = 0;
    std::unique_ptr<remote::Session> m_session;

    core::RunId addRun(core::TrackingStore &store, const QString &cluster, const QString &remotePath)
    {
        const auto e = store.ensureExperiment(QStringLiteral("video"));
        core::Sweep s;
        s.name = cluster;
        s.experimentId = e;
        s.method = QStringLiteral("grid");
        s.cluster = cluster;
        s.state = QStringLiteral("finished");
        const core::SweepId sweep = store.createSweep(s);
        const core::RunId run = store.createRun(e, cluster + QStringLiteral("-run"));
        core::Trial t;
        t.sweepId = sweep;
        t.runId = run;
        t.state = QStringLiteral("completed");
        store.addTrial(t);
        store.addArtifact(
            run, {QStringLiteral("samples/step-20.mp4"), QStringLiteral("video"), 20, remotePath, {}, -1});
        return run;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error()));
        qputenv("ORRERY_CACHE_DIR", m_dir.filePath(QStringLiteral("cache")).toUtf8());
        m_session = std::make_unique<remote::Session>(orrery::test::clusterEndpoint(m_cluster));
        m_session->connect();
        m_remoteDir = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/tst_video_fetch-") +
            QUuid::createUuid().toString(QUuid::Id128);
        m_session->makeDirectories(m_remoteDir + QStringLiteral("/samples"));
        m_session->upload(
            orrery::test::sourceFile(QStringLiteral("tests/fuzz/corpus/media/trainer-h264.mp4")),
            m_remoteDir + QStringLiteral("/samples/step-20.mp4"));

        // Profiles as `orrery cluster add` writes them (the test's config directory).
        const QString id = QUuid::createUuid().toString(QUuid::Id128).left(8);
        remote::ClusterProfile p;
        p.name = m_profile = QStringLiteral("video-") + id;
        p.host = m_cluster.value("ORRERY_TEST_SSH_HOST");
        p.port = m_cluster.value("ORRERY_TEST_SSH_PORT").toInt();
        p.user = m_cluster.value("ORRERY_TEST_SSH_USER");
        p.identityFile = m_cluster.value("ORRERY_TEST_SSH_KEY");
        p.knownHostsFile = m_cluster.value("ORRERY_TEST_SSH_KNOWN_HOSTS");
        p.remoteRoot = m_cluster.value("ORRERY_TEST_JOBS_DIR");
        remote::ProfileStore().save(p);
        p.name = m_offline = QStringLiteral("offline-") + id;
        p.port = 1;  // nothing listens there
        remote::ProfileStore().save(p);

        m_db = m_dir.filePath(QStringLiteral("store.sqlite"));
        auto store = core::TrackingStore::open(m_db);
        m_run = addRun(*store, m_profile, m_remoteDir + QStringLiteral("/samples/step-20.mp4"));
        m_offlineRun = addRun(*store, m_offline, QStringLiteral("/nowhere/samples/step-20.mp4"));
        QCOMPARE(store->clusterOf(m_run), m_profile);
    }

    void cleanupTestCase()
    {
        remote::ProfileStore().remove(m_profile);
        remote::ProfileStore().remove(m_offline);
        if (m_session) {
            try {
                m_session->exec(QByteArrayLiteral("rm -rf ") + m_remoteDir.toUtf8());
            } catch (const remote::RemoteError &) { }
        }
    }

    void aClusterSampleIsFetchedOnce()
    {
        const QString original =
            orrery::test::sourceFile(QStringLiteral("tests/fuzz/corpus/media/trainer-h264.mp4"));
        QString local;
        {
            orrery::test::VideoHarness h(m_db, {800, 500});
            gui::VideoView &view = h.view;
            h.selection.select({m_run}, nullptr);
            // Fetched, then played: the tile's clip is the cache's copy of the remote file.
            QTRY_VERIFY_WITH_TIMEOUT(!view.grid()->tiles().isEmpty() && view.grid()->tiles()[0].source &&
                                         view.grid()->tiles()[0].source->state() ==
                                             media::FrameSource::State::Ready,
                                     30'000);
            QCOMPARE(view.fetcher()->started(), 1);
            local = view.grid()->tiles()[0].source->path();
            QVERIFY2(local.startsWith(m_dir.filePath(QStringLiteral("cache"))), qPrintable(local));
            QTRY_VERIFY(!view.grid()->framesAt(0)[0].image.isNull());
            QCOMPARE(view.grid()->framesAt(0)[0].image, media::ClipDecoder::open(original)->frame(0));
        }
        // The store recorded the local copy (written off the UI thread).
        QTRY_COMPARE(core::TrackingStore::open(m_db, core::TrackingStore::Mode::ReadOnly)
                         ->samples(m_run)
                         .value(0)
                         .localPath,
                     local);

        // Gone from the cluster: the second open plays from the cache and starts no transfer.
        m_session->remove(m_remoteDir + QStringLiteral("/samples/step-20.mp4"));
        orrery::test::VideoHarness h(m_db);
        gui::VideoView &view = h.view;
        QVERIFY(h.select({m_run}));
        QVERIFY(view.grid()->tiles()[0].source);
        QCOMPARE(view.grid()->tiles()[0].source->path(), local);
        QTRY_COMPARE(view.grid()->tiles()[0].source->state(), media::FrameSource::State::Ready);
        QCOMPARE(view.fetcher()->started(), 0);
    }

    void anUnreachableClusterIsAnErrorTile()
    {
        orrery::test::VideoHarness h(m_db);
        gui::VideoView &view = h.view;
        h.selection.select({m_offlineRun}, nullptr);
        // The event loop keeps running meanwhile (QTRY spins it): the window never waits on SSH.
        QTRY_VERIFY_WITH_TIMEOUT(
            !view.grid()->tiles().isEmpty() &&
                view.grid()->tiles()[0].status.startsWith(QStringLiteral("cannot fetch it from")),
            60'000);
        QVERIFY2(view.grid()->tiles()[0].status.contains(m_offline),
                 qPrintable(view.grid()->tiles()[0].status));
        QVERIFY(!view.grid()->tiles()[0].source);
    }
};

ORRERY_TEST_MAIN(TestVideoFetch, QApplication)
#include "tst_video_fetch.moc"
