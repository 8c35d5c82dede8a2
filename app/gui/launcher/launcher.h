// SPDX-License-Identifier: GPL-3.0-or-later
//
// The sweep launcher (Ctrl+L, UX.md): a YAML editor for a sweep spec, checked as it is typed
// against the trainer's schema by the same core code as `orrery sweep plan`
// (remote::SweepOperations::checkSpecText), then — off the UI thread, once the schema's checks
// pass — by the trainer's own rules across keys (core::checkPlanWithTrainer's halves: `orrery-train
// --check-config` on the first trials' configs, each verdict remembered by its config's text so a
// retyped spec is not checked twice): each problem is underlined at its line and listed beside
// the editor. Where it runs: this machine or a cluster profile. Preview shows what
// `sweep submit --dry-run` prints (SweepOperations::preview): the trial table, the worst-case
// GPU-hours and cost, and what would be launched — the sbatch script or the local command lines;
// while the editor shows problems it shows those instead, never an earlier spec's trials.
// Submit is `orrery sweep submit`'s operation (SweepOperations::submit: the trainer's own config
// checks, deploying the trainer where a cluster lacks it, then the submission) over the window's
// connections, on a pool thread, with progress and Cancel. The new sweep then shows in the tree
// and the window's follower follows it.
#pragma once

#include "orrery/core/sweepplan.h"
#include "orrery/core/sweepspec.h"
#include "orrery/remote/sweepoperations.h"

#include <QDialog>
#include <QFutureWatcher>
#include <QHash>
#include <QSyntaxHighlighter>
#include <QTimer>

#include <atomic>
#include <memory>
#include <optional>

class QComboBox;
class QHBoxLayout;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTableWidget;

namespace orrery::gui {

class ClusterHub;
class StoreWriter;

// Keys, comments, strings, numbers and booleans of YAML, line by line.
class YamlHighlighter : public QSyntaxHighlighter {
public:
    explicit YamlHighlighter(QTextDocument *document);

protected:
    void highlightBlock(const QString &text) override;
};

class Launcher : public QDialog {
    Q_OBJECT
public:
    // `writer`: the window's store writer, where the sweep is recorded.
    Launcher(ClusterHub *hub, StoreWriter *writer, QWidget *parent = nullptr);
    ~Launcher() override;

    QPlainTextEdit *editor() const { return m_editor; }
    // Where the spec is (or would be) saved: a relative trainer.config is relative to it.
    void setSpecPath(const QString &path);
    QString specPath() const { return m_path; }
    bool loadFile(const QString &path);
    // A spec to edit: its text, the path it is (or would be) saved at, where it would run. The
    // window's "Open in launcher" (a recorded sweep's spec) and the last edited spec use it.
    void setSpec(const QString &text, const QString &path, const QString &cluster);
    void setTarget(const QString &cluster);  // "" = this machine
    QString target() const;

    // Validates what the editor holds now (normally 250 ms after the last keystroke): the
    // schema's checks at once, then the trainer's (validated() again when its verdicts come).
    void validateNow();
    bool isValid() const { return m_plan.has_value(); }
    // The trainer is still checking the configs of what the editor holds.
    bool trainerCheckPending() const { return m_trainerPending; }
    bool schemaReady() const { return m_schema.has_value(); }
    QList<core::SpecError> problems() const { return m_problems; }
    QList<int> underlinedLines() const;  // 1-based lines of the underlined problems
    QListWidget *problemList() const { return m_problemList; }

    void preview();
    QTableWidget *trialTable() const { return m_trials; }
    QString scriptText() const;
    // Above the preview: why it is empty or may still change ("" when it shows the spec as typed).
    QString previewNote() const;
    // How messages name the spec: its file when the editor holds what is saved there, else the
    // editor's unsaved text (a path that does not exist, or holds something else, would mislead).
    QString specLabel() const;

    void submit();
    // Submits as soon as the spec's checks pass ("Launch again"); with problems it stays open
    // showing them, and submits nothing.
    void submitWhenValid();
    bool isSubmitting() const { return m_submitting; }
    QString statusText() const;

Q_SIGNALS:
    void validated();
    void previewed();
    void submitted(qint64 sweep, const QString &name);
    void submitFailed(const QString &message);
    void progress(const QString &message);  // long work, for the status bar too

private:
    // The constructor's parts.
    QHBoxLayout *buildTargetBar();
    QWidget *buildEditorArea();
    QWidget *buildPreviewArea();
    QHBoxLayout *buildButtonBar();
    void connectEditing();
    void connectWork();
    void showProblems();
    void setBusy(bool busy, const QString &text = {});
    void checkWithTrainer();
    void applyVerdicts(const QStringList &verdicts);
    void showPreview();
    void showPreviewProblems();
    QString problemText(const core::SpecError &e) const;

    ClusterHub *m_hub;
    StoreWriter *m_writer;
    QString m_path;
    QPlainTextEdit *m_editor;
    QComboBox *m_target;
    QListWidget *m_problemList;
    QLabel *m_status;
    QTabWidget *m_previewTabs;
    QLabel *m_previewNote;
    QTableWidget *m_trials;
    QPlainTextEdit *m_script;
    QProgressBar *m_busy;
    QPushButton *m_previewButton, *m_submitButton, *m_cancelButton;
    QPushButton *m_open, *m_saveAs;
    QTimer m_debounce;
    std::optional<core::TrainerSchema> m_schema;
    QString m_schemaProblem;
    QFutureWatcher<std::optional<core::TrainerSchema>> m_schemaWatcher;
    std::optional<core::SubmitPlan> m_plan;  // set while the spec has no problem
    QList<core::PlannedTrial> m_planned;
    remote::CheckedSpec m_checked;  // the last check, problems and all
    QList<core::SpecError> m_problems;
    // The trainer's checks: verdicts by config text ("" accepted), the check in flight, and the
    // editor's generation it was started for (a later keystroke makes its answer stale).
    QString m_trainer;
    QHash<QByteArray, QString> m_verdicts;
    QFutureWatcher<QStringList> m_trainerWatcher;
    QList<QByteArray> m_checking;
    quint64 m_generation = 0, m_checkingGeneration = 0;
    std::shared_ptr<std::atomic<quint64>> m_latestGeneration = std::make_shared<std::atomic<quint64>>(0);
    bool m_trainerPending = false;
    bool m_submitWhenValid = false;
    bool m_previewShown = false;  // a preview is on screen: follow the editor
    struct SubmitResult {
        qint64 sweep = 0;
        QString error;
        std::optional<remote::CheckedSpec> prepared;  // checked and prepared: submit it next
    };
    static QString failureText(const remote::OperationError &e);
    void submitPrepared(const remote::CheckedSpec &spec);
    void finishSubmit(const SubmitResult &r);
    remote::SweepOperations::Options m_submitOptions;
    remote::OperationProgress m_submitProgress;
    QFutureWatcher<SubmitResult> m_submitWatcher;
    std::shared_ptr<std::atomic<bool>> m_cancel = std::make_shared<std::atomic<bool>>(false);
    bool m_submitting = false;
};

}  // namespace orrery::gui
