#include "instance.hpp"

#include "chroot_env.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "process.hpp"
#include "sanitizer.hpp"
#include "signals.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <signal.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace compat {
namespace {

const char* const kPostfixLibexec = "/usr/lib/postfix/sbin";
const char* const kMaster = "/usr/lib/postfix/sbin/master";

// Whole-file read that yields "" instead of throwing (for diagnostics and /proc races).
std::string read_quietly(const std::string& path) {
    std::string s;
    try {
        read_file_if_exists(path, s);
    } catch (const Error&) {
        s.clear();
    }
    return s;
}

// Pids of processes whose environment contains exactly `entry` (e.g. MAIL_CONFIG=/tmp/x/conf).
std::vector<pid_t> pids_with_env(const std::string& entry) {
    std::vector<pid_t> out;
    DIR* d = opendir("/proc");
    if (d == nullptr) return out;
    while (struct dirent* e = readdir(d)) {
        char* end = nullptr;
        long pid = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || pid <= 0 || pid == getpid()) continue;
        std::string env = read_quietly(std::string("/proc/") + e->d_name + "/environ");
        size_t pos = 0;
        while (pos < env.size()) {
            size_t nul = env.find('\0', pos);
            if (nul == std::string::npos) nul = env.size();
            if (env.compare(pos, nul - pos, entry) == 0) {
                out.push_back(static_cast<pid_t>(pid));
                break;
            }
            pos = nul + 1;
        }
    }
    closedir(d);
    return out;
}

// Waits until none of `pids` is alive, up to `limit`; returns the survivors.
std::vector<pid_t> wait_gone(std::vector<pid_t> pids, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        reap_exited_children(); // we are the subreaper: detached daemons end up as our zombies
        std::vector<pid_t> alive;
        for (pid_t p : pids)
            if (process_alive(p)) alive.push_back(p);
        if (alive.empty() || std::chrono::steady_clock::now() >= deadline) return alive;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        pids = std::move(alive);
    }
}

} // namespace

// Names a qmgr variant for messages.
const char* qmgr_kind_name(QmgrKind k) {
    return k == QmgrKind::Stock ? "stock" : "cqmgr";
}

// Split at the first '='.
std::pair<std::string, std::string> parse_setting(const std::string& option,
                                                  const std::string& name_value) {
    size_t eq = name_value.find('=');
    if (eq == std::string::npos || eq == 0)
        throw Error(option + ": expected NAME=VALUE, found '" + name_value + "'");
    return {name_value.substr(0, eq), name_value.substr(eq + 1)};
}

// Queue directories that hold messages (checked by queue_empty).
const std::vector<std::string>& message_queues() {
    static const std::vector<std::string> q = {"maildrop", "incoming", "active",
                                               "deferred", "hold",     "corrupt"};
    return q;
}

// The per-message log directories (defer and bounce logs, trace logs).
const std::vector<std::string>& log_queues() {
    static const std::vector<std::string> q = {"defer", "bounce", "trace"};
    return q;
}

// Both, in the order outcomes print them.
const std::vector<std::string>& reported_queues() {
    static const std::vector<std::string> q = [] {
        std::vector<std::string> v = message_queues();
        v.insert(v.end(), log_queues().begin(), log_queues().end());
        return v;
    }();
    return q;
}

// Reads /proc/PID/stat: alive unless missing or in state Z/X.
bool process_alive(pid_t pid) {
    if (pid <= 0) return false;
    if (kill(pid, 0) != 0 && errno == ESRCH) return false;
    std::string stat = read_quietly("/proc/" + std::to_string(pid) + "/stat");
    if (stat.empty()) return false;
    size_t rp = stat.rfind(')');
    if (rp == std::string::npos || rp + 2 >= stat.size()) return true;
    char state = stat[rp + 2];
    return state != 'Z' && state != 'X';
}

// Remembers the directory; nothing is created yet.
Instance::Instance(std::string dir) : dir_(std::move(dir)) {}

// Never leaves a master behind.
Instance::~Instance() {
    stop();
}

// Builds the whole instance layout.
void Instance::create(const InstanceConfig& cfg) {
    master_exit_after_ = cfg.master_exit_after;
    sanitizer_reports_ = cfg.sanitizer_reports;
    UserIds postfix = lookup_user("postfix");
    make_dir(dir_ + "/conf", 0755, 0, 0);
    make_dir(dir_ + "/queue", 0755, 0, 0);
    if (cfg.queue_fs_mib > 0) queue_fs_.mount(dir_ + "/queue.img", queue_dir(), cfg.queue_fs_mib);
    if (cfg.queue_tmpfs) queue_fs_.mount_tmpfs(queue_dir());
    // master(8) creates data/master.lock as the mail owner.
    make_dir(dir_ + "/data", 0700, postfix.uid, postfix.gid);
    make_dir(dir_ + "/libexec", 0755, 0, 0);
    // local(8) delivers as the recipient (nobody) and must create mailbox and lock files.
    make_dir(dir_ + "/mail", 01777, 0, 0);
    make_queue_dirs();
    if (!cfg.chroot.empty()) populate_chroot(queue_dir());
    link_daemons(cfg);
    write_main_cf(cfg);
    write_master_cf(cfg);
}

