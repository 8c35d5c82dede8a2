// SPDX-License-Identifier: GPL-3.0-or-later
#include "orrery/remote/slurmparse.h"

#include <QDateTime>
#include <QRegularExpression>
#include <QSet>
#include <QTimeZone>

#include <algorithm>
#include <limits>

namespace orrery::remote::slurm {

namespace {

constexpr char kSep = '\x1f';

// Lines of `out` without the empty ones (a trailing newline, blank lines between records).
QList<QByteArray> lines(const QByteArray &out)
{
    QList<QByteArray> result;
    for (QByteArray line : out.split('\n')) {
        if (line.endsWith('\r'))
            line.chop(1);
        if (!line.trimmed().isEmpty())
            result.append(line);
    }
    return result;
}

// Splits a record into exactly `count` fields; a trailing separator (sinfo -O puts one after
// every field) is allowed.
bool splitFields(const QByteArray &line, qsizetype count, QStringList &fields)
{
    QList<QByteArray> parts = line.split(kSep);
    if (parts.size() == count + 1 && parts.last().isEmpty())
        parts.removeLast();
    if (parts.size() != count)
        return false;
    fields.clear();
    for (const QByteArray &part : parts)
        fields.append(QString::fromUtf8(part).trimmed());
    return true;
}

QString lineError(int number, const QString &what, const QByteArray &line)
{
    return QStringLiteral("line %1: %2: %3").arg(number).arg(what, QString::fromUtf8(line.left(200)));
}

bool toInt(const QString &text, int &value)
{
    bool ok = false;
    value = text.toInt(&ok);
    return ok && value >= 0;
}

// Memory as sinfo prints it: MB, sometimes with a unit suffix on newer versions.
bool toMegabytes(const QString &text, qint64 &value)
{
    static const QRegularExpression pattern(QStringLiteral("^(\\d+)([MGT]?)$"));
    const QRegularExpressionMatch m = pattern.match(text);
    if (!m.hasMatch())
        return false;
    bool ok = false;
    value = m.captured(1).toLongLong(&ok);
    if (!ok)
        return false;
    const QString unit = m.captured(2);
    if (unit == QLatin1String("G"))
        value *= 1024;
    else if (unit == QLatin1String("T"))
        value *= 1024 * 1024;
    return true;
}

QString orEmpty(const QString &value)
{
    return value == QLatin1String("N/A") || value == QLatin1String("(null)") ? QString() : value;
}

}  // namespace

Parsed<Submitted> parseSbatch(const QByteArray &out)
{
    const QList<QByteArray> all = lines(out);
    if (all.isEmpty())
        return {{}, QStringLiteral("sbatch printed no job id")};
    // The id is the last line; sbatch may print warnings to stdout before it on some sites.
    const QString last = QString::fromUtf8(all.last()).trimmed();
    Submitted s;
    s.jobId = last.section(QLatin1Char(';'), 0, 0);
    s.cluster = last.section(QLatin1Char(';'), 1);
    static const QRegularExpression id(QStringLiteral("^\\d+$"));
    if (!id.match(s.jobId).hasMatch())
        return {{}, QStringLiteral("sbatch printed '%1', not a job id").arg(last.left(200))};
    return {s, {}};
}

bool isJobId(const QString &id)
{
    static const QRegularExpression pattern(QStringLiteral("^\\d+(_(\\d+|\\[[0-9,%\\-]+\\]))?$"));
    return pattern.match(id).hasMatch();
}

QByteArray squeueFormat()
{
    // %i id, %F array job id, %K array task id, %T state, %r reason, %P partition, %D nodes,
    // %N node list, %M elapsed, %l time limit, %b GRES. No %j: see the header.
    QByteArray format;
    for (const char *field : {"%i", "%F", "%K", "%T", "%r", "%P", "%D", "%N", "%M", "%l", "%b"}) {
        if (!format.isEmpty())
            format.append(kSep);
        format.append(field);
    }
    return format;
}

namespace {

// The 11 fields of squeueFormat() into `job`; an error text, or empty.
QString readJob(const QStringList &f, Job &job)
{
    job.jobId = f[0];
    job.arrayJobId = f[1];
    job.arrayTaskId = orEmpty(f[2]);
    job.state = f[3];
    job.reason = f[4];
    job.partition = f[5];
    job.nodeList = f[7];
    job.elapsed = f[8];
    job.timeLimit = f[9];
    job.gres = orEmpty(f[10]);
    if (!isJobId(job.jobId) || !isJobId(job.arrayJobId))
        return QStringLiteral("not a job id");
    if (!toInt(f[6], job.nodes))
        return QStringLiteral("node count is not a number");
    if (job.state.isEmpty())
        return QStringLiteral("no job state");
    return {};
}

QString printableName(const QByteArray &bytes)
{
    QString name = QString::fromUtf8(bytes);
    for (QChar &c : name)
        if (c.category() == QChar::Other_Control || c.category() == QChar::Other_Format)
            c = QLatin1Char(' ');
    return name;
}

}  // namespace

Parsed<QList<Job>> parseSqueue(const QByteArray &out)
{
    Parsed<QList<Job>> result;
    int number = 0;
    QStringList f;
    for (const QByteArray &line : lines(out)) {
        ++number;
        if (!splitFields(line, 11, f))
            return {{}, lineError(number, QStringLiteral("expected 11 fields"), line)};
        Job job;
        if (const QString error = readJob(f, job); !error.isEmpty())
            return {{}, lineError(number, error, line)};
        result.value.append(job);
    }
    return result;
}

QByteArray squeueNamedFormat()
{
    return squeueFormat() + kSep + "%j";
}

Parsed<QList<Job>> parseSqueueNamed(const QByteArray &out)
{
    Parsed<QList<Job>> result;
    int number = 0;
    for (QByteArray line : out.split('\n')) {
        ++number;
        if (line.endsWith('\r'))
            line.chop(1);
        const QList<QByteArray> parts = line.split(kSep);
        QStringList f;
        for (qsizetype i = 0; i < std::min<qsizetype>(parts.size(), 11); ++i)
            f.append(QString::fromUtf8(parts[i]).trimmed());
        if (parts.size() >= 12 && isJobId(f[0]) && isJobId(f[1])) {
            Job job;
            if (const QString error = readJob(f, job); !error.isEmpty())
                return {{}, lineError(number, error, line)};
            job.name = printableName(parts.mid(11).join(' '));
            result.value.append(job);
        } else if (!result.value.isEmpty() && !line.isEmpty()) {
            result.value.last().name += QLatin1Char(' ') + printableName(line);
        } else if (result.value.isEmpty() && !line.trimmed().isEmpty()) {
            return {{}, lineError(number, QStringLiteral("expected at least 12 fields"), line)};
        }
    }
    for (Job &job : result.value)
        job.name = job.name.trimmed();
    return result;
}

int gpuCount(const QString &gres)
{
    int total = 0;
    // Items are separated by commas, but a comma may also occur inside "(IDX:0,2)".
    int depth = 0;
    QString item;
    auto finish = [&]() {
        QString name = item.section(QLatin1Char('('), 0, 0).trimmed();
        if (name.startsWith(QLatin1String("gres:")) || name.startsWith(QLatin1String("gres/")))
            name = name.mid(5);
        const QStringList parts = name.split(QLatin1Char(':'));
        if (parts.size() >= 2 &&
            (parts[0] == QLatin1String("gpu") || parts[0].startsWith(QLatin1String("gpu/")))) {
            bool ok = false;
            const int n = parts.last().toInt(&ok);
            if (ok && n > 0 && total <= std::numeric_limits<int>::max() - n)
                total += n;
        }
        item.clear();
    };
    for (const QChar c : gres) {
        if (c == QLatin1Char('('))
            ++depth;
        else if (c == QLatin1Char(')'))
            depth = std::max(0, depth - 1);
        if (c == QLatin1Char(',') && depth == 0)
            finish();
        else
            item.append(c);
    }
    finish();
    return total;
}

QByteArray sinfoFormat()
{
    QByteArray format;
    for (const char *field : {"NodeList", "Partition", "Available", "StateLong", "CPUsState", "Memory",
                              "AllocMem", "Gres", "GresUsed", "Time", "CPUsLoad"}) {
        if (!format.isEmpty())
            format.append(',');
        // ":0" = no padding; the separator is each field's suffix.
        format.append(field).append(":0").append(kSep);
    }
    return format;
}

Parsed<ClusterInfo> parseSinfo(const QByteArray &out)
{
    ClusterInfo info;
    QHash<QString, qsizetype> nodeIndex;
    QHash<QString, qsizetype> partitionIndex;
    int number = 0;
    QStringList f;
    for (const QByteArray &line : lines(out)) {
        ++number;
        // CPUsLoad came last (11th); output captured before it has 10 fields.
        if (!splitFields(line, 11, f) && !splitFields(line, 10, f))
            return {{}, lineError(number, QStringLiteral("expected 11 fields"), line)};
        const QString nodeName = f[0];
        QString partitionName = f[1];
        if (nodeName.isEmpty() || partitionName.isEmpty())
            return {{}, lineError(number, QStringLiteral("no node or partition name"), line)};
        const bool isDefault = partitionName.endsWith(QLatin1Char('*'));
        if (isDefault)
            partitionName.chop(1);

        // CPUsState: allocated/idle/other/total.
        const QStringList cpus = f[4].split(QLatin1Char('/'));
        int cpuValues[4] = {0, 0, 0, 0};
        if (cpus.size() != 4)
            return {{}, lineError(number, QStringLiteral("CPU state is not A/I/O/T"), line)};
        for (int i = 0; i < 4; ++i)
            if (!toInt(cpus[i], cpuValues[i]))
                return {{}, lineError(number, QStringLiteral("CPU state is not A/I/O/T"), line)};
        Node node;
        node.name = nodeName;
        node.state = f[3];
        node.cpusAllocated = cpuValues[0];
        node.cpusIdle = cpuValues[1];
        node.cpusTotal = cpuValues[3];
        if (!toMegabytes(f[5], node.memoryMb) || !toMegabytes(f[6], node.memoryAllocatedMb))
            return {{}, lineError(number, QStringLiteral("memory is not a number"), line)};
        node.gres = orEmpty(f[7]);
        node.gpusTotal = gpuCount(node.gres);
        node.gpusUsed = gpuCount(orEmpty(f[8]));
        if (f.size() > 10) {
            bool ok = false;
            const double load = f[10].toDouble(&ok);
            node.cpuLoad = ok && load >= 0 ? load : -1;  // "N/A" while the node does not answer
        }

        if (!nodeIndex.contains(nodeName)) {
            nodeIndex.insert(nodeName, info.nodes.size());
            info.nodes.append(node);
        }
        Node &known = info.nodes[nodeIndex.value(nodeName)];
        if (!known.partitions.contains(partitionName))
            known.partitions.append(partitionName);

        if (!partitionIndex.contains(partitionName)) {
            partitionIndex.insert(partitionName, info.partitions.size());
            Partition p;
            p.name = partitionName;
            p.up = f[2] == QLatin1String("up");
            p.timeLimit = f[9];
            info.partitions.append(p);
        }
        Partition &p = info.partitions[partitionIndex.value(partitionName)];
        p.isDefault = p.isDefault || isDefault;
        if (!p.nodes.contains(nodeName)) {
            p.nodes.append(nodeName);
            p.cpusTotal += node.cpusTotal;
            p.cpusIdle += node.cpusIdle;
            p.gpusTotal += node.gpusTotal;
            p.gpusUsed += node.gpusUsed;
        }
    }
    // `sinfo -N` lists a node's partitions in no fixed order (seen on 22.05: "debug" before or
    // after "gpu*" from one call to the next): the default partition first, then by name.
    QSet<QString> defaults;
    for (const Partition &p : std::as_const(info.partitions))
        if (p.isDefault)
            defaults.insert(p.name);
    auto before = [&](const QString &a, const QString &b) {
        const bool da = defaults.contains(a);
        const bool db = defaults.contains(b);
        return da != db ? da : a < b;
    };
    std::sort(info.partitions.begin(), info.partitions.end(),
              [&](const Partition &a, const Partition &b) { return before(a.name, b.name); });
    for (Node &n : info.nodes)
        std::sort(n.partitions.begin(), n.partitions.end(), before);
    return {info, {}};
}

bool isNodeUnusable(const QString &state)
{
    const QString s = state.trimmed().toLower();
    if (s.isEmpty() || s.endsWith(QLatin1Char('*')))  // "*": not responding
        return true;
    for (const char *word : {"down", "drain", "fail", "power", "future", "unknown", "maint", "reboot"})
        if (s.startsWith(QLatin1String(word)) || s.contains(QLatin1Char('+') + QLatin1String(word)))
            return true;
    return false;
}

Parsed<QList<Record>> parseScontrol(const QByteArray &out)
{
    Parsed<QList<Record>> result;
    // A key: letters, digits and Slurm's "/", ":", "." and "_" (CPUs/Task, AllocNode:Sid).
    static const QRegularExpression key(QStringLiteral("(?:^|\\s)([A-Za-z][A-Za-z0-9/:._]*)="));
    int number = 0;
    for (const QByteArray &raw : lines(out)) {
        ++number;
        const QString line = QString::fromUtf8(raw);
        if (line.startsWith(QLatin1String("No ")) || line.contains(QLatin1String(" not found")))
            continue;  // "No jobs in the system", "Job 7 not found" are not records
        Record record;
        QRegularExpressionMatchIterator it = key.globalMatch(line);
        QString name;
        qsizetype valueStart = -1;
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            if (!name.isEmpty())
                record.insert(name, line.mid(valueStart, m.capturedStart(0) - valueStart).trimmed());
            name = m.captured(1);
            valueStart = m.capturedEnd(0);
        }
        if (name.isEmpty())
            return {{}, lineError(number, QStringLiteral("no Key=Value pairs"), raw)};
        record.insert(name, line.mid(valueStart).trimmed());
        result.value.append(record);
    }
    return result;
}

