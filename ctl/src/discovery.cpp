#include "discovery.hpp"

#include "cqmgr/conf/config_error.hpp"
#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/control/socket.hpp"
#include "process.hpp"

#include <cstdlib>
#include <vector>

namespace cqmgr::ctl {

namespace {

// The lines postconf printed, without their newlines.
std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

// postconf's last complaint, for an error message ("postconf: fatal: ...").
std::string last_line(const std::string& text) {
    auto lines = split_lines(text);
    return lines.empty() ? std::string() : lines.back();
}

// Runs postconf with `-c DIR` (when given) and `args`.
ProcessResult postconf_run(const std::string& postconf, const std::optional<std::string>& dir,
                           std::vector<std::string> args) {
    std::vector<std::string> argv{postconf};
    if (dir) {
        argv.push_back("-c");
        argv.push_back(*dir);
    }
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult r = run_process(argv);
    // postconf lives in /usr/sbin, which a non-root PATH may lack.
    if (!r.started && postconf == "postconf") {
        argv[0] = "/usr/sbin/postconf";
        r = run_process(argv);
    }
    if (!r.started) throw DiscoveryError("cannot run " + postconf + " (is Postfix installed?)");
    if (r.exit_status != 0) {
        std::string why = last_line(r.err);
        throw DiscoveryError("postconf failed" + (why.empty() ? std::string() : ": " + why));
    }
    return r;
}

} // namespace

std::string socket_path(const std::string& queue_directory, const std::string& value) {
    if (value.empty())
        throw DiscoveryError("the control socket is turned off (cqmgr_control_socket is empty)");
    if (value.front() == '/') return value;
    std::string dir = queue_directory;
    while (dir.size() > 1 && dir.back() == '/')
        dir.pop_back();
    return dir + "/" + value;
}

SocketLocation find_socket(const std::optional<std::string>& config_dir,
                           const std::string& postconf) {
    std::optional<std::string> dir = config_dir;
    if (!dir) {
        if (const char* env = std::getenv("MAIL_CONFIG"); env && *env) dir = env;
    }
    // Two known parameters: two lines, in order.
    const auto known = split_lines(
        postconf_run(postconf, dir, {"-h", "-x", "config_directory", "queue_directory"}).out);
    if (known.size() != 2 || known[1].empty())
        throw DiscoveryError("postconf did not report config_directory and queue_directory");
    const std::string& config_directory = known[0];
    const std::string& queue_directory = known[1];

    // An unknown parameter prints nothing at all; a known empty one prints
    // an empty line.
    const ProcessResult own = postconf_run(postconf, dir, {"-h", "-x", "cqmgr_control_socket"});
    if (!own.out.empty()) {
        const auto lines = split_lines(own.out);
        const std::string value = lines.empty() ? std::string() : lines.front();
        return {socket_path(queue_directory, value),
                "cqmgr_control_socket (postconf -c " + config_directory + ")"};
    }

    conf::MainCf cf;
    conf::register_defaults(cf);
    if (!cf.load_dir(config_directory)) throw DiscoveryError(cf.error());
    if (!cf.is_set("cqmgr_control_socket")) {
        const std::string value(control::default_socket_path);
        return {socket_path(queue_directory, value), "the default cqmgr_control_socket = " + value};
    }
    cf.set("queue_directory", queue_directory);
    std::string value;
    try {
        value = cf.str("cqmgr_control_socket");
    } catch (const conf::ConfigError& e) {
        throw DiscoveryError(e.what());
    }
    return {socket_path(queue_directory, value),
            "cqmgr_control_socket at " + cf.where("cqmgr_control_socket")};
}

} // namespace cqmgr::ctl
