// SPDX-License-Identifier: GPL-3.0-or-later
#include "runlog.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <stdexcept>
#include <unistd.h>

namespace orrery::train {

namespace fs = std::filesystem;

nlohmann::json jsonValue(double v)
{
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    return v;
}

void writeFileAtomically(const std::string &path, const std::string &bytes)
{
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const std::string why = std::strerror(errno);
            ::close(fd);
            ::unlink(tmp.c_str());
            throw std::runtime_error("cannot write " + tmp + ": " + why);
        }
        done += std::size_t(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        ::unlink(tmp.c_str());
        throw std::runtime_error("cannot flush " + tmp + ": " + std::strerror(errno));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0)
        throw std::runtime_error("cannot rename " + tmp + ": " + std::strerror(errno));
    const int dir = ::open(fs::path(path).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
}

RunLog::RunLog(const std::string &runDir, bool enabled) : m_dir(runDir)
{
    if (!enabled)
        return;
    const std::string path = (fs::path(runDir) / "events.jsonl").string();
    m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (m_fd < 0)
        throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
    // An earlier process cut off mid-line (killed, or a full disk): end that line first.
    const off_t size = ::lseek(m_fd, 0, SEEK_END);
    char last = '\n';
    if (size > 0 && ::pread(m_fd, &last, 1, size - 1) == 1 && last != '\n')
        m_pending.push_back('\n');
}

RunLog::~RunLog()
{
    if (m_fd >= 0) {
        drain();
        ::close(m_fd);
    }
}

void RunLog::drain()
{
    while (!m_pending.empty()) {
        const ssize_t n = ::write(m_fd, m_pending.data(), m_pending.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;  // the disk is full (or gone): kept for the next line
        m_pending.erase(0, std::size_t(n));  // a short write leaves the rest to follow it directly
    }
}

double unixNow()
{
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    return std::round(now * 1000.0) / 1000.0;
}

void RunLog::write(nlohmann::json line)
{
    if (m_fd < 0)
        return;
    nlohmann::json out{{"v", 1}, {"t", unixNow()}};
    out.update(line);
    const std::string text = out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    drain();
    if (m_pending.empty() && m_dropped > 0) {
        const std::string lost =
            nlohmann::json{{"v", 1},
                           {"t", unixNow()},
                           {"kind", "warning"},
                           {"message", std::to_string(m_dropped) + " events were lost: the disk was full"}}
                .dump() +
            "\n";
        m_pending = lost;
        m_dropped = 0;
    }
    if (m_pending.size() + text.size() > kMaxPendingBytes) {
        ++m_dropped;
        return;
    }
    m_pending += text;
    drain();
}

void RunLog::start(const nlohmann::json &run)
{
    write({{"kind", "start"}, {"run", run}});
}

void RunLog::metrics(std::int64_t step, const std::vector<std::pair<std::string, double>> &values)
{
    nlohmann::json v = nlohmann::json::object();
    for (const auto &[k, x] : values)
        v[k] = jsonValue(x);
    write({{"kind", "metrics"}, {"step", step}, {"values", v}});
}

void RunLog::system(const std::vector<std::pair<std::string, double>> &values)
{
    nlohmann::json v = nlohmann::json::object();
    for (const auto &[k, x] : values)
        v[k] = jsonValue(x);
    write({{"kind", "system"}, {"values", v}});
}

void RunLog::artifact(std::int64_t step, const std::string &relativePath, const std::string &type)
{
    write({{"kind", "artifact"}, {"step", step}, {"path", relativePath}, {"type", type}});
}

void RunLog::status(const std::string &state, const std::string &message)
{
    nlohmann::json j{{"kind", "status"}, {"state", state}};
    if (!message.empty())
        j["message"] = message;
    write(j);
}

void RunLog::warning(const std::string &message)
{
    write({{"kind", "warning"}, {"message", message}});
}

void RunLog::tags(const nlohmann::json &tags)
{
    write({{"kind", "tags"}, {"tags", tags}});
}

void RunLog::phases(std::int64_t step, const nlohmann::json &values)
{
    write({{"kind", "phases"}, {"step", step}, {"values", values}});
}

void RunLog::exit(const std::string &state, const std::string &reason, std::int64_t step,
                  const nlohmann::json &more)
{
    if (m_fd < 0)
        return;
    drain();
    // "t": when it ended, so a follower that reads it later records the real end.
    nlohmann::json j{{"state", state}, {"reason", reason}, {"step", step}, {"t", unixNow()}};
    j.update(more);
    writeFileAtomically((fs::path(m_dir) / "exit.json").string(), j.dump() + "\n");
}

}  // namespace orrery::train