// Creates the queue directories with the owners and modes postfix set-permissions uses.
void Instance::make_queue_dirs() {
    UserIds postfix = lookup_user("postfix");
    gid_t postdrop = lookup_group("postdrop");
    std::string q = queue_dir();
    for (const char* d : {"active", "bounce", "corrupt", "defer", "deferred", "flush", "hold",
                          "incoming", "private", "saved", "trace"})
        make_dir(q + "/" + d, 0700, postfix.uid, 0);
    make_dir(q + "/maildrop", 0730, postfix.uid, postdrop);
    make_dir(q + "/public", 0710, postfix.uid, postdrop);
    make_dir(q + "/pid", 0755, 0, 0);
    // cqmgr writes its reports after it has dropped privileges.
    if (sanitizer_reports_) make_dir(sanitizer_dir(), 0755, postfix.uid, postfix.gid);
}

// The queue directory's sanitizer report directory.
std::string Instance::sanitizer_dir() const {
    return queue_dir() + "/" + sanitizer_report_dir();
}

// daemon_directory: a symlink for every stock daemon (an installed cqmgr
// left out), plus cqmgr (a wrapper
// script when its sanitizer reports are collected) and the fake agent.
void Instance::link_daemons(const InstanceConfig& cfg) {
    std::string lib = dir_ + "/libexec";
    DIR* d = opendir(kPostfixLibexec);
    if (d == nullptr)
        throw sys_error(std::string("opendir ") + kPostfixLibexec + " (is postfix installed?)");
    errno = 0;
    while (struct dirent* e = readdir(d)) {
        std::string name = e->d_name;
        // An installed cqmgr (the package's) is not the one under test.
        if (name == "." || name == ".." || name == "cqmgr") continue;
        std::string target = std::string(kPostfixLibexec) + "/" + name;
        if (symlink(target.c_str(), (lib + "/" + name).c_str()) != 0) {
            Error err = sys_error("symlink " + lib + "/" + name);
            closedir(d);
            throw err;
        }
        errno = 0;
    }
    int saved = errno;
    closedir(d);
    if (saved != 0) {
        errno = saved;
        throw sys_error(std::string("readdir ") + kPostfixLibexec);
    }
    if (!cfg.cqmgr_path.empty()) {
        if (access(cfg.cqmgr_path.c_str(), X_OK) != 0)
            throw Error("expected an executable cqmgr at " + cfg.cqmgr_path + ", found none (" +
                        std::strerror(errno) + ")");
        if (cfg.sanitizer_reports) {
            bool chrooted =
                std::find(cfg.chroot.begin(), cfg.chroot.end(), "qmgr") != cfg.chroot.end();
            write_file(lib + "/cqmgr", sanitizer_wrapper(cfg.cqmgr_path, !chrooted), 0755);
        } else if (symlink(cfg.cqmgr_path.c_str(), (lib + "/cqmgr").c_str()) != 0)
            throw sys_error("symlink " + lib + "/cqmgr");
    } else if (cfg.qmgr == QmgrKind::Cqmgr) {
        throw Error("expected a cqmgr binary path for a cqmgr run, found none");
    }
    // A copy, not a link: spawn(8) runs it as an unprivileged user, who may
    // not reach the build directory.
    if (!cfg.fake_agent_path.empty())
        write_file(lib + "/compat-fake-agent", read_file(cfg.fake_agent_path), 0755);
}

