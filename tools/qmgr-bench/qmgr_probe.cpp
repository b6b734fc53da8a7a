#include "qmgr_probe.hpp"

#include "clock.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "process.hpp"
#include "signals.hpp"

#include <cstdlib>
#include <sstream>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace bench {
namespace {

// The fields of /proc/PID/stat after "(comm)", numbered as in proc(5) from 3.
std::vector<std::string> stat_fields(pid_t pid) {
    std::string stat;
    try {
        if (!compat::read_file_if_exists("/proc/" + std::to_string(pid) + "/stat", stat)) return {};
    } catch (const compat::Error&) {
        return {};
    }
    size_t rp = stat.rfind(')');
    if (rp == std::string::npos) return {};
    std::istringstream in(stat.substr(rp + 2));
    std::vector<std::string> f;
    std::string w;
    while (in >> w)
        f.push_back(w);
    return f;
}

// /proc/PID/status; "" if unreadable.
std::string read_status(pid_t pid) {
    std::string status;
    try {
        if (!compat::read_file_if_exists("/proc/" + std::to_string(pid) + "/status", status))
            return "";
    } catch (const compat::Error&) {
        return "";
    }
    return status;
}

// The kB of a field such as "VmHWM:  7544 kB" of a status text; -1 if absent.
long status_kb(const std::string& status, const std::string& field) {
    size_t p = status.find(field + ":");
    if (p == std::string::npos) return -1;
    return std::strtol(status.c_str() + p + field.size() + 1, nullptr, 10);
}

// Whether a process name is a queue manager's: qmgr, cqmgr, or one run under
// callgrind (tools/bench-attach/callgrind-wrapper), whose process is named
// after valgrind's tool.
bool queue_manager_name(std::string_view name) {
    return name == "qmgr" || name == "cqmgr" || name.starts_with("callgrind-");
}

} // namespace

// Reads the kernel's list of master's children (cheap enough to poll every
// millisecond, so that an attached tool misses next to nothing), else
// scans /proc.
pid_t find_qmgr(pid_t master) {
    std::string list;
    std::string path =
        "/proc/" + std::to_string(master) + "/task/" + std::to_string(master) + "/children";
    bool have_list = false;
    try {
        have_list = compat::read_file_if_exists(path, list);
    } catch (const compat::Error&) {
    }
    if (!have_list) {
        for (const auto& p : compat::children_of(master)) {
            std::string name = compat::program_name(p);
            if (queue_manager_name(name)) return p.pid;
        }
        return 0;
    }
    std::istringstream in(list);
    long pid = 0;
    while (in >> pid) {
        std::string comm;
        if (!compat::read_file_if_exists("/proc/" + std::to_string(pid) + "/comm", comm)) continue;
        if (!comm.empty() && comm.back() == '\n') comm.pop_back();
        if (queue_manager_name(comm)) return static_cast<pid_t>(pid);
    }
    return 0;
}

// Polls for the child every millisecond; the start time is field 22 (clock ticks since boot).
void QmgrProbe::await_start(std::chrono::milliseconds limit) {
    double until = boot_seconds() + std::chrono::duration<double>(limit).count();
    static const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
    for (;;) {
        if (pid_t pid = find_qmgr(inst_.master_pid())) {
            auto f = stat_fields(pid);
            if (f.size() >= 20) {
                usage_.pid = pid;
                usage_.started = std::strtod(f[19].c_str(), nullptr) / tick;
                sample();
                return;
            }
        }
        if (boot_seconds() >= until)
            throw compat::Error("expected master (pid " + std::to_string(inst_.master_pid()) +
                                ") to start a queue manager, found none; maillog tail:\n" +
                                inst_.maillog_tail());
        compat::check_interrupted();
        pause(0.001);
    }
}

// utime (field 14) + stime (field 15), VmHWM and VmRSS of the same pid.
void QmgrProbe::sample() {
    static const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
    auto f = stat_fields(usage_.pid);
    std::string status = read_status(usage_.pid);
    long hwm = status_kb(status, "VmHWM");
    if (f.size() < 13 || f[0] == "Z" || hwm < 0)
        throw compat::Error("expected the queue manager (pid " + std::to_string(usage_.pid) +
                            ") to keep running, found it gone; maillog tail:\n" +
                            inst_.maillog_tail());
    usage_.user_seconds = std::strtod(f[11].c_str(), nullptr) / tick;
    usage_.cpu_seconds = usage_.user_seconds + std::strtod(f[12].c_str(), nullptr) / tick;
    usage_.peak_rss_kb = hwm;
    usage_.rss_kb = status_kb(status, "VmRSS");
}

} // namespace bench
