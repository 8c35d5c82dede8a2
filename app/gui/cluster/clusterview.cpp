// SPDX-License-Identifier: GPL-3.0-or-later
#include "clusterview.h"

#include "blockingpool.h"
#include "storewriter.h"

#include "orrery/remote/nodes.h"
#include "orrery/remote/profile.h"

#include <QCheckBox>
#include <QComboBox>
#include <QContextMenuEvent>
#include <QDateTime>
#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QMenu>
#include <QPainter>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtConcurrent>

namespace orrery::gui {

namespace {

constexpr int kTileWidth = 132, kTileHeight = 58, kGap = 6;

QString memoryText(qint64 mb)
{
    return mb >= 1024 ? QStringLiteral("%1G").arg(double(mb) / 1024, 0, 'f', 1)
                      : QStringLiteral("%1M").arg(mb);
}

// Sorts as numbers where the text starts with one: job ids ("123", "123_4") and counts.
class NumericItem : public QTableWidgetItem {
public:
    using QTableWidgetItem::QTableWidgetItem;
    bool operator<(const QTableWidgetItem &other) const override
    {
        // The leading number, then the one after a '_' (an array task) or a '/' (of a total).
        const auto key = [](const QString &t) {
            static const QRegularExpression number(QStringLiteral("^\\s*(\\d+)(?:\\s*[_/]\\s*(\\d+))?"));
            const auto m = number.match(t);
            return std::pair{m.captured(1).toLongLong(), m.captured(2).toLongLong()};
        };
        return key(text()) < key(other.text());
    }
};

// Items are data from the cluster: shown as text, never interpreted.
QTableWidgetItem *item(const QString &text, bool number = false)
{
    auto *i = number ? new NumericItem(text) : new QTableWidgetItem(text);
    i->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    if (number)
        i->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return i;
}

void fill(QTableWidget *table, const QList<QStringList> &rows, const QList<int> &numeric)
{
    table->setSortingEnabled(false);
    table->setRowCount(int(rows.size()));
    for (int r = 0; r < rows.size(); ++r)
        for (int c = 0; c < rows[r].size() && c < table->columnCount(); ++c)
            table->setItem(r, c, item(rows[r][c], numeric.contains(c)));
    table->setSortingEnabled(true);
}

QTableWidget *makeTable(const QStringList &header, QWidget *parent, const QString &name)
{
    auto *t = new QTableWidget(0, int(header.size()), parent);
    t->setObjectName(name);
    t->setHorizontalHeaderLabels(header);
    t->verticalHeader()->hide();
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setWordWrap(false);
    t->horizontalHeader()->setStretchLastSection(true);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    return t;
}

}  // namespace

// --- NodeStrip --------------------------------------------------------------------------------

NodeStrip::NodeStrip(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("nodeStrip"));
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
}

void NodeStrip::setNodes(const QList<remote::slurm::Node> &nodes)
{
    m_nodes = nodes;
    updateGeometry();
    update();
}

void NodeStrip::setSuspects(const QList<core::SuspectNode> &suspects)
{
    m_suspects = suspects;
    update();
}

std::optional<core::SuspectNode> NodeStrip::suspectOf(const QString &node) const
{
    for (const core::SuspectNode &s : m_suspects)
        if (s.node == node)
            return s;
    return std::nullopt;
}

int NodeStrip::tileAt(const QPoint &pos) const
{
    for (int i = 0; i < m_nodes.size(); ++i)
        if (tileRect(i).contains(pos))
            return i;
    return -1;
}

QMenu *NodeStrip::menuAt(const QPoint &pos)
{
    const int i = tileAt(pos);
    if (i < 0)
        return nullptr;
    const QString name = m_nodes[i].name;
    auto *menu = new QMenu(this);
    QAction *clear = menu->addAction(tr("Clear suspect %1").arg(name));
    clear->setObjectName(QStringLiteral("clearSuspect"));
    clear->setEnabled(suspectOf(name).has_value());
    clear->setToolTip(tr("Let new submissions use %1 again").arg(name));
    connect(clear, &QAction::triggered, this, [this, name] { Q_EMIT clearSuspectRequested(name); });
    return menu;
}

