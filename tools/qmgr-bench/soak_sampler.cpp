#include "soak_sampler.hpp"

#include "error.hpp"
#include "fsutil.hpp"
#include "metrics.hpp"
#include "qmgr_probe.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>

namespace bench {
namespace {

// VmRSS of `pid` in kB; 0 if it is gone.
long rss_kb(pid_t pid) {
    std::string status;
    try {
        if (!compat::read_file_if_exists("/proc/" + std::to_string(pid) + "/status", status))
            return 0;
    } catch (const compat::Error&) {
        return 0;
    }
    size_t p = status.find("VmRSS:");
    return p == std::string::npos ? 0 : std::strtol(status.c_str() + p + 6, nullptr, 10);
}

// Open descriptors of `pid`; 0 if it is gone.
int open_fds(pid_t pid) {
    DIR* d = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
    if (d == nullptr) return 0;
    int n = 0;
    while (struct dirent* e = readdir(d))
        if (e->d_name[0] != '.') ++n;
    closedir(d);
    return n;
}

} // namespace

SoakSampler::SoakSampler(const compat::Instance& inst, std::string store_path, std::string tsv_path)
    : inst_(inst), store_path_(std::move(store_path)), tsv_path_(std::move(tsv_path)) {
    std::ofstream(tsv_path_) << "# t\tpid\trss_kb\tfds\tstore_bytes\tstore_records\tincoming\t"
                                "active\tdeferred\tsent\n";
}

// A sample whose process vanished between the reads counts as none.
void SoakSampler::sample(double t, std::uint64_t sent) {
    SoakSample s;
    s.t = t;
    s.sent = sent;
    s.pid = find_qmgr(inst_.master_pid());
    if (s.pid > 0) {
        s.rss_kb = rss_kb(s.pid);
        s.fds = open_fds(s.pid);
        if (s.rss_kb == 0 || s.fds == 0) s.pid = 0;
    }
    if (s.pid > 0 && (pids_.empty() || pids_.back() != s.pid)) pids_.push_back(s.pid);
    if (!store_path_.empty()) s.store = read_store_stat(store_path_);
    const std::string q = inst_.queue_dir();
    s.incoming = compat::count_files(q + "/incoming");
    s.active = compat::count_files(q + "/active");
    s.deferred = compat::count_files(q + "/deferred");
    samples_.push_back(s);
    char line[256];
    std::snprintf(
        line, sizeof line, "%.1f\t%d\t%ld\t%d\t%llu\t%lld\t%llu\t%llu\t%llu\t%llu\n", t,
        static_cast<int>(s.pid), s.rss_kb, s.fds, static_cast<unsigned long long>(s.store.bytes),
        static_cast<long long>(s.store.records), static_cast<unsigned long long>(s.incoming),
        static_cast<unsigned long long>(s.active), static_cast<unsigned long long>(s.deferred),
        static_cast<unsigned long long>(s.sent));
    std::ofstream(tsv_path_, std::ios::app) << line;
}

SoakWindow SoakSampler::window(double from, double to) const {
    SoakWindow w;
    std::vector<double> fds;
    double rss_sum = 0, active_sum = 0, deferred_sum = 0;
    std::size_t all = 0;
    for (const auto& s : samples_) {
        if (s.t < from || s.t >= to) continue;
        ++all;
        active_sum += static_cast<double>(s.active);
        deferred_sum += static_cast<double>(s.deferred);
        if (s.store.present) {
            w.store_bytes_last = s.store.bytes;
            if (s.store.records >= 0) w.store_records_last = s.store.records;
        }
        if (s.pid == 0) continue;
        ++w.samples;
        rss_sum += static_cast<double>(s.rss_kb);
        w.rss_max_kb = std::max(w.rss_max_kb, s.rss_kb);
        w.fds_min = fds.empty() ? s.fds : std::min(w.fds_min, s.fds);
        w.fds_max = std::max(w.fds_max, s.fds);
        fds.push_back(s.fds);
    }
    if (w.samples > 0) w.rss_mean_kb = rss_sum / static_cast<double>(w.samples);
    if (all > 0) {
        w.active_mean = active_sum / static_cast<double>(all);
        w.deferred_mean = deferred_sum / static_cast<double>(all);
    }
    w.fds_median = median(fds);
    return w;
}

} // namespace bench
