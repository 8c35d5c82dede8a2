// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Cluster tab (UX.md "Cluster"): for the chosen cluster profile, its partitions, a strip of
// its nodes (state colour, GPUs used of total, CPU load) and the queue — mine by default — from
// ClusterHub's polls (the terminal monitor's one sinfo and one squeue), every few seconds while
// the tab is shown. The link state sits beside the cluster's name; a poll that fails keeps the
// last data, says why and how old it is, and the next poll tries again. Double-clicking a job
// opens the live tail of its output (LogView). UI thread only: the polls run in ClusterHub.
// With no cluster profile it says so — sweeps then run on this machine — offers "Add cluster…"
// (the connection manager) and shows this machine as `orrery doctor` reads it
// (core::readMachine: CPU cores, memory, GPUs, load), read on the blocking pool when the tab is
// shown, every poll interval while it is, and on Refresh.
#pragma once

#include "clusterhub.h"

#include "orrery/core/diagnostics.h"
#include "orrery/core/store.h"

#include <optional>

#include <QFutureWatcher>
#include <QTimer>
#include <QWidget>

class QCheckBox;
class QMenu;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QPushButton;
class QTableWidget;

namespace orrery::gui {

class StoreWriter;

// The node strip: one tile per node, wrapped to the width. The cluster's suspect nodes (the ones
// Orrery keeps out of submissions: docs/sweeps.md "Bad nodes kept out") get a dashed red frame,
// why in the tooltip, and a context-menu entry that clears them.
class NodeStrip : public QWidget {
    Q_OBJECT
public:
    explicit NodeStrip(QWidget *parent = nullptr);
    void setNodes(const QList<remote::slurm::Node> &nodes);
    const QList<remote::slurm::Node> &nodes() const { return m_nodes; }
    void setSuspects(const QList<core::SuspectNode> &suspects);
    const QList<core::SuspectNode> &suspects() const { return m_suspects; }
    std::optional<core::SuspectNode> suspectOf(const QString &node) const;
    // The context menu of the tile at `pos` (nullptr: no tile there), owned by the caller; a
    // suspect's has "Clear suspect NODE".
    QMenu *menuAt(const QPoint &pos);
    // A node state's colour: idle green, mixed/allocated/completing shades of blue, down, drained
    // and failed red, anything Slurm does not vouch for ("*" not responding, unknown) grey.
    static QColor stateColor(const QString &state);
    QRect tileRect(int index) const;

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;

Q_SIGNALS:
    void clearSuspectRequested(const QString &node);

protected:
    void paintEvent(QPaintEvent *event) override;
    bool event(QEvent *event) override;  // tooltips
    void contextMenuEvent(QContextMenuEvent *event) override;

private:
    int columnsFor(int width) const;
    int tileAt(const QPoint &pos) const;
    QString suspectText(const QString &node) const;  // the tooltip's part on it
    QList<remote::slurm::Node> m_nodes;
    QList<core::SuspectNode> m_suspects;
};

class ClusterView : public QWidget {
    Q_OBJECT
public:
    ClusterView(ClusterHub *hub, QWidget *parent = nullptr);

    // Re-reads the profiles (after the connection manager changed them); keeps the choice.
    void reloadProfiles();
    QString cluster() const;
    void setCluster(const QString &name);
    void setPollInterval(int ms) { m_timer.setInterval(ms); }
    bool mineOnly() const;
    // Where the cluster's suspect nodes are read and cleared (the window's one writer). Without
    // it the strip shows none.
    void setStoreWriter(StoreWriter *writer) { m_writer = writer; }

    QTableWidget *partitionsTable() const { return m_partitions; }
    QTableWidget *queueTable() const { return m_queue; }
    NodeStrip *nodeStrip() const { return m_nodes; }
    QLabel *linkLabel() const { return m_link; }
    QLabel *noticeLabel() const { return m_notice; }
    int pollsShown() const { return m_shown; }
    // No cluster: the panel about this machine (hidden while a cluster is chosen) and what it shows.
    QWidget *localPanel() const { return m_local; }
    QString machineText() const;
    int machineReads() const { return m_machineReads; }

public Q_SLOTS:
    void pollNow();

Q_SIGNALS:
    void manageRequested();
    void jobLogsRequested(const QString &cluster, const QString &jobId);
    void pollShown();  // a poll's result (or error) is on screen
    void suspectsShown();  // the store's suspect nodes of the cluster are on the strip
    void machineShown();  // this machine's figures (no cluster) are on screen

protected:
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    // The constructor's parts.
    QHBoxLayout *buildBar();
    QWidget *buildClusterArea();
    QWidget *buildLocalPanel();
    void connectControls();
    void showPoll(const QString &cluster, const ClusterPoll &poll);
    void showLink();
    void readSuspects();
    void showMachine(const core::MachineInfo &machine);
    void showMode();  // a cluster's tables, or (none configured) this machine

    ClusterHub *m_hub;
    StoreWriter *m_writer = nullptr;
    QComboBox *m_clusters;
    QLabel *m_link;
    QPushButton *m_connect;
    QPushButton *m_refresh = nullptr, *m_manage = nullptr;
    QCheckBox *m_mine;
    QLabel *m_notice;
    QTableWidget *m_partitions;
    NodeStrip *m_nodes;
    QTableWidget *m_queue;
    QWidget *m_clusterArea;
    QWidget *m_local;
    QLabel *m_machineCores, *m_machineMemory, *m_machineGpus, *m_machineLoad;
    QFutureWatcher<core::MachineInfo> m_machineWatcher;
    int m_machineReads = 0;
    QTimer m_timer;
    qint64 m_lastGoodMs = 0;
    int m_shown = 0;
};

}  // namespace orrery::gui
