// SPDX-License-Identifier: GPL-3.0-or-later
#include "launcher.h"

#include "blockingpool.h"
#include "clusterhub.h"
#include "postifalive.h"
#include "storewriter.h"

#include "orrery/core/paths.h"
#include "orrery/core/store.h"
#include "orrery/remote/profile.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBlock>
#include <QThread>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <limits>

namespace orrery::gui {

// --- YamlHighlighter ----------------------------------------------------------------------------

YamlHighlighter::YamlHighlighter(QTextDocument *document) : QSyntaxHighlighter(document)
{ }

void YamlHighlighter::highlightBlock(const QString &text)
{
    QTextCharFormat key, comment, string, number, keyword;
    key.setForeground(QColor(0x0d, 0x47, 0xa1));
    key.setFontWeight(QFont::DemiBold);
    comment.setForeground(QColor(0x75, 0x75, 0x75));
    comment.setFontItalic(true);
    string.setForeground(QColor(0x2e, 0x7d, 0x32));
    number.setForeground(QColor(0xad, 0x14, 0x57));
    keyword.setForeground(QColor(0x6a, 0x1b, 0x9a));

    // Where a comment starts: a '#' outside quotes, at the start or after a space.
    qsizetype commentAt = -1;
    QChar quote;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (!quote.isNull()) {
            if (c == quote)
                quote = QChar();
        } else if (c == QLatin1Char('"') || c == QLatin1Char('\'')) {
            quote = c;
            const qsizetype end = text.indexOf(c, i + 1);
            setFormat(int(i), int((end < 0 ? text.size() : end + 1) - i), string);
        } else if (c == QLatin1Char('#') && (i == 0 || text[i - 1].isSpace())) {
            commentAt = i;
            break;
        }
    }
    const QString code = commentAt < 0 ? text : text.left(commentAt);
    static const QRegularExpression keyPattern(
        QStringLiteral(R"(^\s*(?:-\s+)?([^\s:#'"][^:#]*?)\s*:(?=\s|$))"));
    if (const auto m = keyPattern.match(code); m.hasMatch())
        setFormat(int(m.capturedStart(1)), int(m.capturedLength(1)), key);
    static const QRegularExpression numberPattern(
        QStringLiteral(R"((?<![\w.])[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?(?![\w.]))"));
    for (auto it = numberPattern.globalMatch(code); it.hasNext();) {
        const auto m = it.next();
        if (format(int(m.capturedStart())) == key || format(int(m.capturedStart())) == string)
            continue;
        setFormat(int(m.capturedStart()), int(m.capturedLength()), number);
    }
    static const QRegularExpression keywordPattern(QStringLiteral(R"(\b(true|false|null|yes|no)\b)"));
    for (auto it = keywordPattern.globalMatch(code); it.hasNext();) {
        const auto m = it.next();
        if (format(int(m.capturedStart())) != string)
            setFormat(int(m.capturedStart()), int(m.capturedLength()), keyword);
    }
    if (commentAt >= 0)
        setFormat(int(commentAt), int(text.size() - commentAt), comment);
}

// --- Launcher -----------------------------------------------------------------------------------

namespace {

const char kTemplate[] = R"(# A sweep of orrery-train (docs/sweeps.md). Ctrl+L opens this launcher.
name: my-sweep
experiment: Default
method: grid            # grid, random or bayes
metric:
  name: eval/loss
  goal: minimize
parameters:
  optim.lr:
    values: [1e-3, 3e-3]
  train.steps:
    value: 200
max_concurrent: 2
)";

// The trainer's schema, on a pool thread; why there is none goes to *problem (the launcher's,
// read when the future has finished).
std::optional<core::TrainerSchema> loadSchema(QString *problem)
{
    auto schema = core::TrainerSchema::load();
    if (!schema) {
        *problem = schema.problem();
        return std::nullopt;
    }
    return std::move(*schema);
}

}  // namespace

Launcher::Launcher(ClusterHub *hub, StoreWriter *writer, QWidget *parent)
    : QDialog(parent), m_hub(hub), m_writer(writer)
{
    setObjectName(QStringLiteral("launcher"));
    setWindowTitle(tr("Launch a sweep"));
    resize(1100, 760);

    // Made in the focus chain's order: the editor and its problems, the target, the buttons,
    // then the preview.
    QWidget *editorArea = buildEditorArea();
    QHBoxLayout *top = buildTargetBar();
    QHBoxLayout *bottom = buildButtonBar();
    QWidget *previewArea = buildPreviewArea();
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(editorArea);
    split->addWidget(previewArea);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(split, 1);
    layout->addLayout(bottom);

    connectEditing();
    connectWork();
    setSpecPath(QDir::current().absoluteFilePath(QStringLiteral("sweep.yaml")));
    m_editor->setPlainText(QString::fromUtf8(kTemplate));
    m_status->setText(tr("Loading the trainer's schema…"));
}

// Open…, Save as…, a broken profile's warning and the target ("Run on:").
QHBoxLayout *Launcher::buildTargetBar()
{
    m_target = new QComboBox(this);
    m_target->setObjectName(QStringLiteral("targetCombo"));
    m_target->addItem(tr("This machine"), QString());
    QStringList broken;  // a broken profile file is named beside the targets; the others stay
    for (const remote::ClusterProfile &p : remote::ProfileStore().list(&broken))
        m_target->addItem(tr("Cluster %1").arg(p.name), p.name);
    auto *brokenProfiles = new QLabel(this);
    brokenProfiles->setObjectName(QStringLiteral("brokenProfiles"));
    brokenProfiles->setText(tr("⚠ %n broken cluster profile(s)", nullptr, int(broken.size())));
    brokenProfiles->setToolTip(broken.join(QLatin1Char('\n')));
    brokenProfiles->setVisible(!broken.isEmpty());

    m_open = new QPushButton(tr("Open…"), this);
    m_saveAs = new QPushButton(tr("Save as…"), this);
    auto *top = new QHBoxLayout;
    top->addWidget(m_open);
    top->addWidget(m_saveAs);
    top->addStretch(1);
    top->addWidget(brokenProfiles);
    top->addWidget(new QLabel(tr("Run on:"), this));
    top->addWidget(m_target);
    return top;
}

// The spec's editor beside its problems.
QWidget *Launcher::buildEditorArea()
{
    m_editor = new QPlainTextEdit(this);
    m_editor->setObjectName(QStringLiteral("specEditor"));
    m_editor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_editor->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_editor->setTabChangesFocus(false);
    new YamlHighlighter(m_editor->document());

    m_problemList = new QListWidget(this);
    m_problemList->setObjectName(QStringLiteral("problemList"));
    m_problemList->setWordWrap(true);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("launcherStatus"));
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::PlainText);

    auto *side = new QWidget(this);
    auto *sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(0, 0, 0, 0);
    sideLayout->addWidget(new QLabel(tr("Problems"), this));
    sideLayout->addWidget(m_problemList, 1);

    auto *editorSplit = new QSplitter(Qt::Horizontal, this);
    editorSplit->addWidget(m_editor);
    editorSplit->addWidget(side);
    editorSplit->setStretchFactor(0, 3);
    editorSplit->setStretchFactor(1, 2);
    return editorSplit;
}

