// One delivery conversation with an agent, driven by completion handlers
// (see agent_call.hpp).
#include "cqmgr/protocol/agent_call.hpp"

#include "cqmgr/protocol/conversation.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace cqmgr::protocol {

namespace {
using Kind = ScanItem::Kind;
// The announcement: protocol=delivery_request_protocol.
constexpr ScanItem announcement_items[] = {{Kind::streq, "protocol", delivery_protocol}};
// The reply: the hop status in the order Postfix reads it, then the status.
constexpr ScanItem reply_items[] = {
    {Kind::str, "status"},   {Kind::str, "diag_type"}, {Kind::str, "diag_text"},
    {Kind::str, "mta_type"}, {Kind::str, "mta_mname"}, {Kind::str, "action"},
    {Kind::str, "reason"},   {Kind::num, "status"},
};
constexpr size_t reply_status = 7;
// Why the socket ended when the peer closed it.
constexpr const char* eof_error = "premature disconnect";

// Where a read lands (at most a Postfix stream buffer's 4096 bytes, as
// stock reads).  One buffer serves every call of the thread: nothing
// waits between a read and its scan.
thread_local std::array<char, 4096> read_chunk;

std::string errno_text(int e) {
    return error_code(e, boost::system::system_category()).message();
}
} // namespace

const char* kind_name(DeliveryOutcome::Kind k) {
    switch (k) {
    case DeliveryOutcome::Kind::replied:
        return "replied";
    case DeliveryOutcome::Kind::unavailable:
        return "unavailable";
    case DeliveryOutcome::Kind::crashed:
        return "crashed";
    }
    return "unknown";
}

AgentCall::AgentCall(asio::any_io_executor ex) : ex_(ex), socket_(ex_) {}

AgentCall::~AgentCall() {
    error_code ignored;
    socket_.close(ignored);
}

DeliveryOutcome AgentCall::failed(DeliveryOutcome::Kind kind, std::string warning) {
    DeliveryOutcome o;
    o.kind = kind;
    o.reply.hop.status = "4.3.0";
    o.reply.hop.reason = kind == DeliveryOutcome::Kind::unavailable
                             ? "mail transport unavailable"
                             : "unknown mail transport error";
    o.reply.status = -1;
    o.warning = std::move(warning);
    return o;
}

std::string AgentCall::transport() const {
    auto slash = path_.rfind('/');
    return slash == std::string::npos ? path_ : path_.substr(slash + 1);
}

void AgentCall::arm(DeliveryTimeouts::Duration timeout) {
    timed_out_ = false;
    AgentDeadlines::of(ex_).arm(*this, timeout, ex_);
}

void AgentCall::deadline_passed() {
    // The wait in progress ends with an error; its handler sees why.
    timed_out_ = true;
    error_code ignored;
    socket_.cancel(ignored);
}

void AgentCall::close() {
    step_ = Step::done;
    AgentDeadlines::of(ex_).disarm(*this);
    error_code ignored;
    socket_.close(ignored);
}

const DeliveryOutcome& AgentCall::failure() const {
    static const DeliveryOutcome none;
    return failure_ ? *failure_ : none;
}

void AgentCall::fail(DeliveryOutcome&& o) {
    o.detail = announcement_warning_;
    failure_ = std::make_unique<DeliveryOutcome>(std::move(o));
}

void AgentCall::connect_failed(const std::string& error) {
    fail(
        failed(DeliveryOutcome::Kind::unavailable, "connect to transport " + path_ + ": " + error));
    close();
}

bool AgentCall::start(std::string path, const DeliveryTimeouts& timeouts) {
    path_ = std::move(path);
    timeouts_ = timeouts;
    failure_.reset();
    announcement_warning_.clear();
    if (std::string problem = socket_path_problem(path_); !problem.empty()) {
        connect_failed(problem);
        return false;
    }
    error_code ec;
    asio::local::stream_protocol::endpoint ep(path_);
    socket_.open_non_blocking(ec);
    if (ec) {
        connect_failed(ec.message());
        return false;
    }
    if (::connect(socket_.native_handle(), ep.data(), static_cast<socklen_t>(ep.size())) == 0) {
        // The agent has not run since: nothing to read yet.  Its
        // announcement comes from the loop.
        connected();
        return true;
    }
    // A full listen queue: try again, waiting.
    if (errno == EAGAIN || errno == EINPROGRESS || errno == EINTR) {
        step_ = Step::connecting;
        arm(timeouts_.connect);
        socket_.async_connect(ep, [self = Ptr(this)](const error_code& ec) {
            bool late = self->timed_out_;
            AgentDeadlines::of(self->ex_).disarm(*self);
            if (self->step_ != Step::connecting) return; // closed meanwhile
            if (ec) {
                self->connect_failed(late ? "timeout" : ec.message());
                self->on_announced(false);
                return;
            }
            self->connected();
        });
        return true;
    }
    connect_failed(std::strerror(errno));
    return false;
}

