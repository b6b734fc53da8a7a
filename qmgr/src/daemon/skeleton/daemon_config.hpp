// The daemon's configuration, read in the order of Postfix's trigger server
// so that every failure is reported where and as stock reports it: master's
// command line, main.cf with the -o overrides, every parameter, and the
// logging they ask for.
#pragma once
#include "cqmgr/conf/command_line.hpp"
#include "cqmgr/conf/config_error.hpp"
#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/conf/qmgr_params.hpp"

namespace cqmgr::qmgr {

struct DaemonConfig {
    conf::CommandLine cl;
    conf::MainCf cf;
    conf::QmgrParams params;
};

// Parses argv, opens logging, reads main.cf (from MAIL_CONFIG or
// /etc/postfix) and every parameter, opens logging again as they say, and
// makes the trigger server's checks (a terminal on standard input, the
// process limit, the transport).  Anything stock refuses is fatal, with
// stock's text.
DaemonConfig load_daemon_config(int argc, char** argv);

// A configuration error stops us where it stops stock qmgr, with its text,
// after the complaint stock logs just before it.
[[noreturn]] void config_fatal(const conf::ConfigError& e);

} // namespace cqmgr::qmgr