// The trials the spec makes and what would be launched, under a note.
QWidget *Launcher::buildPreviewArea()
{
    m_trials = new QTableWidget(this);
    m_trials->setObjectName(QStringLiteral("trialTable"));
    m_trials->verticalHeader()->hide();
    m_trials->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_script = new QPlainTextEdit(this);
    m_script->setObjectName(QStringLiteral("scriptView"));
    m_script->setReadOnly(true);
    m_script->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_script->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_previewTabs = new QTabWidget(this);
    m_previewTabs->addTab(m_trials, tr("Trials"));
    m_previewTabs->addTab(m_script, tr("What is launched"));
    m_previewNote = new QLabel(this);
    m_previewNote->setObjectName(QStringLiteral("previewNote"));
    m_previewNote->setWordWrap(true);
    m_previewNote->setTextFormat(Qt::PlainText);
    m_previewNote->hide();
    auto *previewArea = new QWidget(this);
    auto *previewLayout = new QVBoxLayout(previewArea);
    previewLayout->setContentsMargins(0, 0, 0, 0);
    previewLayout->addWidget(m_previewNote);
    previewLayout->addWidget(m_previewTabs, 1);
    return previewArea;
}

// The status line, the busy bar and Preview, Submit, Cancel.
QHBoxLayout *Launcher::buildButtonBar()
{
    m_previewButton = new QPushButton(tr("Preview"), this);
    m_previewButton->setObjectName(QStringLiteral("previewButton"));
    m_submitButton = new QPushButton(tr("Submit"), this);
    m_submitButton->setObjectName(QStringLiteral("submitButton"));
    m_submitButton->setDefault(false);
    m_cancelButton = new QPushButton(tr("Cancel"), this);
    m_busy = new QProgressBar(this);
    m_busy->setRange(0, 0);
    m_busy->setMaximumHeight(12);
    m_busy->setTextVisible(false);
    m_busy->hide();

    auto *bottom = new QHBoxLayout;
    bottom->addWidget(m_status, 1);
    bottom->addWidget(m_busy);
    bottom->addWidget(m_previewButton);
    bottom->addWidget(m_submitButton);
    bottom->addWidget(m_cancelButton);
    return bottom;
}

