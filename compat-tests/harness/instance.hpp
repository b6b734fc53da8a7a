// A private Postfix instance in a temporary directory: configuration, queue
// directories, daemon symlinks, and the master(8) process.
#pragma once

#include "queue_fs.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace compat {

enum class QmgrKind { Stock, Cqmgr };

// "stock" or "cqmgr".
const char* qmgr_kind_name(QmgrKind k);

// A main.cf setting from "NAME=VALUE" (a command-line argument of `option`);
// throws Error naming the option if there is no name or no '='.
std::pair<std::string, std::string> parse_setting(const std::string& option,
                                                  const std::string& name_value);

struct InstanceConfig {
    QmgrKind qmgr = QmgrKind::Stock;
    std::string cqmgr_path;      // absolute; linked as libexec/cqmgr when non-empty
    std::string fake_agent_path; // absolute; copied to libexec/compat-fake-agent when non-empty
    bool qmgr_enabled = true;    // false: the qmgr service line is commented out
    std::uint16_t smtpd_port = 0;
    std::vector<std::pair<std::string, std::string>> main_cf; // already expanded
    std::vector<std::string> master_cf;                       // already expanded
    int master_exit_after = 600;            // master -e: safety net if the harness is killed
    std::string qmgr_service_type = "unix"; // master.cf type of the qmgr line (unix, fifo)
    std::vector<std::string> qmgr_args;     // extra arguments on the qmgr line, e.g. -v
    std::vector<std::string> chroot;        // services with chroot = y
    int queue_fs_mib = 0;                   // > 0: queue/ is a loop-mounted ext4 image of this size
    bool queue_tmpfs = false;               // queue/ is a tmpfs (unmounted by stop())
    // cqmgr is built with sanitizers: libexec/cqmgr is a wrapper that sends
    // its reports to sanitizer_dir() (see sanitizer.hpp).
    bool sanitizer_reports = false;
};

// The master.cf text for an instance (no file is written).
std::string master_cf_text(const InstanceConfig& cfg);

// File counts per queue directory (hashed subdirectories included).
using QueueCounts = std::map<std::string, std::uint64_t>;

// The queue directories that hold messages (maildrop ... corrupt).
const std::vector<std::string>& message_queues();
// The per-message log directories: defer, bounce, trace.
const std::vector<std::string>& log_queues();
// Both: the queue directories that the outcome reports and compares.
const std::vector<std::string>& reported_queues();

class Instance {
  public:
    // `dir` must exist (the WorkDir); nothing is created until create().
    explicit Instance(std::string dir);
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;
    ~Instance();

    // Lays out conf/, queue/, data/, libexec/, mail/ and writes main.cf/master.cf.
    void create(const InstanceConfig& cfg);
    // Starts master -w and records the daemon's pid; throws with the maillog tail on failure.
    void start();
    // Stops master (SIGTERM, bounded wait, SIGKILL) and any process left with
    // this instance's MAIL_CONFIG, then unmounts a queue_fs; safe to call twice.
    void stop() noexcept;

    // True while the master daemon is alive (zombies count as dead).
    bool master_alive() const;
    pid_t master_pid() const { return master_pid_; }

    QueueCounts queue_counts() const;
    // The last `lines` lines of the maillog, for error messages.
    std::string maillog_tail(std::size_t lines = 20) const;

    const std::string& dir() const { return dir_; }
    std::string conf_dir() const { return dir_ + "/conf"; }
    std::string queue_dir() const { return dir_ + "/queue"; }
    std::string maillog_path() const { return dir_ + "/maillog"; }
    // The queue's own file system (mounted only with queue_fs_mib > 0).
    QueueFs& queue_fs() { return queue_fs_; }
    // Where a sanitized cqmgr writes its reports.
    std::string sanitizer_dir() const;

  private:
    // Helpers of create(); see instance.cpp.
    void write_main_cf(const InstanceConfig& cfg);
    void write_master_cf(const InstanceConfig& cfg);
    void make_queue_dirs();
    void link_daemons(const InstanceConfig& cfg);
    pid_t pid_from_pidfile() const;

    std::string dir_;
    bool started_ = false; // master -w was run (its pid may not be known yet)
    pid_t master_pid_ = -1;
    int master_exit_after_ = 600;
    QueueFs queue_fs_;
    bool sanitizer_reports_ = false;
};

// True if pid exists and is not a zombie.
bool process_alive(pid_t pid);

} // namespace compat
