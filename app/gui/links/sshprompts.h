// SPDX-License-Identifier: GPL-3.0-or-later
//
// The SSH questions as dialogs (issue: connection manager). libssh asks them on the connection's
// own thread (remote::Connection's worker) in the middle of connect(); SshPrompter hands each to
// the UI thread, shows a window-modal dialog there without a nested event loop (open(), not
// exec()), and blocks only the asking thread until the person answers, declines or the window
// closes (cancelAll()). Nothing typed is stored: a passphrase or an answer lives in the asking
// thread's QByteArray until libssh has it.
//
//  - an unknown host: its SHA256 fingerprint, Accept (Session records it in known_hosts) or
//    Reject (nothing is written) — HostKeyDialog;
//  - a key's passphrase, a password: one hidden field — SecretDialog;
//  - keyboard-interactive (2FA): the server's name, instruction and one field per prompt, hidden
//    unless the server asks to echo — KeyboardInteractiveDialog.
// A changed host key is not a question (Session refuses it); showHostKeyChanged() says so with
// both fingerprints and what to do.
#pragma once

#include "orrery/remote/session.h"

#include <QDialog>
#include <QList>
#include <QObject>
#include <QPointer>

#include <functional>
#include <memory>
#include <optional>

class QLineEdit;
class QWidget;

namespace orrery::remote {
class RemoteError;
}

namespace orrery::gui {

class HostKeyDialog : public QDialog {
    Q_OBJECT
public:
    HostKeyDialog(const QString &cluster, const QString &host, const QString &fingerprint, QWidget *parent);
    QString cluster() const { return m_cluster; }
    QString fingerprint() const { return m_fingerprint; }

private:
    QString m_cluster, m_fingerprint;
};

// Fields in order; each answer is its field's text as UTF-8.
class PromptDialog : public QDialog {
    Q_OBJECT
public:
    struct Field {
        QString label;
        bool echo = false;
    };
    PromptDialog(const QString &title, const QString &intro, const QList<Field> &fields, QWidget *parent);
    QList<QByteArray> answers() const;
    QList<QLineEdit *> fields() const { return m_fields; }

private:
    QList<QLineEdit *> m_fields;
};

class SshPrompter : public QObject {
    Q_OBJECT
public:
    // `window`: the dialogs' parent (window-modal on it); may be null.
    explicit SshPrompter(QWidget *window, QObject *parent = nullptr);
    ~SshPrompter() override;

    // The callbacks for one cluster's connections. Safe to call from any thread; they block
    // that thread until answered (on the UI thread itself they run the dialog with exec()).
    remote::AuthCallbacks callbacks(const QString &cluster);

    // Answers every open question with "declined" and closes its dialog; later questions are
    // declined at once until resume(). Called before the window's connections are destroyed
    // (their threads may be waiting on a dialog).
    void cancelAll();
    void resume();
    QWidget *window() const { return m_window; }
    // Questions waiting for an answer now (tests).
    int pending() const;

    // A changed host key: a message box with both fingerprints (from the error's text) and what
    // to do. Non-blocking (open()).
    static void showHostKeyChanged(QWidget *parent, const QString &cluster, const QString &message);

Q_SIGNALS:
    void asked(const QString &cluster, const QString &what);  // a dialog is about to show

private:
    // The questions' state, shared with the callbacks (they may outlive this object: a
    // follower's connection; they then decline).
    struct Shared;
    struct Question;
    using MakeDialog = std::function<QDialog *(QWidget *parent)>;
    using ReadAnswer = std::function<QList<QByteArray>(QDialog *)>;
    // Shows the dialog on the UI thread and waits for it; nullopt when declined or cancelled.
    static std::optional<QList<QByteArray>> ask(const std::shared_ptr<Shared> &shared, const QString &cluster,
                                                const QString &what, MakeDialog makeDialog,
                                                ReadAnswer readAnswer);
    void show(const std::shared_ptr<Question> &question, const QString &cluster, const QString &what,
              const MakeDialog &makeDialog, const ReadAnswer &readAnswer);

    QPointer<QWidget> m_window;
    std::shared_ptr<Shared> m_shared;
};

}  // namespace orrery::gui
