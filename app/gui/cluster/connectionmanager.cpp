// SPDX-License-Identifier: GPL-3.0-or-later
#include "connectionmanager.h"

#include "blockingpool.h"
#include "clusterhub.h"
#include "sshprompts.h"

#include "orrery/remote/connection.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent>

namespace orrery::gui {

namespace {

QString reportText(const remote::ClusterProfile &p, const remote::ClusterReport &r)
{
    auto yesNo = [](bool b) { return b ? ConnectionManager::tr("yes") : ConnectionManager::tr("no"); };
    QString s;
    s += ConnectionManager::tr("host:         %1\n").arg(r.where);
    if (!r.fingerprint.isEmpty())
        s += ConnectionManager::tr("host key:     %1\n").arg(r.fingerprint);
    if (r.connected) {
        s += ConnectionManager::tr("slurm:        %1\n").arg(r.slurmVersion);
        s += ConnectionManager::tr("accounting:   %1\n")
                 .arg(r.accounting ? yesNo(*r.accounting) : ConnectionManager::tr("unknown"));
        s += ConnectionManager::tr("remote root:  %1 (writable: %2)\n")
                 .arg(p.remoteRoot, yesNo(r.remoteRootWritable));
        s += ConnectionManager::tr("trainer:      %1\n").arg(remote::trainerSummary(p, r));
        int gpus = 0;
        for (const auto &n : r.info.nodes)
            gpus += n.gpusTotal;
        s += ConnectionManager::tr("partitions:   %1 (%2 nodes, %3 GPUs)\n")
                 .arg(QStringList([&] {
                          QStringList names;
                          for (const auto &x : r.info.partitions)
                              names << x.name + (x.isDefault ? QStringLiteral("*") : QString());
                          return names;
                      }())
                          .join(QStringLiteral(", ")))
                 .arg(r.info.nodes.size())
                 .arg(gpus);
        if (r.setup)
            s += ConnectionManager::tr("setup lines:  exit %1\n%2%3")
                     .arg(r.setup->exitStatus)
                     .arg(QString::fromUtf8(r.setup->out), QString::fromUtf8(r.setup->err));
    }
    if (r.errors.isEmpty())
        s += ConnectionManager::tr("\nEverything a sweep needs is there.\n");
    for (const QString &e : r.errors)
        s += QStringLiteral("\n✗ %1\n").arg(e);
    return s;
}

}  // namespace

ConnectionManager::ConnectionManager(ClusterHub *hub, SshPrompter *prompter, QWidget *parent)
    : QDialog(parent), m_hub(hub), m_prompter(prompter)
{
    setObjectName(QStringLiteral("connectionManager"));
    setWindowTitle(tr("Clusters"));
    resize(860, 600);

    auto *split = new QSplitter(this);
    split->addWidget(buildProfileList());
    split->addWidget(buildEditor());
    split->setStretchFactor(1, 3);
    auto *close = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(split, 1);
    layout->addWidget(close);
    connectActions();
    reload();
}

// The profiles, with New and Remove….
QWidget *ConnectionManager::buildProfileList()
{
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("profileList"));
    m_add = new QPushButton(tr("New"), this);
    m_remove = new QPushButton(tr("Remove…"), this);
    m_remove->setObjectName(QStringLiteral("removeButton"));
    auto *left = new QWidget(this);
    auto *leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(m_list, 1);
    auto *leftButtons = new QHBoxLayout;
    leftButtons->addWidget(m_add);
    leftButtons->addWidget(m_remove);
    leftLayout->addLayout(leftButtons);
    return left;
}