// Typing (checked after a pause), the target, a problem's line, Open… and Save as….
void Launcher::connectEditing()
{
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(250);
    connect(m_editor, &QPlainTextEdit::textChanged, &m_debounce, qOverload<>(&QTimer::start));
    // What the trainer says about an earlier text only waits in the cache now.
    connect(m_editor, &QPlainTextEdit::textChanged, this,
            [this] { m_latestGeneration->store(++m_generation); });
    connect(&m_debounce, &QTimer::timeout, this, &Launcher::validateNow);
    connect(m_target, &QComboBox::currentIndexChanged, this, [this] {
        m_script->clear();
        m_trials->setRowCount(0);
        m_previewShown = false;
        m_previewNote->hide();
    });
    connect(m_problemList, &QListWidget::itemActivated, this, [this](QListWidgetItem *item) {
        const int line = item->data(Qt::UserRole).toInt();
        if (line <= 0)
            return;
        QTextCursor c(m_editor->document()->findBlockByNumber(line - 1));
        m_editor->setTextCursor(c);
        m_editor->setFocus();
    });
    connect(m_open, &QPushButton::clicked, this, [this] {
        const QString f =
            QFileDialog::getOpenFileName(this, tr("Open a sweep spec"), QFileInfo(m_path).path(),
                                         tr("YAML (*.yaml *.yml);;All files (*)"));
        if (!f.isEmpty())
            loadFile(f);
    });
    connect(m_saveAs, &QPushButton::clicked, this, [this] {
        const QString f =
            QFileDialog::getSaveFileName(this, tr("Save the sweep spec"), m_path, tr("YAML (*.yaml *.yml)"));
        if (f.isEmpty())
            return;
        QSaveFile out(f);
        if (!out.open(QIODevice::WriteOnly) || out.write(m_editor->toPlainText().toUtf8()) < 0 ||
            !out.commit()) {
            m_status->setText(tr("%1: %2").arg(f, out.errorString()));
            return;
        }
        setSpecPath(f);
    });
}

