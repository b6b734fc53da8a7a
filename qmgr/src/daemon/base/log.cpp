#include "log.hpp"

#include "log_text.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>
#include <utility>

namespace cqmgr::log {

namespace {
Options g_opt;
int g_fd = -1; // postlogd datagram socket
bool g_syslog = false;
std::function<void()> g_exit_hook;

int facility_code(const std::string& name) {
    struct {
        const char* name;
        int code;
    } table[] = {{"mail", LOG_MAIL},     {"daemon", LOG_DAEMON}, {"user", LOG_USER},
                 {"local0", LOG_LOCAL0}, {"local1", LOG_LOCAL1}, {"local2", LOG_LOCAL2},
                 {"local3", LOG_LOCAL3}, {"local4", LOG_LOCAL4}, {"local5", LOG_LOCAL5},
                 {"local6", LOG_LOCAL6}, {"local7", LOG_LOCAL7}};
    for (auto& e : table)
        if (name == e.name) return e.code;
    return LOG_MAIL;
}

// The "Mon DD HH:MM:SS " prefix of a line sent at `now`, formatted once a
// second: the lines of one second share it, and localtime_r takes a lock.
std::string_view stamp_for(time_t now) {
    thread_local time_t formatted = -1;
    thread_local char stamp[64];
    thread_local size_t len = 0;
    if (now != formatted) {
        struct tm tm;
        ::localtime_r(&now, &tm);
        len = ::strftime(stamp, sizeof stamp, "%b %d %H:%M:%S ", &tm);
        formatted = now;
    }
    return {stamp, len};
}

// Sends one message; `severity` is "" for info, else "warning" etc.  The
// line is built in one buffer per thread, kept between calls: one copy of the text,
// no allocation once the buffer has grown to the longest line.
void emit(int priority, std::string_view severity, std::string_view text) {
    thread_local std::string line;
    text = text.substr(0, 2000);
    line.clear();
    if (g_fd >= 0) {
        // The process never forks, so its pid is asked for once.
        static const std::string pid = std::to_string(::getpid());
        line.append(stamp_for(::time(nullptr)))
            .append(g_opt.hostname)
            .append(" ")
            .append(g_opt.tag)
            .append("[")
            .append(pid)
            .append("]: ");
    }
    const size_t body_at = line.size();
    if (!severity.empty()) line.append(severity).append(": ");
    line.append(text);
    // Text from outside (addresses, header lines, replies) cannot forge or
    // hide a line: made printable as stock's msg_* functions do.
    make_printable(line, body_at, g_opt.utf8);
    // The body alone: what syslog and standard error get.
    const char* body = line.c_str() + body_at;
    if (g_opt.to_stderr) std::fprintf(stderr, "%s: %s\n", g_opt.tag.c_str(), body);
    if (g_fd >= 0 && ::send(g_fd, line.data(), line.size(), 0) >= 0) return;
    if (g_syslog) {
        ::syslog(priority, "%s", body);
        return;
    }
    std::fprintf(stderr, "%s[%d]: %s\n", g_opt.tag.c_str(), ::getpid(), body);
}
} // namespace

void init(const Options& opt) {
    // Called again once main.cf is read: the channel is opened afresh.
    if (g_fd >= 0) ::close(g_fd);
    g_fd = -1;
    g_syslog = false;
    g_opt = opt;
    if (!opt.postlog_path.empty()) {
        g_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un sun{};
        sun.sun_family = AF_UNIX;
        if (g_fd >= 0 && opt.postlog_path.size() < sizeof(sun.sun_path)) {
            opt.postlog_path.copy(sun.sun_path, sizeof(sun.sun_path) - 1);
            if (::connect(g_fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun) < 0) {
                std::fprintf(stderr, "%s: cannot connect to postlog socket %s\n", opt.tag.c_str(),
                             opt.postlog_path.c_str());
                ::close(g_fd);
                g_fd = -1;
            }
        }
    } else {
        ::openlog(g_opt.tag.c_str(), LOG_PID | LOG_NDELAY, facility_code(opt.facility));
        g_syslog = true;
    }
}

void set_stderr(bool on) {
    g_opt.to_stderr = on;
}

int verbose() {
    return g_opt.verbose;
}

void info(std::string_view text) {
    emit(LOG_INFO, "", text);
}
void warn(std::string_view text) {
    emit(LOG_WARNING, "warning", text);
}
void error(std::string_view text) {
    emit(LOG_ERR, "error", text);
}

void set_exit_hook(std::function<void()> hook) {
    g_exit_hook = std::move(hook);
}

void fatal(std::string_view text) {
    emit(LOG_CRIT, "fatal", text);
    // Once: a fatal error inside the hook exits at once.
    if (auto hook = std::exchange(g_exit_hook, nullptr)) hook();
    std::exit(1);
}

void panic(std::string_view text) {
    emit(LOG_CRIT, "panic", text);
    std::abort();
}

void debug(std::string_view text) {
    if (g_opt.verbose) emit(LOG_INFO, "", text);
}

std::string format_g(double value) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", value);
    return buf;
}

} // namespace cqmgr::log
