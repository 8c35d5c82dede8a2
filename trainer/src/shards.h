// SPDX-License-Identifier: GPL-3.0-or-later
//
// Streamed WebDataset shards: data.path as WebDataset's URL list (`::`-separated patterns, each
// brace-expanded; a result is a file or a `pipe:COMMAND` whose stdout is the shard), every shard
// read member by member from its file or pipe, never whole in memory. Each loader worker streams
// its own shards (shard i → rank i mod world, then worker j mod workers of that rank) with a
// bounded read-ahead; a failed or stalled source is killed, retried and then skipped with a
// warning. The shards are endless: after the last one a new epoch starts, in an order shuffled
// from the seed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace orrery::train {

// One tar member (ustar): its name and bytes.
struct TarMember {
    std::string name;
    std::string data;
};

// The most sources one data.path may expand to (a typo such as {0..99999999} fails at once).
constexpr std::size_t kMaxSources = 1'000'000;

// WebDataset's URL list: `a::b` is two patterns; each is brace-expanded as the shell does
// ({000..099} keeps the zero padding, {9..0} counts down, {a,b} lists, several braces multiply).
// Throws std::invalid_argument with the reason (unbalanced brace, too many sources, empty list).
std::vector<std::string> expandSources(const std::string &pattern);

// Whether data.path names a list of shards (a pipe: source, a brace, `::`, or a .tar file) rather
// than a folder holding .tar files.
bool isShardList(const std::string &path);

// The shards (indices into the expanded list) each loader worker of `rank` reads: shard i belongs
// to rank i mod world, the rank's j-th shard to worker j mod workers. Fewer shards than workers:
// only as many lists as shards (workers then share them).
std::vector<std::vector<std::size_t>> shardsOfRank(std::size_t count, int rank, int world, int workers);

// `orrery-train --inspect-data [--nproc N]`: the expanded sources and every rank's and worker's
// shards, as JSON.
std::string inspectShardAssignment(const std::string &path, int world, int workers);

// One sample: the consecutive members that share a key (WebDataset's rule: the name up to the
// first dot of its file name), in archive order.
struct ShardSample {
    std::string source, key;
    std::vector<TarMember> members;
    std::size_t bytes = 0;
};

struct StreamOptions {
    int readAhead = 2;  // shards opened ahead of the one being read, per worker
    int retries = 2;
    double timeoutS = 60;  // no byte for this long: the source is stalled
    std::uint64_t seed = 0;
    std::int64_t firstSequence = 0;  // the loader's first batch (a resumed run's epoch seed)
};

// Reads a tar archive member by member through `read` (returns bytes read, 0 at the end; throws
// on failure). next() gives false after the end-of-archive block; throws on a truncated archive.
class TarStream {
public:
    using ReadFn = std::function<std::size_t(char *, std::size_t)>;
    explicit TarStream(ReadFn read) : m_read(std::move(read)) { }
    bool next(TarMember &out);

private:
    void readExactly(char *buf, std::size_t n, const char *what);
    ReadFn m_read;
};

// The streams of one rank's shards. Thread-safe: the loader's workers call next() at once, each
// with its own worker number. The destructor stops every reader thread and kills every source.
class ShardStreams {
public:
    ShardStreams(std::vector<std::string> sources, int workers, StreamOptions options);
    ~ShardStreams();
    ShardStreams(const ShardStreams &) = delete;
    ShardStreams &operator=(const ShardStreams &) = delete;

    // The next sample of `worker`'s shards (worker < 0, e.g. the evaluator: worker 0's). Blocks
    // until one arrives; throws when stopped or when no shard of this rank gives a sample.
    ShardSample next(int worker);
    // Wakes every waiter and reader; next() throws from then on.
    void stop();
    // "skipped <source>: <why> after N tries" since the last call.
    std::vector<std::string> takeWarnings();

private:
    struct Reader;
    struct Slot;
    std::unique_ptr<Reader> open(const std::string &source, std::size_t shard);
    void readShard(Reader &reader);
    void warn(std::string text);

    StreamOptions m_options;
    std::mutex m_mutex;  // the readers' queues, the slots and the warnings
    std::condition_variable m_changed;
    std::atomic<bool> m_stop{false};
    std::vector<std::unique_ptr<Slot>> m_slots;
    std::vector<std::string> m_warnings;
    std::string m_lastFailure;  // for the error when every source has failed
};

}  // namespace orrery::train
