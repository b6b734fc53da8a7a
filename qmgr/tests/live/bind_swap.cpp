// LD_PRELOAD shim for privilege_live_test: plays mail_owner planting a link
// in the control socket's place in the moment after the daemon's bind(),
// the window in which a chmod() or chown() by path would follow it.
//
// Environment (set by the test's wrapper of cqmgr):
//   CQMGR_SWAP_SOCKET  the socket path as the daemon binds it
//   CQMGR_SWAP_TARGET  where the planted link points (a root-owned file)
//   CQMGR_SWAP_OWNER   "UID:GID" of mail_owner, who plants it
//   CQMGR_SWAP_REPORT  a file (writable by all) that gets one line per event:
//     "bound mode=M uid=U gid=G euid=E"  the socket as bind() made it
//     "swapped"                          the link is in the socket's place
//     "listen"                           the daemon listens on that socket
//     "chmod PATH" / "chown PATH" ...    any such call naming the socket
//
// Only the daemon under test loads it (its wrapper sets LD_PRELOAD).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <grp.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

int g_swapped_fd = -1; // the socket whose path was swapped

const char* env(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
}

// Appends one line to the report; errno is left as it was.
void report(const std::string& line) {
    int saved = errno;
    if (const char* path = env("CQMGR_SWAP_REPORT")) {
        int fd = ::open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd >= 0) {
            std::string l = line + "\n";
            ssize_t n = ::write(fd, l.data(), l.size());
            (void)n;
            ::close(fd);
        }
    }
    errno = saved;
}

// True when `path` names the watched socket.
bool watched(const char* path) {
    const char* sock = env("CQMGR_SWAP_SOCKET");
    return sock && path && std::strcmp(path, sock) == 0;
}

template <class Fn> Fn next(const char* name) {
    return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

} // namespace

extern "C" {

int bind(int fd, const sockaddr* addr, socklen_t len) {
    static auto real = next<int (*)(int, const sockaddr*, socklen_t)>("bind");
    int rc = real(fd, addr, len);
    if (rc != 0 || !addr || addr->sa_family != AF_UNIX) return rc;
    const char* path = reinterpret_cast<const sockaddr_un*>(addr)->sun_path;
    if (!watched(path)) return rc;
    int saved = errno;
    struct stat st {};
    if (::lstat(path, &st) == 0) {
        char line[160];
        std::snprintf(line, sizeof line, "bound mode=%o uid=%u gid=%u euid=%u",
                      unsigned(st.st_mode & 07777), unsigned(st.st_uid), unsigned(st.st_gid),
                      unsigned(::geteuid()));
        report(line);
    }
    // mail_owner's move, made by a child with mail_owner's ids: the
    // socket's name now leads to the target.
    const char* target = env("CQMGR_SWAP_TARGET");
    const char* owner = env("CQMGR_SWAP_OWNER"); // "UID:GID"
    unsigned uid = 0, gid = 0;
    if (target && owner && std::sscanf(owner, "%u:%u", &uid, &gid) == 2) {
        pid_t pid = ::fork();
        if (pid == 0) {
            // Root again first if the daemon lent its ids (real ids stay root).
            bool ok = (::geteuid() == 0 || ::seteuid(0) == 0) && ::setgroups(0, nullptr) == 0 &&
                      ::setgid(gid) == 0 && ::setuid(uid) == 0 && ::unlink(path) == 0 &&
                      ::symlink(target, path) == 0;
            ::_exit(ok ? 0 : 1);
        }
        int status = 0;
        if (pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
            WEXITSTATUS(status) == 0) {
            g_swapped_fd = fd;
            report("swapped");
        }
    }
    errno = saved;
    return rc;
}

int listen(int fd, int backlog) {
    static auto real = next<int (*)(int, int)>("listen");
    int rc = real(fd, backlog);
    if (fd == g_swapped_fd) report("listen");
    return rc;
}

int chmod(const char* path, mode_t mode) {
    static auto real = next<int (*)(const char*, mode_t)>("chmod");
    if (watched(path)) report(std::string("chmod ") + path);
    return real(path, mode);
}

int chown(const char* path, uid_t uid, gid_t gid) {
    static auto real = next<int (*)(const char*, uid_t, gid_t)>("chown");
    if (watched(path)) report(std::string("chown ") + path);
    return real(path, uid, gid);
}

int lchown(const char* path, uid_t uid, gid_t gid) {
    static auto real = next<int (*)(const char*, uid_t, gid_t)>("lchown");
    if (watched(path)) report(std::string("lchown ") + path);
    return real(path, uid, gid);
}

int fchmodat(int dirfd, const char* path, mode_t mode, int flags) {
    static auto real = next<int (*)(int, const char*, mode_t, int)>("fchmodat");
    if (watched(path)) report(std::string("fchmodat ") + path);
    return real(dirfd, path, mode, flags);
}

int fchownat(int dirfd, const char* path, uid_t uid, gid_t gid, int flags) {
    static auto real = next<int (*)(int, const char*, uid_t, gid_t, int)>("fchownat");
    if (watched(path)) report(std::string("fchownat ") + path);
    return real(dirfd, path, uid, gid, flags);
}

} // extern "C"