void NodeStrip::contextMenuEvent(QContextMenuEvent *event)
{
    QMenu *menu = menuAt(event->pos());
    if (!menu)
        return;
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(event->globalPos());
}

QColor NodeStrip::stateColor(const QString &state)
{
    switch (remote::nodeCondition(state)) {
    case remote::NodeCondition::Unknown:
        return QColor(0x9e, 0x9e, 0x9e);
    case remote::NodeCondition::Down:
        return QColor(0xd3, 0x2f, 0x2f);
    case remote::NodeCondition::Idle:
        return QColor(0x2e, 0x7d, 0x32);
    case remote::NodeCondition::Mixed:
        return QColor(0x19, 0x76, 0xd2);
    case remote::NodeCondition::Allocated:
        return QColor(0x0d, 0x47, 0xa1);
    case remote::NodeCondition::Off:
    case remote::NodeCondition::Other:
        break;
    }
    return QColor(0xf5, 0x7c, 0x00);  // reserved, planned, maint, powering up/down, ...
}

int NodeStrip::columnsFor(int width) const
{
    return std::max(1, (width - kGap) / (kTileWidth + kGap));
}

QRect NodeStrip::tileRect(int index) const
{
    const int columns = columnsFor(width());
    return {kGap + (index % columns) * (kTileWidth + kGap), kGap + (index / columns) * (kTileHeight + kGap),
            kTileWidth, kTileHeight};
}

int NodeStrip::heightForWidth(int width) const
{
    const int columns = columnsFor(width);
    const int rows = std::max<int>(1, int((m_nodes.size() + columns - 1) / columns));
    return kGap + rows * (kTileHeight + kGap);
}

QSize NodeStrip::sizeHint() const
{
    return {4 * (kTileWidth + kGap) + kGap, heightForWidth(4 * (kTileWidth + kGap) + kGap)};
}

