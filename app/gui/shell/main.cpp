// SPDX-License-Identifier: GPL-3.0-or-later
#include "clusterview.h"
#include "mainwindow.h"
#include "startoptions.h"

#include "orrery/core/paths.h"
#include "orrery/core/version.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QIcon>

namespace {

struct Options {
    QCommandLineOption db{
        QStringLiteral("db"),
        QStringLiteral("the tracking database (default: $ORRERY_DB, else the data directory's)"),
        QStringLiteral("FILE")};
    QCommandLineOption noFollow{QStringLiteral("no-follow"),
                                QStringLiteral("do not follow active sweeps (only show what the store has)")};
    QCommandLineOption tab{QStringLiteral("tab"),
                           QStringLiteral("open on this tab: runs, compare, video, cluster, environment"),
                           QStringLiteral("NAME")};
    QCommandLineOption select{QStringLiteral("select"),
                              QStringLiteral("select the runs of this sweep (id or name) at start"),
                              QStringLiteral("SWEEP")};
    QCommandLineOption screenshot{QStringLiteral("screenshot"),
                                  QStringLiteral("save the window as PNG once the store is shown, then quit"),
                                  QStringLiteral("FILE")};
    QCommandLineOption cluster{
        QStringLiteral("cluster"),
        QStringLiteral("the cluster profile the Cluster tab and the launcher start on"),
        QStringLiteral("NAME")};
    QCommandLineOption launch{
        QStringLiteral("launch"),
        QStringLiteral("open the sweep launcher on this spec (with --screenshot: save the "
                       "launcher's preview, then quit)"),
        QStringLiteral("FILE")};

    void addTo(QCommandLineParser &parser) const
    {
        parser.setApplicationDescription(
            QStringLiteral("Orrery's desktop workbench: runs, sweeps and their comparison."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addOptions({db, noFollow, tab, select, screenshot, cluster, launch});
    }
};

// --help and --version answer without a display (over SSH, in a container, in a script): a
// QApplication would abort before the parser could print anything.
bool onlyAsksForText(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "-h" || a == "--help" || a == "--help-all" || a == "-?" || a == "-v" || a == "--version")
            return true;
    }
    return false;
}

}  // namespace

int main(int argc, char **argv)
{
    const Options options;
    if (onlyAsksForText(argc, argv)) {
        QCoreApplication app(argc, argv);
        orrery::core::applyApplicationIdentity();
        QCoreApplication::setApplicationName(QStringLiteral("orrery-gui"));
        QCommandLineParser parser;
        options.addTo(parser);
        parser.process(app);  // prints and exits
        return 0;
    }
    QApplication app(argc, argv);
    orrery::core::applyApplicationIdentity();
    QApplication::setApplicationDisplayName(QStringLiteral("Orrery"));
    // The application id: the installed desktop entry's name (packaging/CMakeLists.txt,
    // ORRERY_APP_ID), so a Wayland compositor or a dock finds the window's name and icon.
    QApplication::setDesktopFileName(QStringLiteral("io.github.orrery.Orrery"));
    // The installed icon (hicolor theme) for the title bar where the window system does not take
    // it from the desktop entry (X11); an empty icon where it is not installed.
    QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("io.github.orrery.Orrery")));

    QCommandLineParser parser;
    options.addTo(parser);
    parser.process(app);
    const auto &[db, noFollow, tab, select, screenshot, cluster, launch] = options;

    orrery::gui::MainWindow window(parser.value(db));
    if (parser.isSet(noFollow))
        window.setFollowing(false);
    const QString tabName = parser.value(tab).toLower();
    if (tabName == QLatin1String("compare"))
        window.tabs()->setCurrentIndex(orrery::gui::MainWindow::CompareTab);
    else if (tabName == QLatin1String("video"))
        window.tabs()->setCurrentIndex(orrery::gui::MainWindow::VideoTab);
    else if (tabName == QLatin1String("cluster"))
        window.tabs()->setCurrentIndex(orrery::gui::MainWindow::ClusterTab);
    else if (tabName == QLatin1String("environment"))
        window.tabs()->setCurrentIndex(orrery::gui::MainWindow::EnvironmentTab);
    else if (tabName == QLatin1String("runs"))
        window.tabs()->setCurrentIndex(orrery::gui::MainWindow::RunsTab);
    if (parser.isSet(cluster))
        window.clusterView()->setCluster(parser.value(cluster));
    window.show();
    if (parser.isSet(launch))
        orrery::gui::launchAtStart(window, parser.value(launch), parser.value(cluster),
                                   parser.value(screenshot));
    else
        orrery::gui::applyStartOptions(window, parser.value(select), parser.value(screenshot));
    return QApplication::exec();
}