QByteArray sacctFormat()
{
    return QByteArrayLiteral("JobID,State,ExitCode,Elapsed,NodeList");
}

Parsed<QList<Accounting>> parseSacct(const QByteArray &out)
{
    Parsed<QList<Accounting>> result;
    int number = 0;
    for (const QByteArray &raw : lines(out)) {
        ++number;
        // -P: '|' between fields; none of these five can contain it. Four: an older format
        // (before NodeList was asked for), still read.
        const QList<QByteArray> f = raw.split('|');
        if (f.size() != 4 && f.size() != 5)
            return {{}, lineError(number, QStringLiteral("expected 5 fields"), raw)};
        Accounting a;
        a.jobId = QString::fromUtf8(f[0]).trimmed();
        a.state = QString::fromUtf8(f[1]).trimmed().section(QLatin1Char(' '), 0, 0);
        const QString exit = QString::fromUtf8(f[2]).trimmed();
        a.elapsed = QString::fromUtf8(f[3]).trimmed();
        if (f.size() == 5) {
            a.nodeList = orEmpty(QString::fromUtf8(f[4]).trimmed());
            if (a.nodeList == QLatin1String("None assigned"))
                a.nodeList.clear();
        }
        static const QRegularExpression jobStep(QStringLiteral("^\\d+(_\\d+)?(\\.[A-Za-z0-9+]+)?$"));
        if (!jobStep.match(a.jobId).hasMatch())
            return {{}, lineError(number, QStringLiteral("not a job id"), raw)};
        if (!toInt(exit.section(QLatin1Char(':'), 0, 0), a.exitCode) ||
            !toInt(exit.section(QLatin1Char(':'), 1, 1), a.signal) || exit.count(QLatin1Char(':')) != 1)
            return {{}, lineError(number, QStringLiteral("exit code is not N:S"), raw)};
        if (a.state.isEmpty())
            return {{}, lineError(number, QStringLiteral("no job state"), raw)};
        result.value.append(a);
    }
    return result;
}