void NodeStrip::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    if (m_nodes.isEmpty()) {
        p.setPen(palette().color(QPalette::Disabled, QPalette::WindowText));
        p.drawText(rect(), Qt::AlignCenter, tr("no nodes yet"));
        return;
    }
    const QFontMetrics fm(font());
    for (int i = 0; i < m_nodes.size(); ++i) {
        const remote::slurm::Node &n = m_nodes[i];
        const QRect r = tileRect(i);
        const QColor c = stateColor(n.state);
        const bool suspect = suspectOf(n.name).has_value();
        // A suspect node: a dashed red frame, whatever Slurm says of it.
        p.setPen(suspect ? QPen(QColor(0xd3, 0x2f, 0x2f), 2, Qt::DashLine) : QPen(c, 2));
        p.setBrush(palette().base());
        p.drawRoundedRect(r.adjusted(1, 1, -1, -1), 4, 4);
        p.fillRect(QRect(r.left() + 2, r.top() + 2, 6, r.height() - 4), c);
        const int x = r.left() + 13, w = r.width() - 18;
        p.setPen(palette().color(QPalette::Text));
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(QRect(x, r.top() + 3, w, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                   QFontMetrics(bold).elidedText(n.name, Qt::ElideRight, w));
        p.setFont(font());
        p.setPen(c.darker(110));
        p.drawText(QRect(x, r.top() + 3, w, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
                   fm.elidedText(n.state, Qt::ElideRight, w / 2));
        // GPUs used of total as a bar, then the CPU load.
        const int barY = r.top() + 6 + fm.height();
        const QRect bar(x, barY, w, 8);
        p.setPen(Qt::NoPen);
        p.setBrush(palette().color(QPalette::Midlight));
        p.drawRect(bar);
        if (n.gpusTotal > 0) {
            p.setBrush(c);
            p.drawRect(QRect(bar.left(), bar.top(),
                             bar.width() * std::min(n.gpusUsed, n.gpusTotal) / n.gpusTotal, bar.height()));
        }
        p.setPen(palette().color(QPalette::Text));
        const QString gpus =
            n.gpusTotal > 0 ? tr("GPU %1/%2").arg(n.gpusUsed).arg(n.gpusTotal) : tr("no GPU");
        const QString load = n.cpuLoad >= 0 ? tr("load %1/%2").arg(n.cpuLoad, 0, 'f', 1).arg(n.cpusTotal)
                                            : tr("CPU %1/%2").arg(n.cpusAllocated).arg(n.cpusTotal);
        p.drawText(QRect(x, barY + 10, w, fm.height()), Qt::AlignLeft | Qt::AlignVCenter, gpus);
        p.drawText(QRect(x, barY + 10, w, fm.height()), Qt::AlignRight | Qt::AlignVCenter, load);
    }
}

QString NodeStrip::suspectText(const QString &node) const
{
    const std::optional<core::SuspectNode> s = suspectOf(node);
    if (!s)
        return {};
    return tr("\n\nSuspect (%1): %2\nkept out of new submissions since %3, expires: %4\n"
              "(right-click to clear)")
        .arg(s->source, s->reason,
             QDateTime::fromMSecsSinceEpoch(s->sinceMs).toString(QStringLiteral("yyyy-MM-dd HH:mm")),
             remote::expiresIn(*s, QDateTime::currentMSecsSinceEpoch()));
}

bool NodeStrip::event(QEvent *e)
{
    if (e->type() == QEvent::ToolTip) {
        const auto *help = static_cast<QHelpEvent *>(e);
        for (int i = 0; i < m_nodes.size(); ++i)
            if (tileRect(i).contains(help->pos())) {
                const remote::slurm::Node &n = m_nodes[i];
                QToolTip::showText(help->globalPos(),
                                   tr("%1 — %2\npartitions: %3\nCPUs: %4 allocated, %5 idle of %6%7\n"
                                      "memory: %8 allocated of %9\nGPUs: %10 used of %11 (%12)")
                                           .arg(n.name, n.state, n.partitions.join(QStringLiteral(", ")))
                                           .arg(n.cpusAllocated)
                                           .arg(n.cpusIdle)
                                           .arg(n.cpusTotal)
                                           .arg(n.cpuLoad >= 0 ? tr(", load %1").arg(n.cpuLoad) : QString())
                                           .arg(memoryText(n.memoryAllocatedMb), memoryText(n.memoryMb))
                                           .arg(n.gpusUsed)
                                           .arg(n.gpusTotal)
                                           .arg(n.gres.isEmpty() ? tr("no GRES") : n.gres) +
                                       suspectText(n.name),
                                   this);
                return true;
            }
        QToolTip::hideText();
        e->ignore();
        return true;
    }
    return QWidget::event(e);
}

// --- ClusterView ------------------------------------------------------------------------------

ClusterView::ClusterView(ClusterHub *hub, QWidget *parent)
    : QWidget(parent), m_hub(hub), m_clusters(new QComboBox(this)), m_link(new QLabel(this)),
      m_connect(new QPushButton(tr("Connect"), this)), m_mine(new QCheckBox(tr("Only my jobs"), this)),
      m_notice(new QLabel(this)), m_partitions(makeTable({tr("Partition"), tr("State"), tr("Nodes"),
                                                          tr("CPUs idle"), tr("GPUs used"), tr("Time limit")},
                                                         this, QStringLiteral("partitionsTable"))),
      m_nodes(new NodeStrip(this)),
      m_queue(makeTable({tr("Job"), tr("Name"), tr("State"), tr("Reason"), tr("Partition"), tr("Nodes"),
                         tr("Node list"), tr("Elapsed"), tr("Limit"), tr("GRES")},
                        this, QStringLiteral("queueTable")))
{
    setObjectName(QStringLiteral("clusterView"));
    m_clusters->setObjectName(QStringLiteral("clusterCombo"));
    m_link->setObjectName(QStringLiteral("clusterLink"));
    m_connect->setObjectName(QStringLiteral("connectButton"));
    m_notice->setObjectName(QStringLiteral("clusterNotice"));
    m_notice->setWordWrap(true);
    m_notice->setTextFormat(Qt::PlainText);
    m_mine->setChecked(true);
    QHBoxLayout *bar = buildBar();
    QWidget *clusterArea = buildClusterArea();
    QWidget *local = buildLocalPanel();
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_notice);
    layout->addWidget(clusterArea, 1);
    layout->addWidget(local, 1);
    connectControls();
    reloadProfiles();
}