// main.cf: a minimal loopback-only instance, then the scenario's settings (last wins).
void Instance::write_main_cf(const InstanceConfig& cfg) {
    std::ostringstream o;
    o << "# written by compat-run\n"
      << "compatibility_level = 3.6\n"
      << "queue_directory = " << dir_ << "/queue\n"
      << "data_directory = " << dir_ << "/data\n"
      << "daemon_directory = " << dir_ << "/libexec\n"
      << "maillog_file = " << dir_ << "/maillog\n"
      << "maillog_file_prefixes = " << dir_ << "\n"
      << "myhostname = test.example\n"
      << "mydomain = test.example\n"
      << "myorigin = test.example\n"
      << "mydestination = test.example, localhost\n"
      << "inet_interfaces = 127.0.0.1\n"
      << "inet_protocols = ipv4\n"
      << "mynetworks = 127.0.0.0/8\n"
      << "alias_maps =\n"
      << "alias_database =\n"
      << "mail_spool_directory = " << dir_ << "/mail\n"
      << "biff = no\n"
      << "smtp_tls_security_level = none\n"
      << "smtpd_tls_security_level = none\n"
      << "smtp_dns_support_level = disabled\n";
    if (!cfg.main_cf.empty()) o << "# scenario settings\n";
    for (const auto& [k, v] : cfg.main_cf)
        o << k << " = " << v << "\n";
    std::string path = conf_dir() + "/main.cf";
    write_file(path, o.str());
    // Postfix re-reads a config file that changed within the last second and
    // sleeps in between (master -w took ~2 s); an old mtime avoids that.
    backdate(path, 60);
}

// The services of a stock master.cf, unchrooted unless the scenario names
// them; qmgr is stock qmgr or cqmgr, as a unix or fifo service.
std::string master_cf_text(const InstanceConfig& cfg) {
    // name, type, private, unpriv, wakeup, maxproc, command (+ continuation lines)
    struct Line {
        std::string name, type, priv, unpriv, wakeup, maxproc, command;
    };
    std::string qmgr_cmd = cfg.qmgr == QmgrKind::Stock ? "qmgr" : "cqmgr";
    for (const auto& a : cfg.qmgr_args)
        qmgr_cmd += " " + a;
    const std::vector<Line> lines = {
        {"smtpd", "inet", "n", "-", "-", "-", "smtpd"},
        {"pickup", "unix", "n", "-", "60", "1", "pickup"},
        {"cleanup", "unix", "n", "-", "-", "0", "cleanup"},
        {"qmgr", cfg.qmgr_service_type, "n", "-", "300", "1", qmgr_cmd},
        {"rewrite", "unix", "-", "-", "-", "-", "trivial-rewrite"},
        {"bounce", "unix", "-", "-", "-", "0", "bounce"},
        {"defer", "unix", "-", "-", "-", "0", "bounce"},
        {"trace", "unix", "-", "-", "-", "0", "bounce"},
        {"verify", "unix", "-", "-", "-", "1", "verify"},
        {"flush", "unix", "n", "-", "1000?", "0", "flush"},
        {"proxymap", "unix", "-", "-", "-", "-", "proxymap"},
        {"proxywrite", "unix", "-", "-", "-", "1", "proxymap"},
        {"smtp", "unix", "-", "-", "-", "-", "smtp"},
        {"relay", "unix", "-", "-", "-", "-", "smtp\n  -o syslog_name=postfix/$service_name"},
        {"showq", "unix", "n", "-", "-", "-", "showq"},
        {"error", "unix", "-", "-", "-", "-", "error"},
        {"retry", "unix", "-", "-", "-", "-", "error"},
        {"discard", "unix", "-", "-", "-", "-", "discard"},
        {"local", "unix", "-", "n", "-", "-", "local"},
        {"virtual", "unix", "-", "n", "-", "-", "virtual"},
        {"lmtp", "unix", "-", "-", "-", "-", "lmtp"},
        {"anvil", "unix", "-", "-", "-", "1", "anvil"},
        {"scache", "unix", "-", "-", "-", "1", "scache"},
        {"postlog", "unix-dgram", "n", "-", "-", "1", "postlogd"},
    };
    std::ostringstream o;
    o << "# written by compat-run\n";
    for (const auto& l : lines) {
        bool chrooted = std::find(cfg.chroot.begin(), cfg.chroot.end(), l.name) != cfg.chroot.end();
        std::string name =
            l.name == "smtpd" ? "127.0.0.1:" + std::to_string(cfg.smtpd_port) : l.name;
        bool disabled = l.name == "qmgr" && !cfg.qmgr_enabled;
        o << (disabled ? "#" : "") << name << " " << l.type << " " << l.priv << " " << l.unpriv
          << " " << (chrooted ? "y" : "n") << " " << l.wakeup << " " << l.maxproc << " "
          << l.command << "\n";
    }
    if (!cfg.master_cf.empty()) o << "# scenario services\n";
    for (const auto& line : cfg.master_cf)
        o << line << "\n";
    return o.str();
}

// Writes master.cf with an old mtime (see write_main_cf).
void Instance::write_master_cf(const InstanceConfig& cfg) {
    std::string path = conf_dir() + "/master.cf";
    write_file(path, master_cf_text(cfg));
    backdate(path, 60);
}

