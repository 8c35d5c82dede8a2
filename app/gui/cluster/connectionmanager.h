// SPDX-License-Identifier: GPL-3.0-or-later
//
// The connection manager (Cluster → Manage clusters): list, add, edit, test and remove cluster
// profiles — the same files `orrery cluster add/edit/remove` writes (remote::ProfileStore), so
// the CLI and the window see each other's changes. Test runs remote::probeCluster (what
// `orrery cluster test` runs) on a pool thread with SshPrompter's dialogs for the host key and
// secrets; the window stays live and Cancel drops the result. Nothing secret is stored.
#pragma once

#include "orrery/remote/profile.h"

#include <QDialog>
#include <QFutureWatcher>

class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace orrery::gui {

class ClusterHub;
class SshPrompter;

class ConnectionManager : public QDialog {
    Q_OBJECT
public:
    ConnectionManager(ClusterHub *hub, SshPrompter *prompter, QWidget *parent = nullptr);
    ~ConnectionManager() override;

    // The form as a profile (not saved).
    remote::ClusterProfile formProfile() const;
    void showProfile(const remote::ClusterProfile &profile);
    QString selectedName() const;
    bool select(const QString &name);
    // Saves the form; false (and the reason shown) when the store refuses it.
    bool save();
    // Removes the selected profile after asking (`ask` false: tests).
    bool removeSelected(bool ask = true);
    void test();
    bool isTesting() const { return m_testing; }
    QString testReport() const;
    QString message() const;

Q_SIGNALS:
    void profilesChanged();
    void tested(bool ok);

private:
    // The constructor's parts.
    QWidget *buildProfileList();
    QFormLayout *buildForm();
    QWidget *buildEditor();
    void connectActions();
    void reload(const QString &select = {});
    void say(const QString &text, bool error);

    ClusterHub *m_hub;
    SshPrompter *m_prompter;
    QListWidget *m_list;
    QLineEdit *m_name, *m_host, *m_user, *m_identity, *m_knownHosts, *m_proxyJump, *m_remoteRoot,
        *m_partition, *m_account, *m_trainer;
    QSpinBox *m_port;
    QComboBox *m_buildOn;
    QPlainTextEdit *m_setup;
    QLabel *m_message;
    QPlainTextEdit *m_report;
    QProgressBar *m_busy;
    QPushButton *m_cancelTest;
    QPushButton *m_add, *m_remove, *m_save, *m_testButton;
    QFutureWatcher<remote::ClusterReport> m_watcher;
    bool m_testing = false;
    int m_testGeneration = 0;
};

}  // namespace orrery::gui
