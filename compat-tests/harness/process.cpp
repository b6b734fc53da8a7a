#include "process.hpp"

#include "error.hpp"
#include "signals.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <map>
#include <set>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>

extern char** environ;

namespace compat {
namespace {

// Reports a failed step from the forked child to the parent and exits.
[[noreturn]] void child_fail(int report_fd, int step) {
    int data[2] = {step, errno};
    ssize_t ignored = write(report_fd, data, sizeof data);
    (void)ignored;
    _exit(127);
}

// Opens `path` (or /dev/null) and installs it as fd `target` in the child.
void child_redirect(const char* path, int flags, int target, int report_fd, int step) {
    int fd = open(path, flags, 0644);
    if (fd < 0) child_fail(report_fd, step);
    if (fd != target) {
        if (dup2(fd, target) < 0) child_fail(report_fd, step);
        if (close(fd) != 0) child_fail(report_fd, step);
    }
}

// Exit statuses reaped by reap_exited_children() for pids owned by a Process.
std::map<pid_t, int>& reaped_statuses() {
    static std::map<pid_t, int> m;
    return m;
}

// Pids currently owned by a Process object.
std::set<pid_t>& owned_pids() {
    static std::set<pid_t> s;
    return s;
}

const char* const kChildSteps[] = {
    "open stdin", "open output", "dup2 stderr", "setpgid",       "setgroups",
    "setgid",     "setuid",      "prctl",       "parent exited", "execv",
};

} // namespace

// PR_SET_CHILD_SUBREAPER on ourselves.
void become_child_subreaper() {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) throw sys_error("prctl(PR_SET_CHILD_SUBREAPER)");
}

// Peeks with WNOWAIT so that only exited children are reaped, never blocks.
void reap_exited_children() noexcept {
    for (;;) {
        siginfo_t info{};
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return; // ECHILD: none
        if (info.si_pid == 0) return;                                          // none exited
        int st = 0;
        pid_t r = waitpid(info.si_pid, &st, WNOHANG);
        if (r <= 0) return;
        if (owned_pids().count(r)) reaped_statuses()[r] = st;
    }
}

// Joins the arguments with spaces for error messages.
std::string join_command(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty()) out += ' ';
        out += a;
    }
    return out;
}

// Renders a waitpid status in words.
std::string describe_wait_status(int status) {
    if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
    return "wait status " + std::to_string(status);
}

// Moves ownership of the child.
Process::Process(Process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), status_(other.status_),
      command_(std::move(other.command_)) {}

// Stops the child we own (if any), then takes over the other one.
Process& Process::operator=(Process&& other) noexcept {
    if (this != &other) {
        terminate();
        pid_ = std::exchange(other.pid_, -1);
        status_ = other.status_;
        command_ = std::move(other.command_);
    }
    return *this;
}

// Makes sure no child outlives its handle.
Process::~Process() {
    terminate();
}

// Forks and execs; a CLOEXEC pipe carries any pre-exec failure back to us.
Process Process::spawn(const SpawnOptions& opts) {
    if (opts.argv.empty()) throw Error("spawn: expected a command, found an empty argv");
    std::vector<char*> argv;
    for (const auto& a : opts.argv)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    // The child's environment: ours, with the extra entries replacing same-named ones.
    std::vector<std::string> env_store;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string entry = *e;
        std::string name = entry.substr(0, entry.find('='));
        bool replaced = false;
        for (const auto& x : opts.env)
            if (x.substr(0, x.find('=')) == name) replaced = true;
        if (!replaced) env_store.push_back(std::move(entry));
    }
    for (const auto& x : opts.env)
        env_store.push_back(x);
    std::vector<char*> envp;
    for (auto& e : env_store)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    const char* in_path = opts.stdin_path.empty() ? "/dev/null" : opts.stdin_path.c_str();
    const char* out_path = opts.output_path.empty() ? "/dev/null" : opts.output_path.c_str();

    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) throw sys_error("pipe2");
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(report[0]);
        close(report[1]);
        errno = saved;
        throw sys_error("fork for " + opts.argv[0]);
    }
    if (pid == 0) {
        int rfd = report[1];
        child_redirect(in_path, O_RDONLY, 0, rfd, 0);
        child_redirect(out_path, O_WRONLY | O_CREAT | O_APPEND, 1, rfd, 1);
        if (dup2(1, 2) < 0) child_fail(rfd, 2);
        if (opts.own_process_group && setpgid(0, 0) != 0) child_fail(rfd, 3);
        if (opts.gid) {
            if (setgroups(0, nullptr) != 0) child_fail(rfd, 4);
            if (setgid(*opts.gid) != 0) child_fail(rfd, 5);
        }
        if (opts.uid && setuid(*opts.uid) != 0) child_fail(rfd, 6);
        if (opts.die_with_parent) {
            // Set after the uid change, which would clear it.
            if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(rfd, 7);
            if (getppid() != parent) {
                errno = ESRCH;
                child_fail(rfd, 8);
            }
        }
        // Undo the harness's signal dispositions for the child.
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        execve(argv[0], argv.data(), envp.data());
        child_fail(rfd, 9);
    }
    if (opts.own_process_group) setpgid(pid, 0); // races with the child's own call; either wins
    if (close(report[1]) != 0) throw sys_error("close");
    int data[2];
    ssize_t n;
    do {
        n = read(report[0], data, sizeof data);
    } while (n < 0 && errno == EINTR);
    int saved = errno;
    close(report[0]);
    Process p;
    p.pid_ = pid;
    owned_pids().insert(pid);
    p.command_ = join_command(opts.argv);
    if (n < 0) {
        errno = saved;
        throw sys_error("read exec status of " + p.command_);
    }
    if (n > 0) {
        p.wait_for(std::chrono::seconds(5));
        const char* step = (data[0] >= 0 && data[0] < 10) ? kChildSteps[data[0]] : "setup";
        throw Error("could not start " + p.command_ + ": " + step +
                    " failed: " + std::strerror(data[1]));
    }
    return p;
}