// Preview, Submit and Cancel; the schema, the trainer's verdicts and a submission coming back.
void Launcher::connectWork()
{
    connect(m_previewButton, &QPushButton::clicked, this, &Launcher::preview);
    connect(m_submitButton, &QPushButton::clicked, this, &Launcher::submit);
    connect(m_cancelButton, &QPushButton::clicked, this, [this] {
        if (!m_submitting) {
            reject();
            return;
        }
        // A deploy stops between its steps; a submission already sent is not taken back (the
        // sweep then shows in the tree and can be cancelled there).
        m_cancel->store(true);
        setBusy(true, tr("Cancelling…"));
    });

    connect(&m_submitWatcher, &QFutureWatcher<SubmitResult>::finished, this, [this] {
        const SubmitResult r = m_submitWatcher.result();
        if (r.prepared && r.error.isEmpty())
            submitPrepared(*r.prepared);
        else
            finishSubmit(r);
    });

    // The schema comes from the trainer (`--print-schema`, about a second): off the UI thread.
    connect(&m_schemaWatcher, &QFutureWatcher<std::optional<core::TrainerSchema>>::finished, this, [this] {
        m_schema = m_schemaWatcher.result();
        if (!m_schema) {
            m_status->setText(tr("Cannot check specs: %1").arg(m_schemaProblem));
            return;
        }
        validateNow();
    });
    // The trainer's verdicts on configs (a few seconds: one LibTorch load per config, in
    // parallel) land in the cache; the editor's spec takes them if it is still the one checked.
    connect(&m_trainerWatcher, &QFutureWatcher<QStringList>::finished, this, [this] {
        const QStringList verdicts = m_trainerWatcher.result();
        for (qsizetype i = 0; i < std::min(verdicts.size(), m_checking.size()); ++i)
            m_verdicts.insert(m_checking[i], verdicts[i]);
        m_checking.clear();
        if (!m_trainerPending || m_checkingGeneration != m_generation)
            return;  // typed on meanwhile: the next validation asks again (from the cache)
        checkWithTrainer();
        if (m_trainerPending)
            return;  // another check went out for configs that were not in this one
        showProblems();
        if (m_previewShown)
            preview();
        else
            Q_EMIT validated();
    });
    m_trainer = core::trainerExecutable();
    auto *problem = &m_schemaProblem;
    m_schemaWatcher.setFuture(QtConcurrent::run(blockingPool(), [problem] { return loadSchema(problem); }));

    connect(this, &Launcher::validated, this, [this] {
        if (!m_submitWhenValid || !m_schema)
            return;
        m_submitWhenValid = false;
        if (m_plan)
            submit();
    });
}

Launcher::~Launcher()
{
    m_latestGeneration->store(std::numeric_limits<quint64>::max());  // no more trainer checks
    m_schemaWatcher.waitForFinished();
    m_cancel->store(true);
    m_submitWatcher.waitForFinished();
}

void Launcher::setSpecPath(const QString &path)
{
    m_path = QFileInfo(path).absoluteFilePath();
    setWindowTitle(tr("Launch a sweep — %1").arg(QFileInfo(m_path).fileName()));
    m_debounce.start();
}

bool Launcher::loadFile(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        m_status->setText(tr("%1: %2").arg(path, f.errorString()));
        return false;
    }
    setSpecPath(path);
    m_editor->setPlainText(QString::fromUtf8(f.readAll()));
    return true;
}

void Launcher::setSpec(const QString &text, const QString &path, const QString &cluster)
{
    setSpecPath(path);
    setTarget(cluster);
    m_editor->setPlainText(text);
}

void Launcher::submitWhenValid()
{
    m_submitWhenValid = true;
    if (m_schema)
        validateNow();  // else once the schema is in (validated() follows)
}

void Launcher::setTarget(const QString &cluster)
{
    m_target->setCurrentIndex(std::max(0, m_target->findData(cluster)));
}

QString Launcher::target() const
{
    return m_target->currentData().toString();
}

void Launcher::validateNow()
{
    m_debounce.stop();
    if (!m_schema)
        return;
    m_checked =
        remote::SweepOperations::checkSpecText(m_editor->toPlainText().toUtf8(), m_path, *m_schema, false);
    m_problems = m_checked.problems();
    for (core::SpecError &e : m_problems)
        if (e.file.isEmpty())
            e.file = m_path;
    m_plan = m_problems.isEmpty() ? m_checked.load.plan : std::nullopt;
    m_planned = m_plan ? m_checked.trials() : QList<core::PlannedTrial>{};
    m_trainerPending = false;
    m_checkingGeneration = m_generation;
    if (m_plan)
        checkWithTrainer();
    showProblems();
    if (m_previewShown)
        showPreview();
    Q_EMIT validated();
}

