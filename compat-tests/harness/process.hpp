// Child processes started by the harness: spawn with redirections and
// optional privilege drop, wait with a bound, terminate by pid.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace compat {

struct SpawnOptions {
    std::vector<std::string> argv; // argv[0] is an absolute program path
    std::string stdin_path;        // empty: /dev/null
    std::string output_path;       // stdout+stderr are appended here; empty: /dev/null
    std::optional<uid_t> uid;      // switch to this user (with gid) before exec
    std::optional<gid_t> gid;
    bool own_process_group = true; // terminal ^C goes to the harness only
    bool die_with_parent = true;   // PR_SET_PDEATHSIG(SIGKILL) after the privilege drop
    std::vector<std::string> env;  // extra "NAME=value" entries (override inherited ones)
};

class Process {
  public:
    Process() = default;
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;
    Process(Process&& other) noexcept;
    Process& operator=(Process&& other) noexcept;
    ~Process();

    // Starts a child; throws if fork or exec fails (exec errors are reported back).
    static Process spawn(const SpawnOptions& opts);

    pid_t pid() const { return pid_; }
    // The command line, for messages.
    const std::string& command() const { return command_; }

    // True while the child has not been reaped.
    bool running();

    // Waits up to `timeout` for the child to exit; returns its wait status.
    std::optional<int> wait_for(std::chrono::milliseconds timeout);

    // SIGTERM, wait up to `grace`, then SIGKILL and reap. No-op if not running.
    void terminate(std::chrono::milliseconds grace = std::chrono::seconds(5)) noexcept;

    // The wait status after exit (only meaningful once running() is false).
    int status() const { return status_; }

  private:
    pid_t pid_ = -1;
    int status_ = 0;
    std::string command_;
};

// Makes this process a child subreaper, so that daemons which detach (master
// -w) and their orphans are re-parented to us and can be reaped promptly.
void become_child_subreaper();

// Reaps every exited child, including adopted orphans; the status of a child
// that belongs to a Process is kept for that Process.
void reap_exited_children() noexcept;

// Describes a wait status: "exit status 1", "killed by signal 9".
std::string describe_wait_status(int status);

// Runs a command to completion within `timeout`; throws with its output path on
// a non-zero exit or on timeout.
void run_command(const SpawnOptions& opts, std::chrono::milliseconds timeout);

// Joins argv into one shell-like string for messages.
std::string join_command(const std::vector<std::string>& argv);

// Time left until `deadline`, but at least 1 s so that a late step still gets
// a chance and its own error names it.
std::chrono::milliseconds time_left(std::chrono::steady_clock::time_point deadline);

// Sleeps in small steps so that SIGINT/SIGTERM interrupts promptly (throws Interrupted).
void interruptible_sleep(double seconds);

// A process as seen in /proc.
struct ProcInfo {
    pid_t pid = 0;
    pid_t ppid = 0;
    std::vector<std::string> argv; // from /proc/PID/cmdline
};

// Live (non-zombie) children of `parent`.
std::vector<ProcInfo> children_of(pid_t parent);

// The last path component of argv[0] ("" if there is no argv).
std::string program_name(const ProcInfo& p);

// True if `pid` is blocked in a system call that waits for events (poll,
// select, epoll): a daemon that has finished starting up and waits for work.
bool waits_for_events(pid_t pid);

} // namespace compat