// Which cluster, its link, Only my jobs, Connect, Refresh and Manage clusters….
QHBoxLayout *ClusterView::buildBar()
{
    m_refresh = new QPushButton(tr("Refresh"), this);
    m_manage = new QPushButton(tr("Manage clusters…"), this);
    m_manage->setObjectName(QStringLiteral("manageButton"));

    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Cluster:"), this));
    bar->addWidget(m_clusters);
    bar->addWidget(m_link);
    bar->addStretch(1);
    bar->addWidget(m_mine);
    bar->addWidget(m_connect);
    bar->addWidget(m_refresh);
    bar->addWidget(m_manage);
    return bar;
}

// Partitions, the node strip and the queue.
QWidget *ClusterView::buildClusterArea()
{
    auto *nodesArea = new QScrollArea(this);
    nodesArea->setWidget(m_nodes);
    nodesArea->setWidgetResizable(true);
    nodesArea->setFrameShape(QFrame::NoFrame);

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_partitions);
    split->addWidget(nodesArea);
    split->addWidget(m_queue);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setStretchFactor(2, 3);
    m_clusterArea = split;
    return split;
}

// No cluster yet: where sweeps go instead (this machine, its cores, memory, GPUs and load), and a
// way to add one.
QWidget *ClusterView::buildLocalPanel()
{
    m_local = new QWidget(this);
    m_local->setObjectName(QStringLiteral("localPanel"));
    auto *headline = new QLabel(tr("<b>No cluster is configured.</b> Sweeps run on this machine (the "
                                   "launcher's \"This machine\"). Add a cluster (or `orrery cluster add`) to "
                                   "run them under Slurm."),
                                m_local);
    headline->setWordWrap(true);
    auto *add = new QPushButton(tr("Add cluster…"), m_local);
    add->setObjectName(QStringLiteral("addClusterButton"));
    auto *addRow = new QHBoxLayout;
    addRow->addWidget(add);
    addRow->addStretch(1);
    const auto value = [this](const char *name) {
        auto *label = new QLabel(m_local);
        label->setObjectName(QLatin1String(name));
        label->setTextFormat(Qt::PlainText);
        label->setWordWrap(true);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
        return label;
    };
    m_machineCores = value("machineCores");
    m_machineMemory = value("machineMemory");
    m_machineGpus = value("machineGpus");
    m_machineLoad = value("machineLoad");
    auto *facts = new QFormLayout;
    facts->addRow(tr("CPU cores:"), m_machineCores);
    facts->addRow(tr("Memory:"), m_machineMemory);
    facts->addRow(tr("GPUs:"), m_machineGpus);
    facts->addRow(tr("Load (1, 5, 15 min):"), m_machineLoad);
    auto *localLayout = new QVBoxLayout(m_local);
    localLayout->addWidget(headline);
    localLayout->addLayout(addRow);
    localLayout->addSpacing(12);
    localLayout->addWidget(new QLabel(tr("<b>This machine</b>"), m_local));
    localLayout->addLayout(facts);
    localLayout->addStretch(1);
    connect(add, &QPushButton::clicked, this, &ClusterView::manageRequested);
    connect(&m_machineWatcher, &QFutureWatcher<core::MachineInfo>::finished, this,
            [this] { showMachine(m_machineWatcher.result()); });
    return m_local;
}

