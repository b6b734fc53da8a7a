// The queue manager process of a running instance as /proc shows it: when it
// started, the CPU time it has used and its peak resident set size.
#pragma once

#include "instance.hpp"

#include <chrono>
#include <sys/types.h>

namespace bench {

struct QmgrUsage {
    pid_t pid = 0;
    double started = 0;      // boot_seconds() at which the process started (10 ms steps)
    double cpu_seconds = 0;  // utime + stime
    double user_seconds = 0; // utime
    long peak_rss_kb = 0;    // VmHWM
    long rss_kb = 0;         // VmRSS
};

// The pid of master's child running qmgr or cqmgr, or 0 (none right now,
// e.g. between a kill and master's restart of it).
pid_t find_qmgr(pid_t master);

class QmgrProbe {
  public:
    explicit QmgrProbe(const compat::Instance& inst) : inst_(inst) {}

    // Waits up to `limit` for master's qmgr or cqmgr child and reads its start
    // time; throws compat::Error if none appears.
    void await_start(std::chrono::milliseconds limit);
    // Reads CPU time, VmHWM and VmRSS again; throws compat::Error if the process is
    // gone (a crashed or restarted queue manager makes the run invalid).
    void sample();
    const QmgrUsage& usage() const { return usage_; }

  private:
    const compat::Instance& inst_;
    QmgrUsage usage_;
};

} // namespace bench