// Starts master -w (returns once the daemon is initialised) and reads its pid file.
void Instance::start() {
    SpawnOptions o;
    o.argv = {kMaster, "-c", conf_dir(), "-w", "-e", std::to_string(master_exit_after_)};
    started_ = true;
    o.output_path = dir_ + "/master.out";
    Process p = Process::spawn(o);
    auto st = p.wait_for(std::chrono::seconds(30));
    if (!st) {
        p.terminate();
        throw Error("expected `" + p.command() +
                    "` to return within 30 s, it did not; maillog tail:\n" + maillog_tail());
    }
    if (!WIFEXITED(*st) || WEXITSTATUS(*st) != 0)
        throw Error("expected `" + p.command() + "` to exit with status 0, found " +
                    describe_wait_status(*st) + "; its output: " + read_quietly(o.output_path) +
                    "\nmaillog tail:\n" + maillog_tail());
    std::string pidfile = queue_dir() + "/pid/master.pid";
    master_pid_ = pid_from_pidfile();
    if (master_pid_ <= 0)
        throw Error("expected " + pidfile + " to name a running master for " + conf_dir() +
                    ", found '" + read_quietly(pidfile) + "'; maillog tail:\n" + maillog_tail());
}

// The pid in queue/pid/master.pid if that process is a master of this
// instance (its command line names our config dir); -1 otherwise.
pid_t Instance::pid_from_pidfile() const {
    std::string text = read_quietly(queue_dir() + "/pid/master.pid");
    long pid = std::strtol(text.c_str(), nullptr, 10); // right-aligned with leading spaces
    if (pid <= 0) return -1;
    std::string cmdline = read_quietly("/proc/" + std::to_string(pid) + "/cmdline");
    if (cmdline.find(conf_dir()) == std::string::npos) return -1;
    return static_cast<pid_t>(pid);
}

// Stops this instance's master and then any of its daemons still around.
void Instance::stop() noexcept {
    // Interrupted between "master -w" and reading the pid file: find it now.
    if (master_pid_ <= 0 && started_) master_pid_ = pid_from_pidfile();
    started_ = false;
    if (master_pid_ > 0) {
        if (kill(master_pid_, SIGTERM) != 0 && errno != ESRCH)
            std::fprintf(stderr, "compat-run: warning: kill(%d, SIGTERM): %s\n", master_pid_,
                         std::strerror(errno));
        auto left = wait_gone({master_pid_}, std::chrono::seconds(10));
        if (!left.empty()) {
            std::fprintf(
                stderr,
                "compat-run: warning: master pid %d ignored SIGTERM for 10 s; sending SIGKILL\n",
                master_pid_);
            if (kill(master_pid_, SIGKILL) != 0 && errno != ESRCH)
                std::fprintf(stderr, "compat-run: warning: kill(%d, SIGKILL): %s\n", master_pid_,
                             std::strerror(errno));
            wait_gone({master_pid_}, std::chrono::seconds(2));
        }
        master_pid_ = -1;
    }
    // Daemons inherit MAIL_CONFIG from master; they exit on their own shortly
    // after master is gone, but nothing of this instance may outlive the run.
    std::string entry = "MAIL_CONFIG=" + conf_dir();
    auto pids = pids_with_env(entry);
    if (pids.empty()) {
        reap_exited_children();
        queue_fs_.unmount();
        return;
    }
    auto left = wait_gone(pids, std::chrono::seconds(5));
    for (pid_t p : left) {
        std::fprintf(
            stderr,
            "compat-run: warning: instance process %d still running 5 s after master; SIGKILL\n",
            p);
        if (kill(p, SIGKILL) != 0 && errno != ESRCH)
            std::fprintf(stderr, "compat-run: warning: kill(%d, SIGKILL): %s\n", p,
                         std::strerror(errno));
    }
    if (!left.empty()) wait_gone(left, std::chrono::seconds(2));
    reap_exited_children();
    queue_fs_.unmount();
}

// Probes the master pid.
bool Instance::master_alive() const {
    return process_alive(master_pid_);
}

// Counts the files in each reported queue directory.
QueueCounts Instance::queue_counts() const {
    QueueCounts c;
    for (const auto& q : reported_queues())
        c[q] = count_files(queue_dir() + "/" + q);
    return c;
}

// Returns the end of the maillog.
std::string Instance::maillog_tail(std::size_t lines) const {
    std::string log = read_quietly(maillog_path());
    if (log.empty()) return "(maillog is empty or missing)";
    size_t pos = log.size();
    if (log.back() == '\n') --pos;
    for (std::size_t n = 0; n < lines && pos > 0; ++n) {
        size_t nl = log.rfind('\n', pos - 1);
        if (nl == std::string::npos) {
            pos = 0;
            break;
        }
        pos = nl;
    }
    return log.substr(pos == 0 ? 0 : pos + 1);
}

} // namespace compat
