// SPDX-License-Identifier: GPL-3.0-or-later
#include "sshprompts.h"

#include <QApplication>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QThread>
#include <QVBoxLayout>

#include <condition_variable>
#include <mutex>

namespace orrery::gui {

struct SshPrompter::Shared {
    std::mutex mutex;
    std::condition_variable cv;
    bool cancelled = false;
    QList<std::shared_ptr<Question>> open;
    QPointer<SshPrompter> prompter;  // read on the UI thread only
};

struct SshPrompter::Question {
    bool done = false;
    std::optional<QList<QByteArray>> answer;
    QPointer<QDialog> dialog;  // UI thread only
};

namespace {

QLabel *wrapped(const QString &text, QWidget *parent)
{
    auto *label = new QLabel(text, parent);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText);  // a server's name or instruction is data, never markup
    return label;
}

}  // namespace

HostKeyDialog::HostKeyDialog(const QString &cluster, const QString &host, const QString &fingerprint,
                             QWidget *parent)
    : QDialog(parent), m_cluster(cluster), m_fingerprint(fingerprint)
{
    setObjectName(QStringLiteral("hostKeyDialog"));
    setWindowTitle(tr("Unknown host — %1").arg(cluster));
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(
        wrapped(tr("%1 has not been seen before: it is not in the known_hosts file. Check its fingerprint "
                   "with your cluster's documentation or administrator before you trust it.")
                    .arg(host),
                this));
    auto *print = new QLabel(fingerprint, this);
    print->setObjectName(QStringLiteral("fingerprint"));
    print->setTextFormat(Qt::PlainText);
    print->setTextInteractionFlags(Qt::TextSelectableByMouse);
    print->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    layout->addWidget(print);
    layout->addWidget(wrapped(tr("Accept records the key in known_hosts; Reject writes nothing."), this));
    auto *buttons = new QDialogButtonBox(this);
    QPushButton *accept = buttons->addButton(tr("Accept and connect"), QDialogButtonBox::AcceptRole);
    accept->setObjectName(QStringLiteral("accept"));
    QPushButton *reject = buttons->addButton(tr("Reject"), QDialogButtonBox::RejectRole);
    reject->setObjectName(QStringLiteral("reject"));
    reject->setDefault(true);  // Enter does not trust a key
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

PromptDialog::PromptDialog(const QString &title, const QString &intro, const QList<Field> &fields,
                           QWidget *parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("promptDialog"));
    setWindowTitle(title);
    auto *layout = new QVBoxLayout(this);
    if (!intro.isEmpty())
        layout->addWidget(wrapped(intro, this));
    auto *form = new QFormLayout;
    for (const Field &f : fields) {
        auto *edit = new QLineEdit(this);
        edit->setEchoMode(f.echo ? QLineEdit::Normal : QLineEdit::Password);
        edit->setObjectName(QStringLiteral("answer%1").arg(m_fields.size()));
        form->addRow(wrapped(f.label, this), edit);
        m_fields.append(edit);
    }
    layout->addLayout(form);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

QList<QByteArray> PromptDialog::answers() const
{
    QList<QByteArray> out;
    for (const QLineEdit *edit : m_fields)
        out.append(edit->text().toUtf8());
    return out;
}

SshPrompter::SshPrompter(QWidget *window, QObject *parent)
    : QObject(parent), m_window(window), m_shared(std::make_shared<Shared>())
{
    m_shared->prompter = this;
}

SshPrompter::~SshPrompter()
{
    cancelAll();
}

void SshPrompter::cancelAll()
{
    QList<std::shared_ptr<Question>> open;
    {
        std::lock_guard lock(m_shared->mutex);
        m_shared->cancelled = true;
        open = m_shared->open;
        for (const auto &q : open) {
            q->done = true;
            q->answer.reset();
        }
    }
    m_shared->cv.notify_all();
    for (const auto &q : open)
        if (q->dialog)
            q->dialog->reject();
}

void SshPrompter::resume()
{
    std::lock_guard lock(m_shared->mutex);
    m_shared->cancelled = false;
}

int SshPrompter::pending() const
{
    std::lock_guard lock(m_shared->mutex);
    return int(m_shared->open.size());
}

void SshPrompter::show(const std::shared_ptr<Question> &q, const QString &cluster, const QString &what,
                       const MakeDialog &makeDialog, const ReadAnswer &readAnswer)
{
    {
        std::lock_guard lock(m_shared->mutex);
        if (q->done)  // cancelled before it showed
            return;
    }
    Q_EMIT asked(cluster, what);
    QDialog *dialog = makeDialog(m_window);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(m_window ? Qt::WindowModal : Qt::ApplicationModal);
    q->dialog = dialog;
    const std::weak_ptr<Shared> weak = m_shared;
    connect(dialog, &QDialog::finished, dialog, [weak, q, dialog, readAnswer](int result) {
        const auto shared = weak.lock();
        if (!shared)
            return;
        std::optional<QList<QByteArray>> answer;
        if (result == QDialog::Accepted)
            answer = readAnswer(dialog);
        {
            std::lock_guard lock(shared->mutex);
            if (q->done)
                return;
            q->done = true;
            q->answer = std::move(answer);
        }
        shared->cv.notify_all();
    });
    dialog->open();
}

std::optional<QList<QByteArray>> SshPrompter::ask(const std::shared_ptr<Shared> &shared,
                                                  const QString &cluster, const QString &what,
                                                  MakeDialog makeDialog, ReadAnswer readAnswer)
{
    if (QThread::currentThread() == qApp->thread()) {
        // Asked on the UI thread itself (a Session used there): nothing to hand over.
        SshPrompter *prompter = shared->prompter;
        if (!prompter || shared->cancelled)
            return std::nullopt;
        Q_EMIT prompter->asked(cluster, what);
        std::unique_ptr<QDialog> dialog(makeDialog(prompter->m_window));
        if (dialog->exec() != QDialog::Accepted)
            return std::nullopt;
        return readAnswer(dialog.get());
    }
    auto q = std::make_shared<Question>();
    {
        std::lock_guard lock(shared->mutex);
        if (shared->cancelled)
            return std::nullopt;
        shared->open.append(q);
    }
    QMetaObject::invokeMethod(
        qApp,
        [shared, q, cluster, what, makeDialog, readAnswer] {
            if (SshPrompter *prompter = shared->prompter) {
                prompter->show(q, cluster, what, makeDialog, readAnswer);
                return;
            }
            {
                std::lock_guard lock(shared->mutex);  // the window is gone: declined
                q->done = true;
            }
            shared->cv.notify_all();
        },
        Qt::QueuedConnection);
    std::unique_lock lock(shared->mutex);
    shared->cv.wait(lock, [&] { return q->done; });
    shared->open.removeOne(q);
    return q->answer;
}

remote::AuthCallbacks SshPrompter::callbacks(const QString &cluster)
{
    const std::shared_ptr<Shared> shared = m_shared;
    remote::AuthCallbacks c;
    c.acceptUnknownHostKey = [shared, cluster](const QString &host, const QString &fingerprint) {
        return ask(
                   shared, cluster, QStringLiteral("host key"),
                   [=](QWidget *parent) { return new HostKeyDialog(cluster, host, fingerprint, parent); },
                   [](QDialog *) { return QList<QByteArray>{}; })
            .has_value();
    };
    auto secret = [shared, cluster](const QString &what, const QString &title, const QString &intro,
                                    const QString &label) -> std::optional<QByteArray> {
        const auto a = ask(
            shared, cluster, what,
            [=](QWidget *parent) {
                return new PromptDialog(title, intro, {{label, false}}, parent);
            },
            [](QDialog *d) { return static_cast<PromptDialog *>(d)->answers(); });
        if (!a || a->isEmpty())
            return std::nullopt;
        return a->front();
    };
    c.passphrase = [secret, cluster](const QString &keyFile) {
        return secret(QStringLiteral("passphrase"), tr("Key passphrase — %1").arg(cluster),
                      tr("The key %1 is protected by a passphrase. It is used for this connection "
                         "only and never stored.")
                          .arg(keyFile),
                      tr("Passphrase:"));
    };
    c.password = [secret, cluster](const QString &userAtHost) {
        return secret(
            QStringLiteral("password"), tr("Password — %1").arg(cluster),
            tr("The password of %1. It is used for this connection only and never stored.").arg(userAtHost),
            tr("Password:"));
    };
    c.keyboardInteractive =
        [shared, cluster](const QString &name, const QString &instruction,
                          const QList<remote::Prompt> &prompts) -> std::optional<QList<QByteArray>> {
        // A round without prompts (OpenSSH's PAM ends with one) has nothing to ask.
        if (prompts.isEmpty())
            return QList<QByteArray>{};
        QList<PromptDialog::Field> fields;
        for (const remote::Prompt &p : prompts)
            fields.append({p.text.trimmed(), p.echo});
        QString intro = name.trimmed();
        if (!instruction.trimmed().isEmpty())
            intro += (intro.isEmpty() ? QString() : QStringLiteral("\n")) + instruction.trimmed();
        const QString title = tr("Sign in — %1").arg(cluster);
        return ask(
            shared, cluster, QStringLiteral("keyboard-interactive"),
            [=](QWidget *parent) {
                auto *d = new PromptDialog(title, intro, fields, parent);
                d->setObjectName(QStringLiteral("keyboardInteractiveDialog"));
                return d;
            },
            [](QDialog *d) { return static_cast<PromptDialog *>(d)->answers(); });
    };
    return c;
}

void SshPrompter::showHostKeyChanged(QWidget *parent, const QString &cluster, const QString &message)
{
    auto *box = new QMessageBox(
        QMessageBox::Critical, tr("Host key changed — %1").arg(cluster),
        tr("The connection to %1 was refused: the host key is not the one on file.").arg(cluster),
        QMessageBox::Ok, parent);
    box->setObjectName(QStringLiteral("hostKeyChangedDialog"));
    box->setTextFormat(Qt::PlainText);
    box->setInformativeText(message);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(parent ? Qt::WindowModal : Qt::ApplicationModal);
    box->open();
}

}  // namespace orrery::gui
