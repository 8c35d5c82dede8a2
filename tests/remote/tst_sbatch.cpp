// SPDX-License-Identifier: GPL-3.0-or-later
// The sweep's sbatch script: what each placeholder becomes, lines dropped when a value is absent,
// values refused where an #SBATCH line cannot carry them, per-cluster overrides, and the real
// thing: the rendered script passes `bash -n` and, run by bash with a stand-in srun, hands every
// hostile trial directory to the trainer byte for byte with nothing executed.
#include "testsupport.h"

#include "orrery/core/codesnapshot.h"
#include "orrery/remote/sbatch.h"
#include "orrery/remote/shell.h"
#include "orrery/remote/slurmexecutor.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

using orrery::remote::renderSbatch;
using orrery::remote::SbatchError;
using orrery::remote::SbatchJob;

namespace {

SbatchJob job()
{
    SbatchJob j;
    j.jobName = QStringLiteral("lr-sweep");
    j.sweepDir = QStringLiteral("/scratch/ada/orrery/shapes/12");
    j.trialDirs = QStringList{j.sweepDir + QStringLiteral("/0"), j.sweepDir + QStringLiteral("/1"),
                              j.sweepDir + QStringLiteral("/2")};
    j.maxConcurrent = 2;
    j.resources.nodes = 2;
    j.resources.gpusPerNode = 4;
    j.resources.cpusPerTask = 8;
    j.resources.mem = QStringLiteral("64G");
    j.resources.time = QStringLiteral("02:00:00");
    j.defaultPartition = QStringLiteral("booster");
    j.setup = QStringList{QStringLiteral("module load CUDA"), QStringLiteral("source ~/venv/bin/activate")};
    j.trainer = QStringLiteral("/opt/orrery/bin/orrery-train");
    return j;
}

QByteArray render(const SbatchJob &j)
{
    return renderSbatch(orrery::remote::defaultSbatchTemplate(), j);
}

// Runs `bash` on `script` (a file, so argv bytes are not re-encoded); returns the exit code.
int bash(const QStringList &args, const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment(),
         QByteArray *err = nullptr)
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral("/bin/bash"), args);
    if (!p.waitForFinished(30000))
        return -1;
    if (err)
        *err = p.readAllStandardError();
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

void writeExecutable(const QString &path, const QByteArray &text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
    f.close();
    QVERIFY(f.setPermissions(f.permissions() | QFileDevice::ExeOwner));
}
// srun for one task: SRUN_TASK ("procid localid ntasks nodeid nnodes") says which; it runs the
// words after its options, as the task would.
constexpr const char *kStandInSrun =
    "#!/bin/bash\nread -r SLURM_PROCID SLURM_LOCALID SLURM_NTASKS SLURM_NODEID SLURM_NNODES <<< "
    "\"${SRUN_TASK:-0 0 1 0 1}\"\nexport SLURM_PROCID SLURM_LOCALID SLURM_NTASKS SLURM_NODEID "
    "SLURM_NNODES\nwhile [[ $1 == -* ]]; do shift; done\nexec \"$@\"\n";

// A rendered batch script ready to run as task 0 of its array, with stand-ins: the script in
// <dir>/array.sbatch, kStandInSrun as srun and `program` as my-train in <dir>/bin, and the
// environment (PATH first to them, HOME=<dir>, ARGS_OUT=<dir>/args for my-train to write into).
struct StandIn {
    QString script, argsOut;
    QProcessEnvironment env;
};
StandIn standIn(const QString &dir, const QByteArray &rendered, const QByteArray &program)
{
    StandIn s{dir + QStringLiteral("/array.sbatch"), dir + QStringLiteral("/args"),
              QProcessEnvironment::systemEnvironment()};
    QFile script(s.script);
    if (script.open(QIODevice::WriteOnly))
        script.write(rendered);
    script.close();
    const QString bin = dir + QStringLiteral("/bin");
    QDir().mkpath(bin);
    writeExecutable(bin + QStringLiteral("/srun"), kStandInSrun);
    writeExecutable(bin + QStringLiteral("/my-train"), program);
    s.env.insert(QStringLiteral("PATH"), bin + QLatin1Char(':') + s.env.value(QStringLiteral("PATH")));
    s.env.insert(QStringLiteral("SLURM_ARRAY_TASK_ID"), QStringLiteral("0"));
    s.env.insert(QStringLiteral("HOME"), dir);
    s.env.insert(QStringLiteral("ARGS_OUT"), s.argsOut);
    return s;
}

}  // namespace

