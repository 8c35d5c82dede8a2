// SPDX-License-Identifier: GPL-3.0-or-later
// The health check's results as Orrery stores and shows them (core/healthreport.h): the file the
// check's first rank writes, stored as Trial::health, and the lines and cells the faces show.
#include "testsupport.h"

#include "orrery/core/healthreport.h"

#include <QCoreApplication>

using namespace orrery::core;

namespace {

// Two nodes as `orrery-train --health-check` writes them on CPU (trimmed to the shown fields).
const QByteArray kTwoNodes =
    R"j({"node1":{"node":"node1","pass":true,"reason":"","device":"cpu","matmul_gflops":12.3,)j"
    R"j("memory_gbps":3.45,"busbw_gbps":0.512,"ecc":"not applicable (CPU)","duration_ms":812},)j"
    R"j("node2":{"node":"node2","pass":false,"reason":"cpu: matmul result off by 0.5","device":"cpu",)j"
    R"j("matmul_gflops":11.0,"memory_gbps":3.0,"busbw_gbps":0.5,"duration_ms":790}})j";

}  // namespace

class TestHealthReport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void theFileIsStoredCompactAndOnlyWhenAnObject()
    {
        const QString stored = healthFromFile(kTwoNodes + "\n");
        QVERIFY(stored.startsWith(QLatin1String("{\"node1\":")));
        QVERIFY(!stored.contains(QLatin1Char('\n')));
        QCOMPARE(healthFromFile("{\"node1\": {\"pa"), QString());  // torn: read again next tick
        QCOMPARE(healthFromFile("[1, 2]"), QString());
        QCOMPARE(healthFromFile("{}"), QString());
    }

    void eachNodeIsALineWithItsFiguresAndWhyItFailed()
    {
        const QList<HealthNodeLine> nodes = healthNodes(healthFromFile(kTwoNodes));
        QCOMPARE(nodes.size(), 2);
        QCOMPARE(nodes[0].node, QStringLiteral("node1"));
        QVERIFY(nodes[0].pass);
        QCOMPARE(nodes[0].figures,
                 QStringLiteral("matmul 12.3 GFLOP/s · memory 3.5 GB/s · all-reduce 0.51 GB/s · 812 ms"));
        QCOMPARE(
            healthLines(healthFromFile(kTwoNodes)),
            (QStringList{QStringLiteral("node1  passed  matmul 12.3 GFLOP/s · memory 3.5 GB/s · all-reduce "
                                        "0.51 GB/s · 812 ms"),
                         QStringLiteral("node2  failed  matmul 11.0 GFLOP/s · memory 3.0 GB/s · all-reduce "
                                        "0.50 GB/s · 790 ms — cpu: matmul result off by 0.5")}));
    }

    void gpuNodesShowTeraflopsAndEcc()
    {
        const QList<HealthNodeLine> nodes = healthNodes(QStringLiteral(
            R"j({"gpu7":{"pass":true,"device":"cuda","matmul_gflops":51234.5,"memory_gbps":2100,"ecc":0}})j"));
        QCOMPARE(nodes.size(), 1);
        QCOMPARE(nodes[0].figures, QStringLiteral("matmul 51.2 TFLOP/s · memory 2100.0 GB/s · ECC 0"));
    }

    void theCellSaysWhichNodesFailed()
    {
        QCOMPARE(healthCell(QString()), QStringLiteral("-"));
        QCOMPARE(healthCell(healthFromFile(kTwoNodes)), QStringLiteral("failed: node2"));
        QCOMPARE(healthCell(QStringLiteral(R"j({"a":{"pass":true},"b":{"pass":true}})j")),
                 QStringLiteral("ok ×2"));
        // Not an object (a hand-edited store): shown as no check, never a crash.
        QCOMPARE(healthCell(QStringLiteral("not json")), QStringLiteral("-"));
    }
};

ORRERY_TEST_MAIN(TestHealthReport, QCoreApplication)
#include "tst_healthreport.moc"