void AgentCall::connected() {
    step_ = Step::announcing;
    scan_.emplace(announcement_items, path_);
    wait_readable();
}

void AgentCall::wait_readable() {
    DeliveryTimeouts::Duration first =
        step_ == Step::announcing ? timeouts_.announce : timeouts_.reply;
    arm(scan_->started() ? timeouts_.read : first);
    // A read, not a wait for readiness: Asio tries it at once, and when
    // nothing is there it waits without another system call (a wait would
    // re-arm the socket in epoll each time).
    socket_.async_read_some(asio::buffer(first_bytes_), ReadHandler{Ptr(this)});
}

void AgentCall::read_done(const error_code& ec, size_t n) {
    bool late = timed_out_;
    AgentDeadlines::of(ex_).disarm(*this);
    if (step_ != Step::announcing && step_ != Step::replying) return; // closed
    if (!ec) {
        take(std::string_view(first_bytes_.data(), n));
        if (scan_->done())
            scanned(false, false);
        else if (n == first_bytes_.size())
            read_step(read_chunk.size() - n); // more may be there: one read's worth
        else
            wait_readable();
        return;
    }
    error_ = late ? "timeout" : ec == asio::error::eof ? eof_error : ec.message();
    error_code ignored;
    socket_.close(ignored);
    scanned(true, late);
}

void AgentCall::take(std::string_view in) {
    scan_->feed(in);
    // What the scan did not take stays for the next one (or, after the
    // announcement, until the request's write drops it).
    if (!in.empty()) pending_.append(in);
}

void AgentCall::read_step(size_t limit) {
    for (;;) {
        if (!pending_.empty()) {
            std::string_view rest(pending_);
            scan_->feed(rest);
            pending_.erase(0, pending_.size() - rest.size());
            if (scan_->done()) {
                scanned(false, false);
                return;
            }
        }
        ssize_t n = ::recv(socket_.native_handle(), read_chunk.data(), limit, MSG_DONTWAIT);
        limit = read_chunk.size();
        if (n > 0) {
            take(std::string_view(read_chunk.data(), static_cast<size_t>(n)));
            if (scan_->done()) {
                scanned(false, false);
                return;
            }
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            wait_readable();
            return;
        }
        error_ = n == 0 ? eof_error : errno_text(errno);
        error_code ignored;
        socket_.close(ignored);
        scanned(true, false);
        return;
    }
}

void AgentCall::scanned(bool ended, bool timed_out) {
    if (step_ == Step::announcing)
        announce_done(ended, timed_out);
    else
        reply_done(ended, timed_out);
}

void AgentCall::announce_done(bool ended, bool timed_out) {
    if (ended && timed_out && !scan_->started()) {
        // Stock gives up on the whole process here; we give up on the agent.
        fail(failed(DeliveryOutcome::Kind::unavailable, path_ + " socket: timeout"));
        close();
        on_announced(false);
        return;
    }
    if (ended) scan_->end(timed_out);
    // Kept whether or not the announcement fails (announcement_warning()).
    announcement_warning_ = scan_->warning();
    if (scan_->failed()) {
        fail(failed(DeliveryOutcome::Kind::unavailable, path_ + " socket: malformed response"));
        close();
        on_announced(false);
        return;
    }
    // Also when the agent closed before its first byte: stock's scan finds
    // nothing wrong with that, and the write finds the dead peer.
    step_ = Step::idle;
    scan_.reset();
    on_announced(true);
}