namespace {

constexpr qsizetype kMaxHosts = 100'000;

// Expands one host-list element (no top-level comma): its first bracket group, then the rest
// recursively, so "rack[1-2]-n[1-2]" gives every combination in Slurm's order.
QString expandHostElement(const QString &element, QStringList &out)
{
    const qsizetype open = element.indexOf(QLatin1Char('['));
    if (open < 0) {
        if (element.contains(QLatin1Char(']')))
            return QStringLiteral("'%1': ']' without '['").arg(element);
        out << element;
        return {};
    }
    const qsizetype close = element.indexOf(QLatin1Char(']'), open);
    if (close < 0)
        return QStringLiteral("'%1': '[' without ']'").arg(element);
    const QString prefix = element.left(open);
    const QString rest = element.mid(close + 1);
    QStringList tails;
    if (const QString error = expandHostElement(rest, tails); !error.isEmpty())
        return error;
    static const QRegularExpression range(QStringLiteral("^(\\d+)(?:-(\\d+))?$"));
    for (const QString &part : element.mid(open + 1, close - open - 1).split(QLatin1Char(','))) {
        const QRegularExpressionMatch m = range.match(part.trimmed());
        if (!m.hasMatch())
            return QStringLiteral("'%1': '%2' is not a number or a range").arg(element, part);
        const QString firstText = m.captured(1);
        const QString lastText = m.hasCaptured(2) ? m.captured(2) : firstText;
        bool okFirst = false, okLast = false;
        const qint64 first = firstText.toLongLong(&okFirst);
        const qint64 last = lastText.toLongLong(&okLast);
        if (!okFirst || !okLast || last < first)
            return QStringLiteral("'%1': '%2' is not a range").arg(element, part);
        // The range alone first: its product with the tails cannot overflow then.
        if (last - first >= kMaxHosts || (last - first + 1) * tails.size() + out.size() > kMaxHosts)
            return QStringLiteral("'%1': more than %2 hosts").arg(element).arg(kMaxHosts);
        // Zero padding as written: "08-10" keeps two digits.
        const int width = int(firstText.size());
        for (qint64 i = first; i <= last; ++i) {
            const QString number = QStringLiteral("%1").arg(i, width, 10, QLatin1Char('0'));
            for (const QString &tail : std::as_const(tails))
                out << prefix + number + tail;
        }
    }
    return {};
}

}  // namespace

