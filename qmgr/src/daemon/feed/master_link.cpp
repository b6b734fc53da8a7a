#include "master_link.hpp"

#include "cqmgr/protocol/messages.hpp"
#include "log.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace cqmgr::qmgr {

namespace {
constexpr int flow_read_fd = 3;
constexpr int flow_write_fd = 4;
constexpr int status_fd = 5;
constexpr int listen_fd = 6;
constexpr size_t trigger_buf_size = 1024;
constexpr auto trigger_read_timeout = std::chrono::seconds(10);

bool fd_open(int fd) {
    return ::fcntl(fd, F_GETFD) >= 0;
}
} // namespace

MasterLink::MasterLink(asio::io_context& io, std::string transport,
                       std::function<void()> pre_accept, TriggerHandler on_trigger,
                       std::function<void()> on_master_gone)
    : io_(io), transport_(std::move(transport)), pre_accept_(std::move(pre_accept)),
      on_trigger_(std::move(on_trigger)), on_master_gone_(std::move(on_master_gone)) {}

bool MasterLink::start() {
    if (!fd_open(status_fd) || !fd_open(listen_fd)) return false;
    for (int fd = flow_read_fd; fd <= listen_fd; ++fd)
        ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (const char* g = std::getenv("GENERATION")) generation_ = std::strtoul(g, nullptr, 8);
    pid_ = ::getpid();
    active_ = true;

    status_ = std::make_unique<asio::posix::stream_descriptor>(io_, ::dup(status_fd));
    do_watch_status();

    if (transport_ == "fifo") {
        fifo_ = std::make_unique<asio::posix::stream_descriptor>(io_, ::dup(listen_fd));
        fifo_->non_blocking(true);
        do_read_fifo();
    } else if (transport_ == "unix") {
        acceptor_ = std::make_unique<asio::local::stream_protocol::acceptor>(
            io_, asio::local::stream_protocol(), ::dup(listen_fd));
        acceptor_->non_blocking(true);
        do_accept();
    } else {
        log::fatal("unsupported service type: " + transport_ + " (expected unix or fifo)");
    }
    return true;
}

void MasterLink::do_watch_status() {
    // Master never writes to us; readability means it closed its end.
    status_->async_wait(asio::posix::stream_descriptor::wait_read, [this](const error_code& ec) {
        if (ec == asio::error::operation_aborted) return;
        log::debug("master status channel readable: master has gone away");
        on_master_gone_();
    });
}

void MasterLink::send_status(int avail) {
    auto rec = protocol::encode_master_status(pid_, generation_, avail);
    ssize_t n = ::write(status_fd, rec.data(), rec.size());
    if (n != static_cast<ssize_t>(rec.size())) {
        // Master has gone; stock servers exit(0) quietly here.
        on_master_gone_();
    }
}

void MasterLink::do_accept() {
    // Wait until a client is there, look (pre_accept), then take it.  A
    // client another process took first is no error.
    acceptor_->async_wait(asio::socket_base::wait_read, [this](const error_code& ec) {
        if (ec == asio::error::operation_aborted) return;
        if (!ec) {
            pre_accept_();
            error_code aec;
            asio::local::stream_protocol::socket conn(io_);
            acceptor_->accept(conn, aec);
            if (!aec)
                on_accept(std::move(conn));
            else if (aec != asio::error::would_block && aec != asio::error::try_again)
                log::error("accept connection: " + aec.message());
        }
        do_accept();
    });
}

void MasterLink::on_accept(asio::local::stream_protocol::socket conn) {
    // One read of at most 1024 bytes, within 10 s; then close.  The TAKEN /
    // AVAIL pair brackets the work, as for any Postfix trigger server.
    struct Pending {
        asio::local::stream_protocol::socket sock;
        asio::steady_timer timer;
        std::array<char, trigger_buf_size> buf{};
    };
    auto p = std::make_shared<Pending>(Pending{std::move(conn), asio::steady_timer(io_), {}});
    send_status(protocol::master_stat_taken);
    p->timer.expires_after(trigger_read_timeout);
    p->timer.async_wait([p](const error_code& ec) {
        if (!ec) {
            error_code ignored;
            p->sock.close(ignored);
        }
    });
    p->sock.async_read_some(asio::buffer(p->buf), [this, p](const error_code& ec, size_t n) {
        p->timer.cancel();
        if (!ec && n > 0) on_trigger_(std::string_view(p->buf.data(), n));
        error_code ignored;
        p->sock.close(ignored);
        send_status(protocol::master_stat_avail);
    });
}

void MasterLink::do_read_fifo() {
    fifo_->async_wait(asio::posix::stream_descriptor::wait_read, [this](const error_code& ec) {
        if (ec == asio::error::operation_aborted) return;
        if (!ec) {
            pre_accept_();
            // The read end is non-blocking: another reader may have been first.
            error_code rec;
            size_t n = fifo_->read_some(asio::buffer(fifo_buf_), rec);
            if (!rec && n > 0) {
                send_status(protocol::master_stat_taken);
                on_trigger_(std::string_view(fifo_buf_.data(), n));
                send_status(protocol::master_stat_avail);
            } else if (rec && rec != asio::error::eof && rec != asio::error::would_block &&
                       rec != asio::error::try_again) {
                log::warn("read trigger fifo: " + rec.message());
            }
        }
        do_read_fifo();
    });
}

int flow_token_change(int64_t in_flow_delay, int tokens, int process_limit, bool fed_incoming,
                      bool incoming_scan_running) {
    if (in_flow_delay <= 0) return 0;
    if (tokens < process_limit) {
        if (fed_incoming) return 1;
        return incoming_scan_running ? 0 : process_limit - tokens;
    }
    return process_limit - tokens; // 0, or the surplus to take back
}

int MasterLink::tokens() const {
    int count = 0;
    if (!active_ || ::ioctl(flow_read_fd, FIONREAD, &count) < 0) return 0;
    return count;
}

int MasterLink::feed_tokens(int change) {
    if (!active_ || change == 0) return 0;
    std::string bytes(static_cast<size_t>(change > 0 ? change : -change), '\0');
    // A full pipe means cleanup has tokens enough; a short read, fewer to take.
    ssize_t n = change > 0 ? ::write(flow_write_fd, bytes.data(), bytes.size())
                           : ::read(flow_read_fd, bytes.data(), bytes.size());
    return change > 0 && n > 0 ? static_cast<int>(n) : 0;
}

} // namespace cqmgr::qmgr
