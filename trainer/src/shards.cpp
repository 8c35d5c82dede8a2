// SPDX-License-Identifier: GPL-3.0-or-later
#include "shards.h"

#include "faults.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <random>
#include <set>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "data.h"

extern char **environ;

namespace orrery::train {

namespace {

// Queued samples of one shard in flight, per reader: with read_ahead shards ahead, a worker holds
// at most (read_ahead + 1) x (this + one sample). Large enough for several HD clips.
constexpr std::size_t kReaderBufferBytes = std::size_t(64) << 20;
// How often a waiting reader looks at the stop flag.
constexpr int kPollSliceMs = 200;

struct Stopped : std::runtime_error {
    Stopped() : std::runtime_error("stopped") { }
};
struct Stalled : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The first `{` at or after `from` that opens a brace expression (not the shell's `${...}`), and
// its matching `}`; npos when there is none.
std::pair<std::size_t, std::size_t> braceAt(const std::string &s, std::size_t from)
{
    for (std::size_t i = from; i < s.size(); ++i) {
        if (s[i] == '}')
            throw std::invalid_argument("'}' without '{' in '" + s + "'");
        if (s[i] != '{')
            continue;
        int depth = 0;
        std::size_t j = i;
        for (; j < s.size(); ++j) {
            depth += s[j] == '{' ? 1 : s[j] == '}' ? -1 : 0;
            if (depth == 0)
                break;
        }
        if (j == s.size())
            throw std::invalid_argument("unbalanced '{' in '" + s + "'");
        if (i > 0 && s[i - 1] == '$') {  // a shell variable of a pipe: command stays as it is
            i = j;
            continue;
        }
        return {i, j};
    }
    return {std::string::npos, std::string::npos};
}

// The alternatives of one brace body: `a,b,c` (split at top-level commas) or a range `lo..hi`
// (zero padding to the wider end when either end has a leading zero).
std::vector<std::string> alternatives(const std::string &body, const std::string &whole)
{
    std::vector<std::string> out;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= body.size(); ++i) {
        if (i == body.size() || (body[i] == ',' && depth == 0)) {
            out.push_back(body.substr(start, i - start));
            start = i + 1;
        } else {
            depth += body[i] == '{' ? 1 : body[i] == '}' ? -1 : 0;
        }
    }
    if (out.size() > 1)
        return out;
    out.clear();
    const auto dots = body.find("..");
    auto isNumber = [](const std::string &t) {
        return !t.empty() && t.size() < 19 &&
            std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    const std::string lo = dots == std::string::npos ? "" : body.substr(0, dots),
                      hi = dots == std::string::npos ? "" : body.substr(dots + 2);
    if (!isNumber(lo) || !isNumber(hi))
        throw std::invalid_argument("'{" + body + "}' in '" + whole +
                                    "' is neither a list {a,b} nor a range {000..099}");
    const long long a = std::stoll(lo), b = std::stoll(hi);
    if (std::size_t(std::llabs(b - a)) >= kMaxSources)
        throw std::invalid_argument("'{" + body + "}' gives more than " + std::to_string(kMaxSources) +
                                    " sources");
    const bool padded = (lo.size() > 1 && lo[0] == '0') || (hi.size() > 1 && hi[0] == '0');
    const std::size_t width = padded ? std::max(lo.size(), hi.size()) : 0;
    for (long long v = a;; v += a <= b ? 1 : -1) {
        std::string t = std::to_string(v);
        if (t.size() < width)
            t.insert(0, width - t.size(), '0');
        out.push_back(std::move(t));
        if (v == b)
            break;
    }
    return out;
}

void expandInto(const std::string &s, std::vector<std::string> &out, const std::string &whole)
{
    const auto [open, close] = braceAt(s, 0);
    if (open == std::string::npos) {
        out.push_back(s);
        if (out.size() > kMaxSources)
            throw std::invalid_argument("'" + whole + "' gives more than " + std::to_string(kMaxSources) +
                                        " sources");
        return;
    }
    const std::string head = s.substr(0, open), tail = s.substr(close + 1);
    for (const std::string &alt : alternatives(s.substr(open + 1, close - open - 1), whole))
        expandInto(head + alt + tail, out, whole);  // nested braces in `alt`, later ones in `tail`
}

// A source's stream of bytes: a file, or the stdout of `/bin/sh -c COMMAND` in its own process
// group (stderr kept for the warning). The destructor kills the group and reaps the shell.
class Source {
public:
    Source(const std::string &source, double timeoutS, const std::atomic<bool> &stop)
        : m_timeoutS(timeoutS), m_stop(stop)
    {
        if (source.rfind("pipe:", 0) != 0) {
            const std::string path = source.rfind("file:", 0) == 0 ? source.substr(5) : source;
            m_out = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            if (m_out < 0)
                throw std::runtime_error(std::string("cannot open: ") + std::strerror(errno));
            return;
        }
        int out[2], err[2];
        if (::pipe2(out, O_CLOEXEC) != 0)
            throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
        if (::pipe2(err, O_CLOEXEC) != 0) {
            ::close(out[0]);
            ::close(out[1]);
            throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
        }
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&actions, out[1], 1);
        posix_spawn_file_actions_adddup2(&actions, err[1], 2);
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        // Its own process group, so a kill reaches what the shell started (curl, aws); SIGPIPE
        // back to its default, so a writer whose reader is gone ends.
        sigset_t none, pipe;
        sigemptyset(&none);
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &pipe);
        posix_spawnattr_setflags(&attr,
                                 POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        const std::string command = source.substr(5);
        char *argv[] = {const_cast<char *>("sh"), const_cast<char *>("-c"),
                        const_cast<char *>(command.c_str()), nullptr};
        const int rc = ::posix_spawn(&m_pid, "/bin/sh", &actions, &attr, argv, environ);
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
        ::close(out[1]);
        ::close(err[1]);
        m_out = out[0];
        m_err = err[0];
        if (rc != 0) {
            m_pid = -1;
            throw std::runtime_error(std::string("cannot start /bin/sh: ") + std::strerror(rc));
        }
    }

    ~Source()
    {
        if (m_pid > 0) {
            ::kill(-m_pid, SIGKILL);
            int status = 0;
            ::waitpid(m_pid, &status, 0);
        }
        for (int fd : {m_out, m_err})
            if (fd >= 0)
                ::close(fd);
    }
    Source(const Source &) = delete;
    Source &operator=(const Source &) = delete;

    // Up to n bytes, 0 at the end. Throws Stalled when nothing came for the timeout, Stopped.
    std::size_t read(char *buf, std::size_t n)
    {
        const auto start = std::chrono::steady_clock::now();
        for (;;) {
            if (m_stop)
                throw Stopped();
            if (m_pid < 0) {  // a file
                const ssize_t got = ::read(m_out, buf, n);
                if (got < 0)
                    throw std::runtime_error(std::string("read failed: ") + std::strerror(errno));
                m_bytes += std::size_t(got);
                return std::size_t(got);
            }
            pollfd fds[2] = {{m_out, POLLIN, 0}, {m_err, POLLIN, 0}};
            if (::poll(fds, 2, kPollSliceMs) < 0 && errno != EINTR)
                throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
            if (fds[1].revents)
                readStderr();
            if (fds[0].revents) {
                const ssize_t got = ::read(m_out, buf, n);
                if (got < 0 && errno != EINTR && errno != EAGAIN)
                    throw std::runtime_error(std::string("read failed: ") + std::strerror(errno));
                if (got >= 0) {
                    m_bytes += std::size_t(got);
                    return std::size_t(got);
                }
            }
            const double idle =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (idle >= m_timeoutS) {
                char text[64];
                std::snprintf(text, sizeof text, "no bytes for %gs", m_timeoutS);
                throw Stalled(text);
            }
        }
    }

    // Why the stream ended early: the command's exit status and the last line of its stderr, or
    // `fallback` (a truncated archive) when it exited 0. The command has closed its stdout.
    std::string explain(const std::string &fallback)
    {
        if (m_pid > 0) {
            int status = 0;
            pid_t done = 0;
            // It closed stdout, so it is ending; one that lingers gets killed.
            for (int i = 0; i < 50 && (done = ::waitpid(m_pid, &status, WNOHANG)) == 0; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (done == 0) {
                ::kill(-m_pid, SIGKILL);
                ::waitpid(m_pid, &status, 0);
            }
            m_pid = 0;  // reaped
            while (m_err >= 0 && readStderr()) { }
            std::string last = m_errTail;
            while (!last.empty() && (last.back() == '\n' || last.back() == '\r'))
                last.pop_back();
            last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
            const std::string said = last.empty() ? "" : ": " + last;
            if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
                return "exit status " + std::to_string(WEXITSTATUS(status)) + said;
            if (WIFSIGNALED(status) && done != 0)
                return "killed by signal " + std::to_string(WTERMSIG(status)) + said;
            if (m_bytes == 0)
                return "nothing on stdout" + said;
        } else if (m_bytes == 0) {
            return "empty file";
        }
        return fallback;
    }

private:
    // Keeps the last 4 KiB of stderr; false at its end.
    bool readStderr()
    {
        char buf[4096];
        const ssize_t got = ::read(m_err, buf, sizeof buf);
        if (got <= 0) {
            ::close(m_err);
            m_err = -1;
            return false;
        }
        m_errTail.append(buf, std::size_t(got));
        if (m_errTail.size() > 4096)
            m_errTail.erase(0, m_errTail.size() - 4096);
        return true;
    }

    double m_timeoutS;
    const std::atomic<bool> &m_stop;
    pid_t m_pid = -1;
    int m_out = -1, m_err = -1;
    std::size_t m_bytes = 0;
    std::string m_errTail;
};

// WebDataset's key: the member's name up to the first dot of its file name.
std::string keyOf(const std::string &name)
{
    const auto slash = name.rfind('/');
    const auto dot = name.find('.', slash == std::string::npos ? 0 : slash + 1);
    return dot == std::string::npos ? std::string() : name.substr(0, dot);
}

}  // namespace

std::vector<std::string> expandSources(const std::string &pattern)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const auto sep = pattern.find("::", start);
        const std::string part =
            pattern.substr(start, sep == std::string::npos ? std::string::npos : sep - start);
        if (!part.empty())
            expandInto(part, out, pattern);
        if (sep == std::string::npos)
            break;
        start = sep + 2;
    }
    if (out.empty())
        throw std::invalid_argument("no sources in '" + pattern + "'");
    for (const std::string &s : out)
        if (s.rfind("pipe:", 0) != 0 && s.find("://") != std::string::npos)
            throw std::invalid_argument("'" + s +
                                        "': only files and pipe: sources are read (e.g. pipe:curl -s URL)");
    return out;
}

