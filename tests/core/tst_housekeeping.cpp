// SPDX-License-Identifier: GPL-3.0-or-later
// Run housekeeping (docs/store.md "Run housekeeping"): the store's operations on a real database
// file — a deleted run's rows are gone from every table (read back with SQLite itself), its
// trial keeps its history, an active trial's run is refused; archive hides and includeArchived
// shows; one baseline per experiment — and the `orrery runs` verbs that call them, as a user runs
// them (real processes; stdin is a pipe, so `runs delete` must refuse without --yes).
#include "testsupport.h"

#include "orrery/core/store.h"
#include "orrery/core/storecheck.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <sqlite3.h>

#include <cmath>

using namespace orrery::core;

namespace {

// Rows of `table` that belong to `run`, counted by SQLite itself (not through the store).
qint64 rowsOf(const QString &db, const char *table, RunId run)
{
    sqlite3 *h = nullptr;
    if (sqlite3_open_v2(db.toUtf8().constData(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
        return -1;
    sqlite3_stmt *s = nullptr;
    const std::string sql = std::string("SELECT count(*) FROM ") + table + " WHERE run_id = ?";
    qint64 n = -1;
    if (sqlite3_prepare_v2(h, sql.c_str(), -1, &s, nullptr) == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, run);
        if (sqlite3_step(s) == SQLITE_ROW)
            n = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    sqlite3_close(h);
    return n;
}

struct Db {
    QTemporaryDir dir;
    QString path;
    std::unique_ptr<TrackingStore> store;
    ExperimentId exp = 0;
    SweepId sweep = 0;

    Db()
    {
        path = dir.filePath(QStringLiteral("orrery.sqlite"));
        store = TrackingStore::open(path);
        exp = store->ensureExperiment(QStringLiteral("shapes"));
        Sweep s;
        s.name = QStringLiteral("sw");
        s.experimentId = exp;
        s.method = QStringLiteral("grid");
        s.state = QStringLiteral("running");
        sweep = store->createSweep(s);
    }

    // A run with a param, a tag, metric points, an artifact, an ingest offset and, as trial
    // `index`, an attempt in `state`.
    RunId addRun(const QString &name, int index, TrialState state)
    {
        const RunId r = store->createRun(exp, name, 1'700'000'000'000 + index,
                                         dir.filePath(QStringLiteral("runs/%1").arg(index)));
        store->logParams(r, {{QStringLiteral("optim.lr"), QString::number(index)}});
        store->setTags(r, {{QStringLiteral("team"), QStringLiteral("video")}});
        QList<std::pair<QString, MetricPoint>> pts;
        for (qint64 step = 0; step < 300; ++step)  // more than one 256-point chunk
            pts.push_back({QStringLiteral("loss"), {step, 1'700'000'000'000 + step, 1.0 / double(step + 1)}});
        store->logMetrics(r, pts);
        Artifact a;
        a.path = QStringLiteral("samples/step-5.mp4");
        a.kind = QStringLiteral("video");
        a.step = 5;
        store->addArtifact(r, a);
        store->ingestEvents(
            r, QStringLiteral("events.jsonl"), 0,
            QByteArrayView(R"({"v":1,"t":1700000000,"kind":"metrics","step":400,"values":{"x":1}})"
                           "\n"));
        Trial t;
        t.sweepId = sweep;
        t.index = index;
        t.runId = r;
        t.setState(state);
        t.exitReason = state == TrialState::Failed ? QStringLiteral("exit 3") : QString();
        store->addTrial(t);
        return r;
    }
};

struct Ran {
    int code = -1;
    QString out, err;
};

// A small real filesystem (tmpfs) to fill: where the machine lets the test mount one (root with
// CAP_SYS_ADMIN), else the test says so and skips. Grown in place, as a user frees space.
struct SmallDisk {
    QTemporaryDir dir;
    bool mounted = false;
    explicit SmallDisk(int kb)
    {
        mounted =
            QProcess::execute(QStringLiteral("mount"),
                              {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"),
                               QStringLiteral("size=%1k").arg(kb), QStringLiteral("tmpfs"), dir.path()}) == 0;
    }
    ~SmallDisk()
    {
        if (mounted)
            QProcess::execute(QStringLiteral("umount"), {dir.path()});
    }
    bool grow(int kb) const
    {
        return QProcess::execute(
                   QStringLiteral("mount"),
                   {QStringLiteral("-o"), QStringLiteral("remount,size=%1k").arg(kb), dir.path()}) == 0;
    }
    QStringList files() const { return QDir(dir.path()).entryList(QDir::Files | QDir::Hidden); }
};

}  // namespace

class TestHousekeeping : public QObject {
    Q_OBJECT

    static Ran cli(const QString &db, const QStringList &args, const QByteArray &input = {})
    {
        const orrery::test::Ran r = orrery::test::runProcess(
            qEnvironmentVariable("ORRERY_CLI"), QStringList{QStringLiteral("--db"), db} + args, input);
        return {r.code, r.out, r.err};
    }

private Q_SLOTS:
    void deleteRemovesEveryRowOfTheRunAndKeepsItsTrial()
    {
        Db db;
        const RunId gone = db.addRun(QStringLiteral("gone"), 0, TrialState::Failed);
        const RunId kept = db.addRun(QStringLiteral("kept"), 1, TrialState::Completed);
        for (const char *table : {"params", "tags", "metric_chunks", "latest_metrics", "artifacts",
                                  "ingest_offsets", "run_latest"})
            QVERIFY2(rowsOf(db.path, table, gone) > 0, table);
        db.store->deleteRuns({gone});
        QVERIFY(!db.store->run(gone));
        for (const char *table : {"runs", "params", "tags", "metric_chunks", "latest_metrics", "artifacts",
                                  "ingest_offsets", "run_latest"})
            QVERIFY2(rowsOf(db.path, table, gone) == 0, table);
        // The other run is untouched; the sweep keeps the deleted run's trial, with no run.
        QCOMPARE(db.store->details(kept).params.value(QStringLiteral("optim.lr")), QStringLiteral("1"));
        QCOMPARE(db.store->allPoints(kept, QStringLiteral("loss")).size(), size_t(300));
        const QList<Trial> trials = db.store->trials(db.sweep);
        QCOMPARE(trials.size(), 2);
        QCOMPARE(trials[0].runId, RunId(0));
        QCOMPARE(trials[0].exitReason, QStringLiteral("exit 3"));
        QCOMPARE(trials[1].runId, kept);
    }

    void deleteRefusesAnActiveTrialsRunAndDeletesNothing()
    {
        Db db;
        const RunId done = db.addRun(QStringLiteral("done"), 0, TrialState::Completed);
        const RunId running = db.addRun(QStringLiteral("running"), 1, TrialState::Running);
        try {
            db.store->deleteRuns({done, running});
            QFAIL("an active trial's run was deleted");
        } catch (const StoreError &e) {
            const QString message = QString::fromUtf8(e.what());
            QVERIFY2(message.contains(QLatin1String("still running")) &&
                         message.contains(QLatin1String("trial 1")),
                     qPrintable(message));
        }
        // One transaction: the finished run of the same call stays too.
        QVERIFY(db.store->run(done));
        QVERIFY(db.store->run(running));
        QVERIFY_THROWS_EXCEPTION(StoreError, db.store->deleteRuns({424242}));
    }

    void archiveHidesFromQueriesAndIncludeArchivedShows()
    {
        Db db;
        const RunId a = db.addRun(QStringLiteral("a"), 0, TrialState::Completed);
        const RunId b = db.addRun(QStringLiteral("b"), 1, TrialState::Completed);
        db.store->archiveRuns({a}, true);
        QList<RunRow> rows = db.store->queryRuns({});
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].run.id, b);
        QCOMPARE(db.store->experiments().front().runCount, 1);  // issue 41: the archived one not counted
        RunQuery all;
        all.includeArchived = true;
        rows = db.store->queryRuns(all);
        QCOMPARE(rows.size(), 2);
        QVERIFY(db.store->run(a)->archived);
        db.store->archiveRuns({a}, false);
        QCOMPARE(db.store->queryRuns({}).size(), 2);
        QCOMPARE(db.store->experiments().front().runCount, 2);
        QVERIFY(!db.store->run(a)->archived);
    }

    void oneBaselinePerExperiment()
    {
        Db db;
        const RunId a = db.addRun(QStringLiteral("a"), 0, TrialState::Completed);
        const RunId b = db.addRun(QStringLiteral("b"), 1, TrialState::Completed);
        const ExperimentId other = db.store->ensureExperiment(QStringLiteral("other"));
        const RunId c = db.store->createRun(other, QStringLiteral("c"));
        db.store->setBaseline(a, true);
        db.store->setBaseline(c, true);
        db.store->setBaseline(b, true);  // the star moves from a to b; c's experiment keeps c
        QCOMPARE(db.store->baselineOf(db.exp), std::optional<RunId>(b));
        QCOMPARE(db.store->baselineOf(other), std::optional<RunId>(c));
        QVERIFY(!db.store->details(a).tags.contains(QLatin1String(kBaselineTag)));
        int starred = 0;
        for (const RunRow &r : db.store->queryRuns({}))
            starred += r.isBaseline() ? 1 : 0;
        QCOMPARE(starred, 2);
        db.store->setBaseline(b, false);
        QVERIFY(!db.store->baselineOf(db.exp).has_value());
    }

    void renameNoteAndTags()
    {
        Db db;
        const RunId a = db.addRun(QStringLiteral("a"), 0, TrialState::Completed);
        db.store->renameRun(a, QStringLiteral("  lr-best  "));
        QCOMPARE(db.store->run(a)->name, QStringLiteral("lr-best"));
        QVERIFY_THROWS_EXCEPTION(StoreError, db.store->renameRun(a, QStringLiteral(" ")));
        db.store->setRunNote(a, QStringLiteral("diverged at 40k"));
        QCOMPARE(db.store->details(a).tags.value(QLatin1String(kNoteTag)), QStringLiteral("diverged at 40k"));
        db.store->setRunNote(a, {});
        QVERIFY(!db.store->details(a).tags.contains(QLatin1String(kNoteTag)));
        db.store->removeTags(a, {QStringLiteral("team"), QStringLiteral("absent")});
        QVERIFY(!db.store->details(a).tags.contains(QStringLiteral("team")));
    }

    void cliVerbs()
    {
        Db db;
        const RunId a = db.addRun(QStringLiteral("a"), 0, TrialState::Completed);
        const RunId b = db.addRun(QStringLiteral("b"), 1, TrialState::Completed);
        db.store.reset();
        const QString ida = QString::number(a), idb = QString::number(b);

        Ran r = cli(db.path,
                    {QStringLiteral("runs"), QStringLiteral("tag"), ida, QStringLiteral("stage=final"),
                     QStringLiteral("--remove"), QStringLiteral("team")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = cli(db.path, {QStringLiteral("runs"), QStringLiteral("tag"), ida, QStringLiteral("novalue")});
        QCOMPARE(r.code, 2);
        r = cli(db.path, {QStringLiteral("runs"), QStringLiteral("note"), ida, QStringLiteral("-")},
                "from stdin\nsecond line\n");
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = cli(db.path, {QStringLiteral("runs"), QStringLiteral("rename"), ida, QStringLiteral("best")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = cli(db.path, {QStringLiteral("runs"), QStringLiteral("baseline"), QStringLiteral("best")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = cli(db.path, {QStringLiteral("runs"), QStringLiteral("show"), ida});
        QVERIFY2(r.out.contains(QStringLiteral("\u2605 best")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("note: from stdin\nsecond line")), qPrintable(r.out));
        r = cli(db.path, {QStringLiteral("runs"), QStringLiteral("show"), ida, QStringLiteral("--json")});
        const QJsonObject shown = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(shown.value(QLatin1String("tags")).toObject().value(QLatin1String("stage")).toString(),
                 QStringLiteral("final"));
        QVERIFY(!shown.value(QLatin1String("tags")).toObject().contains(QLatin1String("team")));
        QVERIFY(shown.value(QLatin1String("baseline")).toBool());

        // Archive: gone from `runs list`, back with --archived (marked), restored by --undo.
        r = cli(db.path, {QStringLiteral("runs"), QStringLiteral("archive"), idb});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = cli(db.path, {QStringLiteral("runs"), QStringLiteral("list")});
        QVERIFY2(r.out.contains(QStringLiteral("\u2605 best")) && !r.out.contains(QLatin1String(" b ")),
                 qPrintable(r.out));
        r = cli(db.path, {QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--archived")});
        QVERIFY2(r.out.contains(QLatin1String("b (archived)")), qPrintable(r.out));
        r = cli(db.path,
                {QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--archived"),
                 QStringLiteral("--json")});
        QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).array().size(), 2);
        r = cli(db.path, {QStringLiteral("runs"), QStringLiteral("archive"), idb, QStringLiteral("--undo")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = cli(db.path, {QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--json")});
        QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).array().size(), 2);

        // Delete: stdin is not a terminal, so it refuses (usage) unless --yes.
        r = cli(db.path, {QStringLiteral("runs"), QStringLiteral("delete"), idb}, "yes\n");
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QLatin1String("--yes")), qPrintable(r.err));
        QCOMPARE(TrackingStore::open(db.path)->run(b).has_value(), true);
        r = cli(db.path, {QStringLiteral("runs"), QStringLiteral("delete"), idb, QStringLiteral("--yes")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(TrackingStore::open(db.path)->run(b).has_value(), false);
        r = cli(db.path,
                {QStringLiteral("runs"), QStringLiteral("baseline"), ida, QStringLiteral("--clear")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(!TrackingStore::open(db.path)->baselineOf(db.exp).has_value());
    }

    void cliDeleteOfARunningTrialFails()
    {
        Db db;
        const RunId running = db.addRun(QStringLiteral("running"), 0, TrialState::Running);
        db.store.reset();
        const Ran r = cli(db.path,
                          {QStringLiteral("runs"), QStringLiteral("delete"), QString::number(running),
                           QStringLiteral("--yes")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(QLatin1String("nothing deleted")) &&
                     r.err.contains(QLatin1String("still running")),
                 qPrintable(r.err));
    }
    // Issue 41: the main file alone holds every write once the writer has closed, even where a
    // read-only connection (the window's reader, a monitor) is still open and closes last — a
    // copy of orrery.sqlite without its -wal is what people back up and send.
    void mainFileIsWholeAfterTheWriterCloses()
    {
        Db db;
        auto reader = TrackingStore::open(db.path, TrackingStore::Mode::ReadOnly);
        QCOMPARE(reader->queryRuns({}).size(), 0);
        for (int i = 0; i < 5; ++i)
            db.addRun(QStringLiteral("r%1").arg(i), i, TrialState::Completed);
        db.store->renameRun(db.store->queryRuns({}).front().run.id, QStringLiteral("renamed"));
        db.store.reset();  // the writer goes first; the reader stays open
        QVERIFY(QFileInfo(db.path + QStringLiteral("-wal")).size() == 0 ||
                !QFileInfo::exists(db.path + QStringLiteral("-wal")));
        const QString copy = db.dir.filePath(QStringLiteral("copy.sqlite"));
        QVERIFY(QFile::copy(db.path, copy));  // the main file alone
        reader.reset();
        auto copied = TrackingStore::open(copy, TrackingStore::Mode::ReadOnly);
        const QList<RunRow> runs = copied->queryRuns({});
        QCOMPARE(runs.size(), 5);
        QCOMPARE(runs.back().run.name, QStringLiteral("r0"));
        QVERIFY(std::any_of(runs.cbegin(), runs.cend(),
                            [](const RunRow &r) { return r.run.name == QLatin1String("renamed"); }));
        QCOMPARE(copied->allPoints(runs.front().run.id, QStringLiteral("loss")).size(), size_t(300));
    }
    // Issue 42: `orrery db backup` copies a database that a sweep is writing to, one consistent
    // snapshot — the writer's points during the copy are in the source only, the copy is whole
    // and single-file, and the copy never starts over for a write between two of its steps.
    void backupIsOneSnapshotWhileAWriterWrites()
    {
        Db db;
        for (int i = 0; i < 20; ++i)
            db.addRun(QStringLiteral("r%1").arg(i), i, TrialState::Completed);
        const RunId live = db.store->queryRuns({}).front().run.id;
        const QString copy = db.dir.filePath(QStringLiteral("backup.sqlite"));
        const size_t before = db.store->allPoints(live, QStringLiteral("loss")).size();
        int steps = 0;
        qint64 writes = 0;
        bool sane = true;
        const int pages = backupDatabase(
            db.path, copy,
            [&](int done, int total) {
                ++steps;
                sane = sane && done <= total && total > 0;
                // The sweep's follower writes between two steps (another connection).
                QList<std::pair<QString, MetricPoint>> pts;
                for (int k = 0; k < 50; ++k, ++writes)
                    pts.push_back({QStringLiteral("loss"), {1000 + writes, 1'700'000'100'000 + writes, 0.5}});
                db.store->logMetrics(live, pts);
                return steps < 10'000;  // a copy started over for every write would never end
            },
            4);
        QVERIFY(sane);
        QVERIFY2(pages > 0 && steps > 3,
                 qPrintable(QStringLiteral("%1 pages in %2 steps").arg(pages).arg(steps)));
        QVERIFY(!QFileInfo::exists(copy + QStringLiteral("-wal")));
        QVERIFY(checkDatabase(copy).ok());
        auto copied = TrackingStore::open(copy, TrackingStore::Mode::ReadOnly);
        QCOMPARE(copied->queryRuns({}).size(), 20);
        QCOMPARE(copied->allPoints(live, QStringLiteral("loss")).size(), before);  // as it was at the start
        QCOMPARE(db.store->allPoints(live, QStringLiteral("loss")).size(), before + size_t(writes));
        // Nothing of the copy's work is left beside it.
        QCOMPARE(
            QDir(db.dir.path()).entryList({QStringLiteral(".backup.sqlite*")}, QDir::Hidden | QDir::Files),
            QStringList());
    }

    // A cancelled backup and one into a folder that is not there leave nothing; the target of a
    // cancelled one keeps what it held.
    void aBackupThatFailsLeavesNothing()
    {
        Db db;
        db.addRun(QStringLiteral("r"), 0, TrialState::Completed);
        const QString copy = db.dir.filePath(QStringLiteral("keep.sqlite"));
        QFile old(copy);
        QVERIFY(old.open(QIODevice::WriteOnly) && old.write("yesterday's backup") > 0);
        old.close();
        QCOMPARE(backupDatabase(
                     db.path, copy, [](int, int) { return false; }, 1),
                 -1);
        QFile kept(copy);
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), QByteArray("yesterday's backup"));
        QCOMPARE(QDir(db.dir.path()).entryList({QStringLiteral(".keep.sqlite*")}, QDir::Hidden | QDir::Files),
                 QStringList());
        QVERIFY_THROWS_EXCEPTION(StoreError,
                                 backupDatabase(db.path, db.dir.filePath(QStringLiteral("no/x.sqlite"))));
        QVERIFY_THROWS_EXCEPTION(StoreError, backupDatabase(db.path, db.path));  // onto itself
    }

    // `orrery db check` finds a damaged page, a row naming a run that is gone and a file that is
    // no database, and says what to do; the CLI's exit code says whether it passed.
    void checkFindsDamageAndSaysWhatToDo()
    {
        Db db;
        for (int i = 0; i < 10; ++i)
            db.addRun(QStringLiteral("r%1").arg(i), i, TrialState::Completed);
        db.store.reset();
        Ran r = cli(db.path, {QStringLiteral("db"), QStringLiteral("check")});
        QVERIFY2(r.code == 0 && r.out.contains(QStringLiteral("integrity: ok")), qPrintable(r.out + r.err));
        const QString backup = db.dir.filePath(QStringLiteral("b.sqlite"));
        r = cli(db.path, {QStringLiteral("db"), QStringLiteral("backup"), backup});
        QVERIFY2(r.code == 0 && r.err.contains(QStringLiteral("(100%)")), qPrintable(r.out + r.err));
        r = cli(backup, {QStringLiteral("db"), QStringLiteral("check"), QStringLiteral("--json")});
        QCOMPARE(r.code, 0);
        QVERIFY(QJsonDocument::fromJson(r.out.toUtf8()).object().value(QStringLiteral("ok")).toBool());

        // A tag row of a run that is not there (written with the checks off, as a crashed tool might).
        const QString orphan = db.dir.filePath(QStringLiteral("orphan.sqlite"));
        QVERIFY(QFile::copy(backup, orphan));
        {
            sqlite3 *h = nullptr;
            QCOMPARE(sqlite3_open(orphan.toUtf8().constData(), &h), SQLITE_OK);
            QCOMPARE(sqlite3_exec(h, "PRAGMA foreign_keys=OFF; INSERT INTO tags VALUES (99999, 'k', 'v');",
                                  nullptr, nullptr, nullptr),
                     SQLITE_OK);
            sqlite3_close(h);
        }
        DatabaseCheck c = checkDatabase(orphan);
        QVERIFY(c.integrity.isEmpty());
        QCOMPARE(c.foreignKeys.size(), 1);
        QCOMPARE(c.foreignKeys.front().table, QStringLiteral("tags"));
        QCOMPARE(c.foreignKeys.front().parent, QStringLiteral("runs"));
        r = cli(orphan, {QStringLiteral("db"), QStringLiteral("check")});
        QVERIFY2(r.code == 1 && r.err.contains(QStringLiteral("refer to rows that are gone")),
                 qPrintable(r.err));

        // Pages overwritten in the middle of the file.
        const QString damaged = db.dir.filePath(QStringLiteral("damaged.sqlite"));
        QVERIFY(QFile::copy(backup, damaged));
        {
            QFile f(damaged);
            QVERIFY(f.open(QIODevice::ReadWrite));
            const qint64 size = f.size();
            QVERIFY(size > 8 * 16384);
            QVERIFY(f.seek(size / 2));
            QVERIFY(f.write(QByteArray(3 * 16384, '\x5a')) == 3 * 16384);
        }
        c = checkDatabase(damaged);
        QVERIFY2(!c.ok() && !c.integrity.isEmpty(), qPrintable(c.integrity.join(QLatin1Char('\n'))));
        r = cli(damaged, {QStringLiteral("db"), QStringLiteral("check")});
        QVERIFY2(r.code == 1 && r.err.contains(QStringLiteral(".recover")), qPrintable(r.out + r.err));

        // Not a database at all.
        const QString text = db.dir.filePath(QStringLiteral("notes.sqlite"));
        QFile t(text);
        QVERIFY(t.open(QIODevice::WriteOnly) && t.write(QByteArray(4096, 'a')) == 4096);
        t.close();
        c = checkDatabase(text);
        QVERIFY(!c.openError.isEmpty() && !c.ok());
        r = cli(text, {QStringLiteral("db"), QStringLiteral("check")});
        QVERIFY2(r.code == 1 && r.err.contains(QStringLiteral("cannot be read as a database")),
                 qPrintable(r.err));
    }

    // Issue 42: a backup onto a disk that fills says so and leaves nothing on it.
    void aBackupOntoAFullDiskSaysSoAndLeavesNothing()
    {
        SmallDisk disk(128);
        if (!disk.mounted)
            QSKIP("cannot mount a small tmpfs here (needs root with CAP_SYS_ADMIN)");
        Db db;
        for (int i = 0; i < 40; ++i)
            db.addRun(QStringLiteral("r%1").arg(i), i, TrialState::Completed);
        db.store.reset();  // checkpointed: the main file holds it all
        QVERIFY2(QFileInfo(db.path).size() > 256 * 1024,
                 qPrintable(QString::number(QFileInfo(db.path).size())));
        try {
            backupDatabase(db.path, disk.dir.filePath(QStringLiteral("b.sqlite")));
            QFAIL("a backup larger than the disk succeeded");
        } catch (const StoreError &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("full")), e.what());
        }
        QCOMPARE(disk.files(), QStringList());
    }

    // Issue 42: the store on a disk that fills during ingest: the ingest fails with a clear error,
    // the file stays whole (integrity check), what was committed is exactly what its offset says,
    // and once there is room again the ingest resumes from that offset with no point lost or twice.
    void ingestOnAFullDiskFailsCleanlyAndResumes()
    {
        SmallDisk disk(2048);
        if (!disk.mounted)
            QSKIP("cannot mount a small tmpfs here (needs root with CAP_SYS_ADMIN)");
        const QString path = disk.dir.filePath(QStringLiteral("orrery.sqlite"));
        constexpr int kSteps = 100'000;
        QByteArray events;
        for (int step = 0; step < kSteps; ++step) {
            events += R"({"v":1,"t":)" + QByteArray::number(1'700'000'000 + step) +
                R"(,"kind":"metrics","step":)" + QByteArray::number(step) + R"(,"values":{)";
            for (int k = 0; k < 8; ++k)
                events += (k ? "," : "") + QByteArray("\"m") + QByteArray::number(k) +
                    "\":" + QByteArray::number(std::sin(step * 0.01 + k), 'g', 17);
            events += "}}\n";
        }
        RunId run = 0;
        QString failure;
        {
            auto store = TrackingStore::open(path);
            run = store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("big"));
            for (qint64 offset = 0; offset < events.size() && failure.isEmpty();) {
                try {
                    const IngestResult r =
                        store->ingestEvents(run, QStringLiteral("events.jsonl"), offset,
                                            QByteArrayView(events).sliced(
                                                offset, std::min<qint64>(64 * 1024, events.size() - offset)));
                    offset = r.newOffset;
                } catch (const StoreError &e) {
                    failure = QString::fromUtf8(e.what());
                }
            }
        }
        QVERIFY2(failure.contains(QStringLiteral("full")),
                 qPrintable(failure.isEmpty() ? QStringLiteral("the disk never filled") : failure));
        QVERIFY2(checkDatabase(path).ok(), qPrintable(checkDatabase(path).advice()));
        QVERIFY(disk.grow(64 * 1024));
        auto store = TrackingStore::open(path);
        const IngestState kept = store->ingestState(run, QStringLiteral("events.jsonl"));
        QVERIFY2(kept.offset > 0 && kept.offset < events.size(),
                 qPrintable(
                     QStringLiteral("offset %1 of %2; %3").arg(kept.offset).arg(events.size()).arg(failure)));
        QCOMPARE(qint64(store->allPoints(run, QStringLiteral("m3")).size()),
                 kept.lines);  // what the offset says
        for (qint64 offset = kept.offset; offset < events.size();)
            offset = store
                         ->ingestEvents(run, QStringLiteral("events.jsonl"), offset,
                                        QByteArrayView(events).sliced(
                                            offset, std::min<qint64>(64 * 1024, events.size() - offset)))
                         .newOffset;
        const auto points = store->allPoints(run, QStringLiteral("m3"));
        QCOMPARE(int(points.size()), kSteps);
        for (int step = 0; step < kSteps; ++step)
            QCOMPARE(points[std::size_t(step)].step, qint64(step));
        QVERIFY(checkDatabase(path).ok());
    }

    // The Tags dialog's text against the tags before: a changed line sets, a deleted line removes,
    // Orrery's and MLflow's own tags are neither shown nor touched, a bad line changes nothing.
    void tagTextRoundTripsAndDiffs()
    {
        const QMap<QString, QString> before{{QStringLiteral("team"), QStringLiteral("video")},
                                            {QStringLiteral("note"), QStringLiteral("a b = c")},
                                            {QStringLiteral("mlflow.runName"), QStringLiteral("x")},
                                            {QStringLiteral("orrery.baseline"), QStringLiteral("true")}};
        const QString text = tagText(before);
        QCOMPARE(text, QStringLiteral("note=a b = c\nteam=video\n"));
        TagChanges same = tagChanges(before, text);
        QVERIFY(same.error.isEmpty() && same.set.isEmpty() && same.remove.isEmpty());
        TagChanges edit = tagChanges(before, QStringLiteral("team = audio\n\n  owner=me  \n"));
        QCOMPARE(edit.error, QString());
        QCOMPARE(edit.set,
                 (QList<std::pair<QString, QString>>{{QStringLiteral("owner"), QStringLiteral("me")},
                                                     {QStringLiteral("team"), QStringLiteral("audio")}}));
        QCOMPARE(edit.remove, QStringList{QStringLiteral("note")});
        TagChanges bad = tagChanges(before, QStringLiteral("team=video\njust words"));
        QVERIFY(bad.error.contains(QLatin1String("line 2")));
        QVERIFY(bad.set.isEmpty() && bad.remove.isEmpty());
        QVERIFY(!tagChanges(before, QStringLiteral("orrery.state=done")).error.isEmpty());
        QVERIFY(!tagChanges(before, QStringLiteral("=v")).error.isEmpty());
    }
};

ORRERY_TEST_MAIN(TestHousekeeping, QCoreApplication)
#include "tst_housekeeping.moc"
