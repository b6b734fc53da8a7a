#include "options.hpp"

#include "cqmgr/control/request.hpp"
#include "cqmgr/control/socket.hpp"
#include "usage_error.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>

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
    Options opts;
    // CLI11, the option library of every tool here; the help text is ours
    // (usage_text(), with the request list), so its own --help is off.
    CLI::App app{"cqmgrctl"};
    app.set_help_flag();
    std::string timeout, interval, iterations;
    auto* config_dir = app.add_option("-c,--config-dir", opts.config_dir);
    auto* socket = app.add_option("--socket", opts.socket);
    app.add_flag("--json", opts.json);
    app.add_option("--timeout", timeout);
    auto* interval_option = app.add_option("-i,--interval", interval);
    auto* iterations_option = app.add_option("-n,--iterations", iterations);
    app.add_flag("-h,--help", opts.help);
    app.add_flag("--version", opts.version);
    app.add_option("command", opts.command);
    app.add_option("args", opts.args);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        throw UsageError(e.what());
    }
    if (opts.help || opts.version) return opts;
    if (opts.command.empty()) throw UsageError("no command given");
    if (!timeout.empty()) opts.timeout = seconds_arg("--timeout", timeout.c_str());
    if (!interval.empty()) opts.interval = seconds_arg("--interval", interval.c_str());
    if (!iterations.empty()) opts.iterations = count_arg("--iterations", iterations.c_str());
    if (config_dir->count() && opts.config_dir->empty()) throw UsageError("-c needs a directory");
    if (socket->count() && opts.socket->empty()) throw UsageError("--socket needs a path");
    if ((interval_option->count() || iterations_option->count()) && opts.command != "top")
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
        "postconf: cqmgr_control_socket (default " +
        std::string(control::default_socket_path) +
        ") under queue_directory.\n"
        "\n"
        "commands:\n"
        "  top [--interval SECONDS] [--iterations N]\n"
        "      a live view (q or Ctrl-C quits)\n";
    for (const control::VerbSpec& spec : control::verbs())
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
