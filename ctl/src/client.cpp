#include "client.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace cqmgr::ctl {

Client::Client(std::string path) : path_(std::move(path)) {}

Client::~Client() {
    close();
}

void Client::connect() {
    close();
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path_.size() >= sizeof addr.sun_path)
        throw ControlError(ControlError::Kind::Connect, "socket path too long: " + path_);
    std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        throw ControlError(ControlError::Kind::Connect,
                           std::string("socket: ") + std::strerror(errno));
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        const int e = errno;
        ::close(fd);
        throw ControlError(ControlError::Kind::Connect,
                           "cannot connect to " + path_ + ": " + std::strerror(e));
    }
    fd_ = fd;
    buffer_.clear();
}

void Client::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    buffer_.clear();
}

void Client::fail(const std::string& text) {
    close();
    throw ControlError(ControlError::Kind::Io, text + " (" + path_ + ")");
}

void Client::wait(short events, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) fail("no reply from cqmgr in time");
        pollfd p{fd_, events, 0};
        const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 60000)));
        if (n > 0) return;
        if (n < 0 && errno != EINTR) fail(std::string("poll: ") + std::strerror(errno));
    }
}

bool Client::peer_closed() const {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) != 1) return false;
    char c;
    // Readable with nothing to read: the end of the stream (or an error).
    return ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
}

nlohmann::json Client::request(const std::string& line, std::chrono::milliseconds timeout) {
    if (fd_ < 0 || peer_closed()) connect();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const std::string out = line + '\n';
    size_t sent = 0;
    while (sent < out.size()) {
        wait(POLLOUT, deadline);
        // MSG_NOSIGNAL: a daemon that went away is an error, not a SIGPIPE.
        const ssize_t n =
            ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
            sent += static_cast<size_t>(n);
        else if (n < 0 && errno != EINTR && errno != EAGAIN)
            fail(std::string("cannot send to cqmgr: ") + std::strerror(errno));
    }
    size_t newline;
    size_t scanned = 0;
    while ((newline = buffer_.find('\n', scanned)) == std::string::npos) {
        scanned = buffer_.size();
        wait(POLLIN, deadline);
        char buf[65536];
        const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0)
            fail(buffer_.empty() ? "cqmgr closed the connection without a reply"
                                 : "cqmgr closed the connection in the middle of a reply");
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            fail(std::string("cannot read from cqmgr: ") + std::strerror(errno));
        }
        buffer_.append(buf, static_cast<size_t>(n));
        if (buffer_.size() > max_reply_bytes) fail("reply too long");
    }
    last_reply_ = buffer_.substr(0, newline);
    buffer_.erase(0, newline + 1);
    nlohmann::json j = nlohmann::json::parse(last_reply_, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        close();
        throw ControlError(ControlError::Kind::Protocol,
                           "the reply is not a JSON object (" + path_ + ")");
    }
    return j;
}

} // namespace cqmgr::ctl

namespace cqmgr::ctl {

std::optional<std::string> reply_error(const nlohmann::json& reply) {
    auto ok = reply.find("ok");
    if (ok != reply.end() && ok->is_boolean() && ok->get<bool>()) return std::nullopt;
    auto error = reply.find("error");
    if (error != reply.end() && error->is_string()) return error->get<std::string>();
    if (ok == reply.end()) return "reply without \"ok\"";
    return "request failed";
}

} // namespace cqmgr::ctl