// The poll timer and buttons, the cluster chosen, the hub's polls and link states, a suspect
// node cleared, a job's logs asked for.
void ClusterView::connectControls()
{
    m_timer.setInterval(5000);
    connect(&m_timer, &QTimer::timeout, this, &ClusterView::pollNow);
    connect(m_refresh, &QPushButton::clicked, this, &ClusterView::pollNow);
    connect(m_manage, &QPushButton::clicked, this, &ClusterView::manageRequested);
    connect(m_connect, &QPushButton::clicked, this, [this] {
        if (!cluster().isEmpty()) {
            m_hub->connectNow(cluster());
            pollNow();
        }
    });
    connect(m_mine, &QCheckBox::toggled, this, &ClusterView::pollNow);
    connect(m_clusters, &QComboBox::currentIndexChanged, this, [this] {
        m_partitions->setRowCount(0);
        m_queue->setRowCount(0);
        m_nodes->setNodes({});
        m_lastGoodMs = 0;
        m_notice->clear();
        showLink();
        if (isVisible())
            pollNow();
    });
    connect(m_hub, &ClusterHub::polled, this, &ClusterView::showPoll);
    connect(m_nodes, &NodeStrip::clearSuspectRequested, this, [this](const QString &node) {
        if (!m_writer)
            return;
        const QString name = cluster();
        m_writer->write<int>(
            this, [name, node](core::TrackingStore &s) { return s.clearSuspectNodes(name, node); },
            [this](int) { readSuspects(); });
    });
    connect(m_hub, &ClusterHub::statusChanged, this, [this](const QString &name) {
        if (name == cluster())
            showLink();
    });
    connect(m_queue, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        if (const QTableWidgetItem *id = m_queue->item(row, 0))
            Q_EMIT jobLogsRequested(cluster(), id->text());
    });
}

void ClusterView::reloadProfiles()
{
    const QString current = cluster();
    QStringList names, broken;
    for (const remote::ClusterProfile &p : remote::ProfileStore().list(&broken))
        names << p.name;
    // A broken profile file says so above the others; no profile: the panel about this machine.
    m_notice->setText(broken.join(QLatin1Char('\n')));
    const QSignalBlocker block(m_clusters);
    m_clusters->clear();
    m_clusters->addItems(names);
    const int i = int(names.indexOf(current));
    m_clusters->setCurrentIndex(i >= 0 ? i : (names.isEmpty() ? -1 : 0));
    m_connect->setEnabled(!names.isEmpty());
    showLink();
    showMode();
}

void ClusterView::showMode()
{
    const bool none = m_clusters->count() == 0;
    m_clusterArea->setVisible(!none);
    m_local->setVisible(none);
    m_clusters->setEnabled(!none);
    m_mine->setEnabled(!none);
    if (none && isVisible())
        pollNow();
}

// nvidia-smi may take a moment (a second on a cold driver): on the blocking pool, one at a time.
void ClusterView::showMachine(const core::MachineInfo &m)
{
    ++m_machineReads;
    m_machineCores->setText(QString::number(m.cpuCores));
    m_machineMemory->setText(
        m.memoryGb > 0
            ? tr("%1 GB (%2 GB available)").arg(m.memoryGb, 0, 'f', 1).arg(m.availableGb, 0, 'f', 1)
            : tr("unknown (no /proc/meminfo)"));
    if (!m.gpuProblem.isEmpty())
        m_machineGpus->setText(tr("unknown: %1").arg(m.gpuProblem));
    else if (m.gpus.isEmpty())
        m_machineGpus->setText(m.hasNvidiaSmi ? tr("none (nvidia-smi lists none)")
                                              : tr("none (no nvidia-smi on this machine)"));
    else
        m_machineGpus->setText(m.gpus.join(QLatin1Char('\n')));
    m_machineLoad->setText(m.load1 ? QStringLiteral("%1  %2  %3")
                                         .arg(*m.load1, 0, 'f', 2)
                                         .arg(*m.load5, 0, 'f', 2)
                                         .arg(*m.load15, 0, 'f', 2)
                                   : tr("unknown (no /proc/loadavg)"));
    Q_EMIT machineShown();
}

QString ClusterView::machineText() const
{
    return QStringList{m_machineCores->text(), m_machineMemory->text(), m_machineGpus->text(),
                       m_machineLoad->text()}
        .join(QLatin1Char('\n'));
}

QString ClusterView::cluster() const
{
    return m_clusters->currentText();
}

void ClusterView::setCluster(const QString &name)
{
    m_clusters->setCurrentIndex(m_clusters->findText(name));
}

bool ClusterView::mineOnly() const
{
    return m_mine->isChecked();
}

