// What the soak records of one side every few seconds: the queue
// manager's pid, resident set and open descriptors, the state store's size
// and records (cqmgr), the queue's size and the deliveries so far; kept in
// memory for the verdict and appended to a TSV file for the plots.
#pragma once

#include "instance.hpp"
#include "store_stat.hpp"

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace bench {

struct SoakSample {
    double t = 0;    // seconds since injection began
    pid_t pid = 0;   // 0: no queue manager at that moment
    long rss_kb = 0; // VmRSS
    int fds = 0;     // entries of /proc/PID/fd
    StoreStat store;
    std::uint64_t incoming = 0, active = 0, deferred = 0;
    std::uint64_t sent = 0; // status=sent lines so far
};

// Figures of the samples within [from, to) seconds that saw a queue manager.
struct SoakWindow {
    std::size_t samples = 0;
    double rss_mean_kb = 0;
    long rss_max_kb = 0;
    int fds_min = 0, fds_max = 0;
    double fds_median = 0;
    double active_mean = 0, deferred_mean = 0; // files, over every sample of the window
    std::int64_t store_records_last = -1;
    std::uint64_t store_bytes_last = 0;
};

class SoakSampler {
  public:
    // `store_path` empty: no store (stock). Writes a header to `tsv_path`.
    SoakSampler(const compat::Instance& inst, std::string store_path, std::string tsv_path);

    // Takes one sample at `t` with `sent` deliveries so far.
    void sample(double t, std::uint64_t sent);
    const std::vector<SoakSample>& samples() const { return samples_; }
    // The distinct queue-manager pids seen, in order.
    const std::vector<pid_t>& pids() const { return pids_; }
    SoakWindow window(double from, double to) const;

  private:
    const compat::Instance& inst_;
    std::string store_path_;
    std::string tsv_path_;
    std::vector<SoakSample> samples_;
    std::vector<pid_t> pids_;
};

} // namespace bench