bool isShardList(const std::string &path)
{
    return path.rfind("pipe:", 0) == 0 || path.rfind("file:", 0) == 0 ||
        path.find('{') != std::string::npos || path.find("::") != std::string::npos ||
        (path.size() > 4 && path.compare(path.size() - 4, 4, ".tar") == 0);
}

std::vector<std::vector<std::size_t>> shardsOfRank(std::size_t count, int rank, int world, int workers)
{
    std::vector<std::size_t> mine;
    for (std::size_t i = std::size_t(rank); i < count; i += std::size_t(world))
        mine.push_back(i);
    std::vector<std::vector<std::size_t>> out(std::min(mine.size(), std::size_t(std::max(workers, 1))));
    for (std::size_t j = 0; j < mine.size(); ++j)
        out[j % out.size()].push_back(mine[j]);
    return out;
}

std::string inspectShardAssignment(const std::string &path, int world, int workers)
{
    const auto sources = expandSources(path);
    nlohmann::json ranks = nlohmann::json::array();
    for (int r = 0; r < world; ++r)
        ranks.push_back({{"rank", r}, {"workers", shardsOfRank(sources.size(), r, world, workers)}});
    return nlohmann::json{{"sources", sources}, {"world_size", world}, {"workers", workers}, {"ranks", ranks}}
               .dump(1) +
        "\n";
}

