// SPDX-License-Identifier: GPL-3.0-or-later
#include "faults.h"

#include "config.h"
#include "runlog.h"

#include <c10/util/Exception.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace orrery::train {

namespace fs = std::filesystem;

namespace {

bool contains(const std::string &text, const char *word)
{
    return text.find(word) != std::string::npos;
}

// The words of a message that say which layer failed (an exception's type says it first).
std::string causeOfMessage(const std::string &m)
{
    if (contains(m, "out of memory") || contains(m, "Out of memory") || contains(m, "OUT_OF_MEMORY"))
        return "oom";
    if (contains(m, "Timed out") || contains(m, "timed out") || contains(m, "timeout") ||
        contains(m, "Connection closed by peer") || contains(m, "Connection reset by peer") ||
        contains(m, "cannot rendezvous") || contains(m, "Gloo") || contains(m, "gloo"))
        return "comm";
    if (contains(m, "NCCL"))
        return "nccl";
    if (contains(m, "CUDA") || contains(m, "cuda") || contains(m, "CUBLAS") || contains(m, "cuDNN"))
        return "cuda";
    return "error";
}

std::string faultPath(const std::string &runDir, int rank)
{
    return (fs::path(runDir) / "faults" / ("rank-" + std::to_string(rank) + ".json")).string();
}

// The roll call: each rank says where it runs when it starts (faults/started-<R>.json), so a rank
// that never says more (hung, or killed without a word) can still be named with its node.
std::string startedPath(const std::string &runDir, int rank)
{
    return (fs::path(runDir) / "faults" / ("started-" + std::to_string(rank) + ".json")).string();
}

// --- the fatal-signal record: everything it writes is prepared at arm time ----------------------

std::atomic<std::int64_t> g_step{0};
// Set when this rank wrote its fault from an exception: a later abort (a destructor's, a
// watchdog's) must not overwrite what it knew with "crash".
std::atomic<bool> g_recorded{false};
char g_path[4096];
char g_tempPath[4096];
char g_prefix[1024];  // {"cause":"crash","node":"...","rank":R,
struct sigaction g_previous[32];
constexpr int kFatalSignals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};

const char *signalName(int sig)
{
    switch (sig) {
    case SIGABRT:
        return "SIGABRT (aborted)";
    case SIGSEGV:
        return "SIGSEGV (segmentation fault)";
    case SIGBUS:
        return "SIGBUS (bus error)";
    case SIGFPE:
        return "SIGFPE (arithmetic exception)";
    case SIGILL:
        return "SIGILL (illegal instruction)";
    default:
        return "a fatal signal";
    }
}

// Async-signal-safe text building: no allocation, no locale.
struct Text {
    char buf[2048];
    std::size_t n = 0;
    void add(const char *s)
    {
        while (*s && n + 1 < sizeof buf)
            buf[n++] = *s++;
    }
    void add(std::int64_t v)
    {
        char digits[24];
        int k = 0;
        const bool negative = v < 0;
        std::uint64_t u = negative ? std::uint64_t(-(v + 1)) + 1 : std::uint64_t(v);
        do {
            digits[k++] = char('0' + u % 10);
            u /= 10;
        } while (u && k < 23);
        if (negative)
            add("-");
        while (k > 0 && n + 1 < sizeof buf)
            buf[n++] = digits[--k];
    }
};

extern "C" void onFatalSignal(int sig)
{
    if (g_recorded.load()) {
        ::sigaction(sig, &g_previous[sig], nullptr);
        ::raise(sig);
        return;
    }
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    Text t;
    t.add(g_prefix);
    t.add("\"step\":");
    t.add(g_step.load());
    t.add(",\"t\":");
    t.add(std::int64_t(ts.tv_sec));
    t.add(".");
    const auto ms = std::int64_t(ts.tv_nsec / 1'000'000);
    if (ms < 100)
        t.add(ms < 10 ? "00" : "0");
    t.add(ms);
    t.add(",\"reason\":\"");
    t.add(signalName(sig));
    t.add("\"}\n");
    const int fd = ::open(g_tempPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        const ssize_t written = ::write(fd, t.buf, t.n);
        ::fsync(fd);
        ::close(fd);
        if (written == ssize_t(t.n))
            ::rename(g_tempPath, g_path);
    }
    // The default (or the earlier) action: the process ends as it would have.
    ::sigaction(sig, &g_previous[sig], nullptr);
    ::raise(sig);
}

}  // namespace

