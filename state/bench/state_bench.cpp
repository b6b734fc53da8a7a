// state-bench: what the destination state store costs.
//
//   state-bench [DIR]
//
// In a fresh directory under DIR (default /tmp): the time to commit a batch
// of 1,000 changed records (as the daemon's writer does, once a second at
// most), with synchronous commits and, for comparison, with MDB_NOSYNC;
// then, for stores of 1,000, 10,000 and 100,000 records, the time to open
// one (the probe in a child included) and to load it.
#include "cqmgr/state/store.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace cqmgr::state;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

DestinationRecord record(int i, int round) {
    DestinationRecord r;
    r.transport = "smtp";
    r.destination = "mx" + std::to_string(i) + ".destination" + std::to_string(i % 97) + ".example";
    r.nexthop = r.destination;
    r.window = (i + round) % 20 + 1;
    r.last_delivery = 1764000000 + round;
    r.last_dsn_status = "2.0.0";
    r.last_dsn_text = "250 2.0.0 Ok: queued as 4Zx1yT3abcz";
    r.updated_at = 1764000000 + round;
    return r;
}

void warn(const std::string& w) {
    std::fprintf(stderr, "warning: %s\n", w.c_str());
}

// A new store at `path` with `n` records.
std::unique_ptr<Store> fresh_store(const std::string& path, const Store::Options& o, int n) {
    std::filesystem::remove(path);
    std::filesystem::remove(path + "-lock");
    auto s = Store::open(path, warn, o);
    if (!s) std::exit(1);
    Store::Batch b;
    for (int i = 0; i < n; ++i)
        b.puts.push_back(record(i, 0));
    if (!s->apply(b)) std::exit(1);
    return s;
}

// Median and maximum of `rounds` commits of `batch` changed records into a
// store that already holds `base` records.
void commit_cost(const std::string& path, bool no_sync, int base, int batch, int rounds) {
    Store::Options o;
    o.no_sync = no_sync;
    auto s = fresh_store(path, o, base);
    Store::Batch b;
    std::vector<double> ms;
    for (int round = 1; round <= rounds; ++round) {
        b.puts.clear();
        for (int i = 0; i < batch; ++i)
            b.puts.push_back(record((i * 7 + round * 131) % base, round));
        auto t = Clock::now();
        if (!s->apply(b)) std::exit(1);
        ms.push_back(ms_since(t));
    }
    std::sort(ms.begin(), ms.end());
    std::printf("commit %d records into %d (%s): median %.2f ms, max %.2f ms (%d rounds)\n", batch,
                base, no_sync ? "MDB_NOSYNC" : "synchronous", ms[ms.size() / 2], ms.back(), rounds);
}

void load_cost(const std::string& path, int n) {
    fresh_store(path, Store::Options{}, n);
    auto t = Clock::now();
    auto s = Store::open(path, warn);
    double open_ms = ms_since(t);
    t = Clock::now();
    auto loaded = s->load(0, warn);
    double load_ms = ms_since(t);
    std::printf("%d records (%.1f MB): open with probe %.1f ms, load %.1f ms (%zu records)\n", n,
                static_cast<double>(std::filesystem::file_size(path)) / 1e6, open_ms, load_ms,
                loaded.records.size());
}

} // namespace

int main(int argc, char** argv) {
    std::string base = argc > 1 ? argv[1] : "/tmp";
    std::string dir = base + "/cqmgr-state-bench-XXXXXX";
    if (!::mkdtemp(dir.data())) {
        std::perror("mkdtemp");
        return 1;
    }
    std::string path = dir + "/cqmgr-state.lmdb";
    commit_cost(path, false, 10000, 1000, 30);
    commit_cost(path, true, 10000, 1000, 30);
    commit_cost(path, false, 10000, 10, 30);
    for (int n : {1000, 10000, 100000})
        load_cost(path, n);
    std::filesystem::remove_all(dir);
    return 0;
}
