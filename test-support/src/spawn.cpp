// A quiet child process (see spawn.hpp).
#include "cqmgr/test/spawn.hpp"

#include <fcntl.h>
#include <stdexcept>
#include <unistd.h>

namespace cqmgr::test {

pid_t spawn_quiet(std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(null, 2);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    return pid;
}

} // namespace cqmgr::test
