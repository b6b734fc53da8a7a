#include "cqmgr/conf/command_line.hpp"

#include <cstdlib>
#include <string_view>
#include <strings.h>
#include <unistd.h>

namespace cqmgr::conf {

namespace {
// True for the white space Postfix skips around "name = value".
bool blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Splits an -o value as Postfix does ("name = value" allowed); returns
// Postfix's error text on failure.
std::optional<std::string> split_override(const std::string& v, std::string& name,
                                          std::string& value) {
    size_t i = 0;
    while (i < v.size() && blank(v[i]))
        ++i;
    if (i == v.size() || v[i] == '=') return "missing attribute name";
    size_t ns = i;
    while (i < v.size() && !blank(v[i]) && v[i] != '=')
        ++i;
    size_t ne = i;
    while (i < v.size() && blank(v[i]))
        ++i;
    if (i == v.size() || v[i] != '=') return "missing '=' after attribute name";
    ++i;
    while (i < v.size() && blank(v[i]))
        ++i;
    size_t end = v.size();
    while (end > i && blank(v[end - 1]))
        --end;
    name = v.substr(ns, ne - ns);
    value = v.substr(i, end - i);
    return std::nullopt;
}
} // namespace

std::string CommandLineError::message() const {
    switch (kind) {
    case Kind::unknown_option:
        return "invalid option: " + text;
    case Kind::missing_value:
        return "invalid option: " + text + " (it needs a value)";
    case Kind::bad_override:
        return "invalid \"-o " + text + "\" option value: " + why;
    case Kind::bad_socket_count:
        return "invalid socket_count: " + text;
    case Kind::unexpected_argument:
        return "unexpected command-line argument: " + text;
    }
    return "invalid option: " + text;
}

Result<CommandLine, CommandLineError> parse_command_line(int argc, char** argv) {
    using Kind = CommandLineError::Kind;
    CommandLine cl;
    std::string_view argv0 = argc > 0 ? argv[0] : "cqmgr";
    auto slash = argv0.rfind('/');
    cl.process_name = std::string(slash == argv0.npos ? argv0 : argv0.substr(slash + 1));
    cl.service_name = cl.process_name;

    if (argc < 1) return cl;
    // getopt(3), as Postfix's servers parse this line: "+" stops at the first
    // non-option (glibc would otherwise permute argv, and master's leftover
    // arguments must stay leftovers), the leading ':' reports a missing value
    // apart from an unknown option, and optind = 0 starts afresh (the unit
    // tests and `cqmgr check` parse more than one command line per process).
    // Postfix daemons take MAIL_CONFIG only; -C (a value) is ours.
    static constexpr const char* kOptions = "+:C:cdDi:lm:n:o:s:St:uvVz";
    optind = 0;
    opterr = 0;
    for (int opt; (opt = ::getopt(argc, argv, kOptions)) != -1;) {
        std::string v = optarg ? optarg : "";
        switch (opt) {
        case 'l':
            cl.single_process = true;
            break;
        case 'u':
            cl.unprivileged = true;
            break;
        case 'c':
            cl.chroot = true;
            break;
        case 'd':
            cl.debug = true;
            break;
        case 'v':
            ++cl.verbose;
            break;
        case 'S':
            cl.stdin_mode = true;
            break;
        case 'z':
            cl.zero_limit = true;
            break;
        case 'D':
            cl.debug_me = true;
            break;
        case 'V':
            cl.log_to_stderr = true;
            break;
        case 'n':
            cl.service_name = v;
            break;
        case 't':
            cl.transport = v;
            cl.transport_given = true;
            break;
        case 'C':
            cl.config_dir = v;
            break;
        case 's': {
            int n = std::atoi(v.c_str()); // as Postfix: "3x" is 3
            if (n <= 0) return Failure{CommandLineError{Kind::bad_socket_count, v, {}}};
            cl.listen_fds = n;
            break;
        }
        case 'i':
        case 'm':
            cl.overrides.emplace_back(opt == 'i' ? "max_idle" : "max_use", v);
            break;
        case 'o': {
            std::string name, val;
            if (auto err = split_override(v, name, val))
                return Failure{CommandLineError{Kind::bad_override, v, *err}};
            cl.overrides.emplace_back(std::move(name), std::move(val));
            break;
        }
        case ':':
            return Failure{CommandLineError{
                Kind::missing_value, std::string(1, static_cast<char>(optopt)), {}}};
        default:
            return Failure{CommandLineError{
                Kind::unknown_option, std::string(1, static_cast<char>(optopt)), {}}};
        }
    }
    int i = optind;
    if (i < argc) return Failure{CommandLineError{Kind::unexpected_argument, argv[i], {}}};
    return cl;
}

std::optional<std::string> check_trigger_server(const CommandLine& cl) {
    if (!cl.stdin_mode && !cl.single_process)
        return "service " + cl.service_name + " requires a process limit of 1";
    if (cl.stdin_mode) return std::nullopt;
    if (!cl.transport_given) return std::string("no transport type specified");
    for (const char* t : {"unix", "fifo", "pass"})
        if (::strcasecmp(cl.transport.c_str(), t) == 0) return std::nullopt;
    return "unsupported transport type: " + cl.transport;
}

std::string resolve_config_dir(const CommandLine& cl) {
    if (cl.config_dir && !cl.config_dir->empty()) return *cl.config_dir;
    const char* env = std::getenv("MAIL_CONFIG");
    return env && *env ? env : "/etc/postfix";
}

} // namespace cqmgr::conf
