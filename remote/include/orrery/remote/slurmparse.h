// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Pure parsers of Slurm's command output: text in, structs or a clear error out. No I/O, no
// state, safe from any thread; each has table tests (tests/remote/tst_slurmparse.cpp, real Slurm
// 22.05 output captured from the fixture plus documented newer formats) and a libFuzzer target
// (tests/fuzz/). Only Qt Core, so the fuzz build needs nothing else.
//
// The format strings are fixed here, next to their parsers: fields are separated by the ASCII
// unit separator (0x1f), and only fields Slurm itself fills are asked for (no job names or
// comments, which a user can fill with any byte, separator and newline included).

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

namespace orrery::remote::slurm {

template<typename T>
struct Parsed {
    T value{};
    QString error;  // empty: parsed
    bool ok() const { return error.isEmpty(); }
};

// `sbatch --parsable`: "<jobid>" or "<jobid>;<cluster>" (federated / multi-cluster setups).
struct Submitted {
    QString jobId;
    QString cluster;
};
Parsed<Submitted> parseSbatch(const QByteArray &out);

// "123", "123_4" (one array task), "123_[2-5%2]" (pending tasks squeue shows folded).
bool isJobId(const QString &id);

// `squeue -h -r -t all -o <squeueFormat()>`: one record per job or array task.
struct Job {
    QString jobId;  // "123" or "123_4"
    QString arrayJobId;  // "123" (== jobId for a plain job)
    QString arrayTaskId;  // "4"; empty for a plain job
    QString state;  // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
    QString reason;  // None, Resources, JobArrayTaskLimit, JobHeldUser, ...
    QString partition;
    int nodes = 0;
    QString nodeList;  // empty while pending
    QString elapsed;  // as Slurm prints it: [days-]hours:minutes:seconds
    QString timeLimit;  // UNLIMITED or as elapsed
    QString gres;  // requested GRES ("gres:gpu:2", "gres/gpu:2" on 23.x); empty if none
    QString name;  // only from parseSqueueNamed: for display, control characters made spaces
};
QByteArray squeueFormat();
Parsed<QList<Job>> parseSqueue(const QByteArray &out);

// The same fields plus the job name (%j) last, for showing a queue to a person (the terminal
// monitor). A name may hold any byte: whatever follows the 11th separator is the name, and a
// line that does not start a record continues the previous record's name (a newline in it).
QByteArray squeueNamedFormat();
Parsed<QList<Job>> parseSqueueNamed(const QByteArray &out);

// `sinfo -h -N -O <sinfoFormat()>`: one record per node and partition, folded into nodes and
// partitions. Partitions (also each node's) come default first, then by name.
struct Node {
    QString name;
    QStringList partitions;
    QString state;  // idle, mixed, allocated, down, drained, ... (+ Slurm's suffixes like "*")
    int cpusAllocated = 0;
    int cpusIdle = 0;
    int cpusTotal = 0;
    qint64 memoryMb = 0;
    qint64 memoryAllocatedMb = 0;
    QString gres;  // configured, as Slurm prints it ("gpu:4", "gpu:a100:4(S:0-1)")
    int gpusTotal = 0;
    int gpusUsed = 0;
    double cpuLoad = -1;  // the load average Slurm last saw; -1: not known
};
struct Partition {
    QString name;
    bool isDefault = false;
    bool up = false;
    QString timeLimit;  // "infinite", "30:00", "1-00:00:00"
    QStringList nodes;
    int cpusTotal = 0;
    int cpusIdle = 0;
    int gpusTotal = 0;
    int gpusUsed = 0;
};
struct ClusterInfo {
    QList<Node> nodes;
    QList<Partition> partitions;
};
QByteArray sinfoFormat();
Parsed<ClusterInfo> parseSinfo(const QByteArray &out);

// Whether Slurm runs no new jobs on a node in this state (sinfo's StateLong): down, drained or
// draining, failing, not responding ("idle*": the "*" suffix), powered down, future, unknown.
// idle, mixed, allocated, completing, reserved... are usable.
bool isNodeUnusable(const QString &state);

// The number of GPUs in a GRES string: "gpu:4" → 4, "gpu:a100:2(IDX:0-1),gpu:v100:1(IDX:3)" → 3,
// "gpu:0", "(null)", "N/A", "" → 0. Other GRES (shard, mps) do not count.
int gpuCount(const QString &gres);

// `scontrol show job|node|partition -o`: one record per line of Key=Value pairs. A value runs
// until the next " Key=" (so values with spaces, like Reason, survive).
using Record = QHash<QString, QString>;
Parsed<QList<Record>> parseScontrol(const QByteArray &out);

// `sacct -n -P -X -o <sacctFormat()>`.
struct Accounting {
    QString jobId;
    QString state;  // "CANCELLED by 0" is folded to CANCELLED
    int exitCode = 0;
    int signal = 0;
    QString elapsed;
    QString nodeList;  // as Slurm prints it ("node[1-2]"); "None assigned" is empty
};
QByteArray sacctFormat();
Parsed<QList<Accounting>> parseSacct(const QByteArray &out);

// A Slurm host list expanded as `scontrol show hostnames` does, without the round trip:
// "node[1-3,5]" → node1, node2, node3, node5; "gpu[08-10],login" → gpu08, gpu09, gpu10, login
// (zero padding kept); "rack[1-2]-n[1-2]" → rack1-n1, rack1-n2, rack2-n1, rack2-n2. "", "(null)",
// "None assigned" → none. An error for an unclosed bracket or a range that is not one, and for a
// list past 100,000 names (no real partition is; a typo like "n[1-999999999]" would be).
Parsed<QStringList> expandHostList(const QString &hostList);

// --- submit limits and the expected start (docs/sweeps.md "Array limits") ----------------------

// The limits a sweep's submissions must stay under, as the cluster states them; 0: none stated.
struct SubmitLimits {
    int maxArraySize = 0;  // MaxArraySize: an array's task indices must be below it (default 1001)
    int maxJobCount = 0;  // MaxJobCount: the job records slurmctld keeps at once (default 10000)
    int maxSubmitJobs = 0;  // the user's association or QOS: MaxSubmitJobs[PerUser]
    bool operator==(const SubmitLimits &) const = default;
};
// `scontrol show config` ("Key = Value" lines): MaxArraySize and MaxJobCount. An error when
// neither is there (not scontrol's answer).
Parsed<SubmitLimits> parseConfigLimits(const QByteArray &out);
// The user's submit limit from accounting: `sacctmgr -n -P show assoc user=U
// format=MaxSubmitJobs,QOS` (one "N|qos1,qos2" line per association) and `sacctmgr -n -P show
// qos format=Name,MaxSubmitJobsPerUser` ("name|N"): the smallest limit of the user's associations
// and of the QOS they name; 0 where none is set. Lines that are not records (a cluster without
// accounting says so in words) are skipped.
int parseSubmitLimit(const QByteArray &assoc, const QByteArray &qos);

// Why sbatch refused a submission, where the reason is a limit that frees as jobs end (held and
// tried again later, docs/sweeps.md "Array limits"): words for people naming the limit, or empty
// for any other refusal. Recognized: QOSMaxSubmitJobPerUserLimit, AssocMaxSubmitJobLimit and the
// other *SubmitJob* limits, "Job violates accounting/QOS policy", MaxJobCount reached ("Resource
// temporarily unavailable", "Slurm temporarily unable to accept job") and an array larger than
// MaxArraySize ("Invalid job array specification": the runner's --array is always well formed).
QString limitRefusal(const QString &sbatchError);

// `date +%z` then `squeue -h -r --start -o <squeueStartFormat()>`: each pending task's expected
// start, in unix ms, by task id ("123_4"). Slurm prints it in the cluster's local time without a
// zone, hence the offset line first. "N/A" (not computed yet) and past-less values are left out.
QByteArray squeueStartFormat();
Parsed<QHash<QString, qint64>> parseSqueueStart(const QByteArray &out);

// `sinfo -V` / `sbatch -V`: "slurm 22.05.8", "slurm-wlm 22.05.8", "slurm 24.11.0-1" → "22.05.8".
Parsed<QString> parseVersion(const QByteArray &out);

}  // namespace orrery::remote::slurm
