// A profiler or tracer attached to the queue manager of a run (e.g. `strace
// -c -f -p {pid} -o {out}` or `perf record -g -p {pid} -o {out}`): the queue
// manager is stopped (SIGSTOP) as soon as it appears, the tool is started and
// given time to attach, and the queue manager continues (SIGCONT), so the
// tool sees all of its work. At the end the tool gets SIGINT, which makes
// strace and perf write their summaries and exit.
#pragma once

#include "process.hpp"

#include <string>
#include <sys/types.h>

namespace bench {

class AttachedTool {
  public:
    // `command` is split on spaces; {pid} and {out} are replaced. The tool's
    // own output goes to OUT.log. Throws compat::Error if it cannot start.
    AttachedTool(const std::string& command, pid_t qmgr, const std::string& out,
                 double settle_seconds);
    AttachedTool(const AttachedTool&) = delete;
    AttachedTool& operator=(const AttachedTool&) = delete;
    // Stops the tool (SIGINT) if stop() was not called.
    ~AttachedTool();

    // SIGINT and a bounded wait for the tool to write its output and exit.
    void stop() noexcept;

  private:
    compat::Process proc_;
};

} // namespace bench
