// SPDX-License-Identifier: GPL-3.0-or-later
#include "sweepactions.h"

#include "blockingpool.h"
#include "clusterhub.h"

#include "orrery/core/sweeprunner.h"
#include "orrery/remote/executors.h"
#include "orrery/remote/shell.h"

#include <QRegularExpression>
#include <QtConcurrent>

namespace orrery::gui {

namespace {

QString verb(SweepActions::Action action)
{
    switch (action) {
    case SweepActions::Action::CancelSweep:
        return QStringLiteral("cancel");
    case SweepActions::Action::StopTrial:
        return QStringLiteral("stop");
    case SweepActions::Action::RetryTrial:
        return QStringLiteral("retry");
    }
    return {};
}

}  // namespace

SweepActions::SweepActions(ClusterHub *hub, QObject *parent) : QObject(parent), m_hub(hub)
{ }

QString SweepActions::commandLine(Action action, core::SweepId sweep, int trial) const
{
    QStringList argv{QStringLiteral("orrery")};
    if (!m_database.isEmpty())
        argv << QStringLiteral("--db") << m_database;
    argv << QStringLiteral("sweep") << verb(action) << QString::number(sweep);
    if (action != Action::CancelSweep)
        argv << QString::number(trial);
    // Quoted only where a shell would read something into it, so the usual line stays readable.
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_./:=+-]+$"));
    QStringList words;
    for (const QString &a : argv)
        words << (plain.match(a).hasMatch() ? a : QString::fromUtf8(remote::shellQuote(a.toUtf8())));
    return words.join(QLatin1Char(' '));
}

void SweepActions::run(Action action, core::SweepId sweep, int trial)
{
    const QString what = action == Action::CancelSweep ? tr("Cancelling sweep %1…").arg(sweep)
        : action == Action::StopTrial ? tr("Stopping trial %1 of sweep %2…").arg(trial).arg(sweep)
                                      : tr("Retrying trial %1 of sweep %2…").arg(trial).arg(sweep);
    Q_EMIT started(what);
    ++m_inFlight;
    const auto source = m_hub->connectionSource();
    const QString database = m_database;
    QtConcurrent::run(blockingPool(), [=]() -> std::pair<QString, bool> {
        try {
            QString problem;
            const auto schema = core::TrainerSchema::load(&problem);
            if (!schema)
                return {problem, false};
            auto store = core::TrackingStore::open(database);
            const auto sw = store->sweep(sweep);
            if (!sw)
                return {tr("no sweep %1").arg(sweep), false};
            remote::Executors executors(source);
            core::Executor *executor = executors.get(sw->cluster, &problem);
            if (!executor)
                return {problem, false};
            core::SweepRunner runner(*store, *executor, *schema);
            switch (action) {
            case Action::CancelSweep:
                runner.cancel(sweep);
                return {tr("Sweep %1 (%2) is being cancelled.").arg(sweep).arg(sw->name), true};
            case Action::StopTrial:
                runner.stopTrial(sweep, trial, tr("from the desktop window"));
                return {tr("Trial %1 of %2 is being stopped.").arg(trial).arg(sw->name), true};
            case Action::RetryTrial:
                runner.retryTrial(sweep, trial);
                return {tr("Trial %1 of %2 is running again (a new attempt).").arg(trial).arg(sw->name),
                        true};
            }
            return {{}, false};
        } catch (const std::exception &e) {
            return {QString::fromUtf8(e.what()), false};
        }
    }).then(this, [this](const std::pair<QString, bool> &r) {  // dropped if this object went
        --m_inFlight;
        Q_EMIT done(r.first, r.second);
    });
}

}  // namespace orrery::gui
