// SPDX-License-Identifier: GPL-3.0-or-later
// The Slurm output parsers, table-driven. "2205-*" rows are real output of Slurm 22.05.8 captured
// from the test fixture (tests/fixture/localcluster.py) with the exact format strings the client
// sends; "newer-*" rows are the formats later releases document (23.02+: "gres/gpu" in %b,
// typed GPUs with IDX in GresUsed, memory with units, federated sbatch ids).
#include "testsupport.h"

#include "orrery/remote/slurmparse.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QTimeZone>

namespace slurm = orrery::remote::slurm;

namespace {

// A squeue record from its fields, with the separator the client asks for.
QByteArray rec(std::initializer_list<const char *> fields)
{
    QByteArray line;
    for (const char *f : fields) {
        if (!line.isEmpty())
            line.append('\x1f');
        line.append(f);
    }
    return line + '\n';
}

// Real `squeue --noheader --array --states=all --format=<squeueFormat()>` of an array 0-3%2
// (2 running, 2 held back by the throttle), a GPU job pending on resources, a held job and a
// cancelled one, from the fixture.
const QByteArray kSqueue2205 = "13\x1f"
                               "13\x1fN/A\x1fPENDING\x1fResources\x1f"
                               "debug\x1f"
                               "1\x1f\x1f"
                               "0:00\x1f"
                               "30:00\x1fgres:gpu:3\n"
                               "12_2\x1f"
                               "12\x1f"
                               "2\x1fPENDING\x1fJobArrayTaskLimit\x1fgpu\x1f"
                               "1\x1f\x1f"
                               "0:00\x1fUNLIMITED\x1fN/A\n"
                               "12_3\x1f"
                               "12\x1f"
                               "3\x1fPENDING\x1fJobArrayTaskLimit\x1fgpu\x1f"
                               "1\x1f\x1f"
                               "0:00\x1fUNLIMITED\x1fN/A\n"
                               "14\x1f"
                               "14\x1fN/A\x1fPENDING\x1fJobHeldUser\x1fgpu\x1f"
                               "1\x1f\x1f"
                               "0:00\x1fUNLIMITED\x1fN/A\n"
                               "12_0\x1f"
                               "12\x1f"
                               "0\x1fRUNNING\x1fNone\x1fgpu\x1f"
                               "1\x1fnode1\x1f"
                               "0:02\x1fUNLIMITED\x1fN/A\n"
                               "12_1\x1f"
                               "12\x1f"
                               "1\x1fRUNNING\x1fNone\x1fgpu\x1f"
                               "1\x1fnode1\x1f"
                               "0:02\x1fUNLIMITED\x1fN/A\n"
                               "2\x1f"
                               "2\x1fN/A\x1f"
                               "CANCELLED\x1fNone\x1fgpu\x1f"
                               "1\x1fnode2\x1f"
                               "0:05\x1fUNLIMITED\x1fgres:gpu:2\n";

// Real `sinfo --noheader --Node --Format=<sinfoFormat()>` with a 2-GPU job on node2.
const QByteArray kSinfo2205 = "node1\x1fgpu*\x1fup\x1fmixed\x1f"
                              "1/1/0/2\x1f"
                              "12052\x1f"
                              "256\x1fgpu:4\x1fgpu:0\x1finfinite\x1f\n"
                              "node1\x1f"
                              "debug\x1fup\x1fmixed\x1f"
                              "1/1/0/2\x1f"
                              "12052\x1f"
                              "256\x1fgpu:4\x1fgpu:0\x1f"
                              "30:00\x1f\n"
                              "node2\x1fgpu*\x1fup\x1fmixed\x1f"
                              "1/1/0/2\x1f"
                              "12052\x1f"
                              "256\x1fgpu:4\x1fgpu:2\x1finfinite\x1f\n";

const QByteArray kScontrolNode2205 =
    "NodeName=node1 Arch=x86_64 CoresPerSocket=2  CPUAlloc=2 CPUEfctv=2 CPUTot=2 CPULoad=0.37 "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=gpu:4 NodeAddr=127.0.0.1 NodeHostName=vm "
    "Port=52971 Version=22.05.8 OS=Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=12052 "
    "AllocMem=512 FreeMem=17887 Sockets=1 Boards=1 State=ALLOCATED ThreadsPerCore=1 TmpDisk=0 Weight=1 "
    "Owner=N/A MCS_label=N/A Partitions=gpu,debug  BootTime=2026-11-21T04:35:46 "
    "SlurmdStartTime=2026-11-21T05:28:28 LastBusyTime=2026-11-21T05:32:29 CfgTRES=cpu=2,mem=12052M,billing=2 "
    "AllocTRES=cpu=2,mem=512M CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s "
    "ExtSensorsWatts=0 ExtSensorsTemp=n/s\n";

}  // namespace

