// Logging as Postfix daemons do it: to postlogd over its datagram socket when
// maillog_file is set, else to syslog, under the tag `<syslog_name>/qmgr`, so
// that log analysers keep matching "postfix/qmgr[PID]".
//
// Hand-written on purpose: postlogd's datagram format (one syslog-style
// line per datagram, time stamp and host included, which postlogd appends to
// maillog_file as it is) is Postfix's own, and no logging library writes it
// (syslog(3) is used when maillog_file is unset).
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace cqmgr::log {

struct Options {
    std::string tag = "postfix/qmgr";
    std::string postlog_path; // empty: use syslog
    std::string hostname = "localhost";
    std::string facility = "mail";
    int verbose = 0;
    bool to_stderr = false; // -V: every line also to standard error
    // UTF-8 stays in log text (smtputf8_enable, once main.cf is read);
    // otherwise only printable ASCII does (log_text.hpp).
    bool utf8 = false;
};

// Opens the log channel (before any chroot or privilege drop); may be
// called again to reopen it with new options.
void init(const Options& opt);

// Turns copying every line to standard error on or off (-V).
void set_stderr(bool on);

int verbose();

// Writes one line at the given severity.
void info(std::string_view text);
void warn(std::string_view text);
void error(std::string_view text);
// Logs and exits with status 1, after the exit hook.
[[noreturn]] void fatal(std::string_view text);
// What fatal() runs before exit(): the daemon stops its other threads there,
// as exit() runs the static destructors, which no thread may outlive.
void set_exit_hook(std::function<void()> hook);
// A broken invariant: logs and aborts so that a core dump shows where.
[[noreturn]] void panic(std::string_view text);
// Logs only when -v was given.
void debug(std::string_view text);

// A number as printf's "%g" writes it, for lines stock formats that way.
std::string format_g(double value);

} // namespace cqmgr::log
