// The command line master(8) gives a daemon (docs/postfix-facts.md §7.1):
// `-l -t unix -u` for the stock qmgr entry, plus `-n service`,
// `-o name=value`, `-v`, `-d`, `-c`, `-z`, `-s n`, `-S`, `-D`, `-i max_idle`,
// `-m max_use`, `-V`, parsed with getopt(3) as Postfix's trigger server
// parses them ("+cdDi:lm:n:o:s:St:uvVz": bundled options, attached values,
// options end at the first non-option or "--"), and `-C dir`, our own: read the
// configuration from `dir` (stock daemons only take MAIL_CONFIG; for daemons
// -c means chroot).
#pragma once

#include "cqmgr/common/result.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cqmgr::conf {

struct CommandLine {
    std::string process_name;              // basename(argv[0])
    std::string service_name;              // -n, else process_name
    std::string transport = "unix";        // -t
    bool transport_given = false;          // -t was present
    std::optional<std::string> config_dir; // -C (ours); see resolve_config_dir()
    bool single_process = false;           // -l
    bool zero_limit = false;               // -z
    bool unprivileged = false;             // -u
    bool chroot = false;                   // -c
    bool stdin_mode = false;               // -S
    bool debug = false;                    // -d (do not detach)
    bool debug_me = false;                 // -D
    bool log_to_stderr = false;            // -V
    int verbose = 0;                       // -v (repeatable)
    int listen_fds = 1;                    // -s
    // -o name=value in order, with -i and -m as max_idle=... and max_use=...
    // ("name = value" with blanks, as from "-o { name = value }", is fine).
    std::vector<std::pair<std::string, std::string>> overrides;
};

// Why a command line is refused; message() is Postfix's fatal text.
struct CommandLineError {
    enum class Kind {
        unknown_option,      // "invalid option: q"
        missing_value,       // "invalid option: n (it needs a value)"
        bad_override,        // a malformed -o value
        bad_socket_count,    // -s not a positive count
        unexpected_argument, // leftover arguments (stock qmgr refuses them)
    };
    Kind kind = Kind::unknown_option;
    std::string text; // the option letter, the -o or -s value, or the argument
    std::string why;  // bad_override: what is wrong with it, in Postfix's words

    std::string message() const;
};

// Parses argv; an unknown option or one missing its value, a malformed -o
// value, a bad -s count, and leftover arguments are refused.
Result<CommandLine, CommandLineError> parse_command_line(int argc, char** argv);

// The start-up checks of Postfix's trigger server for a solitary service
// like qmgr: a process limit of 1 (-l) unless -S, and a unix, fifo or pass
// transport.  Returns the fatal text, or nullopt when fine.
std::optional<std::string> check_trigger_server(const CommandLine& cl);

// The configuration directory: -C, else $MAIL_CONFIG (when non-empty),
// else /etc/postfix.
std::string resolve_config_dir(const CommandLine& cl);

} // namespace cqmgr::conf
