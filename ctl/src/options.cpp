#include "options.hpp"

#include "request.hpp"
#include "usage_error.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <getopt.h>

namespace cqmgr::ctl {

namespace {

// A positive number of seconds (fractions allowed), at most a day.
double seconds_arg(const char* option, const char* text) {
    errno = 0;
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !std::isfinite(value) || value < 0.1 ||
        value > 86400)
        throw UsageError(std::string("bad ") + option + " value: " + text +
                         " (seconds, from 0.1 to 86400)");
    return value;
}

// A positive count.
long count_arg(const char* option, const char* text) {
    errno = 0;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < 1)
        throw UsageError(std::string("bad ") + option + " value: " + text);
    return value;
}

} // namespace

Options parse_options(int argc, char** argv) {
    enum { opt_socket = 256, opt_json, opt_timeout, opt_interval, opt_iterations, opt_version };
    static const option long_options[] = {
        {"config-dir", required_argument, nullptr, 'c'},
        {"socket", required_argument, nullptr, opt_socket},
        {"json", no_argument, nullptr, opt_json},
        {"timeout", required_argument, nullptr, opt_timeout},
        {"interval", required_argument, nullptr, opt_interval},
        {"iterations", required_argument, nullptr, opt_iterations},
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, opt_version},
        {nullptr, 0, nullptr, 0},
    };
    Options opts;
    bool top_option = false;
    // optind = 0 makes glibc start afresh (tests parse more than once);
    // opterr = 0: the messages are ours.
    optind = 0;
    opterr = 0;
    for (;;) {
        const int c = getopt_long(argc, argv, ":c:hn:i:", long_options, nullptr);
        if (c == -1) break;
        switch (c) {
        case 'c':
            opts.config_dir = optarg;
            break;
        case opt_socket:
            opts.socket = optarg;
            break;
        case opt_json:
            opts.json = true;
            break;
        case opt_timeout:
            opts.timeout = seconds_arg("--timeout", optarg);
            break;
        case 'i':
        case opt_interval:
            opts.interval = seconds_arg("--interval", optarg);
            top_option = true;
            break;
        case 'n':
        case opt_iterations:
            opts.iterations = count_arg("--iterations", optarg);
            top_option = true;
            break;
        case 'h':
            opts.help = true;
            break;
        case opt_version:
            opts.version = true;
            break;
        case ':':
            throw UsageError(std::string("option ") + argv[optind - 1] + " needs a value");
        default:
            throw UsageError(std::string("unknown option ") + argv[optind - 1]);
        }
    }
    if (opts.help || opts.version) return opts;
    if (optind >= argc) throw UsageError("no command given");
    opts.command = argv[optind++];
    for (; optind < argc; ++optind)
        opts.args.push_back(argv[optind]);
    if (opts.config_dir && opts.config_dir->empty()) throw UsageError("-c needs a directory");
    if (opts.socket && opts.socket->empty()) throw UsageError("--socket needs a path");
    if (top_option && opts.command != "top")
        throw UsageError("--interval and --iterations are options of top only");
    if (opts.command == "top" && !opts.args.empty())
        throw UsageError("top takes no arguments: " + opts.args.front());
    return opts;
}

std::string usage_text() {
    std::string text =
        "usage: cqmgrctl [-c CONFIG_DIR] [--socket PATH] [--json] [--timeout SECONDS] COMMAND "
        "[ARGS...]\n"
        "\n"
        "Shows and steers a running cqmgr through its control socket, found with\n"
        "postconf: cqmgr_control_socket (default private/cqmgr) under queue_directory.\n"
        "\n"
        "commands:\n"
        "  top [--interval SECONDS] [--iterations N]\n"
        "      a live view (q or Ctrl-C quits)\n";
    for (const auto& spec : request_specs())
        text += "  " + std::string(spec.usage) + '\n';
    text += "\n"
            "options:\n"
            "  -c, --config-dir DIR  main.cf directory (default: $MAIL_CONFIG, else postconf's)\n"
            "  --socket PATH         the control socket (no postconf look-up)\n"
            "  --json                print the daemon's JSON reply as it is\n"
            "  --timeout SECONDS     how long to wait for a reply (default 10)\n"
            "  -h, --help            this text\n"
            "  --version             cqmgrctl's version\n"
            "\n"
            "exit status: 0 ok, 1 the daemon answered with an error, 2 no answer from the\n"
            "daemon (no socket, refused, closed, timed out), 64 usage error\n";
    return text;
}

} // namespace cqmgr::ctl