class TestSbatch : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void placeholdersBecomeQuotedOptions()
    {
        const QByteArray s = render(job());
        QVERIFY(s.startsWith("#!/bin/bash\n"));
        for (const char *line :
             {"#SBATCH --job-name='lr-sweep'\n", "#SBATCH --array=0-2%2\n", "#SBATCH --nodes=2\n",
              "#SBATCH --ntasks-per-node=4\n", "#SBATCH --gres=gpu:4\n", "#SBATCH --cpus-per-task=8\n",
              "#SBATCH --mem='64G'\n", "#SBATCH --time='02:00:00'\n", "#SBATCH --partition='booster'\n",
              "#SBATCH --chdir='/scratch/ada/orrery/shapes/12'\n", "#SBATCH --signal=B:USR1@120\n",
              "#SBATCH --requeue\n",
              "trial_dirs=('/scratch/ada/orrery/shapes/12/0' '/scratch/ada/orrery/shapes/12/1' "
              "'/scratch/ada/orrery/shapes/12/2')\n",
              "module load CUDA\nsource ~/venv/bin/activate\n",
              "srun '/opt/orrery/bin/orrery-train' --config \"$trial_dir/trial.yaml\" --run-dir "
              "\"$trial_dir\" "
              "--resume auto &\n"})
            QVERIFY2(s.contains(line), line);
        QVERIFY(!s.contains("#SBATCH --account"));  // no account anywhere: the line is dropped
        for (const QByteArray &line : s.split('\n'))
            if (!line.startsWith('#') || line.startsWith("#SBATCH"))
                QVERIFY2(!line.contains("{{"), line.constData());
    }

    void cpuJobsHaveOneTaskPerNodeAndNoGres()
    {
        SbatchJob j = job();
        j.resources.gpusPerNode = 0;
        j.resources.partition = QStringLiteral("cpu");
        j.resources.account = QStringLiteral("proj1");
        const QByteArray s = render(j);
        QVERIFY(s.contains("#SBATCH --ntasks-per-node=1\n"));
        QVERIFY(!s.contains("#SBATCH --gres"));
        QVERIFY(s.contains("#SBATCH --partition='cpu'\n"));  // the spec's partition over the profile's
        QVERIFY(s.contains("#SBATCH --account='proj1'\n"));
    }

    void refusedOnAnSbatchLine_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("message");
        QTest::newRow("newline-in-job-name") << "job_name"
                                             << "a\n#SBATCH --uid=0"
                                             << "control character";
        QTest::newRow("backslash-in-partition") << "partition"
                                                << "gpu\\"
                                                << "backslash";
        QTest::newRow("percent-in-sweep-dir") << "sweep_dir"
                                              << "/scratch/100%"
                                              << "'%'";
        QTest::newRow("tab-in-time") << "time"
                                     << "1:00\t"
                                     << "control character";
    }
    void refusedOnAnSbatchLine()
    {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, message);
        SbatchJob j = job();
        if (field == QLatin1String("job_name"))
            j.jobName = value;
        else if (field == QLatin1String("partition"))
            j.resources.partition = value;
        else if (field == QLatin1String("sweep_dir"))
            j.sweepDir = value;
        else
            j.resources.time = value;
        try {
            render(j);
            QFAIL("rendered");
        } catch (const SbatchError &e) {
            QVERIFY2(e.message().startsWith(field), qPrintable(e.message()));
            QVERIFY2(e.message().contains(message), qPrintable(e.message()));
            QVERIFY2(!e.message().contains(QLatin1Char('\n')), qPrintable(e.message()));
        }
    }

    void templateMistakesAreNamed()
    {
        QVERIFY_THROWS_EXCEPTION(SbatchError, renderSbatch("#!/bin/bash\nsrun {{trainer}}\n", job()));
        try {
            renderSbatch("#!/bin/bash\n#SBATCH --qos={{qos}}\n({{trial_dirs}}) {{trainer}}\n", job());
            QFAIL("rendered");
        } catch (const SbatchError &e) {
            QVERIFY2(e.message().contains(QStringLiteral("line 2: unknown placeholder {{qos}}")),
                     qPrintable(e.message()));
        }
        SbatchJob none = job();
        none.trialDirs.clear();
        QVERIFY_THROWS_EXCEPTION(SbatchError, render(none));
    }

    void clusterOverrideIsLookedUpInTheConfigDir()
    {
        QTemporaryDir config;
        QVERIFY(config.isValid());
        QCOMPARE(orrery::remote::sbatchTemplateFor(config.path(), QStringLiteral("juwels")),
                 orrery::remote::defaultSbatchTemplate());
        const QString path = orrery::remote::sbatchOverridePath(config.path(), QStringLiteral("juwels"));
        QCOMPARE(path, config.path() + QStringLiteral("/clusters/juwels.sbatch"));
        QVERIFY(QDir().mkpath(config.path() + QStringLiteral("/clusters")));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("#!/bin/bash\n#SBATCH --qos=big\ndirs=({{trial_dirs}})\n{{trainer}}\n");
        f.close();
        const QByteArray t = orrery::remote::sbatchTemplateFor(config.path(), QStringLiteral("juwels"));
        QVERIFY(renderSbatch(t, job()).contains("#SBATCH --qos=big\n"));
    }

    // Hostile trial directories, job name, trainer path and setup: bash -n accepts the script, and
    // running it with a stand-in srun shows each task's trainer gets its directory byte for byte.
    void hostileValuesSurviveARealBash()
    {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString canary = tmp.filePath(QStringLiteral("pwned"));
        SbatchJob j = job();
        j.jobName = QStringLiteral("sweep $(touch %1) 'q' \"dq\" #not-a-comment `id` -rf").arg(canary);
        j.sweepDir = tmp.path();
        j.trialDirs.clear();
        QList<QByteArray> dirs;
        for (const QByteArray &h : orrery::test::hostileArguments()) {
            if (h.contains('\0'))
                continue;
            dirs.append(tmp.path().toUtf8() + "/t-" + h);
        }
        for (const QByteArray &d : dirs)
            j.trialDirs.append(QString::fromUtf8(d));
        j.trainer = tmp.filePath(QStringLiteral("my trainer $(touch %1)")).arg(canary);
        j.setup = QStringList{QStringLiteral("export SETUP_RAN=yes")};
        const QByteArray script = render(j);
        const QString scriptPath = tmp.filePath(QStringLiteral("array.sbatch"));
        QFile f(scriptPath);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(script);
        f.close();
        QByteArray err;
        QCOMPARE(bash({QStringLiteral("-n"), scriptPath}, QProcessEnvironment::systemEnvironment(), &err), 0);
        QVERIFY2(err.isEmpty(), err.constData());

        // A stand-in srun that writes its argv (NUL-separated) and whether the setup ran.
        const QString bin = tmp.filePath(QStringLiteral("bin"));
        QVERIFY(QDir().mkpath(bin));
        QFile srun(bin + QStringLiteral("/srun"));
        QVERIFY(srun.open(QIODevice::WriteOnly));
        srun.write("#!/bin/bash\nprintf '%s\\0' \"$SETUP_RAN\" \"$@\" > \"$ARGS_OUT\"\n");
        srun.close();
        QVERIFY(srun.setPermissions(srun.permissions() | QFileDevice::ExeOwner));
        for (qsizetype i = 0; i < dirs.size(); ++i) {
            // QString cannot hold non-UTF-8 bytes: that row went in as U+FFFD, compare what we rendered.
            const QByteArray expectedDir = j.trialDirs[i].toUtf8();
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("PATH"), bin + QLatin1Char(':') + env.value(QStringLiteral("PATH")));
            env.insert(QStringLiteral("SLURM_ARRAY_TASK_ID"), QString::number(i));
            const QString argsOut = tmp.filePath(QStringLiteral("args-%1").arg(i));
            env.insert(QStringLiteral("ARGS_OUT"), argsOut);
            QCOMPARE(bash({scriptPath}, env, &err), 0);
            QFile a(argsOut);
            QVERIFY2(a.open(QIODevice::ReadOnly), err.constData());
            const QList<QByteArray> argv = a.readAll().split('\0');
            const QList<QByteArray> expected{
                "yes",       j.trainer.toUtf8(), "--config", expectedDir + "/trial.yaml",
                "--run-dir", expectedDir,        "--resume", "auto",
                ""};
            QCOMPARE(argv, expected);
        }
        QVERIFY(!QFile::exists(canary));
        QVERIFY(!QFile::exists(QStringLiteral("/tmp/orrery-pwned")));
    }

    // A sweep of the user's own command: the script reads each task's words, ORRERY_* variables and
    // working directory from its run dir (as the executor writes them), hands them to srun as they
    // are, and turns the exit status into exit.json when the program wrote none.
    void commandTasksRunTheirWordsAndLeaveAVerdict_data()
    {
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("state");
        QTest::newRow("exit-0-completed") << 0 << QByteArray("completed");
        QTest::newRow("exit-75-preempted") << 75 << QByteArray("preempted");
        QTest::newRow("exit-3-failed") << 3 << QByteArray("failed");
    }
    void commandTasksRunTheirWordsAndLeaveAVerdict()
    {
        QFETCH(int, status);
        QFETCH(QByteArray, state);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString canary = tmp.filePath(QStringLiteral("pwned"));
        const QString hostile = QStringLiteral("x'; $(touch %1) `touch %1` \"q\" \\n *").arg(canary);
        const QString runDir = tmp.filePath(QStringLiteral("run $(touch %1)")).arg(canary);
        const QString workdir = tmp.filePath(QStringLiteral("work 'dir'"));
        QVERIFY(QDir().mkpath(runDir));
        QVERIFY(QDir().mkpath(workdir));
        orrery::core::TaskLaunch task;
        task.runDir = runDir;
        task.config = "lr: 0.1\n";
        task.command.argv = QStringList{QStringLiteral("my-train"), QStringLiteral("--tag"), hostile,
                                        QStringLiteral("line\nbreak"), QString()};
        task.command.env = {{QStringLiteral("ORRERY_PARAM_TAG"), hostile},
                            {QStringLiteral("ORRERY_RUN_DIR"), runDir}};
        task.command.workdir = workdir;
        for (const auto &[name, data] : orrery::remote::runDirFiles(task)) {
            QFile f(runDir + QLatin1Char('/') + QString::fromUtf8(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(data);
        }
        SbatchJob j = job();
        j.sweepDir = tmp.path();
        j.trialDirs = QStringList{runDir};
        j.setup.clear();
        j.commands = true;
        // A stand-in srun that runs its words as one task would (Slurm's variables for task 0 of 1),
        // and a stand-in program that records its words, the variable and where it ran, then exits
        // `status`.
        auto [scriptPath, argsOut, env] =
            standIn(tmp.path(), render(j),
                    "#!/bin/bash\nprintf '%s\\0' \"$PWD\" \"$ORRERY_PARAM_TAG\" \"${0##*/}\" \"$@\" > "
                    "\"$ARGS_OUT\"\nexit \"$STATUS\"\n");
        env.insert(QStringLiteral("STATUS"), QString::number(status));
        QByteArray err;
        QCOMPARE(bash({scriptPath}, env, &err), status);
        QFile a(argsOut);
        QVERIFY2(a.open(QIODevice::ReadOnly), err.constData());
        QList<QByteArray> expected{workdir.toUtf8(), hostile.toUtf8()};
        for (const QString &w : task.command.argv)
            expected << w.toUtf8();
        expected << QByteArray();
        QCOMPARE(a.readAll().split('\0'), expected);
        QFile verdict(runDir + QStringLiteral("/exit.json"));
        QVERIFY(verdict.open(QIODevice::ReadOnly));
        const QByteArray v = verdict.readAll();
        QVERIFY2(v.contains(QByteArray("\"state\":\"" + state + '"')), v.constData());
        QVERIFY(v.contains(QByteArray("\"reason\":\"exit " + QByteArray::number(status) + '"')));
        QVERIFY(!QFile::exists(canary));
    }

    // Launchers (docs/sweeps.md "Launchers"): per_node asks for one task per node with the CPUs of
    // all its GPUs' ranks; each task gets RANK, WORLD_SIZE, LOCAL_RANK, NODE_RANK, NNODES from
    // Slurm's variables, MASTER_ADDR/MASTER_PORT from the batch shell (the port from the job id),
    // the words command.late names filled with its node's values, and the capture module on
    // PYTHONPATH (before the one the setup lines left).
    void perNodeTasksGetTheLauncherVariablesAndTheirNodesWords()
    {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString runDir = tmp.filePath(QStringLiteral("0"));
        QVERIFY(QDir().mkpath(runDir));
        orrery::core::TaskLaunch task;
        task.runDir = runDir;
        task.command.argv = QStringList{
            QStringLiteral("my-train"), QStringLiteral("--node_rank"), QStringLiteral("{{node_rank}}"),
            QStringLiteral("--at={{master_addr}}:{{master_port}}"), QStringLiteral("{{node_rank}} kept")};
        task.command.nodeWords = {{2, {QString(), QStringLiteral("node_rank"), QString()}},
                                  {3,
                                   {QStringLiteral("--at="), QStringLiteral("master_addr"),
                                    QStringLiteral(":"), QStringLiteral("master_port"), QString()}}};
        task.command.env = {{QStringLiteral("ORRERY_RUN_DIR"), runDir},
                            {QStringLiteral("ORRERY_CAPTURE"), QStringLiteral("1")}};
        task.command.perNode = true;
        for (const auto &[name, data] : orrery::remote::runDirFiles(task)) {
            QFile f(runDir + QLatin1Char('/') + QString::fromUtf8(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(data);
        }
        SbatchJob j = job();  // 2 nodes × 4 GPUs, 8 CPUs per rank
        j.sweepDir = tmp.path();
        j.trialDirs = QStringList{runDir};
        j.setup = QStringList{QStringLiteral("export PYTHONPATH=/site/lib")};
        j.commands = true;
        j.perNode = true;
        const QByteArray rendered = render(j);
        QVERIFY(rendered.contains("#SBATCH --ntasks-per-node=1\n"));
        QVERIFY(rendered.contains("#SBATCH --cpus-per-task=32\n"));
        QVERIFY(rendered.contains("#SBATCH --gres=gpu:4\n"));
        auto [scriptPath, argsOut, env] =
            standIn(tmp.path(), rendered,
                    "#!/bin/bash\nprintf '%s\\0' \"RANK=$RANK\" \"WORLD_SIZE=$WORLD_SIZE\" "
                    "\"LOCAL_RANK=$LOCAL_RANK\" \"NODE_RANK=$NODE_RANK\" \"NNODES=$NNODES\" "
                    "\"MASTER_ADDR=$MASTER_ADDR\" \"MASTER_PORT=$MASTER_PORT\" \"PYTHONPATH=$PYTHONPATH\" "
                    "\"OMP_NUM_THREADS=$OMP_NUM_THREADS\" \"$@\" > \"$ARGS_OUT\"\n");
        env.insert(QStringLiteral("SLURM_JOB_ID"), QStringLiteral("40123"));  // port 10000 + 40123 % 20000
        env.insert(QStringLiteral("SLURM_CPUS_PER_TASK"), QStringLiteral("32"));
        env.remove(QStringLiteral("OMP_NUM_THREADS"));
        env.remove(QStringLiteral("SLURM_JOB_NODELIST"));
        env.insert(QStringLiteral("SRUN_TASK"), QStringLiteral("1 0 2 1 2"));  // the second node's task
        QByteArray err;
        QCOMPARE(bash({scriptPath}, env, &err), 0);
        QFile a(argsOut);
        QVERIFY2(a.open(QIODevice::ReadOnly), err.constData());
        const QList<QByteArray> got = a.readAll().split('\0');
        QCOMPARE(got.size(), 14);
        QCOMPARE(got[0], QByteArray("RANK=1"));
        QCOMPARE(got[1], QByteArray("WORLD_SIZE=2"));
        QCOMPARE(got[2], QByteArray("LOCAL_RANK=0"));
        QCOMPARE(got[3], QByteArray("NODE_RANK=1"));
        QCOMPARE(got[4], QByteArray("NNODES=2"));
        const QByteArray addr = got[5].mid(int(qstrlen("MASTER_ADDR=")));
        QVERIFY2(!addr.isEmpty(), got[5].constData());
        const int port = got[6].mid(int(qstrlen("MASTER_PORT="))).toInt();
        QVERIFY2(port >= 10123 && port < 10133, got[6].constData());  // one up per listener found
        QCOMPARE(got[7], QByteArray("PYTHONPATH=") + tmp.path().toUtf8() + "/.orrery/python:/site/lib");
        QCOMPARE(got[8], QByteArray("OMP_NUM_THREADS=8"));  // 32 CPUs for the node's 4 processes
        QCOMPARE(got[9], QByteArray("--node_rank"));
        QCOMPARE(got[10], QByteArray("1"));
        QCOMPARE(got[11], QByteArray("--at=") + addr + ':' + QByteArray::number(port));
        QCOMPARE(got[12], QByteArray("{{node_rank}} kept"));  // not a node word: text
    }

    // A trial of one process (ORRERY_DISTRIBUTED=0) gets none of the distributed variables, as
    // under `python train.py`, while its node words are still filled; with command.code it runs
    // in <run dir>/work, made from the sweep's frozen code by the shipped orrery-code.sh, where
    // the program's relative writes stay and a second attempt finds them.
    void aSingleProcessTrialGetsNoRankAndRunsInItsOwnDirectory()
    {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString sweepDir = tmp.filePath(QStringLiteral("sweep"));
        const QString runDir = sweepDir + QStringLiteral("/0");
        const QString project = tmp.filePath(QStringLiteral("project"));
        QVERIFY(QDir().mkpath(runDir) && QDir().mkpath(project + QStringLiteral("/configs")) &&
                QDir().mkpath(sweepDir + QStringLiteral("/.orrery")));
        writeExecutable(project + QStringLiteral("/configs/base.yaml"), "lr: 1\n");
        // The script the shipped copy runs, frozen as the sweep's code.
        writeExecutable(sweepDir + QStringLiteral("/.orrery/orrery-code.sh"), orrery::core::codeScript());
        QProcess snapshot;
        snapshot.start(QStringLiteral("bash"),
                       {sweepDir + QStringLiteral("/.orrery/orrery-code.sh"), QStringLiteral("snapshot"),
                        project, sweepDir + QStringLiteral("/code")});
        QVERIFY(snapshot.waitForFinished(30'000));
        QVERIFY2(snapshot.exitCode() == 0, snapshot.readAllStandardError().constData());
        QVERIFY(orrery::core::parseCodeSnapshot(snapshot.readAllStandardOutput()).ok());

        orrery::core::TaskLaunch task;
        task.runDir = runDir;
        task.command.argv = QStringList{QStringLiteral("my-train"), QStringLiteral("--port={{master_port}}")};
        task.command.nodeWords = {{1, {QStringLiteral("--port="), QStringLiteral("master_port"), QString()}}};
        task.command.env = {{QStringLiteral("ORRERY_RUN_DIR"), runDir},
                            {QStringLiteral("ORRERY_DISTRIBUTED"), QStringLiteral("0")}};
        task.command.workdir = project;
        task.command.code = orrery::core::CommandSpec::Code{};
        for (const auto &[name, data] : orrery::remote::runDirFiles(task)) {
            QFile f(runDir + QLatin1Char('/') + QString::fromUtf8(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(data);
        }
        SbatchJob j = job();
        j.sweepDir = sweepDir;
        j.trialDirs = QStringList{runDir};
        j.resources.nodes = 1;
        j.resources.gpusPerNode = 1;
        j.commands = true;
        j.nodeWords = true;
        // It records what it sees, reads a relative config, and writes a relative output.
        auto [scriptPath, argsOut, env] = standIn(
            tmp.path(), render(j),
            "#!/bin/bash\nprintf '%s\\0' \"RANK=${RANK-unset}\" \"WORLD_SIZE=${WORLD_SIZE-unset}\" "
            "\"LOCAL_RANK=${LOCAL_RANK-unset}\" \"NODE_RANK=${NODE_RANK-unset}\" \"NNODES=${NNODES-unset}\" "
            "\"MASTER_ADDR=${MASTER_ADDR-unset}\" \"MASTER_PORT=${MASTER_PORT-unset}\" \"$PWD\" "
            "\"$(cat configs/base.yaml)\" \"$@\" > \"$ARGS_OUT\"\n"
            "mkdir -p exp_output && echo \"$SLURM_RESTART_COUNT\" >> exp_output/attempts\n");
        env.insert(QStringLiteral("SLURM_JOB_ID"), QStringLiteral("40123"));
        env.remove(QStringLiteral("SLURM_JOB_NODELIST"));
        for (const QString &name : orrery::core::distributedEnvNames())
            env.remove(name);
        for (const char *restart : {"0", "1"}) {  // a second attempt (a requeue) finds its own files
            env.insert(QStringLiteral("SLURM_RESTART_COUNT"), QString::fromLatin1(restart));
            QByteArray err;
            QCOMPARE(bash({scriptPath}, env, &err), 0);
            QFile a(argsOut);
            QVERIFY2(a.open(QIODevice::ReadOnly), err.constData());
            const QList<QByteArray> got = a.readAll().split('\0');
            QCOMPARE(got.size(), 11);
            for (int i = 0; i < 7; ++i)
                QVERIFY2(got[i].endsWith("=unset"), got[i].constData());
            QCOMPARE(got[7], QDir(runDir + QStringLiteral("/work")).canonicalPath().toUtf8());
            QCOMPARE(got[8], QByteArray("lr: 1"));
            const int port = got[9].mid(int(qstrlen("--port="))).toInt();
            QVERIFY2(port >= 10123 && port < 10133, got[9].constData());
        }
        QFile attempts(runDir + QStringLiteral("/work/exp_output/attempts"));
        QVERIFY(attempts.open(QIODevice::ReadOnly));
        QCOMPARE(attempts.readAll(), QByteArray("0\n1\n"));
        QVERIFY(!QFileInfo::exists(project + QStringLiteral("/exp_output")));  // the project is untouched
    }

    // A cluster's own template from before launchers is refused for a command whose words only a
    // node can fill; without such words it still runs the command.
    void aTemplateBeforeLaunchersRefusesNodeWords()
    {
        QByteArray old = orrery::remote::defaultSbatchTemplate();
        old.replace("command.late", "command.other");
        SbatchJob j = job();
        j.commands = true;
        QVERIFY(!renderSbatch(old, j).isEmpty());
        j.nodeWords = true;
        try {
            renderSbatch(old, j);
            QFAIL("rendered node words with a template that cannot fill them");
        } catch (const SbatchError &e) {
            QVERIFY2(e.message().contains(QStringLiteral("{{node_rank}}")), qPrintable(e.message()));
        }
    }

    // The health check's words (docs/sweeps.md "Health check") become a bash array; off, an empty
    // one; a cluster's own template from before health checks renders and runs without it.
    void healthCheckWordsAndATemplateWithoutThem()
    {
        SbatchJob j = job();
        QVERIFY(render(j).contains("\nhealth_check=()\n"));
        j.healthCheck = QStringList{QStringLiteral("--health-check"), QStringLiteral("--set"),
                                    QStringLiteral("min_busbw_gbps=10")};
        const QByteArray on = render(j);
        const QByteArray words = QByteArray("\nhealth_check=(") +
            orrery::remote::shellQuote("--health-check") + ' ' + orrery::remote::shellQuote("--set") + ' ' +
            orrery::remote::shellQuote("min_busbw_gbps=10") + ")\n";
        QVERIFY2(on.contains(words), on.constData());
        QByteArray old = orrery::remote::defaultSbatchTemplate();
        old.replace("{{health_check}}", "");
        QVERIFY(!renderSbatch(old, j).contains("min_busbw_gbps"));
    }

    // In a real bash with a stand-in srun: a check that fails without naming a node, and a
    // cluster without the trainer, each end the task with exit.json (cause "health") and the
    // program never runs; a check that passes lets it run.
    void aFailedHealthCheckEndsTheTaskBeforeTheProgram_data()
    {
        QTest::addColumn<QString>("trainer");
        QTest::addColumn<int>("checkStatus");
        QTest::addColumn<QByteArray>("reason");
        QTest::newRow("check-fails") << QStringLiteral("check") << 1
                                     << QByteArray("the health check failed (exit 1)");
        QTest::newRow("no-trainer") << QStringLiteral("/nonexistent/orrery-train") << 0
                                    << QByteArray("orrery-train (which runs it) is not on this cluster");
        QTest::newRow("check-passes") << QStringLiteral("check") << 0 << QByteArray();
    }
    void aFailedHealthCheckEndsTheTaskBeforeTheProgram()
    {
        QFETCH(QString, trainer);
        QFETCH(int, checkStatus);
        QFETCH(QByteArray, reason);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString runDir = tmp.filePath(QStringLiteral("run 'a'"));
        QVERIFY(QDir().mkpath(runDir));
        orrery::core::TaskLaunch task;
        task.runDir = runDir;
        task.command.argv = QStringList{QStringLiteral("my-train")};
        task.command.env = {{QStringLiteral("ORRERY_RUN_DIR"), runDir}};
        for (const auto &[name, data] : orrery::remote::runDirFiles(task)) {
            QFile f(runDir + QLatin1Char('/') + QString::fromUtf8(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(data);
        }
        const QString bin = tmp.filePath(QStringLiteral("bin"));
        QVERIFY(QDir().mkpath(bin));
        writeExecutable(bin + QStringLiteral("/srun"), kStandInSrun);
        // The stand-in check records its words; the stand-in program that it ran.
        writeExecutable(bin + QStringLiteral("/check"),
                        "#!/bin/bash\nprintf '%s\\n' \"$@\" > \"$CHECK_OUT\"\nexit \"$CHECK_STATUS\"\n");
        writeExecutable(bin + QStringLiteral("/my-train"), "#!/bin/bash\ntouch \"$ORRERY_RUN_DIR/ran\"\n");
        SbatchJob j = job();
        j.sweepDir = tmp.path();
        j.trialDirs = QStringList{runDir};
        j.setup.clear();
        j.commands = true;
        j.trainer = trainer == QLatin1String("check") ? bin + QStringLiteral("/check") : trainer;
        j.healthCheck = QStringList{QStringLiteral("--health-check"), QStringLiteral("--set"),
                                    QStringLiteral("timeout_s=5")};
        const QString scriptPath = tmp.filePath(QStringLiteral("array.sbatch"));
        QFile script(scriptPath);
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write(render(j));
        script.close();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PATH"), bin + QLatin1Char(':') + env.value(QStringLiteral("PATH")));
        env.insert(QStringLiteral("SLURM_ARRAY_TASK_ID"), QStringLiteral("0"));
        env.insert(QStringLiteral("HOME"), tmp.path());
        env.insert(QStringLiteral("CHECK_STATUS"), QString::number(checkStatus));
        env.insert(QStringLiteral("CHECK_OUT"), tmp.filePath(QStringLiteral("check-args")));
        QByteArray err;
        const int status = bash({scriptPath}, env, &err);
        QFile verdict(runDir + QStringLiteral("/exit.json"));
        QVERIFY(verdict.open(QIODevice::ReadOnly));
        const QJsonObject v = QJsonDocument::fromJson(verdict.readAll()).object();
        if (reason.isEmpty()) {
            QCOMPARE(status, 0);
            QVERIFY2(QFile::exists(runDir + QStringLiteral("/ran")), err.constData());
            QCOMPARE(v.value(QStringLiteral("state")).toString(), QStringLiteral("completed"));
            QFile args(tmp.filePath(QStringLiteral("check-args")));
            QVERIFY(args.open(QIODevice::ReadOnly));
            QCOMPARE(args.readAll(),
                     "--health-check\n--set\ntimeout_s=5\n--run-dir\n" + runDir.toUtf8() + '\n');
            return;
        }
        QCOMPARE(status, 1);
        QVERIFY(!QFile::exists(runDir + QStringLiteral("/ran")));
        QCOMPARE(v.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        QCOMPARE(v.value(QStringLiteral("cause")).toString(), QStringLiteral("health"));
        QVERIFY2(v.value(QStringLiteral("reason")).toString().toUtf8().contains(reason),
                 qPrintable(v.value(QStringLiteral("reason")).toString()));
    }

    // A cluster's own template from before command sweeps is refused for one, with what to copy.
    void anOldTemplateRefusesACommandSweep()
    {
        QByteArray old = orrery::remote::defaultSbatchTemplate();
        old.replace("command.argv", "trial.yaml");
        SbatchJob j = job();
        QVERIFY(!renderSbatch(old, j).isEmpty());
        j.commands = true;
        try {
            renderSbatch(old, j);
            QFAIL("rendered a command sweep with a template that cannot run it");
        } catch (const SbatchError &e) {
            QVERIFY2(e.message().contains(QStringLiteral("array.sbatch")), qPrintable(e.message()));
        }
    }
};

ORRERY_TEST_MAIN(TestSbatch, QCoreApplication)
#include "tst_sbatch.moc"