std::string nodeName()
{
    if (const char *n = std::getenv("SLURMD_NODENAME"); n && *n)
        return n;
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0 || !*host)
        return "localhost";
    return host;
}

namespace {

std::string causeOfCurrentException()
{
    try {
        throw;
    } catch (const c10::OutOfMemoryError &) {
        return "oom";
    } catch (const std::bad_alloc &) {
        return "oom";
    } catch (const c10::AcceleratorError &e) {
        return causeOfMessage(e.what_without_backtrace()) == "oom" ? "oom" : "cuda";
    } catch (const c10::DistNetworkError &) {
        return "comm";
    } catch (const c10::DistStoreError &) {
        return "comm";
    } catch (const c10::DistBackendError &e) {
        const std::string c = causeOfMessage(e.what_without_backtrace());
        return c == "error" ? "comm" : c;
    } catch (const c10::Error &e) {
        return causeOfMessage(e.what_without_backtrace());
    } catch (const DataError &) {
        return "data";
    } catch (const ConfigError &) {
        return "config";
    } catch (const std::exception &e) {
        return causeOfMessage(e.what());
    } catch (...) {
        return "error";
    }
}

std::string textOfCurrentException()
{
    try {
        throw;
    } catch (const c10::Error &e) {
        std::string text = e.what_without_backtrace();
        // Its first lines are the message; "Exception raised from ..." and the frames follow.
        if (const auto at = text.find("\nException raised from"); at != std::string::npos)
            text.resize(at);
        return text;
    } catch (const std::bad_alloc &) {
        return "out of memory (std::bad_alloc)";
    } catch (const std::exception &e) {
        return e.what();
    } catch (...) {
        return "an exception of unknown type";
    }
}

}  // namespace

RankFault currentExceptionFault()
{
    RankFault f;
    f.cause = causeOfCurrentException();
    f.reason = textOfCurrentException();
    f.t = unixNow();
    return f;
}

void writeRankFault(const std::string &runDir, const RankFault &f) noexcept
{
    g_recorded.store(true);
    try {
        fs::create_directories(fs::path(runDir) / "faults");
        const nlohmann::json j{{"cause", f.cause}, {"node", f.node}, {"rank", f.rank},
                               {"step", f.step},   {"t", f.t},       {"reason", f.reason}};
        writeFileAtomically(faultPath(runDir, f.rank), j.dump() + "\n");
    } catch (...) {
        // The rank's own error still reaches its stderr and the launcher.
    }
}

void armRankFaults(const std::string &runDir, int rank, int worldSize, const std::string &node)
{
    std::error_code ec;
    fs::remove(faultPath(runDir, rank), ec);
    if (rank == 0 && fs::is_directory(fs::path(runDir) / "faults", ec))
        for (const auto &e : fs::directory_iterator(fs::path(runDir) / "faults", ec)) {
            const std::string name = e.path().filename().string();
            int other = -1;
            if ((std::sscanf(name.c_str(), "rank-%d.json", &other) == 1 ||
                 std::sscanf(name.c_str(), "started-%d.json", &other) == 1) &&
                other >= worldSize)
                fs::remove(e.path(), ec);
        }
    fs::create_directories(fs::path(runDir) / "faults", ec);
    try {
        const nlohmann::json started{{"node", node}, {"rank", rank}, {"t", unixNow()}};
        writeFileAtomically(startedPath(runDir, rank), started.dump() + "\n");
    } catch (...) {
        // Without it a hung rank is not named; its peers' faults still are.
    }
    // Its own temp name: writeFileAtomically's (path + ".tmp") may be mid-write when a signal comes.
    const std::string path = faultPath(runDir, rank), temp = path + ".crash.tmp";
    const std::string prefix = "{\"cause\":\"crash\",\"node\":" + nlohmann::json(node).dump() +
        ",\"rank\":" + std::to_string(rank) + ",";
    if (path.size() >= sizeof g_path || temp.size() >= sizeof g_tempPath || prefix.size() >= sizeof g_prefix)
        return;  // a run dir this long gets no crash record, only the exception ones
    std::snprintf(g_path, sizeof g_path, "%s", path.c_str());
    std::snprintf(g_tempPath, sizeof g_tempPath, "%s", temp.c_str());
    std::snprintf(g_prefix, sizeof g_prefix, "%s", prefix.c_str());
    for (int sig : kFatalSignals) {
        struct sigaction a { };
        a.sa_handler = onFatalSignal;
        sigemptyset(&a.sa_mask);
        a.sa_flags = SA_RESETHAND | SA_NODEFER;
        ::sigaction(sig, &a, &g_previous[sig]);
    }
}