// The profile's fields, as `orrery cluster add` takes them.
QFormLayout *ConnectionManager::buildForm()
{
    auto line = [this](const QString &name, const QString &placeholder = {}) {
        auto *e = new QLineEdit(this);
        e->setObjectName(name);
        e->setPlaceholderText(placeholder);
        return e;
    };
    m_name = line(QStringLiteral("name"), tr("letters, digits, . _ -"));
    m_host = line(QStringLiteral("host"), tr("login.example.org, or a Host of ~/.ssh/config"));
    m_port = new QSpinBox(this);
    m_port->setObjectName(QStringLiteral("port"));
    m_port->setRange(0, 65535);
    m_port->setSpecialValueText(tr("from ~/.ssh/config, else 22"));
    m_user = line(QStringLiteral("user"), tr("from ~/.ssh/config, else your user name"));
    m_identity = line(QStringLiteral("identity"), tr("the agent, ~/.ssh/config's, then ~/.ssh/id_*"));
    m_knownHosts = line(QStringLiteral("knownHosts"), tr("~/.ssh/known_hosts"));
    m_proxyJump = line(QStringLiteral("proxyJump"), tr("[user@]host[:port]"));
    m_remoteRoot = line(QStringLiteral("remoteRoot"), tr("a directory on the shared filesystem"));
    m_partition = line(QStringLiteral("partition"), tr("the cluster's default"));
    m_account = line(QStringLiteral("account"));
    m_trainer = line(QStringLiteral("trainerPath"), tr("empty: Orrery builds its trainer there"));
    m_buildOn = new QComboBox(this);
    m_buildOn->addItems({tr("on the login node"), tr("in a Slurm job")});
    m_setup = new QPlainTextEdit(this);
    m_setup->setObjectName(QStringLiteral("setup"));
    m_setup->setPlaceholderText(tr("module load cuda/12\nsource ~/venv/bin/activate"));
    m_setup->setMaximumHeight(70);
    auto *browse = new QToolButton(this);
    browse->setText(QStringLiteral("…"));
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString f =
            QFileDialog::getOpenFileName(this, tr("Private key"), QDir::homePath() + QStringLiteral("/.ssh"));
        if (!f.isEmpty())
            m_identity->setText(f);
    });
    auto *identityRow = new QHBoxLayout;
    identityRow->addWidget(m_identity);
    identityRow->addWidget(browse);

    auto *form = new QFormLayout;
    form->addRow(tr("Name"), m_name);
    form->addRow(tr("Host"), m_host);
    form->addRow(tr("Port"), m_port);
    form->addRow(tr("User"), m_user);
    form->addRow(tr("Key file"), identityRow);
    form->addRow(tr("known_hosts"), m_knownHosts);
    form->addRow(tr("Proxy jump"), m_proxyJump);
    form->addRow(tr("Remote root"), m_remoteRoot);
    form->addRow(tr("Partition"), m_partition);
    form->addRow(tr("Account"), m_account);
    form->addRow(tr("Setup lines"), m_setup);
    form->addRow(tr("Trainer path"), m_trainer);
    form->addRow(tr("Build the trainer"), m_buildOn);
    return form;
}

// The form, Save and Test, and what the test found.
QWidget *ConnectionManager::buildEditor()
{
    QFormLayout *form = buildForm();  // first: the fields come first in the focus chain
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("message"));
    m_message->setWordWrap(true);
    m_message->setTextFormat(Qt::PlainText);
    m_report = new QPlainTextEdit(this);
    m_report->setObjectName(QStringLiteral("testReport"));
    m_report->setReadOnly(true);
    m_report->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_report->setPlaceholderText(
        tr("Test connects and checks what a sweep needs (as `orrery cluster test`)."));
    m_busy = new QProgressBar(this);
    m_busy->setRange(0, 0);
    m_busy->setMaximumHeight(12);
    m_busy->setTextVisible(false);
    m_busy->hide();
    m_cancelTest = new QPushButton(tr("Cancel test"), this);
    m_cancelTest->hide();

    m_save = new QPushButton(tr("Save"), this);
    m_save->setObjectName(QStringLiteral("saveButton"));
    m_testButton = new QPushButton(tr("Test connection"), this);
    m_testButton->setObjectName(QStringLiteral("testButton"));
    auto *actions = new QHBoxLayout;
    actions->addWidget(m_save);
    actions->addWidget(m_testButton);
    actions->addWidget(m_busy, 1);
    actions->addWidget(m_cancelTest);

    auto *right = new QWidget(this);
    auto *rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addLayout(form);
    rightLayout->addLayout(actions);
    rightLayout->addWidget(m_message);
    rightLayout->addWidget(m_report, 1);
    return right;
}

