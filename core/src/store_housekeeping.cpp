// SPDX-License-Identifier: GPL-3.0-or-later
//
// Run housekeeping (docs/store.md "Run housekeeping"): rename, note, tags removed, archive,
// delete and the experiment's baseline star. The CLI's `orrery runs ...` verbs and the window's
// run menu both call these; each is one write transaction.
#include "storeimpl.h"

#include "orrery/core/states.h"

namespace orrery::core {

using sql::Stmt;

namespace {

// Throws unless `run` exists: a housekeeping call on a run that is not there is the caller's
// mistake (a stale id), never a silent no-op.
void requireRun(TrackingStore::Impl &d, RunId run)
{
    Stmt &s = d.stmt("SELECT 1 FROM runs WHERE run_id = ?");
    s.bind(1, run);
    const bool found = s.step();
    s.reset();
    if (!found)
        throw NotFoundError("no run with id " + std::to_string(run));
}

}  // namespace

void HousekeepingBook::renameRun(RunId run, const QString &name)
{
    if (name.trimmed().isEmpty())
        throw StoreError("renameRun: a run's name cannot be empty");
    d->guarded("renameRun", [&] {
        Impl::Tx tx(*d);
        requireRun(*d, run);
        d->stmt("UPDATE runs SET name = ? WHERE run_id = ?")
            .bind(1, utf8(name.trimmed()))
            .bind(2, run)
            .exec();
        tx.commit();
    });
}

void HousekeepingBook::setRunNote(RunId run, const QString &text)
{
    d->guarded("setRunNote", [&] {
        Impl::Tx tx(*d);
        requireRun(*d, run);
        if (text.trimmed().isEmpty())
            d->stmt("DELETE FROM tags WHERE run_id = ? AND key = ?").bind(1, run).bind(2, kNoteTag).exec();
        else
            d->setTag(run, kNoteTag, utf8(text));
        tx.commit();
    });
}

void HousekeepingBook::removeTags(RunId run, const QStringList &keys)
{
    d->guarded("removeTags", [&] {
        Impl::Tx tx(*d);
        requireRun(*d, run);
        for (const QString &k : keys)
            d->stmt("DELETE FROM tags WHERE run_id = ? AND key = ?").bind(1, run).bind(2, utf8(k)).exec();
        tx.commit();
    });
}

void HousekeepingBook::archiveRuns(const QList<RunId> &runs, bool archived)
{
    d->guarded("archiveRuns", [&] {
        Impl::Tx tx(*d);
        for (RunId run : runs) {
            requireRun(*d, run);
            d->stmt("UPDATE runs SET lifecycle_stage = ? WHERE run_id = ?")
                .bind(1, archived ? "archived" : "active")
                .bind(2, run)
                .exec();
        }
        tx.commit();
    });
}

QList<RunId> HousekeepingBook::archivedRuns() const
{
    return d->guarded("archivedRuns", [&] {
        QList<RunId> out;
        Stmt &s = d->stmt("SELECT run_id FROM runs WHERE lifecycle_stage = 'archived'");
        while (s.step())
            out.push_back(s.int64(0));
        s.reset();
        return out;
    });
}

void HousekeepingBook::deleteRuns(const QList<RunId> &runs)
{
    d->guarded("deleteRuns", [&] {
        Impl::Tx tx(*d);
        for (RunId run : runs) {
            requireRun(*d, run);
            // An active attempt's follower would write the run again at its next tick (or fail
            // on the missing row): cancel or stop the trial first.
            Stmt &t = d->stmt("SELECT t.state, t.trial_index, s.name FROM trials t JOIN sweeps s ON "
                              "s.sweep_id = t.sweep_id "
                              "WHERE t.run_id = ?");
            t.bind(1, run);
            std::string refusal;
            while (refusal.empty() && t.step()) {
                const QString state = qstr(t.text(0));
                if (isActive(trialStateFromText(state)))
                    refusal = "run " + std::to_string(run) + " is trial " + std::to_string(t.int64(1)) +
                        " of sweep '" + std::string(t.text(2)) + "', still " + utf8(state) +
                        ": cancel or stop the trial first (orrery sweep stop/cancel), then delete the run";
            }
            t.reset();
            if (!refusal.empty())
                throw StoreError(refusal);
        }
        // ON DELETE CASCADE (schema.cpp) removes the run's params, tags, metric chunks, latest
        // metrics, run_latest row, artifacts, ingest offsets, phases and mirror bookkeeping;
        // trials.run_id is SET NULL, so the sweep keeps its attempts' history.
        for (RunId run : runs)
            d->stmt("DELETE FROM runs WHERE run_id = ?").bind(1, run).exec();
        tx.commit();
    });
}

void HousekeepingBook::setBaseline(RunId run, bool baseline)
{
    d->guarded("setBaseline", [&] {
        Impl::Tx tx(*d);
        requireRun(*d, run);
        if (baseline) {
            // One baseline per experiment: the star moves.
            d->stmt("DELETE FROM tags WHERE key = ? AND run_id IN (SELECT run_id FROM runs WHERE "
                    "experiment_id = (SELECT experiment_id FROM runs WHERE run_id = ?))")
                .bind(1, kBaselineTag)
                .bind(2, run)
                .exec();
            d->setTag(run, kBaselineTag, "true");
        } else {
            d->stmt("DELETE FROM tags WHERE run_id = ? AND key = ?")
                .bind(1, run)
                .bind(2, kBaselineTag)
                .exec();
        }
        tx.commit();
    });
}

std::optional<RunId> HousekeepingBook::baselineOf(ExperimentId experiment) const
{
    return d->guarded("baselineOf", [&]() -> std::optional<RunId> {
        Stmt &s = d->stmt("SELECT t.run_id FROM tags t JOIN runs r ON r.run_id = t.run_id WHERE "
                          "r.experiment_id = ? AND t.key = ? AND t.value = 'true' LIMIT 1");
        s.bind(1, experiment).bind(2, kBaselineTag);
        std::optional<RunId> out;
        if (s.step())
            out = s.int64(0);
        s.reset();
        return out;
    });
}

bool isUserTag(const QString &key)
{
    return !key.startsWith(QLatin1String("mlflow.")) && !key.startsWith(QLatin1String("orrery."));
}

TagChanges tagChanges(const QMap<QString, QString> &before, const QString &text)
{
    TagChanges out;
    QMap<QString, QString> after;
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString line = lines[i].trimmed();
        if (line.isEmpty())
            continue;
        const qsizetype eq = line.indexOf(QLatin1Char('='));
        const QString key = eq > 0 ? line.left(eq).trimmed() : QString();
        if (key.isEmpty()) {
            out.error = QStringLiteral("line %1: '%2' is not KEY=VALUE").arg(i + 1).arg(line);
            break;
        }
        if (!isUserTag(key)) {
            out.error = QStringLiteral("line %1: %2 is Orrery's or MLflow's own tag").arg(i + 1).arg(key);
            break;
        }
        after.insert(key, line.mid(eq + 1).trimmed());
    }
    if (!out.error.isEmpty())
        return out;
    for (auto it = after.cbegin(); it != after.cend(); ++it)
        if (!before.contains(it.key()) || before.value(it.key()) != it.value())
            out.set.append({it.key(), it.value()});
    for (auto it = before.cbegin(); it != before.cend(); ++it)
        if (isUserTag(it.key()) && !after.contains(it.key()))
            out.remove.append(it.key());
    return out;
}

QString tagText(const QMap<QString, QString> &tags)
{
    QString out;
    for (auto it = tags.cbegin(); it != tags.cend(); ++it)
        if (isUserTag(it.key()))
            out += it.key() + QLatin1Char('=') + it.value() + QLatin1Char('\n');
    return out;
}

}  // namespace orrery::core
