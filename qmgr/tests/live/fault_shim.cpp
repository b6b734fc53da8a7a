// A preloaded library (LD_PRELOAD) for the daemon tests of cqmgr under a real
// Postfix: it counts the daemon's connections to Postfix's own services, and
// makes opens of active queue files fail on demand.  The tests' wrapper
// script sets it for cqmgr alone.
//
// Environment:
//   CQMGR_SHIM_REPORT      a file to which the peak number of descriptors
//                          connected at once to each service (by the last
//                          component of the socket path: defer, bounce,
//                          trace, flush) is written as "NAME PEAK" lines, on
//                          every new peak;
//   CQMGR_SHIM_FAIL_OPENS  how many read-only opens of a file under active/
//                          fail (the first ones; default none), ...
//   CQMGR_SHIM_FAIL_ERRNO  ... with this errno (default EIO);
//   CQMGR_SHIM_BLOCK_FLAG  a file: while it exists, an open of a file under
//                          active/ waits (and so blocks the daemon's event
//                          loop, the fault the health endpoint must see),
//                          after creating FLAG.blocked to say so.
// Read-only, because the daemon claims a file read-write and opens it
// read-only for its later recipient batches.
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <mutex>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace {

constexpr const char* services[] = {"defer", "bounce", "trace", "flush"};
constexpr int n_services = 4;
constexpr int max_fd = 65536;
constexpr int report_fd_floor = 900; // out of the daemon's way

std::array<std::atomic<signed char>, max_fd> fd_service; // 0: none, else index + 1
std::array<std::atomic<int>, n_services> open_now{};
std::array<std::atomic<int>, n_services> peak{};
std::atomic<int> fail_opens{0};
int fail_errno = EIO;
const char* block_flag = nullptr;
int report_fd = -1;
std::mutex report_mutex;

using connect_fn = int (*)(int, const sockaddr*, socklen_t);
using close_fn = int (*)(int);
using open_fn = int (*)(const char*, int, ...);
using openat_fn = int (*)(int, const char*, int, ...);

template <class F> F next(const char* name) {
    return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

void write_report() {
    if (report_fd < 0) return;
    std::lock_guard<std::mutex> lock(report_mutex);
    char buf[256];
    int len = 0;
    for (int i = 0; i < n_services; ++i)
        len += std::snprintf(buf + len, sizeof buf - static_cast<size_t>(len), "%s %d\n",
                             services[i], peak[static_cast<size_t>(i)].load());
    if (::ftruncate(report_fd, 0) == 0 && ::pwrite(report_fd, buf, static_cast<size_t>(len), 0))
        return;
}

__attribute__((constructor)) void init() {
    if (const char* n = std::getenv("CQMGR_SHIM_FAIL_OPENS")) fail_opens = std::atoi(n);
    if (const char* e = std::getenv("CQMGR_SHIM_FAIL_ERRNO")) fail_errno = std::atoi(e);
    block_flag = std::getenv("CQMGR_SHIM_BLOCK_FLAG");
    if (const char* path = std::getenv("CQMGR_SHIM_REPORT")) {
        int fd = next<open_fn>("open")(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            report_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, report_fd_floor);
            next<close_fn>("close")(fd);
        }
        write_report();
    }
    // For the daemon alone, not for anything it starts.
    ::unsetenv("LD_PRELOAD");
}

// The index of the service whose socket `path` names, or -1.
int service_of(const char* path) {
    const char* base = std::strrchr(path, '/');
    base = base ? base + 1 : path;
    for (int i = 0; i < n_services; ++i)
        if (std::strcmp(base, services[i]) == 0) return i;
    return -1;
}

// True when an open of `path` with `flags` is to fail now.
bool fail_this_open(const char* path, int flags) {
    if (fail_opens.load() <= 0 || (flags & O_ACCMODE) != O_RDONLY || (flags & O_DIRECTORY) ||
        std::strncmp(path, "active/", 7) != 0)
        return false;
    return fail_opens.fetch_sub(1) > 0;
}

// While the block flag exists, an open of an active file waits for it to
// go, having said so in FLAG.blocked.
void block_while_flagged(open_fn real, const char* path) {
    if (!block_flag || std::strncmp(path, "active/", 7) != 0 || ::access(block_flag, F_OK) != 0)
        return;
    std::string said = std::string(block_flag) + ".blocked";
    int fd = real(said.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) next<close_fn>("close")(fd);
    while (::access(block_flag, F_OK) == 0)
        ::usleep(20000);
}

// open(2) through `real`, unless this open is to fail.
int open_or_fail(open_fn real, const char* path, int flags, va_list ap) {
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
    block_while_flagged(real, path);
    if (fail_this_open(path, flags)) {
        errno = fail_errno;
        return -1;
    }
    return real(path, flags, mode);
}

} // namespace

extern "C" {

int connect(int fd, const sockaddr* addr, socklen_t len) {
    static connect_fn real = next<connect_fn>("connect");
    if (addr && addr->sa_family == AF_UNIX && fd >= 0 && fd < max_fd) {
        int s = service_of(reinterpret_cast<const sockaddr_un*>(addr)->sun_path);
        if (s >= 0 &&
            fd_service[static_cast<size_t>(fd)].exchange(static_cast<signed char>(s + 1)) == 0) {
            int now = ++open_now[static_cast<size_t>(s)];
            int p = peak[static_cast<size_t>(s)].load();
            while (now > p && !peak[static_cast<size_t>(s)].compare_exchange_weak(p, now)) {
            }
            if (now > p) write_report();
        }
    }
    return real(fd, addr, len);
}

int close(int fd) {
    static close_fn real = next<close_fn>("close");
    if (fd >= 0 && fd < max_fd) {
        int s = fd_service[static_cast<size_t>(fd)].exchange(0);
        if (s > 0) --open_now[static_cast<size_t>(s - 1)];
    }
    return real(fd);
}

int open(const char* path, int flags, ...) {
    static open_fn real = next<open_fn>("open");
    va_list ap;
    va_start(ap, flags);
    int fd = open_or_fail(real, path, flags, ap);
    va_end(ap);
    return fd;
}

int open64(const char* path, int flags, ...) {
    static open_fn real = next<open_fn>("open64");
    va_list ap;
    va_start(ap, flags);
    int fd = open_or_fail(real, path, flags, ap);
    va_end(ap);
    return fd;
}

} // extern "C"
