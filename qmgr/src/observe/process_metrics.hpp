// The standard process metrics of Prometheus' client libraries
// (process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds,
// process_start_time_seconds, named as they name them) and
// cqmgr_build_info, read on each scrape on the endpoint's thread.
// prometheus-cpp has no such collector, so they are read here.
//
// CPU time and the descriptor limit come from system calls.  Memory and
// open descriptors come from /proc/self, which a chrooted daemon cannot
// reach: /proc/self/statm and /proc/self/status are opened before the jail
// and read through those descriptors (which works after the privilege
// drop too; they name this process, whatever its later credentials).  No
// descriptor of a directory is kept (docs/design.md: it would lead out of
// the jail), so /proc/self/fd is not listed: the descriptors are counted
// with one poll() over the descriptor table, whose size /proc/self/status
// gives.  The start time is read from /proc then as well.  When /proc
// cannot be opened, those series are left out, and the start time is the
// time the files were tried.
#pragma once

#include <prometheus/metric_family.h>
#include <string>
#include <vector>

namespace cqmgr::qmgr {

class ProcessMetrics {
  public:
    // Opens what it reads later (before the jail) and reads the start time.
    ProcessMetrics();
    ~ProcessMetrics();
    ProcessMetrics(const ProcessMetrics&) = delete;
    ProcessMetrics& operator=(const ProcessMetrics&) = delete;

    // Appends the process families, read now, and cqmgr_build_info with
    // `version`.  On one thread at a time.
    void families(std::vector<prometheus::MetricFamily>& out, const std::string& version) const;

  private:
    int statm_ = -1;  // /proc/self/statm
    int status_ = -1; // /proc/self/status
    double start_time_ = 0;
};

} // namespace cqmgr::qmgr