void clearRankFaults(const std::string &runDir)
{
    // File by file: std::filesystem::remove_all resolves to libtorch.so's own copy, built against
    // another libstdc++, which crashed here (a null call inside it).
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(fs::path(runDir) / "faults", ec))
        fs::remove(e.path(), ec);
}

void noteStep(std::int64_t step) noexcept
{
    g_step.store(step, std::memory_order_relaxed);
}

std::string faultReason(const RankFault &f)
{
    return "rank " + std::to_string(f.rank) + " on " + f.node + ": " + f.reason;
}

namespace {

// Which faults come first: a rank's own failure, then an abort (SIGABRT: also what a collective's
// watchdog does to a healthy rank when it times out), then a collective that failed waiting (comm).
int faultClass(const RankFault &f)
{
    if (f.cause == "comm")
        return 2;
    if (f.cause == "crash" && f.reason.rfind("SIGABRT", 0) == 0)
        return 1;
    return 0;
}

}  // namespace

namespace {

// The faults/ records written at `since` or later: rank-<R>.json (faults) or started-<R>.json
// (the roll call), by the file name's prefix.
std::vector<RankFault> readRecords(const std::string &runDir, const char *prefix, double since)
{
    std::vector<RankFault> records;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(fs::path(runDir) / "faults", ec)) {
        const std::string name = e.path().filename().string();
        if (e.path().extension() != ".json" || name.rfind(prefix, 0) != 0)
            continue;
        std::ifstream in(e.path());
        const auto j = nlohmann::json::parse(in, nullptr, false);
        if (!j.is_object() || !j.contains("rank") || !j["rank"].is_number_integer())
            continue;
        RankFault f;
        f.cause = j.value("cause", std::string("error"));
        f.reason = j.value("reason", std::string());
        f.node = j.value("node", std::string());
        f.rank = j["rank"].get<int>();
        f.step = j.value("step", std::int64_t(0));
        f.t = j.value("t", 0.0);
        if (f.t < since)
            continue;  // an earlier attempt's
        records.push_back(std::move(f));
    }
    return records;
}

bool timedOutWaiting(const RankFault &f)
{
    return f.cause == "comm" &&
        (contains(f.reason, "Timed out") || contains(f.reason, "timed out") || contains(f.reason, "timeout"));
}

// When every fault is a collective that failed waiting and at least one timed out, the rank its
// peers waited for is one that did not time out: silent (hung, or killed without a word), or with
// a peer-gone error after it woke. Named only when the roll call leaves one such rank (or one
// silent one among several: the others failed because the first waiter left), as a "hang".
std::optional<RankFault> hungRank(const std::vector<RankFault> &faults, const std::vector<RankFault> &started)
{
    const auto waiter = std::find_if(faults.begin(), faults.end(), timedOutWaiting);
    if (waiter == faults.end() ||
        !std::all_of(faults.begin(), faults.end(), [](const RankFault &f) { return f.cause == "comm"; }))
        return std::nullopt;
    std::vector<RankFault> silent, woke;
    for (const RankFault &s : started) {
        const auto own =
            std::find_if(faults.begin(), faults.end(), [&](const RankFault &f) { return f.rank == s.rank; });
        if (own == faults.end())
            silent.push_back(s);
        else if (!timedOutWaiting(*own))
            woke.push_back(s);
    }
    const std::vector<RankFault> &candidates = silent.empty() ? woke : silent;
    if (candidates.size() != 1)
        return std::nullopt;  // none, or no telling which
    RankFault h;
    h.cause = "hang";
    h.node = candidates.front().node;
    h.rank = candidates.front().rank;
    h.step = waiter->step;
    h.t = waiter->t;
    h.reason = "did not reach the collective that its peers waited for at step " +
        std::to_string(waiter->step) + " (hung, or ended without a word); rank " +
        std::to_string(waiter->rank) + ": " + waiter->reason;
    return h;
}

}  // namespace