void TarStream::readExactly(char *buf, std::size_t n, const char *what)
{
    for (std::size_t done = 0; done < n;) {
        const std::size_t got = m_read(buf + done, n - done);
        if (got == 0)
            throw std::runtime_error(std::string("truncated tar (") + what + ")");
        done += got;
    }
}

bool TarStream::next(TarMember &out)
{
    std::string longName;
    for (;;) {
        char header[512];
        readExactly(header, 512, "no end-of-archive block");
        if (std::all_of(header, header + 512, [](char c) { return c == 0; }))
            return false;
        std::string name(header, strnlen(header, 100));
        const std::string prefix(header + 345, strnlen(header + 345, 155));
        if (std::string_view(header + 257, 5) == "ustar" && !prefix.empty())
            name = prefix + "/" + name;
        const std::string sizeField(header + 124, strnlen(header + 124, 12));
        std::size_t size = 0;
        try {
            size = std::stoull(sizeField.empty() ? "0" : sizeField, nullptr, 8);
        } catch (const std::exception &) {
            throw std::runtime_error("corrupt tar header for '" + name + "'");
        }
        if (size > (std::size_t(1) << 34))
            throw std::runtime_error("implausible member size in '" + name + "'");
        std::string data(size, '\0');
        readExactly(data.data(), size, ("member '" + name + "'").c_str());
        if (const std::size_t pad = (512 - size % 512) % 512) {
            char skip[512];
            readExactly(skip, pad, "padding");
        }
        const char type = header[156];
        if (type == 'L') {  // GNU long name of the next member
            longName = data.substr(0, strnlen(data.c_str(), data.size()));
        } else if (type == 'x') {  // pax: its path record names the next member
            for (std::size_t pos = 0; pos < data.size();) {
                const auto space = data.find(' ', pos);
                const std::size_t len = std::strtoull(data.c_str() + pos, nullptr, 10);
                if (space == std::string::npos || len == 0 || pos + len > data.size())
                    break;
                const std::string record = data.substr(space + 1, pos + len - space - 2);
                if (record.rfind("path=", 0) == 0)
                    longName = record.substr(5);
                pos += len;
            }
        } else if (type == '0' || type == '\0') {
            out.name = longName.empty() ? name : longName;
            out.data = std::move(data);
            return true;
        } else {
            longName.clear();
        }
    }
}

