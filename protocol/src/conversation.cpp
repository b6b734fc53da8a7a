#include "cqmgr/protocol/conversation.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

namespace cqmgr::protocol {

namespace {
// error() after the peer closed the connection.
constexpr const char* eof_error = "premature disconnect";

// Where a read lands before it is appended to a conversation's pending
// bytes (growing those by a whole chunk first would zero-fill 4 kB for
// every ~100-byte reply).  One buffer serves every conversation of the
// thread, since nothing suspends between a read and its append; a buffer
// in each conversation made every agent connection a 4 kB allocation, off
// the allocator's fast path.
thread_local std::array<char, 4096> read_chunk;
} // namespace

std::string socket_path_problem(std::string_view path) {
    if (!path.empty() && path.size() < sizeof(sockaddr_un::sun_path)) return {};
    return "expected a socket path of 1 to " + std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
           " bytes, got " + std::to_string(path.size()) + " bytes";
}

std::shared_ptr<Conversation> Conversation::create(asio::any_io_executor ex) {
    // One allocation for the object and its count.
    return std::make_shared<Conversation>(Private{}, std::move(ex));
}

void Conversation::arm(Duration timeout) {
    timed_out_ = false;
    guarding_ = true;
    deadline_ = std::chrono::steady_clock::now() + timeout;
    if (!timer_set_ || timer_due_ > deadline_) start_timer(deadline_);
}

void Conversation::start_timer(std::chrono::steady_clock::time_point due) {
    timer_set_ = true;
    timer_due_ = due;
    timer_.expires_at(due); // a wait still pending is cancelled
    // The handler keeps the conversation alive until it has run; close()
    // cancels it.
    timer_.async_wait([self = shared_from_this(), due](const error_code& ec) {
        if (ec) {
            // Cancelled: restarted for another time (nothing to do), or closed.
            if (self->timer_due_ == due) self->timer_set_ = false;
            return;
        }
        self->timer_set_ = false;
        if (!self->guarding_) return; // idle: the next operation starts it again
        if (std::chrono::steady_clock::now() < self->deadline_) {
            self->start_timer(self->deadline_); // fired for an earlier operation
            return;
        }
        self->timed_out_ = true;
        error_code ignored;
        self->socket_.cancel(ignored);
    });
}

bool Conversation::disarm() {
    guarding_ = false;
    return timed_out_;
}

awaitable<bool> Conversation::connect(const std::string& path, Duration timeout) {
    if (!connect_start(path)) co_return false;
    co_return co_await connect_finish(timeout);
}

bool Conversation::connect_start(const std::string& path) {
    if (error_ = socket_path_problem(path); !error_.empty()) return false;
    error_code ec;
    asio::local::stream_protocol::endpoint ep(path);
    socket_.open(ep.protocol(), ec);
    if (!ec) socket_.non_blocking(true, ec);
    if (ec) {
        error_ = ec.message();
        close();
        return false;
    }
    if (::connect(socket_.native_handle(), ep.data(), static_cast<socklen_t>(ep.size())) == 0) {
        connected_ = true;
        return true;
    }
    // A full listen queue: try again, waiting (connect_finish()).
    if (errno == EAGAIN || errno == EINPROGRESS || errno == EINTR) {
        connect_path_ = path;
        return true;
    }
    error_ = std::strerror(errno);
    close();
    return false;
}

awaitable<bool> Conversation::connect_finish(Duration timeout) {
    if (connected_) co_return true;
    error_code ec;
    arm(timeout);
    co_await socket_.async_connect(asio::local::stream_protocol::endpoint(connect_path_),
                                   asio::redirect_error(asio::use_awaitable, ec));
    bool late = disarm();
    if (ec) {
        error_ = late ? "timeout" : ec.message();
        close();
        co_return false;
    }
    co_return true;
}

awaitable<bool> Conversation::read_list(AttrList& out, Duration timeout) {
    clean_eof_ = false;
    for (;;) {
        if (!pending_.empty()) {
            std::string_view in(pending_);
            auto st = parser_.parse(in, out);
            pending_.erase(0, pending_.size() - in.size());
            if (st == AttrParser::Status::list) co_return true;
            if (st == AttrParser::Status::error) {
                error_ = "malformed response: " + parser_.error();
                close();
                co_return false;
            }
        }
        ReadEnd end = co_await read_some(timeout);
        if (end == ReadEnd::data) continue;
        if (end == ReadEnd::closed && error_ == eof_error) {
            clean_eof_ = !parser_.mid_list();
            if (!clean_eof_) error_ += " (mid-list)";
        }
        co_return false;
    }
}

awaitable<Conversation::ReadEnd> Conversation::read_some(Duration timeout) {
    error_code ec;
    arm(timeout);
    // The socket is non-blocking: read what is there, else wait until
    // something is (or the deadline cancels the wait) and read again, so
    // that the read itself never suspends with the shared buffer.
    size_t n = 0;
    for (;;) {
        n = socket_.read_some(asio::buffer(read_chunk), ec);
        if (ec != asio::error::would_block && ec != asio::error::try_again) break;
        ec = {};
        co_await socket_.async_wait(asio::socket_base::wait_read,
                                    asio::redirect_error(asio::use_awaitable, ec));
        if (ec) break;
    }
    if (!ec) pending_.append(read_chunk.data(), n);
    bool late = disarm();
    if (!ec) co_return ReadEnd::data;
    error_ = late ? "timeout" : ec == asio::error::eof ? eof_error : ec.message();
    close();
    co_return late ? ReadEnd::timeout : ReadEnd::closed;
}

awaitable<bool> Conversation::write(std::string bytes, Duration timeout) {
    error_code ec;
    // A request usually fits the socket buffer: write it now, and arm the
    // deadline (timer system calls) only for what would block.
    size_t done = 0;
    if (socket_.is_open()) {
        ssize_t n = ::send(socket_.native_handle(), bytes.data(), bytes.size(),
                           MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n >= 0) {
            done = static_cast<size_t>(n);
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            error_ = error_code(errno, boost::system::system_category()).message();
            close();
            co_return false;
        }
        if (done == bytes.size()) co_return true;
    }
    arm(timeout);
    co_await asio::async_write(socket_, asio::buffer(bytes.data() + done, bytes.size() - done),
                               asio::redirect_error(asio::use_awaitable, ec));
    bool late = disarm();
    if (ec) {
        error_ = late ? "timeout" : ec.message();
        close();
        co_return false;
    }
    co_return true;
}

bool Conversation::readable_now() {
    if (!socket_.is_open()) return false;
    if (!pending_.empty()) return true;
    // One poll: POLLIN covers both unread bytes and a peer that closed
    // (POLLHUP and POLLERR are reported whatever was asked for).
    pollfd p{socket_.native_handle(), POLLIN, 0};
    return ::poll(&p, 1, 0) != 0;
}

void Conversation::close() {
    error_code ignored;
    if (socket_.is_open()) socket_.close(ignored);
    timer_.cancel();
}

} // namespace cqmgr::protocol