FirstFault firstRankFault(const std::string &runDir, double since)
{
    const std::vector<RankFault> faults = readRecords(runDir, "rank-", since);
    if (faults.empty())
        return {};
    if (std::optional<RankFault> hung = hungRank(faults, readRecords(runDir, "started-", since)))
        return {std::move(*hung), faults.size()};
    const auto first =
        std::min_element(faults.begin(), faults.end(), [](const RankFault &a, const RankFault &b) {
            if (faultClass(a) != faultClass(b))
                return faultClass(a) < faultClass(b);
            if (a.t != b.t)
                return a.t < b.t;
            return a.rank < b.rank;
        });
    return {*first, faults.size()};
}

nlohmann::json faultExitFields(const FirstFault &first)
{
    return {{"cause", first.fault.cause},
            {"node", first.fault.node},
            {"rank", first.fault.rank},
            {"ranks_failed", first.ranks}};
}

bool foldRankFaults(const std::string &runDir)
{
    const FirstFault first = firstRankFault(runDir);
    if (first.ranks == 0)
        return false;
    const fs::path exitPath = fs::path(runDir) / "exit.json";
    {
        std::ifstream in(exitPath);
        const auto j = nlohmann::json::parse(in, nullptr, false);
        const std::string state = j.is_object() ? j.value("state", std::string()) : std::string();
        if (!state.empty() && state != "failed")
            return false;  // the run completed or was preempted: a late rank's fault is not its verdict
    }
    nlohmann::json exit{{"state", "failed"},
                        {"reason", faultReason(first.fault)},
                        {"step", first.fault.step},
                        {"t", unixNow()}};
    exit.update(faultExitFields(first));
    writeFileAtomically(exitPath.string(), exit.dump() + "\n");
    return true;
}

void injectedFault(const std::string &node, int rank, std::int64_t step, int timeoutSeconds)
{
    static const std::string spec = [] {
        const char *v = std::getenv("ORRERY_TRAIN_FAULT");
        return std::string(v ? v : "");
    }();
    if (spec.empty())
        return;
    std::stringstream words(spec);
    std::string kind, word;
    std::getline(words, kind, ':');
    std::int64_t atStep = 1;
    while (std::getline(words, word, ':')) {
        const auto eq = word.find('=');
        const std::string key = word.substr(0, eq),
                          value = eq == std::string::npos ? "" : word.substr(eq + 1);
        if ((key == "node" && value != node) || (key == "rank" && value != std::to_string(rank)))
            return;
        if (key == "step")
            atStep = std::atoll(value.c_str());
    }
    if (step != atStep)
        return;
    const std::string why = " (injected by ORRERY_TRAIN_FAULT)";
    if (kind == "abort")
        std::abort();
    if (kind == "stall") {
        std::this_thread::sleep_for(std::chrono::seconds(timeoutSeconds + 10));
        return;
    }
    if (kind == "cuda")
        throw std::runtime_error("CUDA error: uncorrectable ECC error encountered" + why);
    if (kind == "nccl")
        throw std::runtime_error("NCCL error: unhandled system error" + why);
    if (kind == "oom")
        throw std::bad_alloc();
    if (kind == "data")
        throw DataError("no file of the dataset decodes" + why);
    throw ConfigError("ORRERY_TRAIN_FAULT: unknown kind '" + kind +
                      "' (abort, stall, cuda, nccl, oom, data)");
}

}  // namespace orrery::train