Parsed<QStringList> expandHostList(const QString &hostList)
{
    Parsed<QStringList> result;
    const QString text = hostList.trimmed();
    if (text.isEmpty() || text == QLatin1String("(null)") || text == QLatin1String("None assigned") ||
        text == QLatin1String("N/A"))
        return result;
    // Split at the commas outside brackets.
    QStringList elements;
    int depth = 0;
    qsizetype start = 0;
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text[i] == QLatin1Char('['))
            ++depth;
        else if (text[i] == QLatin1Char(']'))
            --depth;
        else if (text[i] == QLatin1Char(',') && depth == 0) {
            elements << text.mid(start, i - start);
            start = i + 1;
        }
        if (depth < 0 || depth > 1)
            return {{}, QStringLiteral("'%1': unbalanced brackets").arg(text.left(200))};
    }
    elements << text.mid(start);
    for (const QString &element : std::as_const(elements)) {
        if (element.trimmed().isEmpty())
            return {{}, QStringLiteral("'%1': an empty host name").arg(text.left(200))};
        if (const QString error = expandHostElement(element.trimmed(), result.value); !error.isEmpty())
            return {{}, error};
    }
    return result;
}

// --- submit limits and the expected start ----------------------------------------------------

Parsed<SubmitLimits> parseConfigLimits(const QByteArray &out)
{
    Parsed<SubmitLimits> result;
    bool seen = false;
    for (const QByteArray &raw : lines(out)) {
        const qsizetype eq = raw.indexOf('=');
        if (eq <= 0)
            continue;
        const QByteArray key = raw.left(eq).trimmed();
        const QString value = QString::fromUtf8(raw.mid(eq + 1)).trimmed();
        int *field = key == "MaxArraySize" ? &result.value.maxArraySize
            : key == "MaxJobCount"         ? &result.value.maxJobCount
                                           : nullptr;
        if (!field)
            continue;
        if (!toInt(value, *field))
            return {{}, QStringLiteral("%1 is not a number: '%2'").arg(QString::fromUtf8(key), value)};
        seen = true;
    }
    if (!seen)
        return {{}, QStringLiteral("no MaxArraySize or MaxJobCount in scontrol's configuration")};
    return result;
}

