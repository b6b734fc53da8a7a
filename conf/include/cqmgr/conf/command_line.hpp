// The command line master(8) gives a daemon: `-l -t unix -u` for the stock
// qmgr entry, plus `-n service`, `-o name=value`, `-v`, `-d`, `-c`, `-z`,
// `-s n`, `-S`, `-D`, `-i`, `-m`, `-V` and `-C dir` (our own, like postconf -c:
// read the configuration from that directory).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cqmgr::conf {

struct CommandLine {
    std::string process_name;     // basename(argv[0])
    std::string service_name;     // -n, else process_name
    std::string transport = "unix"; // -t
    std::optional<std::string> config_dir; // -c is chroot for daemons; we take MAIL_CONFIG or -C
    bool single_process = false;  // -l
    bool unprivileged = false;    // -u
    bool chroot = false;          // -c
    bool stdin_mode = false;      // -S
    bool debug = false;           // -d
    int verbose = 0;              // -v (repeatable)
    int listen_fds = 1;           // -s
    std::vector<std::pair<std::string, std::string>> overrides; // -o name=value
};

// Parses argv.  Returns nullopt and sets `error` for unknown options,
// missing option values and leftover arguments (stock qmgr refuses those).
std::optional<CommandLine> parse_command_line(int argc, char** argv, std::string& error);

} // namespace cqmgr::conf