// The trainer's rules across keys (`model.channels: [30, 32]` passes every key's own check):
// what the cache knows applies now, the rest is asked of the trainer on a pool thread.
void Launcher::checkWithTrainer()
{
    if (!m_plan || m_trainer.isEmpty())
        return;
    const QList<QByteArray> configs = core::configsForTrainerCheck(m_checked.plan(), m_checked.trials());
    QStringList verdicts;
    QList<QByteArray> unknown;
    for (const QByteArray &c : configs) {
        const auto known = m_verdicts.constFind(c);
        if (known != m_verdicts.cend())
            verdicts << *known;
        else if (!unknown.contains(c))
            unknown << c;
    }
    if (unknown.isEmpty()) {
        applyVerdicts(verdicts);
        return;
    }
    m_trainerPending = true;
    if (m_trainerWatcher.isRunning())
        return;  // one check at a time: when it ends, the current spec asks for what is missing
    m_checking = unknown;
    m_checkingGeneration = m_generation;
    m_latestGeneration->store(m_generation);
    // A core's worth of configs at a time (checkTrialConfigs runs no more at once), so that once
    // the editor has moved on no more of them are checked (what was checked stays in the cache).
    m_trainerWatcher.setFuture(QtConcurrent::run(
        blockingPool(), [trainer = m_trainer, unknown, latest = m_latestGeneration, asked = m_generation] {
            const qsizetype batch = std::max(1, QThread::idealThreadCount());
            QStringList checked;
            for (qsizetype i = 0; i < unknown.size() && latest->load() == asked; i += batch)
                checked += core::checkTrialConfigs(trainer, unknown.mid(i, batch));
            return checked;
        }));
}

void Launcher::applyVerdicts(const QStringList &verdicts)
{
    m_trainerPending = false;
    m_checked.refusals = core::trainerRefusals(m_checked.plan(), m_checked.trials(), verdicts);
    if (m_checked.refusals.isEmpty())
        return;
    m_problems = m_checked.problems();
    m_plan.reset();
    m_planned.clear();
}

QString Launcher::problemText(const core::SpecError &e) const
{
    return e.line > 0 ? tr("line %1: %2").arg(e.line).arg(e.message) : e.message;
}

void Launcher::showProblems()
{
    QList<QTextEdit::ExtraSelection> marks;
    m_problemList->clear();
    for (const core::SpecError &e : std::as_const(m_problems)) {
        auto *item = new QListWidgetItem(problemText(e), m_problemList);
        item->setData(Qt::UserRole, e.line);
        item->setForeground(QColor(0xb7, 0x1c, 0x1c));
        if (e.line <= 0)
            continue;
        const QTextBlock block = m_editor->document()->findBlockByNumber(e.line - 1);
        if (!block.isValid())
            continue;
        QTextEdit::ExtraSelection mark;
        mark.cursor = QTextCursor(block);
        const QString text = block.text();
        const qsizetype first = text.indexOf(QRegularExpression(QStringLiteral("\\S")));
        mark.cursor.setPosition(block.position() + int(std::max<qsizetype>(0, first)));
        mark.cursor.setPosition(block.position() + int(text.size()), QTextCursor::KeepAnchor);
        mark.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
        mark.format.setUnderlineColor(Qt::red);
        mark.format.setToolTip(e.message);
        marks.append(mark);
        // The message beside its line: the line's background, its text on hover and in the list.
        QTextEdit::ExtraSelection band;
        band.cursor = QTextCursor(block);
        band.format.setBackground(QColor(0xff, 0xeb, 0xee));
        band.format.setProperty(QTextFormat::FullWidthSelection, true);
        marks.append(band);
    }
    // What the spec holds that Orrery ignores (a W&B file's `project`, ...): said, never blocking.
    for (const core::SpecError &w : m_checked.warnings()) {
        auto *item = new QListWidgetItem(w.line > 0 ? tr("line %1: warning: %2").arg(w.line).arg(w.message)
                                                    : tr("warning: %1").arg(w.message),
                                         m_problemList);
        item->setData(Qt::UserRole, w.line);
        item->setForeground(QColor(0xa0, 0x5a, 0x00));
    }
    m_editor->setExtraSelections(marks);
    m_previewButton->setEnabled(m_plan.has_value() && !m_submitting);
    m_submitButton->setEnabled(m_plan.has_value() && !m_submitting);
    if (m_plan)
        m_status->setText(
            tr("✓ %1: %n trial(s) to start with, %2%3", nullptr, int(m_planned.size()))
                .arg(m_plan->spec.name,
                     target().isEmpty() ? tr("on this machine") : tr("on %1").arg(target()),
                     m_trainerPending ? tr(" — the trainer is checking their configs…") : QString()));
    else
        m_status->setText(tr("%n problem(s)", nullptr, int(m_problems.size())));
}