struct ShardStreams::Reader {
    std::string source;
    std::size_t shard = 0;  // its index in the slot's sources
    std::deque<ShardSample> queue;  // under m_mutex
    std::size_t bytes = 0, delivered = 0;
    bool finished = false;
    std::thread thread;
};

struct ShardStreams::Slot {
    std::vector<std::string> sources;
    std::vector<std::size_t> order;  // this epoch's shuffle of `sources`
    std::size_t position = 0;
    std::uint64_t seed = 0, epoch = 0;
    std::deque<std::unique_ptr<Reader>> window;  // the shard being read first, then the read-ahead
    // Shards that gave nothing since the last sample (a set: epochs reshuffle, so a count of
    // failures in a row would count one bad shard twice).
    std::set<std::size_t> emptySinceSample;
    bool dead = false;
};

ShardStreams::ShardStreams(std::vector<std::string> sources, int workers, StreamOptions options)
    : m_options(options)
{
    // Worker lists of this rank's shards, as shardsOfRank splits them (one rank's view: world 1).
    const auto lists = shardsOfRank(sources.size(), 0, 1, workers);
    for (std::size_t w = 0; w < lists.size(); ++w) {
        auto slot = std::make_unique<Slot>();
        for (std::size_t i : lists[w])
            slot->sources.push_back(sources[i]);
        slot->seed = mixSeed(options.seed ^ mixSeed(std::uint64_t(options.firstSequence)) ^ mixSeed(w + 1));
        slot->position = slot->sources.size();  // the first next() starts epoch 0
        m_slots.push_back(std::move(slot));
    }
}

ShardStreams::~ShardStreams()
{
    stop();
    std::vector<std::unique_ptr<Reader>> readers;
    {
        std::lock_guard lock(m_mutex);
        for (auto &slot : m_slots)
            for (auto &r : slot->window)
                readers.push_back(std::move(r));
    }
    for (auto &r : readers)
        r->thread.join();
}

void ShardStreams::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_changed.notify_all();
}

std::vector<std::string> ShardStreams::takeWarnings()
{
    std::lock_guard lock(m_mutex);
    return std::exchange(m_warnings, {});
}

void ShardStreams::warn(std::string text)
{
    std::lock_guard lock(m_mutex);
    m_lastFailure = text;
    m_warnings.push_back(std::move(text));
}

std::unique_ptr<ShardStreams::Reader> ShardStreams::open(const std::string &source, std::size_t shard)
{
    auto reader = std::make_unique<Reader>();
    reader->source = source;
    reader->shard = shard;
    reader->thread = std::thread([this, r = reader.get()] { readShard(*r); });
    return reader;
}

