// SPDX-License-Identifier: GPL-3.0-or-later
#include "environmentchecks.h"

#include "blockingpool.h"
#include "environmentmodel.h"

#include "orrery/remote/diagnostics.h"

#include <QHeaderView>
#include <QTableView>
#include <QtConcurrent>

#include <algorithm>

namespace orrery::gui {

EnvironmentChecks::EnvironmentChecks(EnvironmentModel *model, QTableView *view, QObject *parent)
    : QObject(parent), m_model(model), m_view(view)
{
    m_view->setModel(m_model);
    m_view->setObjectName(QStringLiteral("environmentView"));
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setWordWrap(false);
    connect(&m_watcher, &QFutureWatcher<QList<core::Check>>::finished, this, &EnvironmentChecks::showChecks);
}

void EnvironmentChecks::waitForChecks()
{
    m_watcher.waitForFinished();
}

void EnvironmentChecks::refresh()
{
    if (m_watcher.isRunning())
        return;
    Q_EMIT message(tr("Checking the environment…"), 3000);
    m_watcher.setFuture(QtConcurrent::run(blockingPool(), &remote::environmentChecks));
}

void EnvironmentChecks::showChecks()
{
    const QList<core::Check> checks = m_watcher.result();
    m_model->setChecks(checks);
    m_view->resizeColumnToContents(EnvironmentModel::StatusColumn);
    m_view->resizeColumnToContents(EnvironmentModel::NameColumn);
    const auto failed = std::count_if(checks.cbegin(), checks.cend(), [](const core::Check &c) {
        return c.status == core::Check::Status::Failed;
    });
    if (failed)
        Q_EMIT message(tr("%n environment check(s) failed (Environment tab)", nullptr, int(failed)), 0);
    Q_EMIT refreshed();
}

}  // namespace orrery::gui
