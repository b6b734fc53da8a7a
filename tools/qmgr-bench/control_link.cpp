#include "control_link.hpp"

#include "error.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace bench {
namespace {

// Waits until `fd` is ready for `events` or the timeout ends (then throws).
void await(int fd, short events, std::chrono::milliseconds timeout, const std::string& what) {
    pollfd p{fd, events, 0};
    for (;;) {
        int n = ::poll(&p, 1, static_cast<int>(timeout.count()));
        if (n > 0) return;
        if (n == 0)
            throw compat::Error("expected " + what + " within " + std::to_string(timeout.count()) +
                                " ms, found a timeout");
        if (errno != EINTR) throw compat::sys_error("poll");
    }
}

// Writes all of `data`, each write bounded by the timeout.
void send_all(int fd, const std::string& data, std::chrono::milliseconds timeout,
              const std::string& what) {
    size_t off = 0;
    while (off < data.size()) {
        await(fd, POLLOUT, timeout, what);
        ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw compat::sys_error("send to " + what);
        off += static_cast<size_t>(n);
    }
}

// Reads once into `buf`; returns false at end of file.
bool receive_some(int fd, std::string& buf, std::chrono::milliseconds timeout,
                  const std::string& what) {
    await(fd, POLLIN, timeout, what);
    char chunk[65536];
    for (;;) {
        ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw compat::sys_error("recv from " + what);
        buf.append(chunk, static_cast<size_t>(n));
        return n > 0;
    }
}

// Closes the descriptor when the scope ends.
struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
};

} // namespace

// A stream socket connected to the path.
ControlLink::ControlLink(const std::string& path, std::chrono::milliseconds timeout)
    : timeout_(timeout) {
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (path.size() >= sizeof sa.sun_path)
        throw compat::Error("expected a control socket path shorter than " +
                            std::to_string(sizeof sa.sun_path) + " bytes, found " + path);
    path.copy(sa.sun_path, path.size());
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw compat::sys_error("socket");
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
        int e = errno;
        ::close(fd_);
        fd_ = -1;
        errno = e;
        throw compat::sys_error("connect to " + path);
    }
}

ControlLink::~ControlLink() {
    if (fd_ >= 0) ::close(fd_);
}

// One request, one reply line.
std::string ControlLink::request(const std::string& line) {
    send_all(fd_, line + "\n", timeout_, "the control socket");
    for (;;) {
        if (size_t nl = buf_.find('\n'); nl != std::string::npos) {
            std::string reply = buf_.substr(0, nl);
            buf_.erase(0, nl + 1);
            return reply;
        }
        if (!receive_some(fd_, buf_, timeout_, "a control reply"))
            throw compat::Error("expected a reply to '" + line + "', found the connection closed");
    }
}

// HTTP/1.0: the server closes the connection after the body.
std::string http_get(std::uint16_t port, const std::string& path,
                     std::chrono::milliseconds timeout) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw compat::sys_error("socket");
    FdCloser closer{fd};
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
        throw compat::sys_error("connect to 127.0.0.1:" + std::to_string(port));
    send_all(fd, "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", timeout, "the endpoint");
    std::string reply;
    while (receive_some(fd, reply, timeout, "the metrics reply")) {
    }
    size_t head_end = reply.find("\r\n\r\n");
    if (reply.rfind("HTTP/1.", 0) != 0 || reply.size() < 12 || reply.compare(9, 3, "200") != 0 ||
        head_end == std::string::npos)
        throw compat::Error("expected HTTP 200 from 127.0.0.1:" + std::to_string(port) + path +
                            ", found '" + reply.substr(0, reply.find('\r')) + "'");
    return reply.substr(head_end + 4);
}

} // namespace bench
