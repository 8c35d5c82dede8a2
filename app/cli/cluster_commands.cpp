// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery cluster ...`: cluster profiles and the connection test. The work is in remote/
// (ProfileStore, probeCluster); this file parses flags and formats.
#include "cluster_commands.h"

#include "commands.h"
#include "interrupt.h"
#include "output.h"
#include "statusblock.h"

#include "runs_commands.h"

#include "orrery/core/sweeprules.h"
#include "orrery/remote/clusterstatus.h"
#include "orrery/remote/error.h"
#include "orrery/remote/nodes.h"
#include "orrery/remote/profile.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>

namespace orrery::cli {

const char *const kClusterUsage =
    "usage: orrery cluster add NAME --host HOST [--port N] [--user USER] [--identity FILE]\n"
    "                          [--known-hosts FILE] [--proxy-jump [USER@]HOST[:PORT]]\n"
    "                          [--remote-root DIR] [--partition P] [--account A]\n"
    "                          [--setup LINE]... [--trainer-path PATH] [--build-on login|job]\n"
    "                          [--gpu-hour-price PRICE [--currency C]] [--force]\n"
    "       orrery cluster list [--json]\n"
    "       orrery cluster show NAME [--json]\n"
    "       orrery cluster test NAME [--json] [--accept-new-host-key]\n"
    "       orrery cluster deploy NAME [--json] [--accept-new-host-key]\n"
    "       orrery cluster remove NAME\n"
    "       orrery cluster nodes NAME [--suspect] [--clear NODE | --clear-all]\n"
    "                            [--add NODE --reason TEXT] [--json]\n"
    "HOST may be a Host alias of ~/.ssh/config (its HostName, User, Port, IdentityFile and\n"
    "ProxyJump apply). Profiles never hold a password: keys come from ssh-agent or a key file,\n"
    "and a passphrase or password is asked on a terminal when needed.\n"
    "Without --trainer-path, sweeps run the trainer `cluster deploy` builds on the cluster from\n"
    "Orrery's bundled source, against the PyTorch the setup lines activate (first submit deploys\n"
    "it); --build-on job builds it in a Slurm job instead of on the login node.\n"
    "--gpu-hour-price: what one GPU-hour costs on this cluster (in --currency, e.g. USD): sweeps\n"
    "and runs then show their cost next to their GPU-hours (docs/sweeps.md).\n";

namespace {

using remote::ClusterProfile;

// 128 + SIGINT, as a shell reports a command Ctrl-C ended.
constexpr int kInterrupted = 130;

using remote::ProfileStore;

int usage(const QString &problem)
{
    err(QStringLiteral("orrery cluster: %1\n").arg(problem) + QString::fromUtf8(kClusterUsage));
    return kUsage;
}

// What every declared verb here reads: its NAME and --json.
QString nameOf(const QCommandLineParser &p)
{
    return p.positionalArguments().value(0);
}

bool jsonOf(const QCommandLineParser &p)
{
    return p.isSet(QStringLiteral("json"));
}

QString where(const ClusterProfile &p)
{
    QString s = p.user.isEmpty() ? p.host : p.user + QLatin1Char('@') + p.host;
    if (p.port > 0)
        s += QLatin1Char(':') + QString::number(p.port);
    return s;
}

// The profile fields `cluster add` sets from a value option of the same name.
const QList<std::pair<const char *, QString ClusterProfile::*>> kProfileFields{
    {"host", &ClusterProfile::host},
    {"user", &ClusterProfile::user},
    {"identity", &ClusterProfile::identityFile},
    {"known-hosts", &ClusterProfile::knownHostsFile},
    {"proxy-jump", &ClusterProfile::proxyJump},
    {"remote-root", &ClusterProfile::remoteRoot},
    {"partition", &ClusterProfile::partition},
    {"account", &ClusterProfile::account},
    {"trainer-path", &ClusterProfile::trainerPath},
    {"currency", &ClusterProfile::currency}};

int add(const Context &, const QCommandLineParser &args)
{
    ClusterProfile p;
    p.name = nameOf(args);
    const bool force = args.isSet(QStringLiteral("force"));
    for (const auto &[option, field] : kProfileFields)
        p.*field = args.value(QString::fromLatin1(option));
    p.setup = args.values(QStringLiteral("setup"));
    if (args.isSet(QStringLiteral("build-on"))) {
        const QString value = args.value(QStringLiteral("build-on"));
        if (value != QLatin1String("login") && value != QLatin1String("job"))
            return usage(QStringLiteral("--build-on must be 'login' or 'job'"));
        p.buildOn =
            value == QLatin1String("job") ? ClusterProfile::BuildOn::Job : ClusterProfile::BuildOn::Login;
    }
    if (args.isSet(QStringLiteral("gpu-hour-price"))) {
        const QString value = args.value(QStringLiteral("gpu-hour-price"));
        bool ok = false;
        const double price = value.toDouble(&ok);
        if (!ok || !ClusterProfile::priceProblem(price).isEmpty())
            return usage(QStringLiteral("--gpu-hour-price must be a number >= 0, not '%1'").arg(value));
        p.gpuHourPrice = price;
    }
    if (args.isSet(QStringLiteral("port"))) {
        bool ok = false;
        p.port = args.value(QStringLiteral("port")).toInt(&ok);
        if (!ok || p.port < 1 || p.port > 65535)
            return usage(QStringLiteral("--port must be a number from 1 to 65535"));
    }
    if (p.host.isEmpty())
        return usage(QStringLiteral("--host is required"));
    if (!p.currency.isEmpty() && !ClusterProfile::currencyProblem(p.currency).isEmpty())
        return usage(QStringLiteral("--currency: ") + ClusterProfile::currencyProblem(p.currency));
    if (!p.currency.isEmpty() && !p.gpuHourPrice)
        return usage(QStringLiteral("--currency names the unit of --gpu-hour-price; give both"));
    // Local files are stored absolute: the GUI and the CLI may run from other directories.
    for (QString *file : {&p.identityFile, &p.knownHostsFile})
        if (!file->isEmpty() && !file->startsWith(QLatin1Char('~')))
            *file = QFileInfo(*file).absoluteFilePath();
    ProfileStore store;
    try {
        if (!force && store.find(p.name)) {
            err(QStringLiteral("orrery cluster add: '%1' exists (%2); use --force to replace it\n")
                    .arg(p.name, store.pathOf(p.name)));
            return kFailed;
        }
        store.save(p);
    } catch (const remote::ProfileError &e) {
        err(QStringLiteral("orrery cluster add: %1\n").arg(e.message()));
        return kFailed;
    }
    out(QStringLiteral("cluster '%1' (%2) saved in %3\n").arg(p.name, where(p), store.pathOf(p.name)));
    return kOk;
}

std::optional<ClusterProfile> load(const QString &command, const QString &name, int &code)
{
    try {
        if (std::optional<ClusterProfile> p = ProfileStore().find(name))
            return p;
        err(QStringLiteral("orrery cluster %1: no cluster '%2' (see `orrery cluster list`)\n")
                .arg(command, name));
    } catch (const remote::ProfileError &e) {
        err(QStringLiteral("orrery cluster %1: %2\n").arg(command, e.message()));
    }
    code = kFailed;
    return std::nullopt;
}

int list(const Context &, const QCommandLineParser &args)
{
    // A broken file is said on stderr (and the exit status is 1); the other profiles are listed.
    QStringList broken;
    const QList<ClusterProfile> profiles = ProfileStore().list(&broken);
    for (const QString &problem : std::as_const(broken))
        err(QStringLiteral("orrery cluster list: %1\n").arg(problem));
    if (jsonOf(args)) {
        QJsonArray items;
        for (const ClusterProfile &p : profiles)
            items.append(p.toJson());
        QJsonObject listing{{QStringLiteral("clusters"), items}};
        if (!broken.isEmpty())
            listing.insert(QStringLiteral("problems"), QJsonArray::fromStringList(broken));
        printJson(listing, true);
        return broken.isEmpty() ? kOk : kFailed;
    }
    QList<QStringList> rows;
    for (const ClusterProfile &p : profiles)
        rows.append({p.name, where(p), p.remoteRoot, p.partition});
    out(formatTable({QStringLiteral("NAME"), QStringLiteral("HOST"), QStringLiteral("REMOTE ROOT"),
                     QStringLiteral("PARTITION")},
                    rows));
    return broken.isEmpty() ? kOk : kFailed;
}

int show(const Context &, const QCommandLineParser &args)
{
    int code = kOk;
    const std::optional<ClusterProfile> p = load(QStringLiteral("show"), nameOf(args), code);
    if (!p)
        return code;
    const QJsonObject json = p->toJson();
    if (jsonOf(args)) {
        printJson(json, true);
        return kOk;
    }
    QList<QStringList> rows;
    for (auto it = json.begin(); it != json.end(); ++it) {
        QString value = it.value().isString()
            ? it.value().toString()
            : QString::fromUtf8(
                  QJsonDocument::fromVariant(it.value().toVariant()).toJson(QJsonDocument::Compact));
        if (it.value().isDouble())
            value = QString::number(it.value().toDouble());  // a port, a price (2.5)
        rows.append({it.key(), value});
    }
    out(formatTable({QStringLiteral("KEY"), QStringLiteral("VALUE")}, rows));
    return kOk;
}

QJsonObject reportJson(const QString &name, const remote::ClusterReport &r)
{
    QJsonArray partitions;
    for (const remote::slurm::Partition &p : r.info.partitions)
        partitions.append(QJsonObject{{QStringLiteral("name"), p.name},
                                      {QStringLiteral("default"), p.isDefault},
                                      {QStringLiteral("up"), p.up},
                                      {QStringLiteral("nodes"), QJsonArray::fromStringList(p.nodes)},
                                      {QStringLiteral("cpus"), p.cpusTotal},
                                      {QStringLiteral("cpus_idle"), p.cpusIdle},
                                      {QStringLiteral("gpus"), p.gpusTotal},
                                      {QStringLiteral("gpus_used"), p.gpusUsed},
                                      {QStringLiteral("time_limit"), p.timeLimit}});
    QJsonArray nodes;
    for (const remote::slurm::Node &n : r.info.nodes)
        nodes.append(QJsonObject{{QStringLiteral("name"), n.name},
                                 {QStringLiteral("state"), n.state},
                                 {QStringLiteral("partitions"), QJsonArray::fromStringList(n.partitions)},
                                 {QStringLiteral("cpus"), n.cpusTotal},
                                 {QStringLiteral("cpus_allocated"), n.cpusAllocated},
                                 {QStringLiteral("memory_mb"), n.memoryMb},
                                 {QStringLiteral("memory_allocated_mb"), n.memoryAllocatedMb},
                                 {QStringLiteral("gpus"), n.gpusTotal},
                                 {QStringLiteral("gpus_used"), n.gpusUsed}});
    QJsonObject json{{QStringLiteral("cluster"), name},
                     {QStringLiteral("ok"), r.ok()},
                     {QStringLiteral("connected"), r.connected},
                     {QStringLiteral("host"), r.where},
                     {QStringLiteral("host_key"), r.fingerprint},
                     {QStringLiteral("slurm_version"), r.slurmVersion},
                     {QStringLiteral("partitions"), partitions},
                     {QStringLiteral("nodes"), nodes},
                     {QStringLiteral("remote_root_writable"), r.remoteRootWritable},
                     {QStringLiteral("trainer"), r.trainer},
                     {QStringLiteral("trainer_ready"), r.trainerReady},
                     {QStringLiteral("errors"), QJsonArray::fromStringList(r.errors)}};
    json.insert(QStringLiteral("accounting"), r.accounting ? QJsonValue(*r.accounting) : QJsonValue());
    if (r.setup)
        json.insert(QStringLiteral("setup"),
                    QJsonObject{{QStringLiteral("exit_status"), r.setup->exitStatus},
                                {QStringLiteral("stdout"), QString::fromUtf8(r.setup->out)},
                                {QStringLiteral("stderr"), QString::fromUtf8(r.setup->err)}});
    return json;
}

void printReport(const ClusterProfile &p, const remote::ClusterReport &r)
{
    auto yesNo = [](bool b) { return b ? QStringLiteral("yes") : QStringLiteral("no"); };
    QList<QStringList> summary{
        {QStringLiteral("host"), r.where},
        {QStringLiteral("host key"), r.fingerprint},
        {QStringLiteral("slurm"), r.slurmVersion},
        {QStringLiteral("accounting"), r.accounting ? yesNo(*r.accounting) : QStringLiteral("unknown")},
        {QStringLiteral("remote root"),
         p.remoteRoot + QStringLiteral(" (writable: %1)").arg(yesNo(r.remoteRootWritable))},
        {QStringLiteral("trainer"), remote::trainerSummary(p, r)}};
    out(QStringLiteral("cluster %1\n").arg(p.name) +
        formatTable({QStringLiteral("CHECK"), QStringLiteral("RESULT")}, summary));
    QList<QStringList> partitions;
    for (const remote::slurm::Partition &x : r.info.partitions)
        partitions.append({x.name + (x.isDefault ? QStringLiteral("*") : QString()),
                           x.up ? QStringLiteral("up") : QStringLiteral("down"),
                           QString::number(x.nodes.size()),
                           QStringLiteral("%1/%2").arg(x.cpusTotal - x.cpusIdle).arg(x.cpusTotal),
                           QStringLiteral("%1/%2").arg(x.gpusUsed).arg(x.gpusTotal), x.timeLimit});
    out(QStringLiteral("\n") +
        formatTable({QStringLiteral("PARTITION"), QStringLiteral("STATE"), QStringLiteral("NODES"),
                     QStringLiteral("CPUS USED"), QStringLiteral("GPUS USED"), QStringLiteral("TIME LIMIT")},
                    partitions));
    QList<QStringList> nodes;
    for (const remote::slurm::Node &n : r.info.nodes)
        nodes.append({n.name, n.state, n.partitions.join(QLatin1Char(',')),
                      QStringLiteral("%1/%2").arg(n.cpusAllocated).arg(n.cpusTotal),
                      QStringLiteral("%1/%2").arg(n.memoryAllocatedMb).arg(n.memoryMb),
                      QStringLiteral("%1/%2").arg(n.gpusUsed).arg(n.gpusTotal)});
    out(QStringLiteral("\n") +
        formatTable({QStringLiteral("NODE"), QStringLiteral("STATE"), QStringLiteral("PARTITIONS"),
                     QStringLiteral("CPUS"), QStringLiteral("MEMORY MB"), QStringLiteral("GPUS")},
                    nodes));
    if (r.setup)
        out(QStringLiteral("\nsetup lines (exit %1):\n%2%3")
                .arg(r.setup->exitStatus)
                .arg(QString::fromUtf8(r.setup->out), QString::fromUtf8(r.setup->err)));
}

int test(const Context &, const QCommandLineParser &args)
{
    int code = kOk;
    const std::optional<ClusterProfile> p = load(QStringLiteral("test"), nameOf(args), code);
    if (!p)
        return code;
    const bool accept = args.isSet(QStringLiteral("accept-new-host-key"));
    const remote::ClusterReport report = remote::probeCluster(*p, terminalCallbacks(accept));
    if (jsonOf(args))
        printJson(reportJson(p->name, report), true);
    else if (report.connected)
        printReport(*p, report);
    for (const QString &e : report.errors) {
        QString line = QStringLiteral("orrery cluster test %1: %2\n").arg(p->name, e);
        if (e.contains(QLatin1String("unknown host key")))
            line += QStringLiteral(
                "  if the fingerprint is right, rerun with --accept-new-host-key to record it\n");
        err(line);
    }
    return report.ok() ? kOk : kFailed;
}

int deploy(const Context &, const QCommandLineParser &args)
{
    int code = kOk;
    const std::optional<ClusterProfile> p = load(QStringLiteral("deploy"), nameOf(args), code);
    if (!p)
        return code;
    const QString prefix = QStringLiteral("orrery cluster deploy %1: ").arg(p->name);
    if (!p->trainerPath.isEmpty())
        err(QStringLiteral("%1note: the profile names a trainer (%2), which sweeps run instead of this one\n")
                .arg(prefix, p->trainerPath));
    QString problem;
    const std::optional<remote::TrainerSource> source = remote::TrainerSource::locate(&problem);
    if (!source) {
        err(prefix + problem + QLatin1Char('\n'));
        return kFailed;
    }
    QElapsedTimer clock;
    clock.start();
    QJsonObject json{{QStringLiteral("cluster"), p->name},
                     {QStringLiteral("source_hash"), QString::fromLatin1(source->hash)}};
    try {
        remote::DeployOptions options;
        const auto printer = deployProgressPrinter();
        if (!jsonOf(args))
            options.progress = [&](const remote::DeployProgress &d) { printer(p->name, d); };
        options.cancelled = [] { return InterruptScope::requested(); };
        const remote::DeployResult r = [&] {
            const InterruptScope interrupts;
            return remote::deployTrainer(
                *p, terminalCallbacks(args.isSet(QStringLiteral("accept-new-host-key"))), *source, options);
        }();
        const double seconds = double(clock.elapsed()) / 1000.0;
        if (jsonOf(args)) {
            json.insert(QStringLiteral("ok"), true);
            json.insert(QStringLiteral("trainer"), r.trainerPath);
            json.insert(QStringLiteral("cached"), r.cached);
            json.insert(QStringLiteral("version"), r.version);
            json.insert(QStringLiteral("seconds"), seconds);
            printJson(json, true);
        } else if (r.cached) {
            out(QStringLiteral("trainer on %1 is up to date (built before from this source): %2\n")
                    .arg(p->name, r.trainerPath));
        } else {
            out(QStringLiteral("built the trainer on %1 in %2 s: %3\n%4\n")
                    .arg(p->name)
                    .arg(seconds, 0, 'f', 0)
                    .arg(r.trainerPath, r.version));
        }
        return kOk;
    } catch (const remote::DeployError &e) {
        if (jsonOf(args)) {
            json.insert(QStringLiteral("ok"), false);
            json.insert(QStringLiteral("error"), e.message());
            json.insert(QStringLiteral("phase"), e.phase());
            json.insert(QStringLiteral("log_tail"), e.logTail());
            json.insert(QStringLiteral("hint"), e.hint());
            printJson(json, true);
        }
        err(prefix + e.describe() + QLatin1Char('\n'));
        return e.phase() == QLatin1String("cancelled") ? kInterrupted : kFailed;
    } catch (const remote::RemoteError &e) {
        if (jsonOf(args)) {
            json.insert(QStringLiteral("ok"), false);
            json.insert(QStringLiteral("error"), e.message());
            printJson(json, true);
        }
        err(prefix + e.message() + QLatin1Char('\n'));
        return kFailed;
    }
}

int removeCluster(const Context &, const QCommandLineParser &args)
{
    const QString name = nameOf(args);
    if (!ProfileStore().remove(name)) {
        err(QStringLiteral("orrery cluster remove: no cluster '%1'\n").arg(name));
        return kFailed;
    }
    out(QStringLiteral("cluster '%1' removed\n").arg(name));
    return kOk;
}

}  // namespace

// Reads a secret from the terminal with echo off; nullopt without a terminal (UX.md: nothing
// prompts when stdin is not a TTY).
static std::optional<QByteArray> askSecret(const QString &prompt)
{
    if (!isatty(STDIN_FILENO))
        return std::nullopt;
    err(prompt);
    termios old{};
    tcgetattr(STDIN_FILENO, &old);
    termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
    QByteArray secret;
    for (int c = std::getchar(); c != EOF && c != '\n'; c = std::getchar())
        secret.append(static_cast<char>(c));
    tcsetattr(STDIN_FILENO, TCSANOW, &old);
    err(QStringLiteral("\n"));
    return secret;
}

remote::AuthCallbacks terminalCallbacks(bool acceptNewHostKey)
{
    remote::AuthCallbacks callbacks;
    callbacks.passphrase = [](const QString &prompt) { return askSecret(prompt + QLatin1Char(' ')); };
    callbacks.password = [](const QString &who) {
        return askSecret(QStringLiteral("Password for %1: ").arg(who));
    };
    callbacks.keyboardInteractive =
        [](const QString &, const QString &instruction,
           const QList<remote::Prompt> &prompts) -> std::optional<QList<QByteArray>> {
        if (!instruction.isEmpty())
            err(instruction + QLatin1Char('\n'));
        QList<QByteArray> answers;
        for (const remote::Prompt &p : prompts) {
            std::optional<QByteArray> answer = askSecret(p.text);
            if (!answer)
                return std::nullopt;
            answers.append(*answer);
        }
        return answers;
    };
    callbacks.acceptUnknownHostKey = [acceptNewHostKey](const QString &host, const QString &fingerprint) {
        if (acceptNewHostKey)
            err(QStringLiteral("orrery: trusting %1 with host key %2 (--accept-new-host-key)\n")
                    .arg(host, fingerprint));
        return acceptNewHostKey;
    };
    return callbacks;
}

std::function<void(const QString &, const remote::DeployProgress &)> deployProgressPrinter()
{
    struct State {
        ProgressLine line{stderrIsLiveTerminal()};
        QString phase;
        int tenth = -1;
        QElapsedTimer clock;
    };
    auto state = std::make_shared<State>();
    state->clock.start();
    return [state](const QString &cluster, const remote::DeployProgress &p) {
        const double seconds = double(state->clock.elapsed()) / 1000.0;
        if (stderrIsLiveTerminal()) {
            QString text = QStringLiteral("deploy %1: %2").arg(cluster, p.phase);
            if (p.percent >= 0)
                text += QStringLiteral(" ") + progressBar(p.percent / 100.0, 20);
            text += QStringLiteral("  %1s").arg(seconds, 0, 'f', 0);
            if (!p.lastLine.isEmpty())
                text += QStringLiteral("  ") + p.lastLine.left(60);
            state->line.update(text.left(terminalWidth() - 1), p.phase == QLatin1String("done"));
            if (p.phase == QLatin1String("done"))
                state->line.finish();
            return;
        }
        // A pipe or a log: a line when the phase changes, and each tenth of the compile.
        const int tenth = p.percent < 0 ? -1 : p.percent / 10;
        if (p.phase == state->phase && tenth == state->tenth)
            return;
        state->phase = p.phase;
        state->tenth = tenth;
        err(QStringLiteral("deploy %1: %2%3 (%4 s)%5\n")
                .arg(cluster, p.phase, p.percent >= 0 ? QStringLiteral(" %1%").arg(p.percent) : QString())
                .arg(seconds, 0, 'f', 0)
                .arg(p.phase == QLatin1String("upload") ? QStringLiteral(": ") + p.lastLine : QString()));
    };
}

namespace {

// `orrery cluster nodes`: the suspect list is the store's (no connection needed to read or edit
// it); the node table is one sinfo, with the suspects marked (remote::nodeViews).
QJsonObject suspectJson(const core::SuspectNode &s, qint64 now)
{
    return {
        {QStringLiteral("node"), s.node},
        {QStringLiteral("reason"), s.reason},
        {QStringLiteral("source"), s.source},
        {QStringLiteral("since"), QDateTime::fromMSecsSinceEpoch(s.sinceMs).toString(Qt::ISODate)},
        {QStringLiteral("expires"),
         s.expiresMs == 0 ? QJsonValue() : QDateTime::fromMSecsSinceEpoch(s.expiresMs).toString(Qt::ISODate)},
        {QStringLiteral("expires_in"), remote::expiresIn(s, now)}};
}

QString localTime(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("yyyy-MM-dd HH:mm"));
}

// How many of --add, --clear and --clear-all are given (at most one may be).
int suspectEdits(const QCommandLineParser &p)
{
    return int(p.isSet(QStringLiteral("clear"))) + int(p.isSet(QStringLiteral("clear-all"))) +
        int(p.isSet(QStringLiteral("add")));
}

// --clear NODE or --clear-all. Returns kOk, or the exit status after saying why.
int clearSuspects(core::TrackingStore &store, const QCommandLineParser &p, const ClusterProfile &profile,
                  qint64 now, bool json)
{
    const QString who = QStringLiteral("orrery cluster nodes");
    const QString node = p.value(QStringLiteral("clear"));
    if (p.isSet(QStringLiteral("clear")))
        if (const QString e = core::nodeNameError(node); !e.isEmpty()) {
            err(QStringLiteral("%1: --clear: %2\n").arg(who, e));
            return kUsage;
        }
    const int n = store.clearSuspectNodes(profile.name, node, now);
    if (p.isSet(QStringLiteral("clear")) && n == 0) {
        err(QStringLiteral("%1: %2 is not a suspect node of %3 (see `orrery cluster nodes %3 --suspect`)\n")
                .arg(who, node, profile.name));
        return kFailed;
    }
    if (!json)
        out(QStringLiteral("%1: %2 suspect node%3 cleared\n")
                .arg(profile.name)
                .arg(n)
                .arg(n == 1 ? QString() : QStringLiteral("s")));
    return kOk;
}

// The edit of the suspect list the options ask for (--add NODE [--reason TEXT], --clear NODE,
// --clear-all), if any. Returns kOk, or the exit status after saying why.
int editSuspects(core::TrackingStore &store, const QCommandLineParser &p, const ClusterProfile &profile,
                 qint64 now, bool json)
{
    const QString who = QStringLiteral("orrery cluster nodes");
    try {
        if (p.isSet(QStringLiteral("add"))) {
            const core::SuspectNode s = core::userSuspect(profile.name, p.value(QStringLiteral("add")),
                                                          p.value(QStringLiteral("reason")), now);
            store.addSuspectNode(s);
            if (!json)
                out(QStringLiteral("%1: %2 is suspect (kept out of new submissions until cleared)\n")
                        .arg(profile.name, s.node));
        } else if (p.isSet(QStringLiteral("clear")) || p.isSet(QStringLiteral("clear-all"))) {
            return clearSuspects(store, p, profile, now, json);
        }
    } catch (const std::invalid_argument &e) {
        err(QStringLiteral("%1: %2\n").arg(who, QString::fromUtf8(e.what())));
        return kUsage;
    }
    return kOk;
}

// The suspect list (--suspect, or after an edit: then only when there are suspects left).
void printSuspects(const QString &cluster, const QList<core::SuspectNode> &suspects, qint64 now, bool json,
                   bool edited)
{
    if (json) {
        QJsonArray items;
        for (const core::SuspectNode &s : suspects)
            items.append(suspectJson(s, now));
        printJson(QJsonObject{{QStringLiteral("cluster"), cluster}, {QStringLiteral("suspect"), items}},
                  true);
    } else if (!edited || !suspects.isEmpty()) {
        QList<QStringList> rows;
        for (const core::SuspectNode &s : suspects)
            rows.append({s.node, s.source, localTime(s.sinceMs), remote::expiresIn(s, now), s.reason});
        if (rows.isEmpty())
            out(QStringLiteral("%1: no suspect nodes\n").arg(cluster));
        else
            out(formatTable({QStringLiteral("NODE"), QStringLiteral("SOURCE"), QStringLiteral("SINCE"),
                             QStringLiteral("EXPIRES IN"), QStringLiteral("REASON")},
                            rows));
    }
}

QJsonObject nodeJson(const remote::NodeView &v, qint64 now)
{
    QJsonObject o{{QStringLiteral("node"), v.node.name},
                  {QStringLiteral("listed"), v.listed},
                  {QStringLiteral("state"), v.node.state},
                  {QStringLiteral("up"), v.listed && remote::isNodeUp(v.node.state)},
                  {QStringLiteral("cpus"), v.node.cpusTotal},
                  {QStringLiteral("gpus"), v.node.gpusTotal},
                  {QStringLiteral("gres"), v.node.gres},
                  {QStringLiteral("partitions"), QJsonArray::fromStringList(v.node.partitions)}};
    if (v.suspect)
        o.insert(QStringLiteral("suspect"), suspectJson(*v.suspect, now));
    return o;
}

// The node table: every node sinfo lists, and the suspects it does not, marked.
void printNodes(const QString &cluster, const QList<remote::NodeView> &views, qint64 now, bool json)
{
    if (json) {
        QJsonArray items;
        for (const remote::NodeView &v : views)
            items.append(nodeJson(v, now));
        printJson(QJsonObject{{QStringLiteral("cluster"), cluster}, {QStringLiteral("nodes"), items}}, true);
        return;
    }
    QList<QStringList> rows;
    for (const remote::NodeView &v : views)
        rows.append({v.node.name, v.listed ? v.node.state : QStringLiteral("(not in sinfo)"),
                     v.listed ? QString::number(v.node.cpusTotal) : QString(),
                     v.listed ? QString::number(v.node.gpusTotal) : QString(),
                     v.node.partitions.join(QLatin1Char(',')),
                     v.suspect ? QStringLiteral("suspect (%1): %2").arg(v.suspect->source, v.suspect->reason)
                               : QString()});
    out(formatTable({QStringLiteral("NODE"), QStringLiteral("STATE"), QStringLiteral("CPUS"),
                     QStringLiteral("GPUS"), QStringLiteral("PARTITIONS"), QStringLiteral("ORRERY")},
                    rows));
}

int nodes(const Context &ctx, const QCommandLineParser &p)
{
    const QString name = p.positionalArguments().value(0);
    const QString who = QStringLiteral("orrery cluster nodes");
    const bool json = p.isSet(QStringLiteral("json"));
    const int edits = suspectEdits(p);
    if (edits > 1)
        return usage(QStringLiteral("nodes: give one of --clear, --clear-all and --add"));
    if (p.isSet(QStringLiteral("reason")) && !p.isSet(QStringLiteral("add")))
        return usage(QStringLiteral("nodes: --reason goes with --add NODE"));
    int code = kOk;
    const std::optional<ClusterProfile> profile = load(QStringLiteral("nodes"), name, code);
    if (!profile)
        return code;
    auto store = openStore(ctx);
    if (!store)
        return kFailed;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (const int edited = editSuspects(*store, p, *profile, now, json); edited != kOk)
        return edited;
    const QList<core::SuspectNode> suspects = store->suspectNodes(profile->name, now);
    if (edits > 0 || p.isSet(QStringLiteral("suspect"))) {
        printSuspects(profile->name, suspects, now, json, edits > 0);
        return kOk;
    }
    // The whole table: one sinfo on the cluster.
    const remote::ClusterStatus status =
        remote::ClusterWatch(*profile, terminalCallbacks(false)).poll(remote::QueueScope::None);
    if (!status.ok()) {
        err(QStringLiteral("%1 %2: %3%4\n")
                .arg(who, profile->name, status.error, remote::settleHint(status.failure, profile->name)));
        return kFailed;
    }
    printNodes(profile->name, remote::nodeViews(status.info, suspects), now, json);
    return kOk;
}

}  // namespace