int parseSubmitLimit(const QByteArray &assoc, const QByteArray &qos)
{
    int limit = 0;
    const auto tighten = [&limit](const QString &text) {
        int n = 0;
        if (toInt(text.trimmed(), n) && n > 0)
            limit = limit == 0 ? n : std::min(limit, n);
    };
    QSet<QString> named;
    for (const QByteArray &raw : lines(assoc)) {
        const QList<QByteArray> f = raw.split('|');
        if (f.size() < 2)
            continue;  // not a record: "You are not running a supported accounting_storage plugin"
        tighten(QString::fromUtf8(f[0]));
        for (const QByteArray &name : f[1].split(','))
            if (!name.trimmed().isEmpty())
                named.insert(QString::fromUtf8(name.trimmed()));
    }
    for (const QByteArray &raw : lines(qos)) {
        const QList<QByteArray> f = raw.split('|');
        if (f.size() >= 2 && named.contains(QString::fromUtf8(f[0].trimmed())))
            tighten(QString::fromUtf8(f[1]));
    }
    return limit;
}

QString limitRefusal(const QString &sbatchError)
{
    // Slurm's reason codes (slurm.h's job_state_reason names, which sbatch prints for a policy
    // refusal) and the messages of the errors ESLURM_ACCOUNTING_POLICY, EAGAIN and
    // ESLURM_INVALID_ARRAY, as Slurm 22.05 prints them (captured on the fixture with
    // MaxArraySize=50 and MaxJobCount=60: tst_slurmparse).
    static const std::pair<QLatin1String, const char *> kLimits[] = {
        {QLatin1String("QOSMaxSubmitJobPerUserLimit"), "the QOS's limit on jobs submitted per user"},
        {QLatin1String("QOSMaxSubmitJobPerAccountLimit"), "the QOS's limit on jobs submitted per account"},
        {QLatin1String("AssocMaxSubmitJobLimit"), "the association's limit on submitted jobs"},
        {QLatin1String("AssocGrpSubmitJobsLimit"), "the group's limit on submitted jobs"},
        {QLatin1String("QOSGrpSubmitJobsLimit"), "the QOS's group limit on submitted jobs"},
        {QLatin1String("MaxSubmitJobs"), "the limit on submitted jobs"},
        {QLatin1String("Job violates accounting/QOS policy"),
         "the accounting/QOS policy (a limit on submitted jobs)"},
        {QLatin1String("Resource temporarily unavailable"), "the cluster's MaxJobCount (its queue is full)"},
        {QLatin1String("Slurm temporarily unable to accept job"),
         "the cluster's MaxJobCount (its queue is full)"},
        {QLatin1String("Invalid job array specification"), "the cluster's MaxArraySize"},
    };
    for (const auto &[needle, words] : kLimits)
        if (sbatchError.contains(needle, Qt::CaseInsensitive))
            return QStringLiteral("%1 (%2)").arg(QLatin1String(words), needle);
    return {};
}