QList<int> Launcher::underlinedLines() const
{
    QList<int> lines;
    for (const QTextEdit::ExtraSelection &s : m_editor->extraSelections())
        if (s.format.underlineStyle() == QTextCharFormat::WaveUnderline)
            lines << s.cursor.block().blockNumber() + 1;
    return lines;
}

void Launcher::preview()
{
    m_previewShown = true;
    validateNow();
}

// The preview of what the editor holds, kept in step with it once shown: the trials and what
// is launched, or (while the editor shows problems) those problems — never an earlier spec's.
void Launcher::showPreview()
{
    if (!m_plan) {
        showPreviewProblems();
        Q_EMIT previewed();
        return;
    }
    const remote::SweepPreview preview = remote::SweepOperations::preview(m_checked, target());
    const core::PlanPreview &p = preview.plan;
    m_trials->clear();
    m_trials->setColumnCount(int(p.columns.size()));
    m_trials->setHorizontalHeaderLabels(p.columns);
    m_trials->setRowCount(int(p.rows.size()));
    for (int r = 0; r < p.rows.size(); ++r)
        for (int c = 0; c < p.rows[r].size(); ++c)
            m_trials->setItem(r, c, new QTableWidgetItem(p.rows[r][c]));
    m_trials->resizeColumnsToContents();
    QString script = p.summary + preview.worstCaseText() + QLatin1Char('\n');
    if (!target().isEmpty())
        script += tr("# sbatch script for cluster %1:\n").arg(target());
    script += preview.launchProblem.isEmpty() ? QString::fromUtf8(preview.launch) : preview.launchProblem;
    m_script->setPlainText(script);
    m_previewNote->setText(m_trainerPending
                               ? tr("The trainer is still checking these trials' configs; the preview "
                                    "follows its verdict.")
                               : QString());
    m_previewNote->setStyleSheet({});
    m_previewNote->setVisible(m_trainerPending);
    Q_EMIT previewed();
}

void Launcher::showPreviewProblems()
{
    m_trials->clear();
    m_trials->setRowCount(0);
    m_trials->setColumnCount(0);
    QStringList lines;
    for (const core::SpecError &e : std::as_const(m_problems))
        lines << problemText(e);
    m_script->setPlainText(lines.join(QLatin1Char('\n')));
    m_previewNote->setText(tr("Not previewed: the spec has %n problem(s), listed beside the editor. "
                              "Fix them to see its trials.",
                              nullptr, int(m_problems.size())));
    m_previewNote->setStyleSheet(QStringLiteral("QLabel { color: #b71c1c; }"));
    m_previewNote->show();
}

QString Launcher::previewNote() const
{
    return m_previewNote->isVisible() ? m_previewNote->text() : QString();
}

QString Launcher::specLabel() const
{
    QFile saved(m_path);
    if (saved.open(QIODevice::ReadOnly) && saved.readAll() == m_editor->toPlainText().toUtf8())
        return QDir::toNativeSeparators(m_path);
    return tr("the editor's unsaved text");
}

QString Launcher::scriptText() const
{
    return m_script->toPlainText();
}

QString Launcher::statusText() const
{
    return m_status->text();
}

void Launcher::setBusy(bool busy, const QString &text)
{
    m_busy->setVisible(busy);
    if (!text.isEmpty()) {
        m_status->setText(text);
        Q_EMIT progress(text);
    }
    m_cancelButton->setText(busy ? tr("Cancel") : tr("Close"));
    m_previewButton->setEnabled(!busy && m_plan.has_value());
    m_submitButton->setEnabled(!busy && m_plan.has_value());
    m_editor->setReadOnly(busy);
    m_target->setEnabled(!busy);
}