// Choosing a profile, New, Remove…, Save, Test and its result.
void ConnectionManager::connectActions()
{
    connect(m_list, &QListWidget::currentTextChanged, this, [this](const QString &name) {
        try {
            if (const auto p = remote::ProfileStore().find(name))
                showProfile(*p);
        } catch (const remote::ProfileError &e) {
            say(e.message(), true);
        }
    });
    connect(m_add, &QPushButton::clicked, this, [this] {
        m_list->clearSelection();
        m_list->setCurrentRow(-1);
        showProfile({});
        m_name->setFocus();
    });
    connect(m_remove, &QPushButton::clicked, this, [this] { removeSelected(); });
    connect(m_save, &QPushButton::clicked, this, &ConnectionManager::save);
    connect(m_testButton, &QPushButton::clicked, this, &ConnectionManager::test);
    connect(m_cancelTest, &QPushButton::clicked, this, [this] {
        ++m_testGeneration;  // the probe's result is dropped when it comes
        m_testing = false;
        m_busy->hide();
        m_cancelTest->hide();
        if (m_prompter) {  // a host-key or password dialog of the test closes
            m_prompter->cancelAll();
            m_prompter->resume();
        }
        say(tr("Test cancelled."), false);
    });
    connect(&m_watcher, &QFutureWatcher<remote::ClusterReport>::finished, this, [this] {
        if (m_watcher.property("generation").toInt() != m_testGeneration)
            return;
        m_testing = false;
        m_busy->hide();
        m_cancelTest->hide();
        const remote::ClusterReport r = m_watcher.result();
        m_report->setPlainText(reportText(formProfile(), r));
        say(r.ok() ? tr("%1 is ready for sweeps.").arg(formProfile().name)
                   : tr("%n problem(s): see below.", nullptr, int(r.errors.size())),
            !r.ok());
        Q_EMIT tested(r.ok());
    });
}

ConnectionManager::~ConnectionManager()
{
    // A probe may be waiting on a dialog of this window: answer it, then let it finish.
    if (m_prompter && m_testing) {
        m_prompter->cancelAll();
        m_watcher.waitForFinished();
        m_prompter->resume();
    } else {
        m_watcher.waitForFinished();
    }
}

void ConnectionManager::reload(const QString &selectName)
{
    const QSignalBlocker block(m_list);
    m_list->clear();
    QStringList broken;  // listed apart: a broken file does not hide the other profiles
    for (const remote::ClusterProfile &p : remote::ProfileStore().list(&broken))
        m_list->addItem(p.name);
    if (!broken.isEmpty())
        say(broken.join(QLatin1Char('\n')), true);
    if (!selectName.isEmpty())
        select(selectName);
    else if (m_list->count() > 0)
        select(m_list->item(0)->text());
}

bool ConnectionManager::select(const QString &name)
{
    const auto found = m_list->findItems(name, Qt::MatchExactly);
    if (found.isEmpty())
        return false;
    m_list->setCurrentItem(found.front());
    try {
        if (const auto p = remote::ProfileStore().find(name))
            showProfile(*p);
    } catch (const remote::ProfileError &e) {
        say(e.message(), true);
    }
    return true;
}

QString ConnectionManager::selectedName() const
{
    return m_list->currentItem() ? m_list->currentItem()->text() : QString();
}

void ConnectionManager::showProfile(const remote::ClusterProfile &p)
{
    m_name->setText(p.name);
    m_host->setText(p.host);
    m_port->setValue(p.port);
    m_user->setText(p.user);
    m_identity->setText(p.identityFile);
    m_knownHosts->setText(p.knownHostsFile);
    m_proxyJump->setText(p.proxyJump);
    m_remoteRoot->setText(p.remoteRoot);
    m_partition->setText(p.partition);
    m_account->setText(p.account);
    m_setup->setPlainText(p.setup.join(QLatin1Char('\n')));
    m_trainer->setText(p.trainerPath);
    m_buildOn->setCurrentIndex(p.buildOn == remote::ClusterProfile::BuildOn::Job ? 1 : 0);
    m_report->clear();
    m_message->clear();
}

