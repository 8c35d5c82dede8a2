// SPDX-License-Identifier: GPL-3.0-or-later
#include "phases.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace orrery::train {

namespace {

double steadyNow()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double unixSeconds()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Seconds since this process started (clock ticks of 10 ms), or -1 where /proc does not say.
double processAge()
{
    std::ifstream statFile("/proc/self/stat"), uptimeFile("/proc/uptime");
    std::string stat;
    double uptime = 0;
    if (!std::getline(statFile, stat) || !(uptimeFile >> uptime))
        return -1;
    // Field 2 (comm) may hold spaces and parentheses: count fields after its last ')'.
    const auto close = stat.rfind(')');
    if (close == std::string::npos)
        return -1;
    std::istringstream rest(stat.substr(close + 2));
    std::string field;
    // After comm: state is field 3; starttime is field 22.
    for (int i = 3; i < 22 && rest >> field; ++i) { }
    unsigned long long ticks = 0;
    if (!(rest >> ticks))
        return -1;
    const long hz = ::sysconf(_SC_CLK_TCK);
    if (hz <= 0)
        return -1;
    const double age = uptime - double(ticks) / double(hz);
    return age >= 0 ? age : -1;
}

}  // namespace

double processStartUnix()
{
    static const double start = [] {
        const double now = unixSeconds();
        if (const char *launcher = std::getenv("ORRERY_PROCESS_START")) {
            const double t = std::atof(launcher);
            if (t > 0 && t <= now)
                return t;
        }
        const double age = processAge();
        return age >= 0 ? now - age : now;
    }();
    return start;
}

PhaseClock::PhaseClock()
{
    const double unix = unixSeconds(), steady = steadyNow();
    m_processStart = processStartUnix();
    // The time before this clock existed (loading LibTorch, parsing the config) is start-up.
    m_done[Startup] = std::max(0.0, unix - m_processStart);
    m_switched = steady;
}

void PhaseClock::enter(Phase p)
{
    const double now = steadyNow();
    m_done[m_current] += now - m_switched;
    m_switched = now;
    m_current = p;
}

std::array<double, PhaseClock::kPhases> PhaseClock::seconds() const
{
    auto s = m_done;
    s[m_current] += steadyNow() - m_switched;
    return s;
}

nlohmann::json PhaseClock::values(std::int64_t resumeStep, std::int64_t checkpointStep) const
{
    static constexpr const char *kNames[kPhases] = {"startup_s", "train_s",  "checkpoint_s",
                                                    "eval_s",    "sample_s", "other_s"};
    const auto s = seconds();
    auto ms = [](double x) { return std::round(x * 1000.0) / 1000.0; };
    nlohmann::json v{{"process_start", ms(m_processStart)},
                     {"resume_step", resumeStep},
                     {"checkpoint_step", checkpointStep}};
    for (int i = 0; i < kPhases; ++i)
        v[kNames[i]] = ms(s[std::size_t(i)]);
    return v;
}

}  // namespace orrery::train