void Launcher::submit()
{
    validateNow();
    if (!m_plan || m_submitting || !m_schema)
        return;
    m_submitting = true;
    m_cancel->store(false);
    setBusy(true, tr("Checking the trial configs with the trainer…"));
    const QByteArray yaml = m_editor->toPlainText().toUtf8();
    const QString path = m_path;
    // The trainer names the temporary file it was given; the user knows the spec as its file or
    // as what the editor holds.
    const QString label = specLabel();
    const QString cluster = target();
    remote::SweepOperations::Options options;
    options.connections = m_hub->connectionSource();
    options.schema = *m_schema;
    options.settle = remote::Settle::Return;  // the window follows every sweep
    remote::OperationProgress progress;
    // Progress lines reach this dialog on the UI thread, if it is still there then.
    progress.say = [self = QPointer<Launcher>(this)](const QString &text) {
        postIfAlive(self, [text](Launcher *launcher) {
            if (launcher->isSubmitting())
                launcher->setBusy(true, text);
        });
    };
    progress.cancelled = [cancel = m_cancel] { return cancel->load(); };
    // `sweep submit`'s operation in two steps: on a pool thread the trainer's own checks of the
    // configs and what needs no store (deploying the trainer where a cluster lacks it, connecting:
    // minutes the first time), then the submission itself on the window's store writer.
    m_submitWatcher.setFuture(QtConcurrent::run(blockingPool(), [=]() -> SubmitResult {
        try {
            const remote::CheckedSpec spec =
                remote::SweepOperations::checkSpecText(yaml, path, *options.schema, true);
            if (!spec.ok()) {
                QStringList lines;
                for (const core::SpecError &e : spec.problems())
                    lines << (e.line > 0 ? tr("line %1: %2").arg(e.line).arg(e.message) : e.message);
                return {0,
                        tr("Not submitted: %1 has %n problem(s):", nullptr, int(lines.size())).arg(label) +
                            QLatin1Char('\n') + lines.join(QLatin1Char('\n')),
                        {}};
            }
            remote::SweepOperations(options).prepare(cluster, !spec.plan().spec.command, progress);
            return {0, {}, spec};
        } catch (const remote::OperationError &e) {
            return {0, failureText(e), {}};
        }
    }));
    m_submitOptions = options;
    m_submitProgress = progress;
}

QString Launcher::failureText(const remote::OperationError &e)
{
    switch (e.kind()) {
    case remote::OperationError::Kind::Cancelled:
        return tr("Cancelled: nothing was submitted.");
    case remote::OperationError::Kind::Invalid:
    case remote::OperationError::Kind::NotFound:
    case remote::OperationError::Kind::Conflict:
        return e.message();
    case remote::OperationError::Kind::Failed:
    case remote::OperationError::Kind::Unavailable:
        break;
    }
    return tr("Not submitted: %1").arg(e.message());
}

void Launcher::submitPrepared(const remote::CheckedSpec &spec)
{
    const QString cluster = target();
    m_writer->write<SubmitResult>(
        this,
        [spec, cluster, options = m_submitOptions, progress = m_submitProgress](core::TrackingStore &store) {
            try {
                remote::SweepOperations ops(store, options);
                return SubmitResult{ops.submit(spec, cluster, progress), {}, {}};
            } catch (const remote::OperationError &e) {
                return SubmitResult{0, failureText(e), {}};
            }
        },
        [this](const SubmitResult &r) { finishSubmit(r); });
}

void Launcher::finishSubmit(const SubmitResult &r)
{
    m_submitting = false;
    setBusy(false);
    if (!r.error.isEmpty()) {
        m_status->setText(r.error);
        Q_EMIT submitFailed(r.error);
        return;
    }
    const QString name = m_plan ? m_plan->spec.name : QString();
    m_status->setText(tr("Submitted sweep %1 (%2).").arg(r.sweep).arg(name));
    Q_EMIT submitted(r.sweep, name);
    accept();
}

}  // namespace orrery::gui
