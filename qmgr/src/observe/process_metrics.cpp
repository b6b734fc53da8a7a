#include "process_metrics.hpp"

#include "metric_family.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace cqmgr::qmgr {

namespace {
using namespace metric_family;

// The process's start time (Unix seconds) from /proc: its start in clock
// ticks after boot (the 22nd field of /proc/self/stat) and the boot time
// (btime in /proc/stat); 0 when /proc does not say.
double proc_start_time() {
    std::ifstream stat("/proc/self/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    // The command name (field 2) is in parentheses and may hold spaces:
    // the fields after it are counted from its closing one.
    size_t close = text.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream fields(text.substr(close + 1));
    std::string field;
    unsigned long long ticks = 0;
    for (int i = 3; i <= 22 && fields >> field; ++i)
        if (i == 22) ticks = std::stoull(field);
    std::ifstream sys("/proc/stat");
    unsigned long long boot = 0;
    for (std::string line; std::getline(sys, line);)
        if (line.rfind("btime ", 0) == 0) boot = std::stoull(line.substr(6));
    const long hz = ::sysconf(_SC_CLK_TCK);
    if (!ticks || !boot || hz <= 0) return 0;
    return static_cast<double>(boot) + static_cast<double>(ticks) / static_cast<double>(hz);
}

// The open descriptors, counted without /proc/self/fd (a descriptor of a
// directory outside the jail is never kept: it would lead out of it):
// /proc/self/status (open as `fd`) says how large the descriptor table is,
// and one poll() of every slot with no wait marks the closed ones
// POLLNVAL.  -1 on failure.
long count_open_fds(int fd) {
    char buf[4096];
    ssize_t got = ::pread(fd, buf, sizeof buf - 1, 0);
    if (got <= 0) return -1;
    buf[got] = '\0';
    const char* at = std::strstr(buf, "\nFDSize:");
    if (!at) return -1;
    long slots = std::atol(at + 8);
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        slots = std::min<long>(slots, static_cast<long>(rl.rlim_cur));
    if (slots <= 0) return -1;
    std::vector<pollfd> fds(static_cast<size_t>(slots));
    for (size_t i = 0; i < fds.size(); ++i)
        fds[i] = {static_cast<int>(i), 0, 0};
    if (::poll(fds.data(), fds.size(), 0) < 0) return -1;
    return std::count_if(fds.begin(), fds.end(),
                         [](const pollfd& p) { return !(p.revents & POLLNVAL); });
}

// The virtual and resident sizes in bytes from /proc/self/statm (open as
// `fd`); false on failure.
bool read_statm(int fd, double& virt, double& rss) {
    char buf[256];
    ssize_t got = ::pread(fd, buf, sizeof buf - 1, 0);
    if (got <= 0) return false;
    buf[got] = '\0';
    unsigned long long size = 0, resident = 0;
    if (std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return false;
    const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
    virt = static_cast<double>(size) * page;
    rss = static_cast<double>(resident) * page;
    return true;
}

void gauge(std::vector<MetricFamily>& out, const char* name, const char* help, double value) {
    sample(family(out, name, help, MetricType::Gauge), {}, value);
}
} // namespace

ProcessMetrics::ProcessMetrics()
    : statm_(::open("/proc/self/statm", O_RDONLY | O_CLOEXEC)),
      status_(::open("/proc/self/status", O_RDONLY | O_CLOEXEC)), start_time_(proc_start_time()) {
    if (start_time_ == 0) start_time_ = static_cast<double>(::time(nullptr));
}

ProcessMetrics::~ProcessMetrics() {
    if (statm_ >= 0) ::close(statm_);
    if (status_ >= 0) ::close(status_);
}

void ProcessMetrics::families(std::vector<MetricFamily>& out, const std::string& version) const {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                       static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    sample(family(out, "process_cpu_seconds_total",
                  "Total user and system CPU time spent in seconds", MetricType::Counter),
           {}, cpu);
    double virt = 0, rss = 0;
    if (statm_ >= 0 && read_statm(statm_, virt, rss)) {
        gauge(out, "process_virtual_memory_bytes", "Virtual memory size in bytes", virt);
        gauge(out, "process_resident_memory_bytes", "Resident memory size in bytes", rss);
    }
    if (long fds = status_ >= 0 ? count_open_fds(status_) : -1; fds >= 0)
        gauge(out, "process_open_fds", "Number of open file descriptors", static_cast<double>(fds));
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        gauge(out, "process_max_fds", "Maximum number of open file descriptors",
              static_cast<double>(rl.rlim_cur));
    gauge(out, "process_start_time_seconds",
          "Start time of the process since unix epoch in seconds", start_time_);
    sample(family(out, "cqmgr_build_info", "The version of cqmgr that runs (always 1)",
                  MetricType::Gauge),
           {{"version", version}}, 1);
}

} // namespace cqmgr::qmgr
