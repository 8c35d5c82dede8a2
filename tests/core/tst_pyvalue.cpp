// SPDX-License-Identifier: GPL-3.0-or-later
// W&B's values byte for byte (core/pyvalue.h): YAML scalars typed as PyYAML types them, Python's
// str()/repr() and json.dumps, PyYAML's way of writing a scalar, and W&B's argument macros as its
// agent renders them. The tables' expected texts were printed by Python 3 with PyYAML 6.0.3
// (the .venv's, beside wandb 0.31.0); pythonAgrees runs python3 over thousands of doubles and
// scalars to compare with the real thing where python3 and PyYAML are there.
#include "sweepsupport.h"
#include "testsupport.h"

#include "orrery/core/command.h"
#include "orrery/core/pyvalue.h"
#include "orrery/core/sweepplan.h"
#include "orrery/core/sweepspec.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QStandardPaths>

#include <cmath>
#include <cstdio>
#include <cstring>

using namespace orrery::core;

class TestPyValue : public QObject {
    Q_OBJECT

private slots:
    // yaml.safe_load("k: TEXT")["k"]: its type, str() and json.dumps().
    void pyyamlTypesAsPythonDoes_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("str");
        QTest::addColumn<QString>("json");
        const auto row = [](const char *text, const char *type, const char *str, const char *json) {
            QTest::newRow(*text ? text : "(empty)") << QString::fromUtf8(text) << QString::fromLatin1(type)
                                                    << QString::fromUtf8(str) << QString::fromUtf8(json);
        };
        row("1e-4", "str", "1e-4", "\"1e-4\"");  // YAML 1.1: a float needs its '.'
        row("1.0e-4", "float", "0.0001", "0.0001");
        row("1.e-4", "float", "0.0001", "0.0001");
        row("1.0e4", "str", "1.0e4", "\"1.0e4\"");  // ... and its exponent's sign
        row("0.0001", "float", "0.0001", "0.0001");
        row("0.00001", "float", "1e-05", "1e-05");
        row("1e-05", "str", "1e-05", "\"1e-05\"");
        row("0.0", "float", "0.0", "0.0");
        row("0", "int", "0", "0");
        row("-1", "int", "-1", "-1");
        row("+1", "int", "1", "1");
        row("017", "int", "15", "15");
        row("0x1F", "int", "31", "31");
        row("0b101", "int", "5", "5");
        row("1_000", "int", "1000", "1000");
        row("1:30", "int", "90", "90");
        row("1:30.5", "float", "90.5", "90.5");
        row("3.0", "float", "3.0", "3.0");
        row(".5", "float", "0.5", "0.5");
        row("-.5", "str", "-.5", "\"-.5\"");
        row("1.5e+16", "float", "1.5e+16", "1.5e+16");
        row("1e16", "str", "1e16", "\"1e16\"");
        row("10000000000000000.0", "float", "1e+16", "1e+16");
        row("1234567890123456.0", "float", "1234567890123456.0", "1234567890123456.0");
        row("yes", "bool", "True", "true");
        row("No", "bool", "False", "false");
        row("on", "bool", "True", "true");
        row("OFF", "bool", "False", "false");
        row("TRUE", "bool", "True", "true");
        row("tRue", "str", "tRue", "\"tRue\"");
        row("null", "NoneType", "None", "null");
        row("~", "NoneType", "None", "null");
        row("", "NoneType", "None", "null");
        row("nan", "str", "nan", "\"nan\"");
        row(".nan", "float", "nan", "NaN");
        row(".inf", "float", "inf", "Infinity");
        row("-.inf", "float", "-inf", "-Infinity");
        row("0.30000000000000004", "float", "0.30000000000000004", "0.30000000000000004");
        row("2.5e-7", "float", "2.5e-07", "2.5e-07");
        row("123456789.123", "float", "123456789.123", "123456789.123");
        row("-0.0", "float", "-0.0", "-0.0");
        row("9223372036854775807", "int", "9223372036854775807", "9223372036854775807");
        row("caf\xc3\xa9", "str", "caf\xc3\xa9", "\"caf\\u00e9\"");
    }
    void pyyamlTypesAsPythonDoes()
    {
        QFETCH(QString, text);
        QFETCH(QString, type);
        QFETCH(QString, str);
        QFETCH(QString, json);
        const QVariant v = pyyamlScalar(text, true);
        const QString got = v.typeId() == QMetaType::Nullptr ? QStringLiteral("NoneType")
            : v.typeId() == QMetaType::Bool                  ? QStringLiteral("bool")
            : v.typeId() == QMetaType::LongLong              ? QStringLiteral("int")
            : v.typeId() == QMetaType::Double                ? QStringLiteral("float")
                                                             : QStringLiteral("str");
        QCOMPARE(got, type);
        QCOMPARE(pythonStr(v), str);
        QCOMPARE(pythonJsonDumps(v), json);
        // Quoted, anything is a str.
        QCOMPARE(pyyamlScalar(text, false).typeId(), int(QMetaType::QString));
    }

    void containersAsPythonPrintsThem()
    {
        const QVariantList list{0.1, 1e-5, QStringLiteral("a"), true, QVariant::fromValue(nullptr)};
        QCOMPARE(pythonStr(list), QStringLiteral("[0.1, 1e-05, 'a', True, None]"));
        QCOMPARE(pythonJsonDumps(list), QStringLiteral("[0.1, 1e-05, \"a\", true, null]"));
        QCOMPARE(pythonStr(QVariantList{QVariantList{qint64(1), qint64(2)}, QVariantList{qint64(3)}}),
                 QStringLiteral("[[1, 2], [3]]"));
        // repr of a str: single quotes unless it holds one and no double quote; escapes.
        QCOMPARE(pythonRepr(QStringLiteral("it's")), QStringLiteral("\"it's\""));
        QCOMPARE(pythonRepr(QStringLiteral("a'b\"c")), QStringLiteral("'a\\'b\"c'"));
        QCOMPARE(pythonRepr(QStringLiteral("x\ny\t\\")), QStringLiteral("'x\\ny\\t\\\\'"));
        QCOMPARE(pythonRepr(QString::fromUtf8("\x01\xc3\xa9")), QString::fromUtf8("'\\x01\xc3\xa9'"));
        const PyDict nested{
            {QStringLiteral("lr"), 0.001},
            {QStringLiteral("nadam"), QVariant::fromValue(PyDict{{QStringLiteral("beta"), 0.9}})}};
        QCOMPARE(pythonStr(QVariant::fromValue(nested)),
                 QStringLiteral("{'lr': 0.001, 'nadam': {'beta': 0.9}}"));
        QCOMPARE(pythonJsonDumps(QVariant::fromValue(nested)),
                 QStringLiteral("{\"lr\": 0.001, \"nadam\": {\"beta\": 0.9}}"));
        // json.dumps escapes: control characters, non-ASCII (as UTF-16), quotes.
        QCOMPARE(pythonJsonDumps(QString::fromUtf8("\"\\\x7f\n\xf0\x9f\x98\x80")),
                 QStringLiteral("\"\\\"\\\\\\u007f\\n\\ud83d\\ude00\""));
    }

    // yaml.safe_dump's way with a scalar: what a YAML 1.1 reader reads back as the same value.
    void yamlScalarsReadBackAsWritten_data()
    {
        QTest::addColumn<QVariant>("value");
        QTest::addColumn<QString>("yaml");
        QTest::newRow("float-exp") << QVariant(1e-5) << QStringLiteral("1.0e-05");
        QTest::newRow("float-big") << QVariant(1e16) << QStringLiteral("1.0e+16");
        QTest::newRow("float") << QVariant(0.0001) << QStringLiteral("0.0001");
        QTest::newRow("float-integral") << QVariant(3.0) << QStringLiteral("3.0");
        QTest::newRow("inf") << QVariant(-HUGE_VAL) << QStringLiteral("-.inf");
        QTest::newRow("int") << QVariant(qint64(7)) << QStringLiteral("7");
        QTest::newRow("bool") << QVariant(true) << QStringLiteral("true");
        QTest::newRow("none") << QVariant::fromValue(nullptr) << QStringLiteral("null");
        QTest::newRow("str") << QVariant(QStringLiteral("adam")) << QStringLiteral("adam");
        QTest::newRow("str-exp") << QVariant(QStringLiteral("1e-4")) << QStringLiteral("1e-4");
        QTest::newRow("str-bool") << QVariant(QStringLiteral("yes")) << QStringLiteral("\"yes\"");
        QTest::newRow("str-int") << QVariant(QStringLiteral("12")) << QStringLiteral("\"12\"");
        QTest::newRow("str-colon") << QVariant(QStringLiteral("a: b")) << QStringLiteral("\"a: b\"");
        QTest::newRow("str-hostile") << QVariant(QStringLiteral("$(rm -rf ~)\n\"x\""))
                                     << QStringLiteral("\"$(rm -rf ~)\\n\\\"x\\\"\"");
        QTest::newRow("str-dash") << QVariant(QStringLiteral("- x")) << QStringLiteral("\"- x\"");
        QTest::newRow("str-empty") << QVariant(QString()) << QStringLiteral("\"\"");
        QTest::newRow("list") << QVariant(QVariantList{qint64(1), 2.5, QStringLiteral("a,b")})
                              << QStringLiteral("[1, 2.5, \"a,b\"]");
    }
    void yamlScalarsReadBackAsWritten()
    {
        QFETCH(QVariant, value);
        QFETCH(QString, yaml);
        QCOMPARE(yamlScalar(value), yaml);
    }

    // The macros of W&B's agent (wandb/sdk/launch/sweeps/utils.py create_sweep_command_args),
    // byte for byte: the crash (--flag=true, --lr=1e-04, --dropout=0) is gone.
    void wandbMacrosByteForByte()
    {
        static const TrainerSchema schema = orrery::test::trainerSchema();
        const SpecParse p = parseSweepSpec(
            "program: train.py\n"
            "command: [\"${env}\", \"${interpreter}\", \"${program}\", \"${args}\", \"${args_no_hyphens}\",\n"
            "          \"${args_no_boolean_flags}\", \"${args_json}\", \"${args_json_file}\", "
            "\"${args_no_equals}\",\n"
            "          \"${args_append_hydra}\", \"${args_override_hydra}\"]\n"
            "method: grid\nparameters:\n"
            "  flag: {value: true}\n  quiet: {value: false}\n  lr: {value: 0.0001}\n  dropout: {value: 0.0}\n"
            "  tiny: {value: 0.00001}\n  sizes: {value: [1, 2]}\n  name: {value: \"a b\"}\n  none: {value: "
            "null}\n"
            "  text_exp: {value: 1e-4}\n"
            "  optimizer:\n    parameters:\n      lr: {value: 0.001}\n      nadam:\n        parameters:\n"
            "          beta: {value: 0.9}\n",
            QStringLiteral("/p/sweep.yaml"), schema);
        QVERIFY2(p.spec, p.errors.isEmpty() ? "" : qPrintable(p.errors.front().toString()));
        TrialParams params;
        for (const ParamSpec &ps : p.spec->parameters)
            params.append({ps.key, ps.values.front()});
        const RenderedCommand c = renderCommand(*p.spec, params, {QStringLiteral("/r/0"), {}, {}, 0, 0});
        // Printed by Python 3 from W&B's create_sweep_command_args over the same values.
        const QStringList args{QStringLiteral("--flag=True"),
                               QStringLiteral("--quiet=False"),
                               QStringLiteral("--lr=0.0001"),
                               QStringLiteral("--dropout=0.0"),
                               QStringLiteral("--tiny=1e-05"),
                               QStringLiteral("--sizes=[1, 2]"),
                               QStringLiteral("--name=a b"),
                               QStringLiteral("--none=None"),
                               QStringLiteral("--text_exp=1e-4"),
                               QStringLiteral("--optimizer={'lr': 0.001, 'nadam': {'beta': 0.9}}")};
        QStringList expected{QStringLiteral("/usr/bin/env"), QStringLiteral("python"),
                             QStringLiteral("train.py")};
        expected << args;
        for (const QString &a : args)
            expected << a.mid(2);
        expected << QStringLiteral("--flag") << QStringLiteral("--lr=0.0001")
                 << QStringLiteral("--dropout=0.0") << QStringLiteral("--tiny=1e-05")
                 << QStringLiteral("--sizes=[1, 2]") << QStringLiteral("--name=a b")
                 << QStringLiteral("--none=None") << QStringLiteral("--text_exp=1e-4")
                 << QStringLiteral("--optimizer={'lr': 0.001, 'nadam': {'beta': 0.9}}");
        const QString json = QStringLiteral(
            "{\"flag\": true, \"quiet\": false, \"lr\": 0.0001, \"dropout\": 0.0, \"tiny\": 1e-05, "
            "\"sizes\": [1, 2], \"name\": \"a b\", \"none\": null, \"text_exp\": \"1e-4\", "
            "\"optimizer\": {\"lr\": 0.001, \"nadam\": {\"beta\": 0.9}}}");
        expected << json << QStringLiteral("/r/0/args.json");
        for (const QString &a : args) {
            const qsizetype eq = a.indexOf(QLatin1Char('='));
            expected << a.left(eq) << a.mid(eq + 1);
        }
        for (const QString &a : args)
            expected << QLatin1Char('+') + a.mid(2);
        for (const QString &a : args)
            expected << QStringLiteral("++") + a.mid(2);
        QCOMPARE(c.argv, expected);
        // The params file nests every dotted key and writes what yaml.safe_load reads back.
        const QByteArray file = trialParamsFile(*p.spec, {}, params);
        QVERIFY2(file.contains("tiny: 1.0e-05\n"), file.constData());
        QVERIFY2(file.contains("optimizer:\n  lr: 0.001\n  nadam:\n    beta: 0.9\n"), file.constData());
        QVERIFY2(file.contains("text_exp: 1e-4\n"), file.constData());
        // ${args_json_file}'s file travels with the launch.
        const TaskLaunch t = taskLaunch(*p.spec, 0, 0, QStringLiteral("/r/0"), params, file);
        QCOMPARE(t.files.size(), 2);
        QCOMPARE(t.files[1].first, QStringLiteral("args.json"));
        QCOMPARE(QString::fromUtf8(t.files[1].second), json);
        // The file wandb.init() reads through WANDB_SWEEP_PARAM_PATH, as W&B's agent writes it.
        QCOMPARE(t.files[0].first, QStringLiteral("wandb-sweep-params.yaml"));
        QVERIFY(t.command.env.contains(
            {QStringLiteral("WANDB_SWEEP_PARAM_PATH"), QStringLiteral("/r/0/wandb-sweep-params.yaml")}));
        const QByteArray wandbFile =
            "wandb_version: 1\n\n"
            "flag:\n  value: true\nquiet:\n  value: false\nlr:\n  value: 0.0001\n"
            "dropout:\n  value: 0.0\ntiny:\n  value: 1.0e-05\nsizes:\n  value: [1, 2]\n"
            "name:\n  value: a b\nnone:\n  value: null\ntext_exp:\n  value: 1e-4\n"
            "optimizer:\n  value:\n    lr: 0.001\n    nadam:\n      beta: 0.9\n";
        QCOMPARE(t.files[0].second, wandbFile);
        // Read back as wandb's config_util reads it (yaml.safe_load, then each `value`), it is the
        // very config ${args_json} shows.
        const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        if (python.isEmpty())
            return;
        const auto ran = orrery::test::runProcess(
            python,
            {QStringLiteral("-c"),
             QStringLiteral(
                 "import sys, json\ntry:\n    import yaml\nexcept ImportError:\n    print('no yaml'); "
                 "sys.exit(0)\nd = yaml.safe_load(sys.stdin)\nassert d.pop('wandb_version') == 1\n"
                 "print(json.dumps({k: v['value'] for k, v in d.items()}))")},
            wandbFile);
        QVERIFY2(ran.code == 0, qPrintable(ran.err));
        if (ran.out.trimmed() != QLatin1String("no yaml"))
            QCOMPARE(ran.out.trimmed(), json);
    }

    // The same rules against the real Python: repr() of thousands of doubles (random bit
    // patterns, decimal-looking values, the exponent edges) and yaml.safe_load's types of scalar
    // texts. Skipped where python3 or PyYAML is missing.
    void pythonAgrees()
    {
        const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        if (python.isEmpty())
            QSKIP("no python3");
        QList<double> doubles{0.0,        -0.0,    1e-4,   1e-5,
                              9.999e-5,   1e15,    1e16,   9999999999999998.0,
                              0.1,        1.0 / 3, 5e-324, 1.7976931348623157e308,
                              123456.789, 2.5e-7,  100.0};
        QRandomGenerator rng(29);
        for (int i = 0; i < 3000; ++i) {
            quint64 bits = rng.generate64();
            double d = 0;
            std::memcpy(&d, &bits, sizeof d);
            if (std::isfinite(d))
                doubles << d;
            doubles << std::round(rng.generateDouble() * 1e6) / std::pow(10.0, rng.bounded(12));
        }
        QStringList texts{QStringLiteral("1e-4"),     QStringLiteral("1.0e-4"),   QStringLiteral("0o17"),
                          QStringLiteral("0x_1F"),    QStringLiteral("+.5"),      QStringLiteral("1.0e+3"),
                          QStringLiteral("Yes"),      QStringLiteral("y"),        QStringLiteral("NULL"),
                          QStringLiteral("12:30:45"), QStringLiteral("-1_2.5_0"), QStringLiteral("._5"),
                          QStringLiteral("0.1e5"),    QStringLiteral("1__0"),     QStringLiteral("-0"),
                          QStringLiteral("00"),       QStringLiteral("08"),       QStringLiteral("+0b1_0")};
        QJsonArray in;  // as C's %a, which float.fromhex reads exactly
        for (const double d : doubles) {
            char hex[64];
            std::snprintf(hex, sizeof hex, "%a", d);
            in.append(QString::fromLatin1(hex));
        }
        const QByteArray script =
            "import sys, json\n"
            "data = json.load(sys.stdin)\n"
            "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n"
            "out = {'repr': [repr(float.fromhex(h)) for h in data['doubles']], 'yaml': None}\n"
            "if yaml is not None:\n"
            "    out['yaml'] = [[type(v).__name__, str(v)] for v in (yaml.safe_load('k: ' + t)['k'] for t in "
            "data['texts'])]\n"
            "print(json.dumps(out))\n";
        const QByteArray input =
            QJsonDocument(QJsonObject{{QStringLiteral("doubles"), in},
                                      {QStringLiteral("texts"), QJsonArray::fromStringList(texts)}})
                .toJson(QJsonDocument::Compact);
        const auto ran =
            orrery::test::runProcess(python, {QStringLiteral("-c"), QString::fromUtf8(script)}, input);
        QVERIFY2(ran.code == 0, qPrintable(ran.err));
        const QJsonObject got = QJsonDocument::fromJson(ran.out.toUtf8()).object();
        const QJsonArray reprs = got.value(QStringLiteral("repr")).toArray();
        QCOMPARE(reprs.size(), doubles.size());
        for (qsizetype i = 0; i < doubles.size(); ++i)
            QCOMPARE(pythonFloatRepr(doubles[i]), reprs[i].toString());
        if (got.value(QStringLiteral("yaml")).isNull())
            QSKIP("python3 has no PyYAML: repr checked, YAML typing not");
        const QJsonArray types = got.value(QStringLiteral("yaml")).toArray();
        for (qsizetype i = 0; i < texts.size(); ++i) {
            const QVariant v = pyyamlScalar(texts[i], true);
            const QString type = v.typeId() == QMetaType::Nullptr ? QStringLiteral("NoneType")
                : v.typeId() == QMetaType::Bool                   ? QStringLiteral("bool")
                : v.typeId() == QMetaType::LongLong               ? QStringLiteral("int")
                : v.typeId() == QMetaType::Double                 ? QStringLiteral("float")
                                                                  : QStringLiteral("str");
            const QJsonArray want = types[i].toArray();
            QVERIFY2(
                type == want[0].toString() && pythonStr(v) == want[1].toString(),
                qPrintable(QStringLiteral("%1: ours %2 %3, Python's %4 %5")
                               .arg(texts[i], type, pythonStr(v), want[0].toString(), want[1].toString())));
        }
    }
};

QTEST_GUILESS_MAIN(TestPyValue)
#include "tst_pyvalue.moc"
