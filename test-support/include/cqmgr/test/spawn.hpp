// A server program as a child process of a test, its standard input and
// output on /dev/null (a pipe reader of the test's output would otherwise
// wait for the server).
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace cqmgr::test {

// Forks and runs args[0] with `args`; the child's pid (throws
// std::runtime_error when fork fails; the child exits 127 when exec does).
pid_t spawn_quiet(std::vector<std::string> args);

} // namespace cqmgr::test
