#include "cqmgr/state/probe.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace cqmgr::state {

namespace {

// verify_store() in this process, with the owner's ids.
StoreCheck verify_as(const std::string& path, size_t map_size, const std::optional<Owner>& owner) {
    AsOwner as(owner);
    if (!as.ok())
        return {Health::unreachable,
                std::string("cannot act as its owner: ") + std::strerror(errno)};
    return verify_store(path, map_size);
}

} // namespace

StoreCheck probe_store(const std::string& path, size_t map_size, std::chrono::seconds timeout,
                       const std::optional<Owner>& owner) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) < 0) return verify_as(path, map_size, owner);
    pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return verify_as(path, map_size, owner);
    }
    if (pid == 0) {
        // The child: its verdict (one digit) and the reason go up the pipe;
        // a fault or the alarm kills it before it writes anything.
        ::close(fds[0]);
        ::signal(SIGALRM, SIG_DFL);
        ::alarm(static_cast<unsigned>(timeout.count()));
        StoreCheck c =
            drop_to(owner)
                ? verify_store(path, map_size)
                : StoreCheck{Health::unreachable,
                             std::string("cannot act as its owner: ") + std::strerror(errno)};
        std::string text = static_cast<char>('0' + static_cast<int>(c.health)) + c.why;
        ssize_t n = ::write(fds[1], text.data(), text.size());
        ::_exit(n == static_cast<ssize_t>(text.size()) ? 0 : 1);
    }
    ::close(fds[1]);
    std::string text;
    char buf[512];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        text.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    pid_t waited;
    while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (!text.empty() && text[0] >= '0' && text[0] <= '2')
        return {static_cast<Health>(text[0] - '0'), text.substr(1)};
    if (waited == pid && WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        return {Health::damaged,
                sig == SIGALRM
                    ? "reading it took more than " + std::to_string(timeout.count()) + " s"
                    : std::string("reading it crashed: ") + ::strsignal(sig)};
    }
    return {Health::damaged, "reading it failed"};
}

} // namespace cqmgr::state