int runCluster(const QStringList &args)
{
    // The verbs are dispatched by the command table (clusterVerbs); only the help comes here.
    if (args.value(0) == QLatin1String("--help") || args.value(0) == QLatin1String("-h")) {
        out(QString::fromUtf8(kClusterUsage));
        return kOk;
    }
    return usage(QStringLiteral("unknown verb '%1'").arg(args.value(0)));
}

QList<VerbInfo> clusterVerbs()
{
    const QCommandLineOption json(QStringLiteral("json"), QStringLiteral("one JSON object"));
    const QCommandLineOption acceptKey(
        QStringLiteral("accept-new-host-key"),
        QStringLiteral("trust the host's key on first contact (shown on stderr)"));
    const auto value = [](const char *name, const char *valueName, const char *description) {
        return QCommandLineOption(QString::fromLatin1(name), QString::fromUtf8(description),
                                  QString::fromLatin1(valueName));
    };
    const QStringList name{QStringLiteral("NAME")};
    return {parsedVerb(QStringLiteral("add"), name,
                       {value("host", "HOST", "the login node, or a Host alias of ~/.ssh/config (required)"),
                        value("port", "PORT", "SSH port (default: the SSH config's, else 22)"),
                        value("user", "USER", "user name on the cluster"),
                        value("identity", "FILE", "private key file (default: the agent, then ~/.ssh/id_*)"),
                        value("known-hosts", "FILE", "known_hosts file (default: ~/.ssh/known_hosts)"),
                        value("proxy-jump", "HOST", "[user@]host[:port] to reach it through, as ssh -J"),
                        value("remote-root", "DIR", "where run directories go, on the shared filesystem"),
                        value("partition", "P", "Slurm partition for sweeps"),
                        value("account", "A", "Slurm account for sweeps"),
                        value("setup", "LINE", "a shell line run before the trainer (repeat for more)"),
                        value("trainer-path", "PATH", "a trainer already on the cluster (else deployed)"),
                        value("build-on", "login|job", "where `cluster deploy` builds the trainer"),
                        value("gpu-hour-price", "PRICE", "what one GPU-hour costs (with --currency)"),
                        value("currency", "C", "the price's unit, e.g. USD"),
                        QCommandLineOption(QStringLiteral("force"),
                                           QStringLiteral("replace a profile of that name"))},
                       QStringLiteral("add a profile (SSH to a Slurm login node)"), add),
            parsedVerb(QStringLiteral("list"), {}, {json}, QStringLiteral("the cluster profiles"), list),
            parsedVerb(QStringLiteral("show"), name, {json}, QStringLiteral("one profile"), show),
            parsedVerb(QStringLiteral("test"), name, {json, acceptKey},
                       QStringLiteral("connect and report Slurm, nodes, GPUs"), test),
            parsedVerb(QStringLiteral("deploy"), name, {json, acceptKey},
                       QStringLiteral("build the bundled trainer on the cluster (cached)"), deploy),
            parsedVerb(QStringLiteral("remove"), name, {}, QStringLiteral("remove a profile"), removeCluster),
            parsedVerb(
                QStringLiteral("nodes"), {QStringLiteral("NAME")},
                {QCommandLineOption(QStringLiteral("suspect"),
                                    QStringLiteral("only the suspect nodes: reason, source, since, expiry")),
                 QCommandLineOption(QStringLiteral("add"),
                                    QStringLiteral("keep NODE out of new submissions (with --reason)"),
                                    QStringLiteral("NODE")),
                 QCommandLineOption(QStringLiteral("reason"), QStringLiteral("why NODE is added"),
                                    QStringLiteral("TEXT")),
                 QCommandLineOption(QStringLiteral("clear"), QStringLiteral("let NODE be used again"),
                                    QStringLiteral("NODE")),
                 QCommandLineOption(QStringLiteral("clear-all"), QStringLiteral("clear every suspect node")),
                 json},
                QStringLiteral("the cluster's nodes, suspect ones marked (bad nodes kept out)"), nodes)};
}

}  // namespace orrery::cli
