// master.cf as master(8) reads it (docs/postfix-facts.md §7.1): logical
// lines as in main.cf; eight fields separated by blanks (service, type,
// private, unprivileged, chroot, wakeup, maxproc, command), "-" for a
// default; then the command's arguments, where a word starting with '{' is
// a group whose braces and surrounding blanks master strips
// ("-o { name = value }").  Errors master stops on are fatal here too (load
// returns false).
//
// cqmgr uses it to know which transports exist (unix services with a
// private socket) and what each service line passes with -o; qmgr itself
// never reads the -o settings of other services' lines, so a qmgr
// parameter set there has no effect on scheduling (see
// qmgr_settings_on_other_services()).
#pragma once

#include "cqmgr/conf/config_error.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cqmgr::conf {

struct MasterService {
    std::string service;
    std::string type; // unix, unix-dgram, fifo, inet, pass
    std::string private_field, unprivileged_field, chroot_field; // "y", "n" or "-"
    std::string wakeup_field;                                    // "-", "N" or "N?"
    std::string maxproc_field;                                   // "-" or "N"
    std::string command;
    std::vector<std::string> args; // as master passes them: groups unwrapped
    std::string where;             // "FILE: line N"

    // The -o name=value settings among the arguments, in order, as the
    // daemon's option parser finds them (options end at the first
    // non-option word or "--"; "-oname=value", "-vo name=value" and
    // "-o { name = value }" all work).  Malformed ones are skipped.
    std::vector<std::pair<std::string, std::string>> overrides() const;
    // The last -o value for `name`, if any.
    std::optional<std::string> override_value(std::string_view name) const;
};

// How master turns a service line into a process: the resolved fields, the
// program path and the argument vector (docs/postfix-facts.md §7.1).
struct MasterSpawn {
    bool private_socket = true;
    bool unprivileged = true;
    bool chroot = false;
    int64_t wakeup = 0;
    bool conditional_wakeup = false; // "N?": wake only after first use
    int64_t max_proc = 100;
    std::string path;              // daemon_directory + "/" + command
    std::vector<std::string> argv; // argv[0] = command as written
};

// What master's own settings contribute to a spawn.
struct MasterContext {
    std::string daemon_directory = "/usr/lib/postfix/sbin";
    int64_t default_process_limit = 100;
    long compat_level = 0;     // chroot defaults to y below level 1
    bool master_debug = false; // master -d: daemons get -d
    bool master_verbose = false;
};

class MasterCf {
  public:
    using Warn = std::function<void(const std::string&)>;

    explicit MasterCf(Warn warn = {});

    // Reads `dir`/master.cf; false with error() when unreadable or invalid.
    bool load_dir(const std::string& dir);
    // Parses master.cf text; `origin` names it in messages.
    bool load_text(std::string_view text, const std::string& origin = "master.cf");

    const std::vector<MasterService>& services() const { return services_; }
    // The entry for service/type, or nullptr.
    const MasterService* find(std::string_view service, std::string_view type = "unix") const;
    // Names qmgr can deliver to: unix services with a private socket.
    std::vector<std::string> transport_names() const;
    // (service, parameter) for each -o on a line other than `qmgr_service`
    // that sets a parameter only qmgr reads (its own or per-transport ones
    // for a transport in this file): such settings do nothing.
    std::vector<std::pair<std::string, std::string>>
    qmgr_settings_on_other_services(std::string_view qmgr_service = "qmgr") const;

    const std::string& error() const { return error_; }

  private:
    Warn warn_;
    std::vector<MasterService> services_;
    std::string error_;
};

// Resolves defaults and builds master's argv for one service; throws
// ConfigError for values master rejects.
MasterSpawn master_spawn(const MasterService& service, const MasterContext& context);

// The agent processes master would run at most for each unix service: its
// max_proc, "-" resolved through `context`.  Services without a limit (0)
// and lines master refuses are left out.
std::map<std::string, int64_t> process_limits(const MasterCf& master, const MasterContext& context);

} // namespace cqmgr::conf
