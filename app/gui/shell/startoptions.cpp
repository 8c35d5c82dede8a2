// SPDX-License-Identifier: GPL-3.0-or-later
#include "startoptions.h"

#include "clusterview.h"
#include "compareview.h"
#include "launchdialogs.h"
#include "launcher.h"
#include "mainwindow.h"
#include "runselection.h"
#include "runstablemodel.h"
#include "sweeptreemodel.h"
#include "videoview.h"

#include <QCoreApplication>
#include <QTabWidget>
#include <QTimer>
#include <QTreeView>

#include <cstdio>
#include <memory>

namespace orrery::gui {

namespace {

// The sweep named `name` (else the one of that id) in the tree, expanded and selected.
void selectNamedSweep(MainWindow &window, const QString &name)
{
    SweepTreeModel *model = window.treeModel();
    const QModelIndexList found =
        model->match(model->index(0, 0), Qt::DisplayRole, name, -1, Qt::MatchRecursive | Qt::MatchExactly);
    QModelIndex sweep;
    for (const QModelIndex &i : found)
        if (i.data(SweepTreeModel::KindRole).toInt() == SweepTreeModel::SweepItem)
            sweep = i;
    bool isId = false;
    const qint64 id = name.toLongLong(&isId);
    if (!sweep.isValid() && isId)
        sweep = model->sweepIndex(id);
    if (sweep.isValid()) {
        window.sweepTree()->expand(sweep);
        window.sweepTree()->selectionModel()->select(
            sweep, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    }
}

// Saves the window as PNG, says what it shows and quits (0: saved).
void saveScreenshot(MainWindow &window, const QString &path)
{
    const bool ok = window.grab().save(path);
    int sweeps = 0;
    for (int e = 0; e < window.treeModel()->rowCount(); ++e)
        sweeps += window.treeModel()->item(e)->rowCount();
    std::fprintf(stdout, "orrery-gui: %d runs, %d selected, %d sweeps shown; screenshot %s %s\n",
                 window.runsModel()->totalRuns(), int(window.selection()->runs().size()), sweeps,
                 ok ? "saved to" : "FAILED:", qPrintable(path));
    std::fflush(stdout);
    QCoreApplication::exit(ok ? 0 : 1);
}

// The charts re-query on the reader after the selection: shoot once the shown tab has drawn (or
// after 5 s, whatever the charts are doing).
void screenshotWhenDrawn(MainWindow &window, const QString &path)
{
    QWidget *shown = window.tabs()->currentWidget();
    auto shoot = std::make_shared<bool>(false);
    auto save = [&window, path, shoot] {
        if (*shoot)
            return;
        *shoot = true;
        // The Video tab decodes its first frames on the sources' threads after the read.
        QTimer::singleShot(window.tabs()->currentWidget() == window.videoView() ? 1500 : 300, &window,
                           [&window, path] { saveScreenshot(window, path); });
    };
    if (shown == window.videoView())
        QObject::connect(window.videoView(), &VideoView::samplesShown, &window, save);
    else if (shown == window.clusterView())
        QObject::connect(window.clusterView(), &ClusterView::pollShown, &window, save);
    else
        QObject::connect(window.compareView(), &CompareView::queried, &window, save);
    const bool waitsForCluster = shown == window.clusterView() && !window.clusterView()->cluster().isEmpty();
    QTimer::singleShot(waitsForCluster                            ? 30'000
                           : window.selection()->runs().isEmpty() ? 500
                                                                  : 5000,
                       &window, save);
}

}  // namespace

void applyStartOptions(MainWindow &window, const QString &selectSweep, const QString &screenshotPath)
{
    if (selectSweep.isEmpty() && screenshotPath.isEmpty())
        return;
    auto once = std::make_shared<QMetaObject::Connection>();
    *once = QObject::connect(&window, &MainWindow::snapshotShown, &window,
                             [&window, once, selectSweep, screenshotPath] {
                                 QObject::disconnect(*once);
                                 if (!selectSweep.isEmpty())
                                     selectNamedSweep(window, selectSweep);
                                 if (!screenshotPath.isEmpty())
                                     screenshotWhenDrawn(window, screenshotPath);
                             });
}

void launchAtStart(MainWindow &window, const QString &specFile, const QString &cluster,
                   const QString &screenshotPath)
{
    Launcher *launcher = window.launchDialogs()->openLauncher();
    if (!specFile.isEmpty())
        launcher->loadFile(specFile);
    if (!cluster.isEmpty())
        launcher->setTarget(cluster);
    if (screenshotPath.isEmpty())
        return;
    // Once the schema is loaded and the spec checked: the preview filled, then the dialog saved.
    auto once = std::make_shared<QMetaObject::Connection>();
    *once = QObject::connect(launcher, &Launcher::validated, &window, [launcher, once, screenshotPath] {
        QObject::disconnect(*once);
        if (launcher->isValid())
            launcher->preview();
        QTimer::singleShot(300, launcher, [launcher, screenshotPath] {
            const bool ok = launcher->grab().save(screenshotPath);
            std::fprintf(stdout, "orrery-gui: launcher %s; screenshot %s %s\n",
                         launcher->isValid() ? "valid" : "with problems",
                         ok ? "saved to" : "FAILED:", qPrintable(screenshotPath));
            std::fflush(stdout);
            QCoreApplication::exit(ok ? 0 : 1);
        });
    });
}

}  // namespace orrery::gui
