// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/sweepoperations.h"

#include "orrery/core/paths.h"

#include "orrery/remote/deploy.h"
#include "orrery/remote/profile.h"
#include "orrery/remote/slurmexecutor.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QThread>

namespace orrery::remote {

namespace {

using core::SweepId;

// The placeholder for the sweep's directory name in a preview: submission names it
// (sweepDirectoryName: the sweep's name and the time), and a preview should not change from one
// second to the next.
const QString kSweepDirPlaceholder = QStringLiteral("<sweep-id>");

[[noreturn]] void fail(OperationError::Kind kind, const QString &message)
{
    throw OperationError(kind, message);
}

// Runs `f`, turning the runner's and the store's refusals (std::runtime_error, StoreError) into
// OperationError of `kind`.
template<typename F>
auto guarded(OperationError::Kind kind, F &&f) -> decltype(f())
{
    try {
        return f();
    } catch (const OperationError &) {
        throw;
    } catch (const std::bad_alloc &) {
        throw;
    } catch (const core::StoreUnavailableError &e) {
        fail(OperationError::Kind::Unavailable, QString::fromUtf8(e.what()));
    } catch (const std::exception &e) {
        fail(kind, QString::fromUtf8(e.what()));
    }
}

}  // namespace

QList<core::SpecError> CheckedSpec::problems() const
{
    QList<core::SpecError> out = load.specErrors;
    if (!load.configError.isEmpty())
        out.append({{}, 0, load.configError});
    if (!load.readError.isEmpty())
        out.append({{}, 0, load.readError});
    out.append(refusals);
    return out;
}

QList<core::SpecError> CheckedSpec::warnings() const
{
    return load.plan ? load.plan->spec.warnings : QList<core::SpecError>();
}

QStringList CheckedSpec::problemLines() const
{
    QStringList lines;
    for (const core::SpecError &e : problems())
        lines << (e.file.isEmpty() ? e.message : e.toString());
    return lines;
}

QJsonObject SweepPreview::toJson(const CheckedSpec &spec) const
{
    QJsonObject o = core::planJson(spec.plan(), spec.trials());
    o.insert(QStringLiteral("worst_case"), core::worstCaseJson(worst, price));
    o.insert(QStringLiteral("launch"), QString::fromUtf8(launch));
    if (!target.isEmpty())
        o.insert(QStringLiteral("sbatch"), QString::fromUtf8(launch));
    return o;
}

core::TrainerSchema loadTrainerSchema()
{
    core::Parsed<core::TrainerSchema> schema = core::TrainerSchema::load();
    if (!schema)
        fail(OperationError::Kind::Failed, schema.problem());
    return std::move(*schema);
}

std::optional<core::Price> executorPrice(const QString &cluster)
{
    return clusterPrice(cluster);
}

SweepOperations::SweepOperations(core::TrackingStore &store, Options options)
    : SweepOperations(std::move(options))
{
    m_store = &store;
}

SweepOperations::SweepOperations(Options options) : m_options(std::move(options)), m_schema(m_options.schema)
{
    m_executors = m_options.connections ? std::make_unique<Executors>(m_options.connections)
                                        : std::make_unique<Executors>(m_options.prompts);
}

core::TrackingStore &SweepOperations::store() const
{
    if (!m_store)
        fail(OperationError::Kind::Failed, QStringLiteral("no tracking store is open"));
    return *m_store;
}

SweepOperations::~SweepOperations()
{
    try {
        releaseLeases();
    } catch (const std::exception &) {
        // The leases lapse by themselves after their TTL.
    }
}

const core::TrainerSchema &SweepOperations::schema()
{
    if (!m_schema) {
        if (!m_schemaProblem.isEmpty())  // asked once: a trainer that is not there stays away
            fail(OperationError::Kind::Failed, m_schemaProblem);
        try {
            m_schema = loadTrainerSchema();
        } catch (const OperationError &e) {
            m_schemaProblem = e.message();
            throw;
        }
    }
    return *m_schema;
}

core::Executor &SweepOperations::executor(const QString &cluster)
{
    QString problem;
    bool unreachable = false;
    core::Executor *e = m_executors->get(cluster, &problem, &unreachable);
    if (!e)
        fail(unreachable ? OperationError::Kind::Unavailable : OperationError::Kind::Failed, problem);
    return *e;
}

core::Sweep SweepOperations::sweep(const QString &ref) const
{
    const std::optional<core::Sweep> sw =
        guarded(OperationError::Kind::Failed, [&] { return store().findSweep(ref); });
    if (!sw)
        fail(OperationError::Kind::Invalid, QStringLiteral("no sweep '%1' (`orrery sweep list`)").arg(ref));
    return *sw;
}

core::Sweep SweepOperations::sweep(SweepId id) const
{
    const std::optional<core::Sweep> sw =
        guarded(OperationError::Kind::Failed, [&] { return store().sweep(id); });
    if (!sw)
        fail(OperationError::Kind::Invalid, QStringLiteral("no sweep %1 (`orrery sweep list`)").arg(id));
    return *sw;
}

// Whether the sweep runs the user's own command rather than the bundled trainer: only the
// trainer's params are typed by its keys, so only those sweeps need orrery-train (or its
// installed schema) here.
bool SweepOperations::runsOwnCommand(const core::Sweep &sw)
{
    return core::specRunsOwnCommand(sw.spec.toUtf8());
}

core::SweepRunner &SweepOperations::runner(const QString &cluster, bool needSchema)
{
    auto it = m_runners.find(cluster);
    if (it != m_runners.end() && (!needSchema || m_schema))
        return *it->second;
    core::TrainerSchema types;
    if (needSchema) {
        types = schema();
    } else {
        // Typing params is only for launching (bayes suggestions, retries): an action that ends
        // trials works without a trainer to ask.
        try {
            types = schema();
        } catch (const OperationError &) { }
    }
    core::Executor &e = executor(cluster);
    if (it != m_runners.end())
        it->second->releaseLeases();
    auto runner = std::make_unique<core::SweepRunner>(store(), e, types, m_options.follower);
    core::SweepRunner &r = *runner;
    m_runners[cluster] = std::move(runner);
    return r;
}

void SweepOperations::releaseLeases()
{
    for (auto &[cluster, runner] : m_runners)
        runner->releaseLeases();
}

// --- specs and submission ------------------------------------------------------------------

CheckedSpec SweepOperations::checkSpecFile(const QString &path, bool withTrainer, int count)
{
    try {
        return checkSpecFile(path, schema(), withTrainer, count);
    } catch (const OperationError &) {
        // No trainer here to ask for its keys: a sweep of the user's own command needs none (its
        // params are typed by their values).
        CheckedSpec own = checkSpecFile(path, core::TrainerSchema{}, false, count);
        if (own.load.plan && own.plan().spec.command)
            return own;
        throw;
    }
}

CheckedSpec SweepOperations::checkStoredSpec(const core::Sweep &sweep, bool withTrainer, int count)
{
    if (sweep.spec.trimmed().isEmpty())
        throw OperationError(
            OperationError::Kind::Invalid,
            QStringLiteral("sweep %1 (%2) has no stored spec to launch again").arg(sweep.id).arg(sweep.name));
    const QString path = sweep.specFile.isEmpty() ? QDir(sweep.rootDir).filePath(QStringLiteral("sweep.yaml"))
                                                  : sweep.specFile;
    const QByteArray yaml = sweep.spec.toUtf8();
    try {
        return checkSpecText(yaml, path, schema(), withTrainer, count);
    } catch (const OperationError &) {
        CheckedSpec own = checkSpecText(yaml, path, core::TrainerSchema{}, false, count);
        if (own.load.plan && own.plan().spec.command)
            return own;  // the user's own command: no trainer needed
        throw;
    }
}

QByteArray SweepOperations::report(const core::Sweep &sweep, core::ReportOptions options,
                                   const OperationProgress &progress)
{
    auto cancelled = [&] {
        if (progress.isCancelled())
            throw OperationError(OperationError::Kind::Cancelled, QStringLiteral("the report was cancelled"));
    };
    if (!options.price)
        options.price = executorPrice(sweep.cluster);
    progress.report(QStringLiteral("reading sweep %1 (%2) from the store").arg(sweep.id).arg(sweep.name));
    core::SweepReport report = core::readSweepReport(store(), sweep, options);
    cancelled();
    // The samples: a local copy or this machine's file as it is; a cluster's in one batched read.
    QList<core::FileRead> reads;
    QList<qsizetype> remote;
    for (qsizetype i = 0; i < report.media.size(); ++i) {
        core::ReportMedia &m = report.media[i];
        const qint64 size = m.artifact.size;
        if (size > options.maxVideoBytes) {
            m.why = QStringLiteral("%1 MB, over the report's %2 MB a sample")
                        .arg(size >> 20)
                        .arg(options.maxVideoBytes >> 20);
            continue;
        }
        const bool here = !m.artifact.localPath.isEmpty() || sweep.cluster.isEmpty();
        if (here) {
            QFile f(m.source);
            if (f.size() > options.maxVideoBytes)
                m.why = QStringLiteral("%1 MB, over the report's %2 MB a sample")
                            .arg(f.size() >> 20)
                            .arg(options.maxVideoBytes >> 20);
            else if (!f.open(QIODevice::ReadOnly))
                m.why = QStringLiteral("%1: %2").arg(m.source, f.errorString());
            else
                m.data = f.readAll();
        } else {
            reads.append({m.source, 0, options.maxVideoBytes + 1});
            remote.append(i);
        }
    }
    if (!reads.isEmpty()) {
        progress.report(QStringLiteral("reading %1 sample(s) from %2").arg(reads.size()).arg(sweep.cluster));
        try {
            const QList<core::FileChunk> chunks = executor(sweep.cluster).readFiles(reads);
            for (qsizetype j = 0; j < remote.size(); ++j) {
                core::ReportMedia &m = report.media[remote[j]];
                const core::FileChunk c = j < chunks.size() ? chunks[j] : core::FileChunk{};
                if (!c.exists)
                    m.why = QStringLiteral("%1 is not on %2").arg(m.source, sweep.cluster);
                else if (c.size > options.maxVideoBytes)
                    m.why = QStringLiteral("%1 MB, over the report's %2 MB a sample")
                                .arg(c.size >> 20)
                                .arg(options.maxVideoBytes >> 20);
                else
                    m.data = c.data;
            }
        } catch (const std::exception &e) {
            for (qsizetype i : remote)
                report.media[i].why = QStringLiteral("%1 could not be read: %2")
                                          .arg(sweep.cluster, QString::fromUtf8(e.what()));
        }
    }
    cancelled();
    progress.report(QStringLiteral("writing the page"));
    return core::renderSweepReport(report);
}

namespace {

CheckedSpec checked(core::PlanLoad load, bool withTrainer)
{
    CheckedSpec c;
    c.load = std::move(load);
    if (withTrainer && c.load.plan)
        c.refusals = core::checkPlanWithTrainer(core::trainerExecutable(), *c.load.plan, c.load.trials);
    return c;
}

}  // namespace

CheckedSpec SweepOperations::checkSpecFile(const QString &path, const core::TrainerSchema &schema,
                                           bool withTrainer, int count)
{
    return checked(core::loadSubmitPlan(path, schema, count), withTrainer);
}

CheckedSpec SweepOperations::checkSpecText(const QByteArray &yaml, const QString &path,
                                           const core::TrainerSchema &schema, bool withTrainer, int count)
{
    return checked(core::loadSubmitPlanText(yaml, path, schema, count), withTrainer);
}

SweepPreview SweepOperations::preview(const CheckedSpec &spec, const QString &cluster)
{
    SweepPreview p;
    p.target = cluster;
    if (!spec.load.plan)
        return p;
    const core::SubmitPlan &plan = spec.plan();
    const QList<core::PlannedTrial> &trials = spec.trials();
    p.plan = core::previewPlan(plan, trials);
    const int planned = plan.spec.method == core::SearchMethod::Grid ? int(trials.size()) : plan.spec.runCap;
    p.worst = core::worstCase(plan.spec, planned, int(trials.size()));
    // What submission launches first: the budget may hold some of the planned trials back.
    const QList<core::PlannedTrial> first =
        trials.mid(0, core::firstBatchSize(plan.spec, int(trials.size())));
    try {
        p.price = executorPrice(cluster);
        if (cluster.isEmpty()) {
            Executors local;
            QString problem;
            core::Executor *e = local.get({}, &problem);
            if (e)
                p.launch = core::describeFirstBatch(*e, plan, first);
            else
                p.launchProblem = problem;
        } else {
            std::optional<ClusterProfile> profile = ProfileStore().find(cluster);
            if (!profile) {
                p.launchProblem =
                    QStringLiteral("no cluster profile '%1' (`orrery cluster list`)").arg(cluster);
                return p;
            }
            profile->trainerPath = sweepTrainerPath(*profile);  // the deployed one, where none is named
            p.launch = previewSbatch(*profile, core::configDirectory(), plan, first, kSweepDirPlaceholder);
        }
    } catch (const SbatchError &e) {
        p.launchProblem = e.message();
    } catch (const ProfileError &e) {
        p.launchProblem = e.message();
    } catch (const std::exception &e) {
        p.launchProblem = QString::fromUtf8(e.what());
    }
    return p;
}

SweepId SweepOperations::submit(const CheckedSpec &spec, const QString &cluster,
                                const OperationProgress &progress)
{
    if (!spec.ok()) {
        fail(spec.problemIsUsage() ? OperationError::Kind::Invalid : OperationError::Kind::Failed,
             spec.problemLines().join(QLatin1Char('\n')));
    }
    const bool bundled = !spec.plan().spec.command;
    prepare(cluster, bundled, progress);
    core::SweepRunner &r = runner(cluster, bundled);  // the trainer's keys type a bundled sweep's params
    if (progress.isCancelled())
        fail(OperationError::Kind::Cancelled, QStringLiteral("cancelled: nothing was submitted"));
    progress.report(QStringLiteral("Submitting to %1…").arg(executor(cluster).name()));
    return guarded(OperationError::Kind::Failed, [&] { return r.submit(spec.plan()); });
}

void SweepOperations::prepare(const QString &cluster, bool withTrainer, const OperationProgress &progress)
{
    const auto checkCancelled = [&progress] {
        if (progress.isCancelled())
            fail(OperationError::Kind::Cancelled, QStringLiteral("cancelled: nothing was submitted"));
    };
    checkCancelled();
    progress.report(cluster.isEmpty() ? QStringLiteral("Submitting on this machine…")
                                      : QStringLiteral("Connecting to %1…").arg(cluster));
    // A profile without a trainer path gets the bundled trainer built first; a sweep of its own
    // command needs none.
    if (withTrainer)
        m_executors->deployIfMissing(
            [&progress](const QString &name, const DeployProgress &p) {
                if (progress.deploy)
                    progress.deploy(name, p);
                else
                    progress.report(p.percent >= 0
                                        ? QStringLiteral("%1: building the trainer — %2 %3%")
                                              .arg(name, p.phase)
                                              .arg(p.percent)
                                        : QStringLiteral("%1: building the trainer — %2").arg(name, p.phase));
            },
            progress.cancelled);
    executor(cluster);
    // This machine's executor runs the bundled trainer's trials with its own orrery-train; a
    // sweep of the user's own command, or on a cluster, needs none here.
    if (withTrainer && (cluster.isEmpty() || cluster == QLatin1String("local")) &&
        core::trainerExecutable().isEmpty())
        fail(OperationError::Kind::Failed,
             QStringLiteral("orrery-train is not on this machine (set ORRERY_TRAINER, or build it: "
                            "docs/install.md); sweeps of your own command, or on a cluster, do not need it "
                            "here"));
    checkCancelled();
}

// --- acting on a sweep ---------------------------------------------------------------------

bool SweepOperations::settle(SweepId id, const QString &cluster, const std::function<bool()> &settled,
                             const OperationProgress &progress)
{
    core::SweepRunner &r = runner(cluster, false);
    constexpr int kPollMs = 500;
    for (int waited = 0; waited < kSettleMs && !settled() && !progress.isCancelled(); waited += kPollMs) {
        const core::TickReport report = r.tick({id});
        for (const QString &e : report.events)
            progress.report(e);
        if (settled())
            break;
        QThread::msleep(kPollMs);
    }
    return settled();
}

ActionOutcome SweepOperations::cancel(SweepId id, const OperationProgress &progress)
{
    const core::Sweep sw = sweep(id);
    core::SweepRunner &r = runner(sw.cluster, false);
    guarded(OperationError::Kind::Invalid, [&] { r.cancel(id); });
    const QString started = QStringLiteral("cancelling sweep %1 (%2)").arg(sw.name).arg(id);
    progress.report(started);
    if (m_options.settle == Settle::Return)
        return {started, true};
    if (settle(
            id, sw.cluster, [&] { return r.isDone(id); }, progress))
        return {QStringLiteral("sweep %1 (%2) is cancelled").arg(sw.name).arg(id), true};
    return {
        QStringLiteral("some trials are still stopping; `orrery sweep watch %1` finishes the record").arg(id),
        false};
}

ActionOutcome SweepOperations::stopTrial(SweepId id, int trial, const QString &reason,
                                         const OperationProgress &progress)
{
    const core::Sweep sw = sweep(id);
    core::SweepRunner &r = runner(sw.cluster, false);
    guarded(OperationError::Kind::Invalid, [&] { r.stopTrial(id, trial, reason); });
    const QString started = QStringLiteral("stopping trial %1 of sweep %2 (%3); its checkpoint is kept")
                                .arg(trial)
                                .arg(id)
                                .arg(sw.name);
    progress.report(started);
    if (m_options.settle == Settle::Return)
        return {started, true};
    const auto stopped = [&] {
        const auto t = core::latestAttempt(store().trials(id), trial);
        return !t || !t->isActive();
    };
    if (settle(id, sw.cluster, stopped, progress))
        return {QStringLiteral("trial %1 of sweep %2 (%3) is stopped").arg(trial).arg(id).arg(sw.name), true};
    return {QStringLiteral("trial %1 is still stopping; `orrery sweep watch %2` finishes the record")
                .arg(trial)
                .arg(id),
            false};
}

ActionOutcome SweepOperations::retryTrial(SweepId id, int trial)
{
    const core::Sweep sw = sweep(id);
    const bool ended = !core::isActive(sw.sweepState());
    core::SweepRunner &r = runner(sw.cluster, !runsOwnCommand(sw));
    guarded(OperationError::Kind::Invalid, [&] { r.retryTrial(id, trial); });
    const auto t = core::latestAttempt(store().trials(id), trial);
    return {
        QStringLiteral("retrying trial %1 of sweep %2 (%3): attempt %4, resuming from its checkpoint if it "
                       "has one%5; follow it with `orrery sweep watch %2`")
            .arg(QString::number(trial), QString::number(id), sw.name,
                 QString::number(t ? t->attempt + 1 : 1),
                 ended ? QStringLiteral(" (the sweep runs again)") : QString()),
        true};
}

TrialLogs SweepOperations::logs(SweepId id, int trial, int attempt)
{
    TrialLogs l;
    l.sweep = sweep(id);
    const QList<core::Trial> attempts = store().trials(id);
    std::optional<core::Trial> t;
    if (attempt < 0) {
        t = core::latestAttempt(attempts, trial);
    } else {
        for (const core::Trial &a : attempts)
            if (a.index == trial && a.attempt == attempt)
                t = a;
    }
    if (!t)
        fail(OperationError::Kind::Invalid,
             attempt < 0 ? QStringLiteral("sweep %1 has no trial %2").arg(l.sweep.name).arg(trial)
                         : QStringLiteral("trial %1 of sweep %2 has no attempt %3")
                               .arg(trial)
                               .arg(l.sweep.name)
                               .arg(attempt));
    if (t->task.isEmpty() && t->runDir.isEmpty())
        fail(OperationError::Kind::Invalid,
             QStringLiteral("trial %1 has not been launched yet: no logs").arg(trial));
    l.attempt = *t;
    l.title = QStringLiteral("%1 · trial %2 · attempt %3").arg(l.sweep.name).arg(trial).arg(t->attempt);
    core::Executor &e = executor(l.sweep.cluster);
    l.paths = guarded(OperationError::Kind::Failed,
                      [&] { return e.logPaths(l.sweep.rootDir, t->task, t->runDir); });
    return l;
}

// --- following -----------------------------------------------------------------------------

core::TickReport SweepOperations::tick(SweepId id)
{
    const core::Sweep sw = sweep(id);
    try {
        core::SweepRunner &r = runner(sw.cluster, !runsOwnCommand(sw));
        return guarded(OperationError::Kind::Failed, [&] { return r.tick({id}); });
    } catch (const OperationError &e) {
        if (e.kind() != OperationError::Kind::Unavailable)
            throw;
        // The cluster or the store is not there now (a dropped network, a full disk): said, and
        // tried again next tick, which the caller's pace spaces out (a quiet tick).
        core::TickReport report;
        report.errors << e.message();
        return report;
    }
}

bool SweepOperations::isDone(SweepId id)
{
    const core::Sweep sw = sweep(id);
    return !core::isActive(sw.sweepState());
}

core::TickReport SweepOperations::followActive()
{
    // The trainer's keys type the bundled trainer's params (bayes suggestions, retries); a
    // machine without a trainer still follows sweeps of the user's own command.
    core::TrainerSchema types;
    try {
        types = schema();
    } catch (const OperationError &) { }
    return guarded(OperationError::Kind::Failed, [&] {
        return core::followActiveSweeps(
            store(), types,
            [this](const QString &cluster, QString *problem) { return m_executors->get(cluster, problem); },
            m_options.follower);
    });
}

core::SweepOverview SweepOperations::overview(const core::Sweep &sw, core::SweepProgressTracker *tracker,
                                              bool goodput) const
{
    core::OverviewOptions o;
    o.price = executorPrice(sw.cluster);
    o.tracker = tracker;
    o.goodput = goodput;
    return guarded(OperationError::Kind::Failed, [&] { return core::readSweepOverview(store(), sw, o); });
}

}  // namespace orrery::remote
