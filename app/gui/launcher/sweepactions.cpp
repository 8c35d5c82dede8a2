// SPDX-License-Identifier: GPL-3.0-or-later
#include "sweepactions.h"

#include "clusterhub.h"
#include "storewriter.h"

#include "orrery/remote/shell.h"
#include "orrery/remote/sweepoperations.h"

#include <QRegularExpression>

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

SweepActions::SweepActions(ClusterHub *hub, StoreWriter *writer, QObject *parent)
    : QObject(parent), m_hub(hub), m_writer(writer)
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
    // On the window's store writer: a cancel or a stop is a scancel or a kill and a few writes
    // (the window's follower settles what they end), a retry one launch.
    m_writer->write<std::pair<QString, bool>>(
        this,
        [source, action, sweep, trial](core::TrackingStore &store) -> std::pair<QString, bool> {
            try {
                remote::SweepOperations::Options options;
                options.connections = source;
                options.settle = remote::Settle::Return;
                remote::SweepOperations ops(store, options);
                switch (action) {
                case Action::CancelSweep:
                    return {ops.cancel(sweep).message, true};
                case Action::StopTrial:
                    return {ops.stopTrial(sweep, trial, tr("from the desktop window")).message, true};
                case Action::RetryTrial:
                    return {ops.retryTrial(sweep, trial).message, true};
                }
                return {{}, false};
            } catch (const std::exception &e) {
                return {QString::fromUtf8(e.what()), false};
            }
        },
        [this](const std::pair<QString, bool> &r) {  // dropped if this object went
            --m_inFlight;
            Q_EMIT done(r.first, r.second);
        });
}

}  // namespace orrery::gui
