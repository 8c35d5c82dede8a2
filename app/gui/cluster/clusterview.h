// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Cluster tab (UX.md "Cluster"): for the chosen cluster profile, its partitions, a strip of
// its nodes (state colour, GPUs used of total, CPU load) and the queue — mine by default — from
// ClusterHub's polls (the terminal monitor's one sinfo and one squeue), every few seconds while
// the tab is shown. The link state sits beside the cluster's name; a poll that fails keeps the
// last data, says why and how old it is, and the next poll tries again. Double-clicking a job
// opens the live tail of its output (LogView). UI thread only: the polls run in ClusterHub.
#pragma once

#include "clusterhub.h"

#include <QTimer>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QTableWidget;

namespace orrery::gui {

// The node strip: one tile per node, wrapped to the width.
class NodeStrip : public QWidget {
    Q_OBJECT
public:
    explicit NodeStrip(QWidget *parent = nullptr);
    void setNodes(const QList<remote::slurm::Node> &nodes);
    const QList<remote::slurm::Node> &nodes() const { return m_nodes; }
    // A node state's colour: idle green, mixed/allocated/completing shades of blue, down, drained
    // and failed red, anything Slurm does not vouch for ("*" not responding, unknown) grey.
    static QColor stateColor(const QString &state);
    QRect tileRect(int index) const;

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
    bool event(QEvent *event) override;  // tooltips

private:
    int columnsFor(int width) const;
    QList<remote::slurm::Node> m_nodes;
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

    QTableWidget *partitionsTable() const { return m_partitions; }
    QTableWidget *queueTable() const { return m_queue; }
    NodeStrip *nodeStrip() const { return m_nodes; }
    QLabel *linkLabel() const { return m_link; }
    QLabel *noticeLabel() const { return m_notice; }
    int pollsShown() const { return m_shown; }

public Q_SLOTS:
    void pollNow();

Q_SIGNALS:
    void manageRequested();
    void jobLogsRequested(const QString &cluster, const QString &jobId);
    void pollShown();  // a poll's result (or error) is on screen

protected:
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    void showPoll(const QString &cluster, const ClusterPoll &poll);
    void showLink();

    ClusterHub *m_hub;
    QComboBox *m_clusters;
    QLabel *m_link;
    QPushButton *m_connect;
    QCheckBox *m_mine;
    QLabel *m_notice;
    QTableWidget *m_partitions;
    NodeStrip *m_nodes;
    QTableWidget *m_queue;
    QTimer m_timer;
    qint64 m_lastGoodMs = 0;
    int m_shown = 0;
};

}  // namespace orrery::gui
