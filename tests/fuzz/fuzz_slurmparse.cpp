// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer targets for the Slurm parsers (remote/src/slurmparse.cpp), one per parser, chosen by
// ORRERY_FUZZ_TARGET (sbatch, squeue, sinfo, scontrol, sacct, version) when the fuzzer runs. Besides "no
// crash, no leak, no UB" each checks what a caller relies on: a parsed result is consistent, an error is
// never empty.
#include "fuzzsupport.h"
#include "orrery/remote/slurmparse.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace slurm = orrery::remote::slurm;

namespace {

using orrery::fuzz::check;

template<typename T>
void checkResult(const slurm::Parsed<T> &r)
{
    // ok() is defined by an empty error; a failure must say why.
    check(r.ok() == r.error.isEmpty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray input(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    switch (orrery::fuzz::target({"sbatch", "squeue", "sinfo", "scontrol", "sacct", "version"})) {
    case 0: {
        const auto r = slurm::parseSbatch(input);
        checkResult(r);
        if (r.ok())
            check(slurm::isJobId(r.value.jobId));
        break;
    }
    case 1: {
        const auto r = slurm::parseSqueue(input);
        checkResult(r);
        for (const slurm::Job &j : r.value)
            check(slurm::isJobId(j.jobId) && j.nodes >= 0 && !j.state.isEmpty());
        // The monitor's squeue with names: the same records plus any bytes as the name.
        const auto named = slurm::parseSqueueNamed(input);
        checkResult(named);
        for (const slurm::Job &j : named.value)
            check(slurm::isJobId(j.jobId) && !j.state.isEmpty() && !j.name.contains(QLatin1Char('\n')));
        break;
    }
    case 2: {
        const auto r = slurm::parseSinfo(input);
        checkResult(r);
        for (const slurm::Partition &p : r.value.partitions)
            check(p.gpusTotal >= 0 && p.gpusUsed >= 0 && !p.nodes.isEmpty());
        for (const slurm::Node &n : r.value.nodes)
            check(!n.partitions.isEmpty() && n.gpusTotal >= 0);
        break;
    }
    case 3: {
        const auto r = slurm::parseScontrol(input);
        checkResult(r);
        for (const slurm::Record &record : r.value)
            check(!record.isEmpty());
        break;
    }
    case 4: {
        const auto r = slurm::parseSacct(input);
        checkResult(r);
        for (const slurm::Accounting &a : r.value) {
            check(a.exitCode >= 0 && a.signal >= 0);
            // The attempt's nodes: a host list Slurm printed, expanded without a round trip.
            const auto hosts = slurm::expandHostList(a.nodeList);
            checkResult(hosts);
            for (const QString &h : hosts.value)
                check(!h.isEmpty());
        }
        break;
    }
    case 5: {
        const auto r = slurm::parseVersion(input);
        checkResult(r);
        check(slurm::gpuCount(QString::fromUtf8(input)) >= 0);
        slurm::isJobId(QString::fromUtf8(input));
        slurm::isNodeUnusable(QString::fromUtf8(input));
        // Any text as a host list: a clear error, or names none of which is empty (at most 100,000).
        const auto hosts = slurm::expandHostList(QString::fromUtf8(input));
        checkResult(hosts);
        check(hosts.value.size() <= 100'000);
        for (const QString &h : hosts.value)
            check(!h.isEmpty());
        break;
    }
    }
    return 0;
}
