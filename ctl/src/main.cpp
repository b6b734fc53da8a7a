// cqmgrctl: the command-line client of cqmgr's control socket
// (docs/control-protocol.md, docs/admin-guide.md).  One request per run,
// printed as a table or as the daemon's JSON, or `top`, a live view.
#include "client.hpp"
#include "discovery.hpp"
#include "format.hpp"
#include "options.hpp"
#include "request.hpp"
#include "top.hpp"
#include "usage_error.hpp"

#include <cstdio>
#include <ctime>
#include <iostream>
#include <sysexits.h>

using namespace cqmgr::ctl;

namespace {

// Exit statuses (see usage_text()).
constexpr int exit_refused = 1;   // the daemon answered {"ok":false}
constexpr int exit_no_answer = 2; // no socket, no connection, no valid reply

// The socket to use: --socket as given, else postconf's answer.
std::string socket_for(const Options& opts) {
    if (opts.socket) return *opts.socket;
    return find_socket(opts.config_dir).path;
}

// Sends one request and prints its reply; returns the exit status.
int one_request(const std::string& path, const Options& opts) {
    const std::string line = request_line(opts.command, opts.args);
    Client client(path);
    client.connect();
    const auto reply = client.request(
        line, std::chrono::milliseconds(static_cast<long long>(opts.timeout * 1000)));
    const auto error = reply_error(reply);
    if (opts.json)
        std::cout << client.last_reply() << '\n'; // unchanged, keys in the daemon's order
    else if (!error)
        std::cout << format_reply(line, reply, static_cast<int64_t>(std::time(nullptr)));
    std::cout.flush();
    if (error) {
        std::cerr << "cqmgrctl: " << *error << '\n';
        return exit_refused;
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    Options opts;
    try {
        opts = parse_options(argc, argv);
        if (opts.help) {
            std::cout << usage_text();
            return 0;
        }
        if (opts.version) {
            std::cout << "cqmgrctl " << CQMGR_VERSION << '\n';
            return 0;
        }
        // Usage mistakes are found before postconf runs.
        if (opts.command != "top") request_line(opts.command, opts.args);
    } catch (const UsageError& e) {
        // The whole usage text when no command was given, else a pointer to it.
        std::cerr << "cqmgrctl: " << e.what() << '\n'
                  << (opts.command.empty() ? usage_text() : "try cqmgrctl --help\n");
        return EX_USAGE;
    }
    try {
        const std::string path = socket_for(opts);
        return opts.command == "top" ? run_top(path, opts) : one_request(path, opts);
    } catch (const DiscoveryError& e) {
        std::cerr << "cqmgrctl: " << e.what() << '\n';
        return exit_no_answer;
    } catch (const ControlError& e) {
        std::cerr << "cqmgrctl: " << e.what() << '\n';
        if (e.kind == ControlError::Kind::Connect)
            std::cerr << "cqmgrctl: " << connect_hint << '\n';
        return exit_no_answer;
    } catch (const UsageError& e) {
        std::cerr << "cqmgrctl: " << e.what() << '\n';
        return EX_USAGE;
    }
}