ShardSample ShardStreams::next(int worker)
{
    std::unique_lock lock(m_mutex);
    const std::size_t first = worker < 0 ? 0 : std::size_t(worker) % m_slots.size();
    for (;;) {
        if (m_stop)
            throw std::runtime_error("the shard streams were stopped");
        Slot *slot = nullptr;
        for (std::size_t k = 0; k < m_slots.size() && !slot; ++k)
            if (!m_slots[(first + k) % m_slots.size()]->dead)
                slot = m_slots[(first + k) % m_slots.size()].get();
        if (!slot)
            throw DataError("no shard of data.path gives a sample: every source failed (the last: " +
                            m_lastFailure + ")");
        // The shard being read and up to read_ahead after it, never the same shard twice at once.
        const std::size_t window = std::min(std::size_t(m_options.readAhead) + 1, slot->sources.size());
        while (slot->window.size() < window) {
            if (slot->position == slot->sources.size()) {  // a new epoch, in a new order
                slot->order.resize(slot->sources.size());
                for (std::size_t i = 0; i < slot->order.size(); ++i)
                    slot->order[i] = i;
                std::mt19937_64 rng(mixSeed(slot->seed + slot->epoch++));
                std::shuffle(slot->order.begin(), slot->order.end(), rng);
                slot->position = 0;
            }
            const std::size_t shard = slot->order[slot->position++];
            slot->window.push_back(open(slot->sources[shard], shard));
        }
        Reader &front = *slot->window.front();
        if (!front.queue.empty()) {
            ShardSample s = std::move(front.queue.front());
            front.queue.pop_front();
            front.bytes -= s.bytes;
            slot->emptySinceSample.clear();
            lock.unlock();
            m_changed.notify_all();
            return s;
        }
        if (front.finished) {
            if (front.delivered == 0)
                slot->emptySinceSample.insert(front.shard);
            if (slot->emptySinceSample.size() == slot->sources.size())
                slot->dead = true;  // every one of its shards failed since its last sample
            auto done = std::move(slot->window.front());
            slot->window.pop_front();
            lock.unlock();
            done->thread.join();
            lock.lock();
            continue;
        }
        m_changed.wait(lock);
    }
}

void ShardStreams::readShard(Reader &reader)
{
    // A retry reads the shard from its start again and skips the samples already given.
    auto push = [&](ShardSample &&s) {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock,
                       [&] { return m_stop || reader.queue.empty() || reader.bytes < kReaderBufferBytes; });
        if (m_stop)
            throw Stopped();
        reader.bytes += s.bytes;
        reader.queue.push_back(std::move(s));
        ++reader.delivered;
        lock.unlock();
        m_changed.notify_all();
    };
    const int tries = m_options.retries + 1;
    std::string why;
    int attempt = 0;
    bool ok = false;
    while (!ok && attempt < tries && !m_stop) {
        ++attempt;
        std::optional<Source> src;
        try {
            src.emplace(reader.source, m_options.timeoutS, m_stop);
            TarStream tar([&](char *b, std::size_t n) { return src->read(b, n); });
            std::size_t seen = 0;
            ShardSample current;
            auto emit = [&] {
                if (!current.members.empty() && seen++ >= reader.delivered)
                    push(std::move(current));
                current = ShardSample{};
            };
            TarMember m;
            while (tar.next(m)) {
                std::string key = keyOf(m.name);
                if (key.empty())
                    continue;  // no extension: not part of a sample (WebDataset's rule)
                if (key != current.key)
                    emit();
                current.source = reader.source;
                current.key = std::move(key);
                current.bytes += m.data.size();
                current.members.push_back(std::move(m));
            }
            emit();
            if (seen == 0)
                throw std::runtime_error("no samples in the shard");
            ok = true;
        } catch (const Stopped &) {
            break;
        } catch (const Stalled &e) {
            why = e.what();
        } catch (const std::exception &e) {
            why = src ? src->explain(e.what()) : e.what();
        }
    }
    if (!ok && !m_stop)
        warn("skipped " + reader.source + ": " + why + " after " + std::to_string(attempt) +
             (attempt == 1 ? " try" : " tries"));
    {
        std::lock_guard lock(m_mutex);
        reader.finished = true;
    }
    m_changed.notify_all();
}

}  // namespace orrery::train