remote::ClusterProfile ConnectionManager::formProfile() const
{
    remote::ClusterProfile p;
    p.name = m_name->text().trimmed();
    p.host = m_host->text().trimmed();
    p.port = m_port->value();
    p.user = m_user->text().trimmed();
    p.identityFile = m_identity->text().trimmed();
    p.knownHostsFile = m_knownHosts->text().trimmed();
    p.proxyJump = m_proxyJump->text().trimmed();
    p.remoteRoot = m_remoteRoot->text().trimmed();
    p.partition = m_partition->text().trimmed();
    p.account = m_account->text().trimmed();
    for (const QString &l : m_setup->toPlainText().split(QLatin1Char('\n')))
        if (!l.trimmed().isEmpty())
            p.setup << l;
    p.trainerPath = m_trainer->text().trimmed();
    p.buildOn = m_buildOn->currentIndex() == 1 ? remote::ClusterProfile::BuildOn::Job
                                               : remote::ClusterProfile::BuildOn::Login;
    return p;
}

bool ConnectionManager::save()
{
    const remote::ClusterProfile p = formProfile();
    try {
        if (!remote::ProfileStore::isValidName(p.name))
            throw remote::ProfileError(
                tr("'%1' cannot be a cluster name: use letters, digits, '.', '_' and '-' (not first)")
                    .arg(p.name));
        // The same checks as reading the file back (host, root, proxy, ...), before writing it.
        remote::ProfileStore().save(remote::ClusterProfile::fromJson(p.toJson()));
    } catch (const remote::ProfileError &e) {
        say(e.message(), true);
        return false;
    }
    m_hub->forget(p.name);  // a new host or key: the next use connects afresh
    reload(p.name);
    say(tr("Saved %1 (%2).").arg(p.name, remote::ProfileStore().pathOf(p.name)), false);
    Q_EMIT profilesChanged();
    return true;
}

bool ConnectionManager::removeSelected(bool ask)
{
    const QString name = selectedName();
    if (name.isEmpty())
        return false;
    if (ask &&
        QMessageBox::question(this, tr("Remove %1").arg(name),
                              tr("Remove the cluster profile %1? Its runs stay in the store; sweeps on it "
                                 "are no longer followed until a profile of that name exists again.")
                                  .arg(name)) != QMessageBox::Yes)
        return false;
    remote::ProfileStore().remove(name);
    m_hub->forget(name);
    reload();
    say(tr("Removed %1.").arg(name), false);
    Q_EMIT profilesChanged();
    return true;
}

void ConnectionManager::test()
{
    if (m_testing)
        return;
    const remote::ClusterProfile p = formProfile();
    if (p.host.isEmpty()) {
        say(tr("A host is needed."), true);
        return;
    }
    m_testing = true;
    m_busy->show();
    m_cancelTest->show();
    m_report->setPlainText(tr("Connecting to %1…").arg(p.host));
    say({}, false);
    const remote::AuthCallbacks callbacks =
        m_prompter ? m_prompter->callbacks(p.name) : remote::AuthCallbacks{};
    m_watcher.setProperty("generation", ++m_testGeneration);
    m_watcher.setFuture(
        QtConcurrent::run(blockingPool(), [p, callbacks] { return remote::probeCluster(p, callbacks); }));
}

QString ConnectionManager::testReport() const
{
    return m_report->toPlainText();
}

QString ConnectionManager::message() const
{
    return m_message->text();
}

void ConnectionManager::say(const QString &text, bool error)
{
    m_message->setText(text);
    m_message->setStyleSheet(error ? QStringLiteral("QLabel { color: #b71c1c; }") : QString());
}

}  // namespace orrery::gui
