#include "cqmgr/protocol/conversation.hpp"

#include <array>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/un.h>

namespace cqmgr::protocol {

std::shared_ptr<Conversation> Conversation::create(asio::any_io_executor ex) {
    return std::shared_ptr<Conversation>(new Conversation(std::move(ex)));
}

void Conversation::arm(Duration timeout) {
    timed_out_ = false;
    uint64_t gen = ++generation_;
    timer_.expires_after(timeout);
    // The handler keeps the conversation alive until it has run.
    timer_.async_wait([self = shared_from_this(), gen](const error_code& ec) {
        // Cancelled, or stale: the operation it guarded finished in time.
        if (ec || gen != self->generation_) return;
        self->timed_out_ = true;
        error_code ignored;
        self->socket_.cancel(ignored);
    });
}

bool Conversation::disarm() {
    ++generation_;
    timer_.cancel();
    return timed_out_;
}

awaitable<bool> Conversation::connect(const std::string& path, Duration timeout) {
    error_code ec;
    // sockaddr_un holds at most 107 bytes of path; Asio throws beyond that.
    if (path.empty() || path.size() >= sizeof(sockaddr_un::sun_path)) {
        error_ = "expected a socket path of 1 to " +
                 std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes, got " +
                 std::to_string(path.size()) + " bytes";
        co_return false;
    }
    arm(timeout);
    co_await socket_.async_connect(asio::local::stream_protocol::endpoint(path),
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
    std::array<char, 4096> buf;
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
        error_code ec;
        arm(timeout);
        size_t n = co_await socket_.async_read_some(asio::buffer(buf),
                                                    asio::redirect_error(asio::use_awaitable, ec));
        bool late = disarm();
        if (ec) {
            if (late) {
                error_ = "timeout";
            } else if (ec == asio::error::eof) {
                clean_eof_ = !parser_.mid_list();
                error_ = clean_eof_ ? "premature disconnect" : "premature disconnect (mid-list)";
            } else {
                error_ = ec.message();
            }
            close();
            co_return false;
        }
        pending_.append(buf.data(), n);
    }
}

awaitable<bool> Conversation::write(std::string bytes, Duration timeout) {
    error_code ec;
    arm(timeout);
    co_await asio::async_write(socket_, asio::buffer(bytes),
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
    int n = 0;
    if (::ioctl(socket_.native_handle(), FIONREAD, &n) < 0) return true;
    if (n > 0) return true;
    // FIONREAD says 0 both for "idle" and for "peer closed"; poll tells them apart.
    pollfd p{socket_.native_handle(), POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
}

void Conversation::close() {
    error_code ignored;
    if (socket_.is_open()) socket_.close(ignored);
    timer_.cancel();
}

} // namespace cqmgr::protocol