// Polls waitpid without blocking and records the status on exit.
bool Process::running() {
    if (pid_ < 0) return false;
    if (auto it = reaped_statuses().find(pid_); it != reaped_statuses().end()) {
        status_ = it->second;
        reaped_statuses().erase(it);
        owned_pids().erase(pid_);
        pid_ = -1;
        return false;
    }
    int st = 0;
    pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) { // ECHILD: reaped elsewhere; treat as gone
        if (r == pid_) status_ = st;
        owned_pids().erase(pid_);
        pid_ = -1;
        return false;
    }
    return true;
}

// Bounded wait that also reacts to SIGINT/SIGTERM.
std::optional<int> Process::wait_for(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running()) {
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        check_interrupted();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return status_;
}

// Stops the child by pid: SIGTERM, bounded wait, SIGKILL, reap.
void Process::terminate(std::chrono::milliseconds grace) noexcept {
    if (!running()) return;
    kill(pid_, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + grace;
    while (running() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!running()) return;
    kill(pid_, SIGKILL);
    int st = 0;
    while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    status_ = st;
    owned_pids().erase(pid_);
    pid_ = -1;
}

// Runs a command to completion, turning failures into Errors.
void run_command(const SpawnOptions& opts, std::chrono::milliseconds timeout) {
    Process p = Process::spawn(opts);
    std::string cmd = p.command();
    auto st = p.wait_for(timeout);
    std::string where = opts.output_path.empty() ? "" : " (output in " + opts.output_path + ")";
    if (!st) {
        p.terminate();
        throw Error("expected `" + cmd + "` to finish within " +
                    std::to_string(timeout.count() / 1000) + " s, but it was still running" +
                    where);
    }
    if (!WIFEXITED(*st) || WEXITSTATUS(*st) != 0)
        throw Error("expected `" + cmd + "` to exit with status 0, found " +
                    describe_wait_status(*st) + where);
}

// Never less than a second, so that the step that runs late reports itself.
std::chrono::milliseconds time_left(std::chrono::steady_clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return std::max(left, std::chrono::milliseconds(1000));
}

// Sleeps 20 ms at a time, checking for SIGINT/SIGTERM.
void interruptible_sleep(double seconds) {
    using Clock = std::chrono::steady_clock;
    Clock::time_point until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(seconds));
    while (Clock::now() < until) {
        check_interrupted();
        Clock::duration left = until - Clock::now();
        Clock::duration step = std::min<Clock::duration>(std::chrono::milliseconds(20), left);
        if (step > Clock::duration::zero()) std::this_thread::sleep_for(step);
    }
}

namespace {

// Whole small /proc file, "" if the process went away.
std::string read_proc(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    return out;
}

} // namespace

// Scans /proc/*/stat for the parent pid and skips zombies.
std::vector<ProcInfo> children_of(pid_t parent) {
    std::vector<ProcInfo> out;
    DIR* d = opendir("/proc");
    if (d == nullptr) return out;
    while (struct dirent* e = readdir(d)) {
        char* end = nullptr;
        long pid = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || pid <= 0) continue;
        std::string base = std::string("/proc/") + e->d_name;
        std::string stat = read_proc(base + "/stat");
        size_t rp = stat.rfind(')');
        if (rp == std::string::npos || rp + 4 >= stat.size()) continue;
        char state = stat[rp + 2];
        if (state == 'Z' || state == 'X') continue;
        long ppid = std::strtol(stat.c_str() + rp + 4, nullptr, 10);
        if (ppid != parent) continue;
        ProcInfo p;
        p.pid = static_cast<pid_t>(pid);
        p.ppid = static_cast<pid_t>(ppid);
        std::string cmd = read_proc(base + "/cmdline");
        size_t pos = 0;
        while (pos < cmd.size()) {
            size_t nul = cmd.find('\0', pos);
            if (nul == std::string::npos) nul = cmd.size();
            p.argv.push_back(cmd.substr(pos, nul - pos));
            pos = nul + 1;
        }
        out.push_back(std::move(p));
    }
    closedir(d);
    return out;
}

// basename(argv[0]).
std::string program_name(const ProcInfo& p) {
    if (p.argv.empty()) return "";
    const std::string& a = p.argv[0];
    size_t slash = a.rfind('/');
    return slash == std::string::npos ? a : a.substr(slash + 1);
}

// /proc/PID/syscall starts with the number of the system call the process
// is blocked in ("running" when it is not blocked).
bool waits_for_events(pid_t pid) {
    std::string text = read_proc("/proc/" + std::to_string(pid) + "/syscall");
    char* end = nullptr;
    long nr = std::strtol(text.c_str(), &end, 10);
    if (end == text.c_str()) return false;
    static const std::set<long> waits = {
#ifdef SYS_select
        SYS_select,
#endif
#ifdef SYS_poll
        SYS_poll,
#endif
#ifdef SYS_epoll_wait
        SYS_epoll_wait,
#endif
        SYS_pselect6,   SYS_ppoll, SYS_epoll_pwait,
    };
    return waits.count(nr) > 0;
}

} // namespace compat