void AgentCall::Socket::open_non_blocking(error_code& ec) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        ec = error_code(errno, boost::system::system_category());
        return;
    }
    assign(asio::local::stream_protocol(), fd, ec);
    if (ec) {
        ::close(fd);
        return;
    }
    // Asio keeps in the socket's state whether it made the descriptor
    // non-blocking; told nothing, it would do so (an ioctl) before the first
    // wait.  The descriptor already is, so the state says so: both flags,
    // as non_blocking(true) would have set them.  And an assigned
    // descriptor might be a duplicate, which Asio takes out of epoll by
    // hand when it is closed (another call); this one is not.
    auto& state = impl_.get_implementation().state_;
    state = static_cast<asio::detail::socket_ops::state_type>(
        (state & ~asio::detail::socket_ops::possible_dup) |
        asio::detail::socket_ops::user_set_non_blocking |
        asio::detail::socket_ops::internal_non_blocking);
}

void AgentCall::send(std::string_view request) {
    if (step_ != Step::idle || !socket_.is_open()) {
        // A call whose announcement ended in EOF has a closed socket: the
        // request cannot go out.
        send_failed("write to process (" + transport() + "): Broken pipe");
        return;
    }
    // Stock's stream has one buffer for both directions: turning to write
    // the request drops whatever the agent sent after its announcement that
    // was already read.
    pending_.clear();
    step_ = Step::sending;
    // A request usually fits the socket buffer: it goes out now, and the
    // deadline is set only for what would block.
    ssize_t n = ::send(socket_.native_handle(), request.data(), request.size(),
                       MSG_DONTWAIT | MSG_NOSIGNAL);
    size_t done = 0;
    if (n >= 0) {
        done = static_cast<size_t>(n);
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        error_ = errno_text(errno);
        send_failed("write to process (" + transport() + "): " + error_);
        return;
    }
    if (done == request.size()) {
        sent();
        return;
    }
    request_.assign(request);
    arm(timeouts_.write);
    asio::async_write(socket_, asio::buffer(request_.data() + done, request_.size() - done),
                      [self = Ptr(this)](const error_code& ec, size_t) {
                          bool late = self->timed_out_;
                          AgentDeadlines::of(self->ex_).disarm(*self);
                          if (self->step_ != Step::sending) return; // closed meanwhile
                          self->request_.clear();
                          if (ec) {
                              self->error_ = late ? "timeout" : ec.message();
                              self->reply(failed(DeliveryOutcome::Kind::unavailable,
                                                 "write to process (" + self->transport() +
                                                     "): " + self->error_));
                              return;
                          }
                          self->sent();
                      });
}

void AgentCall::send_failed(std::string warning) {
    AgentDeadlines::of(ex_).disarm(*this);
    error_code ignored;
    socket_.close(ignored);
    // Heard of from the loop, as every outcome; an owner that abandons the
    // call before then hears nothing (close() ends the step).
    step_ = Step::sending;
    asio::post(ex_, [self = Ptr(this), warning = std::move(warning)]() mutable {
        if (self->step_ != Step::sending) return;
        self->reply(failed(DeliveryOutcome::Kind::unavailable, std::move(warning)));
    });
}

void AgentCall::sent() {
    step_ = Step::replying;
    scan_.emplace(reply_items, path_);
    // The read tries at once: stock reads whatever the agent sent, also
    // what came before the request.
    wait_readable();
}

void AgentCall::reply_done(bool ended, bool timed_out) {
    // Stock gives up on the whole process when no reply starts in time; we
    // defer this delivery.
    if (ended && timed_out && !scan_->started()) {
        reply(failed(DeliveryOutcome::Kind::crashed, path_ + " socket: timeout"));
        return;
    }
    if (ended) scan_->end(timed_out);
    reply(outcome_of_scan());
}

DeliveryOutcome AgentCall::outcome_of_scan() {
    AttrScan& scan = *scan_;
    // Stock needs every attribute up to the status; a failure at the
    // terminator (an attribute too many) leaves the reply standing.
    if (scan.failed() || scan.converted() < std::size(reply_items)) {
        DeliveryOutcome o =
            failed(DeliveryOutcome::Kind::crashed, path_ + " socket: malformed response");
        o.detail = scan.warning();
        return o;
    }
    DeliveryOutcome o;
    o.kind = DeliveryOutcome::Kind::replied;
    o.reply.hop =
        HopStatus{scan.take_value(0), scan.take_value(1), scan.take_value(2), scan.take_value(3),
                  scan.take_value(4), scan.take_value(5), scan.take_value(6)};
    o.reply.status = scan.number(reply_status);
    o.detail = scan.warning();
    return o;
}

void AgentCall::reply(DeliveryOutcome&& o) {
    close();
    scan_.reset();
    on_replied(std::move(o));
}

} // namespace cqmgr::protocol
