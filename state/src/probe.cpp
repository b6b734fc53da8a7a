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
Health verify_as(const std::string& path, size_t map_size, std::string& why,
                 const std::optional<Owner>& owner) {
    AsOwner as(owner);
    if (!as.ok()) {
        why = std::string("cannot act as its owner: ") + std::strerror(errno);
        return Health::unreachable;
    }
    return verify_store(path, map_size, why);
}

} // namespace

Health probe_store(const std::string& path, size_t map_size, std::chrono::seconds timeout,
                   std::string& why, const std::optional<Owner>& owner) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) < 0) return verify_as(path, map_size, why, owner);
    pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return verify_as(path, map_size, why, owner);
    }
    if (pid == 0) {
        // The child: its verdict (one digit) and the reason go up the pipe;
        // a fault or the alarm kills it before it writes anything.
        ::close(fds[0]);
        ::signal(SIGALRM, SIG_DFL);
        ::alarm(static_cast<unsigned>(timeout.count()));
        std::string text;
        Health h = Health::unreachable;
        if (drop_to(owner))
            h = verify_store(path, map_size, text);
        else
            text = std::string("cannot act as its owner: ") + std::strerror(errno);
        text.insert(text.begin(), static_cast<char>('0' + static_cast<int>(h)));
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
    if (!text.empty() && text[0] >= '0' && text[0] <= '2') {
        why = text.substr(1);
        return static_cast<Health>(text[0] - '0');
    }
    if (waited == pid && WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        why = sig == SIGALRM ? "reading it took more than " + std::to_string(timeout.count()) + " s"
                             : std::string("reading it crashed: ") + ::strsignal(sig);
    } else {
        why = "reading it failed";
    }
    return Health::damaged;
}

} // namespace cqmgr::state
