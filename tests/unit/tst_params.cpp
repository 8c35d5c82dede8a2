// SPDX-License-Identifier: GPL-3.0-or-later
// What every face shows the same way: the params that differ between runs (core/params.h) and
// metric values with NaN and infinities (core/format.h).
#include "testsupport.h"

#include "orrery/core/format.h"
#include "orrery/core/params.h"

#include <QCoreApplication>

#include <cmath>
#include <limits>

using namespace orrery::core;

class TestParams : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void onlyTheKeysThatDifferSorted()
    {
        const QList<Params> runs{{{QStringLiteral("optim.lr"), QStringLiteral("0.001")},
                                  {QStringLiteral("seed"), QStringLiteral("7")},
                                  {QStringLiteral("model.channels"), QStringLiteral("32")}},
                                 {{QStringLiteral("optim.lr"), QStringLiteral("0.01")},
                                  {QStringLiteral("seed"), QStringLiteral("7")},
                                  {QStringLiteral("model.channels"), QStringLiteral("64")}}};
        QCOMPARE(differingParams(runs),
                 (QStringList{QStringLiteral("model.channels"), QStringLiteral("optim.lr")}));
    }

    void aKeyOneRunLacksDiffers()
    {
        const QList<Params> runs{
            {{QStringLiteral("seed"), QStringLiteral("7")}},
            {{QStringLiteral("seed"), QStringLiteral("7")}, {QStringLiteral("ema"), QStringLiteral("0.9")}}};
        QCOMPARE(differingParams(runs), QStringList{QStringLiteral("ema")});
    }

    void runsWithoutParamsTakeNoPart()
    {
        const Params a{{QStringLiteral("seed"), QStringLiteral("7")}};
        QCOMPARE(differingParams({a, Params{}, a}), QStringList());
        QCOMPARE(differingParams({a}), QStringList());  // one run: nothing to differ from
        QCOMPARE(differingParams({}), QStringList());
    }

    void trialParamsFromJson()
    {
        const Params p =
            paramsFromJson(QStringLiteral(R"({"optim.lr": 0.0003, "seed": 7, "data.kind": "folder"})"));
        QCOMPARE(p.value(QStringLiteral("optim.lr")), QStringLiteral("0.0003"));
        QCOMPARE(p.value(QStringLiteral("seed")), QStringLiteral("7"));
        QCOMPARE(p.value(QStringLiteral("data.kind")), QStringLiteral("folder"));
        QVERIFY(paramsFromJson(QStringLiteral("not json")).isEmpty());
    }

    void numbersNaNAndInfinities()
    {
        const double inf = std::numeric_limits<double>::infinity();
        QCOMPARE(formatNumber(std::nan("")), QStringLiteral("nan"));
        QCOMPARE(formatNumber(inf), QStringLiteral("inf"));
        QCOMPARE(formatNumber(-inf), QStringLiteral("-inf"));
        QCOMPARE(formatNumber(0.123456789), QStringLiteral("0.123457"));
        QCOMPARE(formatNumber(0.123456789, 4), QStringLiteral("0.1235"));
        QCOMPARE(jsonNumber(0.5), QJsonValue(0.5));
        QCOMPARE(jsonNumber(-inf), QJsonValue(QStringLiteral("-inf")));
        QCOMPARE(jsonNumber(std::nan("")), QJsonValue(QStringLiteral("nan")));
    }
};

ORRERY_TEST_MAIN(TestParams, QCoreApplication)
#include "tst_params.moc"