QByteArray squeueStartFormat()
{
    return QByteArray("%i") + kSep + "%S";
}

Parsed<QHash<QString, qint64>> parseSqueueStart(const QByteArray &out)
{
    Parsed<QHash<QString, qint64>> result;
    const QList<QByteArray> all = lines(out);
    static const QRegularExpression offsetPattern(QStringLiteral("^([+-])(\\d\\d)(\\d\\d)$"));
    const QRegularExpressionMatch offset =
        offsetPattern.match(all.isEmpty() ? QString() : QString::fromUtf8(all.front()).trimmed());
    if (!offset.hasMatch())
        return {{}, QStringLiteral("no time zone offset (date +%z) before squeue's answer")};
    const int seconds = (offset.captured(2).toInt() * 3600 + offset.captured(3).toInt() * 60) *
        (offset.captured(1) == QLatin1String("-") ? -1 : 1);
    QStringList f;
    for (qsizetype i = 1; i < all.size(); ++i) {
        if (!splitFields(all[i], 2, f))
            return {{}, lineError(int(i) + 1, QStringLiteral("expected 2 fields"), all[i])};
        if (!isJobId(f[0]))
            return {{}, lineError(int(i) + 1, QStringLiteral("not a job id"), all[i])};
        const QDateTime local = QDateTime::fromString(f[1], Qt::ISODate);
        if (!local.isValid())
            continue;  // N/A, Unknown: Slurm has not computed one
        QDateTime at(local.date(), local.time(), QTimeZone(seconds));
        result.value.insert(f[0], at.toMSecsSinceEpoch());
    }
    return result;
}

Parsed<QString> parseVersion(const QByteArray &out)
{
    static const QRegularExpression pattern(QStringLiteral("^slurm(?:-wlm)?\\s+(\\d+\\.\\d+\\.\\d+)"));
    const QRegularExpressionMatch m = pattern.match(QString::fromUtf8(out).trimmed());
    if (!m.hasMatch())
        return {{},
                QStringLiteral("not a Slurm version: '%1'").arg(QString::fromUtf8(out.left(100)).trimmed())};
    return {m.captured(1), {}};
}

}  // namespace orrery::remote::slurm
