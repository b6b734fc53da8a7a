// cqmgrctl's command line:
//   cqmgrctl [-c CONFIG_DIR] [--socket PATH] [--json] [--timeout SECONDS] COMMAND [ARGS...]
//   cqmgrctl [...] top [--interval SECONDS] [--iterations N]
// Options may also follow the command (`cqmgrctl -c /etc/postfix summary
// --json`); an argument that starts with '-' goes after `--`.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cqmgr::ctl {

struct Options {
    std::optional<std::string> config_dir; // -c DIR
    std::optional<std::string> socket;     // --socket PATH
    bool json = false;                     // --json
    double timeout = 10;                   // --timeout: seconds to wait for a reply
    double interval = 1;                   // top --interval
    std::optional<long> iterations;        // top --iterations: frames, then exit
    bool help = false;                     // --help
    bool version = false;                  // --version
    std::string command;                   // "top" or a request name
    std::vector<std::string> args;
};

// Parses argv; throws UsageError on a mistake.
Options parse_options(int argc, char** argv);
// The usage text printed by --help and after a usage error.
std::string usage_text();

} // namespace cqmgr::ctl