class TestSlurmParse : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sbatch_data()
    {
        QTest::addColumn<QByteArray>("out");
        QTest::addColumn<QString>("jobId");
        QTest::addColumn<QString>("cluster");
        QTest::addColumn<bool>("ok");
        QTest::newRow("2205-plain") << QByteArray("42\n") << QStringLiteral("42") << QString() << true;
        QTest::newRow("newer-federated")
            << QByteArray("67108865;fed1\n") << QStringLiteral("67108865") << QStringLiteral("fed1") << true;
        QTest::newRow("warning-first")
            << QByteArray("sbatch: warning: x\n7\n") << QStringLiteral("7") << QString() << true;
        QTest::newRow("empty") << QByteArray() << QString() << QString() << false;
        QTest::newRow("error-text") << QByteArray("Submitted batch job 5\n") << QString() << QString()
                                    << false;
    }
    void sbatch()
    {
        QFETCH(QByteArray, out);
        QFETCH(QString, jobId);
        QFETCH(QString, cluster);
        QFETCH(bool, ok);
        const auto r = slurm::parseSbatch(out);
        QCOMPARE(r.ok(), ok);
        if (ok) {
            QCOMPARE(r.value.jobId, jobId);
            QCOMPARE(r.value.cluster, cluster);
        } else {
            QVERIFY(!r.error.isEmpty());
        }
    }

    void jobIds_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<bool>("valid");
        QTest::newRow("plain") << QStringLiteral("123") << true;
        QTest::newRow("task") << QStringLiteral("123_4") << true;
        QTest::newRow("folded-pending") << QStringLiteral("1_[2-5%2]") << true;
        QTest::newRow("option") << QStringLiteral("-u") << false;
        QTest::newRow("injection") << QStringLiteral("1;reboot") << false;
        QTest::newRow("empty") << QString() << false;
        QTest::newRow("spaces") << QStringLiteral("1 2") << false;
    }
    void jobIds()
    {
        QFETCH(QString, id);
        QFETCH(bool, valid);
        QCOMPARE(slurm::isJobId(id), valid);
    }

    void squeue2205ArrayWithThrottle()
    {
        const auto r = slurm::parseSqueue(kSqueue2205);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.value.size(), 7);
        const slurm::Job &gpu = r.value[0];
        QCOMPARE(gpu.jobId, QStringLiteral("13"));
        QCOMPARE(gpu.arrayTaskId, QString());
        QCOMPARE(gpu.state, QStringLiteral("PENDING"));
        QCOMPARE(gpu.reason, QStringLiteral("Resources"));
        QCOMPARE(gpu.partition, QStringLiteral("debug"));
        QCOMPARE(gpu.gres, QStringLiteral("gres:gpu:3"));
        QCOMPARE(gpu.timeLimit, QStringLiteral("30:00"));
        int running = 0;
        int throttled = 0;
        for (const slurm::Job &j : r.value) {
            if (j.arrayJobId != QLatin1String("12"))
                continue;
            QVERIFY(j.jobId.startsWith(QLatin1String("12_")));
            running += j.state == QLatin1String("RUNNING");
            throttled += j.reason == QLatin1String("JobArrayTaskLimit");
        }
        QCOMPARE(running, 2);
        QCOMPARE(throttled, 2);
        QCOMPARE(r.value[4].nodeList, QStringLiteral("node1"));
        QCOMPARE(r.value[4].nodes, 1);
        QCOMPARE(r.value[6].gres, QStringLiteral("gres:gpu:2"));
    }

    void squeueMalformed_data()
    {
        QTest::addColumn<QByteArray>("out");
        QTest::newRow("too-few-fields") << QByteArray("12\x1f"
                                                      "12\x1fN/A\n");
        QTest::newRow("default-format") << QByteArray("JOBID PARTITION NAME USER ST TIME NODES NODELIST\n");
        QTest::newRow("bad-id") << rec(
            {"x;y", "1", "N/A", "RUNNING", "None", "gpu", "1", "n", "0:01", "1:00", "N/A"});
        QTest::newRow("bad-node-count")
            << rec({"1", "1", "N/A", "RUNNING", "None", "gpu", "many", "n", "0:01", "1:00", "N/A"});
        QTest::newRow("no-state") << rec(
            {"1", "1", "N/A", "", "None", "gpu", "1", "n", "0:01", "1:00", "N/A"});
    }
    void squeueMalformed()
    {
        QFETCH(QByteArray, out);
        const auto r = slurm::parseSqueue(out);
        QVERIFY(!r.ok());
        QVERIFY2(r.error.startsWith(QLatin1String("line 1:")), qPrintable(r.error));
    }

    void squeueEmptyAndNewer()
    {
        QVERIFY(slurm::parseSqueue({}).ok());
        QCOMPARE(slurm::parseSqueue("\n").value.size(), 0);
        // 23.02+ prints requested GRES as "gres/gpu:a100:2".
        const auto r = slurm::parseSqueue(rec({"99_7", "99", "7", "RUNNING", "None", "gpu", "2", "gpu[01-02]",
                                               "1-02:03:04", "2-00:00:00", "gres/gpu:a100:2"}));
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.value.front().arrayTaskId, QStringLiteral("7"));
        QCOMPARE(r.value.front().nodes, 2);
        QCOMPARE(slurm::gpuCount(r.value.front().gres), 2);
    }

    void squeueNamedKeepsAnyName()
    {
        // What `squeue --me` prints with squeueNamedFormat(): a name may hold the separator, a
        // newline or a tab (sbatch takes any bytes); the next record still parses.
        QByteArray out = rec({"7", "7", "N/A", "RUNNING", "None", "gpu", "1", "node1", "0:05", "1:00", "N/A",
                              "train lr=1e-4"});
        out += rec({"8", "8", "N/A", "PENDING", "Resources", "gpu", "1", "", "0:00", "1:00", "gres:gpu:1",
                    "evil\x1fname\nsecond\tline"});
        out += rec({"9_[2-5%2]", "9", "2-5%2", "PENDING", "JobArrayTaskLimit", "gpu", "1", "", "0:00", "1:00",
                    "N/A", ""});
        const auto r = slurm::parseSqueueNamed(out);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.value.size(), 3);
        QCOMPARE(r.value[0].name, QStringLiteral("train lr=1e-4"));
        QCOMPARE(r.value[0].nodeList, QStringLiteral("node1"));
        QCOMPARE(r.value[1].name, QStringLiteral("evil name second line"));
        QCOMPARE(r.value[1].reason, QStringLiteral("Resources"));
        QCOMPARE(r.value[2].jobId, QStringLiteral("9_[2-5%2]"));
        QCOMPARE(r.value[2].name, QString());
        QVERIFY(slurm::squeueNamedFormat().startsWith(slurm::squeueFormat()));
        QVERIFY(slurm::squeueNamedFormat().endsWith("%j"));
        QVERIFY(slurm::parseSqueueNamed({}).ok());
    }

    void squeueNamedMalformed()
    {
        // The plain format (no name field) is refused, not misread.
        QVERIFY(!slurm::parseSqueueNamed(
                     rec({"7", "7", "N/A", "RUNNING", "None", "gpu", "1", "n", "0:05", "1:00", "N/A"}))
                     .ok());
        const auto r = slurm::parseSqueueNamed(
            rec({"7", "7", "N/A", "RUNNING", "None", "gpu", "lots", "n", "0:05", "1:00", "N/A", "x"}));
        QVERIFY(!r.ok());
        QVERIFY2(r.error.startsWith(QLatin1String("line 1: node count")), qPrintable(r.error));
    }

    void gpus_data()
    {
        QTest::addColumn<QString>("gres");
        QTest::addColumn<int>("count");
        QTest::newRow("2205-configured") << QStringLiteral("gpu:4") << 4;
        QTest::newRow("2205-used-none") << QStringLiteral("gpu:0") << 0;
        QTest::newRow("2205-requested") << QStringLiteral("gres:gpu:3") << 3;
        QTest::newRow("typed-socket") << QStringLiteral("gpu:a100:4(S:0-1)") << 4;
        QTest::newRow("newer-used-idx") << QStringLiteral("gpu:a100:2(IDX:0,2),gpu:v100:1(IDX:3)") << 3;
        QTest::newRow("newer-slash") << QStringLiteral("gres/gpu:2") << 2;
        QTest::newRow("shard-ignored") << QStringLiteral("gpu:2,shard:8") << 2;
        QTest::newRow("null") << QStringLiteral("(null)") << 0;
        QTest::newRow("empty") << QString() << 0;
        QTest::newRow("garbage") << QStringLiteral("gpu:x:(") << 0;
    }
    void gpus()
    {
        QFETCH(QString, gres);
        QFETCH(int, count);
        QCOMPARE(slurm::gpuCount(gres), count);
    }

    void sinfo2205NodesAndPartitions()
    {
        const auto r = slurm::parseSinfo(kSinfo2205);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.value.nodes.size(), 2);
        const slurm::Node &n1 = r.value.nodes[0];
        QCOMPARE(n1.name, QStringLiteral("node1"));
        QCOMPARE(n1.partitions, (QStringList{QStringLiteral("gpu"), QStringLiteral("debug")}));
        QCOMPARE(n1.state, QStringLiteral("mixed"));
        QCOMPARE(n1.cpusAllocated, 1);
        QCOMPARE(n1.cpusTotal, 2);
        QCOMPARE(n1.memoryMb, 12052);
        QCOMPARE(n1.memoryAllocatedMb, 256);
        QCOMPARE(n1.gpusTotal, 4);
        QCOMPARE(r.value.nodes[1].gpusUsed, 2);
        QCOMPARE(r.value.partitions.size(), 2);
        const slurm::Partition &gpu = r.value.partitions[0];
        QCOMPARE(gpu.name, QStringLiteral("gpu"));
        QVERIFY(gpu.isDefault);
        QVERIFY(gpu.up);
        QCOMPARE(gpu.nodes, (QStringList{QStringLiteral("node1"), QStringLiteral("node2")}));
        QCOMPARE(gpu.gpusTotal, 8);
        QCOMPARE(gpu.gpusUsed, 2);
        QCOMPARE(gpu.cpusTotal, 4);
        const slurm::Partition &debug = r.value.partitions[1];
        QVERIFY(!debug.isDefault);
        QCOMPARE(debug.timeLimit, QStringLiteral("30:00"));
        QCOMPARE(debug.gpusTotal, 4);
    }

    void sinfoPartitionOrderDoesNotDependOnSinfosOrder()
    {
        // 22.05 lists a node's partitions in either order from one call to the next.
        QList<QByteArray> records = kSinfo2205.split('\n');
        records.removeAll(QByteArray());
        std::swap(records[0], records[1]);
        const auto r = slurm::parseSinfo(records.join('\n') + '\n');
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.value.partitions[0].name, QStringLiteral("gpu"));
        QCOMPARE(r.value.partitions[1].name, QStringLiteral("debug"));
        QCOMPARE(r.value.nodes[0].partitions, (QStringList{QStringLiteral("gpu"), QStringLiteral("debug")}));
    }

    void sinfoMalformed_data()
    {
        QTest::addColumn<QByteArray>("out");
        QTest::newRow("human-format") << QByteArray("PARTITION AVAIL TIMELIMIT NODES STATE NODELIST\n");
        QTest::newRow("cpu-state") << QByteArray("n\x1fp\x1fup\x1fidle\x1f"
                                                 "2\x1f"
                                                 "1\x1f"
                                                 "0\x1fgpu:1\x1fgpu:0\x1f"
                                                 "1:00\x1f\n");
        QTest::newRow("memory") << QByteArray("n\x1fp\x1fup\x1fidle\x1f"
                                              "0/2/0/2\x1flots\x1f"
                                              "0\x1fgpu:1\x1fgpu:0\x1f"
                                              "1:00\x1f\n");
        QTest::newRow("no-name") << QByteArray("\x1fp\x1fup\x1fidle\x1f"
                                               "0/2/0/2\x1f"
                                               "1\x1f"
                                               "0\x1fgpu:1\x1fgpu:0\x1f"
                                               "1:00\x1f\n");
    }
    void sinfoMalformed()
    {
        QFETCH(QByteArray, out);
        QVERIFY(!slurm::parseSinfo(out).ok());
    }

    void sinfoCpuLoadIsTheEleventhField()
    {
        // CPUsLoad last; "N/A" while slurmd does not answer; 10-field output (before the field
        // was asked for) leaves the load unknown.
        const auto r = slurm::parseSinfo("node1\x1fgpu*\x1fup\x1fmixed\x1f"
                                         "1/1/0/2\x1f"
                                         "12052\x1f"
                                         "256\x1fgpu:4\x1fgpu:0\x1finfinite\x1f"
                                         "1.37\x1f\n"
                                         "node2\x1fgpu*\x1fup\x1f"
                                         "down*\x1f"
                                         "0/0/2/2\x1f"
                                         "12052\x1f"
                                         "0\x1fgpu:4\x1fgpu:0\x1finfinite\x1fN/A\x1f\n");
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.value.nodes[0].cpuLoad, 1.37);
        QCOMPARE(r.value.nodes[1].cpuLoad, -1.0);
        QCOMPARE(slurm::parseSinfo(kSinfo2205).value.nodes[0].cpuLoad, -1.0);
        QVERIFY(slurm::sinfoFormat().contains("CPUsLoad"));
    }

    void sinfoNewerMemoryUnits()
    {
        const auto r = slurm::parseSinfo("gpu01\x1f"
                                         "a100*\x1fup\x1f"
                                         "drained*\x1f"
                                         "0/0/64/64\x1f"
                                         "512G\x1f"
                                         "0\x1fgpu:a100:8(S:0-1)\x1fgpu:a100:0(IDX:N/A)\x1f"
                                         "2-00:00:00\x1f\n");
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.value.nodes.front().memoryMb, 512 * 1024);
        QCOMPARE(r.value.nodes.front().gpusTotal, 8);
        QCOMPARE(r.value.nodes.front().gpusUsed, 0);
        QCOMPARE(r.value.nodes.front().state, QStringLiteral("drained*"));
    }

    void scontrol2205Node()
    {
        const auto r = slurm::parseScontrol(kScontrolNode2205);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.value.size(), 1);
        const slurm::Record &node = r.value.front();
        QCOMPARE(node.value(QStringLiteral("NodeName")), QStringLiteral("node1"));
        QCOMPARE(node.value(QStringLiteral("Gres")), QStringLiteral("gpu:4"));
        QCOMPARE(node.value(QStringLiteral("Partitions")), QStringLiteral("gpu,debug"));
        // A value with spaces stays whole.
        QCOMPARE(node.value(QStringLiteral("OS")),
                 QStringLiteral("Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0"));
        QCOMPARE(node.value(QStringLiteral("AllocTRES")), QStringLiteral("cpu=2,mem=512M"));
    }

    void scontrolJobAndNotFound()
    {
        const auto r = slurm::parseScontrol(
            "JobId=3 ArrayJobId=1 ArrayTaskId=0 ArrayTaskThrottle=2 JobName=wrap UserId=root(0) "
            "JobState=RUNNING "
            "Reason=None ExitCode=0:0 AllocNode:Sid=localhost:7047 CPUs/Task=1 Power= \n");
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.value.front().value(QStringLiteral("ArrayTaskThrottle")), QStringLiteral("2"));
        QCOMPARE(r.value.front().value(QStringLiteral("AllocNode:Sid")), QStringLiteral("localhost:7047"));
        QCOMPARE(r.value.front().value(QStringLiteral("Power")), QString());
        QVERIFY(r.value.front().contains(QStringLiteral("Power")));
        QCOMPARE(slurm::parseScontrol("No jobs in the system\n").value.size(), 0);
        QVERIFY(!slurm::parseScontrol("garbage without pairs\n").ok());
    }

    void sacct_data()
    {
        QTest::addColumn<QByteArray>("out");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("state");
        QTest::addColumn<int>("exitCode");
        QTest::newRow("completed") << QByteArray("7|COMPLETED|0:0|00:01:02\n") << true
                                   << QStringLiteral("COMPLETED") << 0;
        QTest::newRow("cancelled-by")
            << QByteArray("7_3|CANCELLED by 0|0:15|00:00:09\n") << true << QStringLiteral("CANCELLED") << 0;
        QTest::newRow("failed") << QByteArray("8|FAILED|2:0|00:00:01\n") << true << QStringLiteral("FAILED")
                                << 2;
        QTest::newRow("step") << QByteArray("8.batch|FAILED|2:0|00:00:01\n") << true
                              << QStringLiteral("FAILED") << 2;
        QTest::newRow("bad-exit") << QByteArray("8|FAILED|two|00:00:01\n") << false << QString() << 0;
        QTest::newRow("fields") << QByteArray("8|FAILED\n") << false << QString() << 0;
    }
    void sacct()
    {
        QFETCH(QByteArray, out);
        QFETCH(bool, ok);
        QFETCH(QString, state);
        QFETCH(int, exitCode);
        const auto r = slurm::parseSacct(out);
        QCOMPARE(r.ok(), ok);
        if (ok) {
            QCOMPARE(r.value.front().state, state);
            QCOMPARE(r.value.front().exitCode, exitCode);
        }
    }

    void sacctNodeList()
    {
        const auto r =
            slurm::parseSacct("7_1|NODE_FAIL|0:0|00:00:30|node[1-2]\n8|PENDING|0:0|00:00:00|None assigned\n");
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.value[0].nodeList, QStringLiteral("node[1-2]"));
        QCOMPARE(r.value[0].state, QStringLiteral("NODE_FAIL"));
        QCOMPARE(r.value[1].nodeList, QString());
        QVERIFY(slurm::sacctFormat().endsWith(",NodeList"));
    }

    void hostList_data()
    {
        QTest::addColumn<QString>("list");
        QTest::addColumn<QStringList>("hosts");
        QTest::addColumn<bool>("ok");
        QTest::newRow("one") << "node2" << QStringList{QStringLiteral("node2")} << true;
        QTest::newRow("range") << "node[1-3,5]"
                               << QStringList{QStringLiteral("node1"), QStringLiteral("node2"),
                                              QStringLiteral("node3"), QStringLiteral("node5")}
                               << true;
        QTest::newRow("padding-and-plain") << "gpu[08-10],login"
                                           << QStringList{QStringLiteral("gpu08"), QStringLiteral("gpu09"),
                                                          QStringLiteral("gpu10"), QStringLiteral("login")}
                                           << true;
        QTest::newRow("two-groups") << "rack[1-2]-n[1-2]"
                                    << QStringList{QStringLiteral("rack1-n1"), QStringLiteral("rack1-n2"),
                                                   QStringLiteral("rack2-n1"), QStringLiteral("rack2-n2")}
                                    << true;
        QTest::newRow("several-lists") << "a[1-2],b3,c[7]"
                                       << QStringList{QStringLiteral("a1"), QStringLiteral("a2"),
                                                      QStringLiteral("b3"), QStringLiteral("c7")}
                                       << true;
        QTest::newRow("empty") << "" << QStringList() << true;
        QTest::newRow("pending-none-assigned") << "None assigned" << QStringList() << true;
        QTest::newRow("null") << "(null)" << QStringList() << true;
        QTest::newRow("unclosed") << "node[1-2" << QStringList() << false;
        QTest::newRow("stray-close") << "node1]" << QStringList() << false;
        QTest::newRow("backwards-range") << "node[3-1]" << QStringList() << false;
        QTest::newRow("not-a-number") << "node[a-b]" << QStringList() << false;
        QTest::newRow("empty-element") << "node1,,node2" << QStringList() << false;
        QTest::newRow("too-many") << "n[1-999999999]" << QStringList() << false;
        QTest::newRow("too-many-with-tails") << "a[1-9000000000000000000]-b[1-2]" << QStringList() << false;
        QTest::newRow("too-many-combined") << "a[1-1000]-b[1-1000]" << QStringList() << false;
    }
    void hostList()
    {
        QFETCH(QString, list);
        QFETCH(QStringList, hosts);
        QFETCH(bool, ok);
        const auto r = slurm::expandHostList(list);
        QCOMPARE(r.ok(), ok);
        if (ok)
            QCOMPARE(r.value, hosts);
        else
            QVERIFY(!r.error.isEmpty());
    }

    void nodeUnusable()
    {
        for (const char *state : {"down", "down*", "drained", "draining", "drained*", "fail", "failing",
                                  "idle*", "powered_down", "future", "unknown", "idle+drain", "mixed+drain"})
            QVERIFY2(slurm::isNodeUnusable(QString::fromLatin1(state)), state);
        for (const char *state : {"idle", "mixed", "allocated", "completing", "reserved", "planned"})
            QVERIFY2(!slurm::isNodeUnusable(QString::fromLatin1(state)), state);
    }

    // `scontrol show config` of the fixture's Slurm 22.05.8 (tests/data/slurm), as captured.
    void configLimits2205()
    {
        QFile f(orrery::test::sourceFile(QStringLiteral("tests/data/slurm/scontrol-show-config-2205.txt")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto r = slurm::parseConfigLimits(f.readAll());
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.value.maxArraySize, 1001);
        QCOMPARE(r.value.maxJobCount, 10000);
        QCOMPARE(r.value.maxSubmitJobs, 0);
    }
    void configLimitsLoweredAndMalformed()
    {
        // What the fixture printed with `--conf MaxArraySize=50 --conf MaxJobCount=60`.
        auto r = slurm::parseConfigLimits("Configuration data as of 2026-11-26T01:33:02\n"
                                          "MaxArraySize            = 50\n"
                                          "MaxJobCount             = 60\n");
        QVERIFY(r.ok());
        QCOMPARE(r.value, (slurm::SubmitLimits{50, 60, 0}));
        r = slurm::parseConfigLimits("MaxArraySize = lots\n");
        QVERIFY(!r.ok());
        QVERIFY2(r.error.contains(QStringLiteral("MaxArraySize")), qPrintable(r.error));
        r = slurm::parseConfigLimits("bash: scontrol: command not found\n");
        QVERIFY(!r.ok());
    }

    // sacctmgr -n -P: the association's MaxSubmitJobs and the MaxSubmitJobsPerUser of the QOS it
    // names (the documented format; the fixture keeps no accounting, where sacctmgr says so).
    void submitLimit_data()
    {
        QTest::addColumn<QByteArray>("assoc");
        QTest::addColumn<QByteArray>("qos");
        QTest::addColumn<int>("limit");
        QTest::newRow("no-accounting")
            << QByteArray("You are not running a supported accounting_storage plugin\n"
                          "Only 'accounting_storage/slurmdbd' is supported.\n")
            << QByteArray() << 0;
        QTest::newRow("association-limit") << QByteArray("500|normal\n") << QByteArray("normal|\n") << 500;
        QTest::newRow("qos-limit-is-tighter")
            << QByteArray("500|normal,long\n") << QByteArray("normal|\nlong|200\nother|5\n") << 200;
        QTest::newRow("qos-of-others-does-not-count")
            << QByteArray("|normal\n") << QByteArray("normal|\ndebug|10\n") << 0;
        QTest::newRow("two-associations-take-the-smallest")
            << QByteArray("1000|normal\n300|normal\n") << QByteArray("normal|\n") << 300;
    }
    void submitLimit()
    {
        QFETCH(QByteArray, assoc);
        QFETCH(QByteArray, qos);
        QFETCH(int, limit);
        QCOMPARE(slurm::parseSubmitLimit(assoc, qos), limit);
    }

    // sbatch's refusals: a limit that frees as jobs end (held and tried again) or anything else.
    void limitRefusal_data()
    {
        QTest::addColumn<QString>("error");
        QTest::addColumn<QString>("limit");  // a word the explanation names; empty: not a limit
        // Captured on the fixture (MaxArraySize=50, MaxJobCount=60).
        QTest::newRow("array-too-big")
            << "sbatch: error: Batch job submission failed: Invalid job array specification"
            << "MaxArraySize";
        QTest::newRow("queue-full")
            << "sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying\n"
               "sbatch: error: Batch job submission failed: Resource temporarily unavailable"
            << "MaxJobCount";
        // Slurm's words on a cluster with accounting (slurm_strerror and job_state_reason names).
        QTest::newRow("qos-submit-limit")
            << "sbatch: error: QOSMaxSubmitJobPerUserLimit\n"
               "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job "
               "submit limit, user's size and/or time limits)"
            << "QOSMaxSubmitJobPerUserLimit";
        QTest::newRow("assoc-submit-limit")
            << "sbatch: error: AssocMaxSubmitJobLimit\nsbatch: error: Batch job submission failed: Job "
               "violates accounting/QOS policy (job submit limit, user's size and/or time limits)"
            << "AssocMaxSubmitJobLimit";
        QTest::newRow("policy-alone")
            << "sbatch: error: Batch job submission failed: Job violates "
               "accounting/QOS policy (job submit limit, user's size and/or time limits)"
            << "accounting/QOS policy";
        QTest::newRow("bad-partition-is-not-a-limit")
            << "sbatch: error: Batch job submission failed: Invalid partition name specified"
            << "";
        QTest::newRow("bad-gres-is-not-a-limit")
            << "sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification"
            << "";
        QTest::newRow("tar-failure-is-not-a-limit") << "tar: 3/trial.yaml: Cannot open: Permission denied"
                                                    << "";
    }
    void limitRefusal()
    {
        QFETCH(QString, error);
        QFETCH(QString, limit);
        const QString words = slurm::limitRefusal(error);
        QCOMPARE(words.isEmpty(), limit.isEmpty());
        QVERIFY2(words.contains(limit), qPrintable(words));
    }

    // `date +%z` then `squeue -h -r --start -o %i<US>%S`, captured on the fixture: an array
    // pending on Resources behind a job holding both nodes, and one that Slurm has no estimate for.
    void squeueStart()
    {
        const QByteArray out = "+0000\n" + rec({"4_0", "2026-11-26T01:46:00"}) +
            rec({"4_1", "2026-11-26T01:46:00"}) + rec({"5", "N/A"});
        const auto r = slurm::parseSqueueStart(out);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.value.size(), 2);
        QCOMPARE(r.value.value(QStringLiteral("4_0")),
                 QDateTime(QDate(2026, 11, 26), QTime(1, 46), QTimeZone::utc()).toMSecsSinceEpoch());
        QVERIFY(!r.value.contains(QStringLiteral("5")));
        // The cluster's zone: the same wall time two hours ahead of UTC is two hours earlier.
        const auto east = slurm::parseSqueueStart("+0200\n" + rec({"4_0", "2026-11-26T01:46:00"}));
        QVERIFY(east.ok());
        QCOMPARE(r.value.value(QStringLiteral("4_0")) - east.value.value(QStringLiteral("4_0")),
                 2 * 3600 * 1000LL);
        const auto west = slurm::parseSqueueStart("-0530\n" + rec({"4_0", "2026-11-26T01:46:00"}));
        QCOMPARE(west.value.value(QStringLiteral("4_0")) - r.value.value(QStringLiteral("4_0")),
                 qint64(5.5 * 3600 * 1000));
        QVERIFY(!slurm::parseSqueueStart(rec({"4_0", "2026-11-26T01:46:00"})).ok());  // no offset line
        QVERIFY(!slurm::parseSqueueStart("+0000\nnot a record\n").ok());
        QVERIFY(slurm::parseSqueueStart("+0000\n").ok());  // nothing pending
    }

    void version_data()
    {
        QTest::addColumn<QByteArray>("out");
        QTest::addColumn<QString>("version");
        QTest::newRow("2205-debian") << QByteArray("slurm-wlm 22.05.8\n") << QStringLiteral("22.05.8");
        QTest::newRow("upstream") << QByteArray("slurm 23.11.4\n") << QStringLiteral("23.11.4");
        QTest::newRow("rpm-release") << QByteArray("slurm 24.11.0-1\n") << QStringLiteral("24.11.0");
        QTest::newRow("not-slurm") << QByteArray("bash: sinfo: command not found\n") << QString();
    }
    void version()
    {
        QFETCH(QByteArray, out);
        QFETCH(QString, version);
        const auto r = slurm::parseVersion(out);
        QCOMPARE(r.ok(), !version.isEmpty());
        QCOMPARE(r.value, version);
    }
};

ORRERY_TEST_MAIN(TestSlurmParse, QCoreApplication)
#include "tst_slurmparse.moc"