void ClusterView::pollNow()
{
    if (!cluster().isEmpty())
        m_hub->poll(cluster(), mineOnly());
    else if (m_clusters->count() == 0 && !m_machineWatcher.isRunning())
        m_machineWatcher.setFuture(QtConcurrent::run(blockingPool(), &core::readMachine));
}

void ClusterView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    pollNow();
    m_timer.start();
}

void ClusterView::hideEvent(QHideEvent *event)
{
    QWidget::hideEvent(event);
    m_timer.stop();
}

void ClusterView::showLink()
{
    const QString name = cluster();
    if (name.isEmpty()) {
        m_link->clear();
        return;
    }
    const ClusterHub::Status s = m_hub->status(name);
    QString colour = QStringLiteral("#757575");
    switch (s.link) {
    case ClusterHub::Link::Idle:
        break;
    case ClusterHub::Link::Connecting:
        colour = QStringLiteral("#f57c00");
        break;
    case ClusterHub::Link::Connected:
        colour = QStringLiteral("#2e7d32");
        break;
    case ClusterHub::Link::Lost:
    case ClusterHub::Link::NeedsYou:
        colour = QStringLiteral("#d32f2f");
        break;
    }
    m_link->setText(QStringLiteral("<span style='color:%1'>●</span> %2")
                        .arg(colour, ClusterHub::linkText(s.link).toHtmlEscaped()));
    m_link->setToolTip(s.message);
    m_connect->setText(s.link == ClusterHub::Link::Connected ? tr("Reconnect") : tr("Connect"));
}

void ClusterView::showPoll(const QString &name, const ClusterPoll &poll)
{
    if (name != cluster())
        return;
    ++m_shown;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (!poll.error.isEmpty()) {
        const QString age = m_lastGoodMs
            ? tr(" — showing what was polled %1 s ago").arg((now - m_lastGoodMs) / 1000)
            : QString();
        m_notice->setText(
            tr("%1%2. Tried again every %3 s.").arg(poll.error, age).arg(m_timer.interval() / 1000.0));
        m_notice->setStyleSheet(QStringLiteral("QLabel { color: #b71c1c; }"));
        Q_EMIT pollShown();
        return;
    }
    m_lastGoodMs = now;
    m_notice->setStyleSheet({});
    m_notice->setText(
        tr("%n node(s), %1 job(s) in the queue%2 · polled in %3 ms", nullptr, int(poll.info.nodes.size()))
            .arg(poll.queue.size())
            .arg(poll.mineOnly ? tr(" (mine)") : QString())
            .arg(poll.tookMs));

    QList<QStringList> rows;
    for (const remote::slurm::Partition &p : poll.info.partitions)
        rows << QStringList{p.name + (p.isDefault ? QStringLiteral(" *") : QString()),
                            p.up ? tr("up") : tr("down"),
                            QString::number(p.nodes.size()),
                            QStringLiteral("%1 / %2").arg(p.cpusIdle).arg(p.cpusTotal),
                            p.gpusTotal ? QStringLiteral("%1 / %2").arg(p.gpusUsed).arg(p.gpusTotal)
                                        : tr("—"),
                            p.timeLimit};
    fill(m_partitions, rows, {2, 3, 4});
    m_nodes->setNodes(poll.info.nodes);
    readSuspects();

    rows.clear();
    for (const remote::slurm::Job &j : poll.queue)
        rows << QStringList{
            j.jobId,    j.name,    j.state,     j.reason, j.partition, QString::number(j.nodes),
            j.nodeList, j.elapsed, j.timeLimit, j.gres};
    fill(m_queue, rows, {0, 5});
    Q_EMIT pollShown();
}

// The store's word on the cluster's nodes, read on the writer's thread, shown when it comes.
void ClusterView::readSuspects()
{
    if (!m_writer)
        return;
    const QString name = cluster();
    m_writer->write<QList<core::SuspectNode>>(
        this, [name](core::TrackingStore &s) { return s.suspectNodes(name); },
        [this, name](QList<core::SuspectNode> suspects) {
            if (name != cluster())
                return;  // the choice changed meanwhile
            m_nodes->setSuspects(suspects);
            Q_EMIT suspectsShown();
        });
}

}  // namespace orrery::gui
