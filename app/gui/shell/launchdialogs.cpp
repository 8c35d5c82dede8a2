// SPDX-License-Identifier: GPL-3.0-or-later
#include "launchdialogs.h"

#include "clusterview.h"
#include "connectionmanager.h"
#include "launcher.h"
#include "storereader.h"
#include "windowsettings.h"

#include <QDir>
#include <QPlainTextEdit>
#include <QSettings>
#include <QTabWidget>

#include <optional>

namespace orrery::gui {

namespace {

// The spec last edited (kept across restarts), not the template again: what was just submitted,
// or half-written, is where the user left it.
void restoreLastSpec(Launcher *launcher)
{
    const auto settings = windowSettings();
    const QString text = settings->value(QStringLiteral("launcher/spec")).toString();
    if (!text.trimmed().isEmpty())
        launcher->setSpec(text, settings->value(QStringLiteral("launcher/path")).toString(),
                          settings->value(QStringLiteral("launcher/target")).toString());
}

void rememberSpec(const Launcher *launcher)
{
    const auto settings = windowSettings();
    settings->setValue(QStringLiteral("launcher/spec"), launcher->editor()->toPlainText());
    settings->setValue(QStringLiteral("launcher/path"), launcher->specPath());
    settings->setValue(QStringLiteral("launcher/target"), launcher->target());
}

}  // namespace

LaunchDialogs::LaunchDialogs(QWidget *window, ClusterHub *hub, SshPrompter *prompter, StoreReader *reader,
                             StoreWriter *writer, QTabWidget *tabs, ClusterView *clusterView)
    : QObject(window), m_window(window), m_hub(hub), m_prompter(prompter), m_reader(reader), m_writer(writer),
      m_tabs(tabs), m_clusterView(clusterView)
{ }

Launcher *LaunchDialogs::openLauncher()
{
    if (auto *open = m_window->findChild<Launcher *>(); open && open->isVisible()) {
        open->raise();
        open->activateWindow();
        return open;
    }
    auto *launcher = new Launcher(m_hub, m_writer, m_window);
    launcher->setAttribute(Qt::WA_DeleteOnClose);
    restoreLastSpec(launcher);
    auto remember = [launcher] { rememberSpec(launcher); };
    connect(launcher, &QDialog::finished, this, remember);
    connect(launcher, &Launcher::submitted, this, remember);
    if (!m_clusterView->cluster().isEmpty() && m_tabs->currentWidget() == m_clusterView)
        launcher->setTarget(m_clusterView->cluster());
    connect(launcher, &Launcher::progress, this,
            [this](const QString &text) { Q_EMIT activity(text, true); });
    connect(launcher, &Launcher::submitFailed, this, [this](const QString &) { Q_EMIT activity({}, false); });
    connect(launcher, &Launcher::submitted, this, [this](qint64 sweep, const QString &name) {
        Q_EMIT activity({}, false);
        Q_EMIT message(tr("Sweep %1 (%2) submitted; following it.").arg(sweep).arg(name), 10'000);
        Q_EMIT submitted(sweep);
    });
    launcher->show();
    return launcher;
}

Launcher *LaunchDialogs::openSweepInLauncher(core::SweepId sweep, bool submit)
{
    Launcher *launcher = openLauncher();
    m_reader->read<std::optional<core::Sweep>>(
        launcher, [sweep](const core::TrackingStore &s) { return s.sweep(sweep); },
        [launcher, submit](const std::optional<core::Sweep> &sw) {
            if (!sw)
                return;
            // Its spec file's path (relative paths in it resolve as they did), else its directory.
            launcher->setSpec(sw->spec,
                              sw->specFile.isEmpty()
                                  ? QDir(sw->rootDir).filePath(QStringLiteral("sweep.yaml"))
                                  : sw->specFile,
                              sw->cluster);
            if (submit)
                launcher->submitWhenValid();
        });
    return launcher;
}

void LaunchDialogs::openConnectionManager()
{
    auto *manager = new ConnectionManager(m_hub, m_prompter, m_window);
    manager->setAttribute(Qt::WA_DeleteOnClose);
    if (!m_clusterView->cluster().isEmpty())
        manager->select(m_clusterView->cluster());
    connect(manager, &ConnectionManager::profilesChanged, m_clusterView, &ClusterView::reloadProfiles);
    manager->show();
}

}  // namespace orrery::gui
