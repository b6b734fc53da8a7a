// Where the control socket is, found the way Postfix's own tools find
// things: postconf answers for the configuration directory (-c DIR, else
// $MAIL_CONFIG, else postconf's default).
//
// queue_directory comes from `postconf -h -x`.  cqmgr_control_socket is not
// a Postfix parameter: postconf prints a warning and nothing for it, even
// when main.cf sets it.  So its value is read from main.cf with the
// daemon's own main.cf reader (same logical lines, same $name expansion,
// queue_directory as postconf reported it) and, when main.cf does not set
// it, is the daemon's default (control::default_socket_path).  Should a postconf ever
// answer for it, that answer is taken.  Values set with -o in master.cf are
// not seen: use --socket for those.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace cqmgr::ctl {

// The socket could not be located (postconf failed, the socket is turned
// off): cqmgrctl cannot reach the daemon.
struct DiscoveryError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct SocketLocation {
    std::string path;   // absolute, or as given to --socket
    std::string origin; // for messages: where the value came from
};

// The socket path for the parameter `value`: relative values are relative
// to `queue_directory`.  Throws DiscoveryError for an empty value (the
// socket is turned off).
std::string socket_path(const std::string& queue_directory, const std::string& value);

// Locates the socket for configuration directory `config_dir` (nullopt:
// $MAIL_CONFIG, else postconf's default).  `postconf` names the program to
// run.  Throws DiscoveryError.
SocketLocation find_socket(const std::optional<std::string>& config_dir,
                           const std::string& postconf = "postconf");

} // namespace cqmgr::ctl
