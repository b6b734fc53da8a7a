#include "metrics_endpoint.hpp"

#include "endpoint_session.hpp"
#include "log.hpp"
#include "metrics_listen.hpp"

#include <cerrno>
#include <mutex>
#include <unistd.h>

namespace cqmgr::qmgr {

using asio::ip::tcp;

namespace {
// Connections served at once; more are closed at once.
constexpr size_t max_connections = 16;
// How often a busy port below 1024 is tried again before the jail.
constexpr auto busy_step = std::chrono::milliseconds(100);
// How long to wait before accepting again after accept() failed (out of
// descriptors, say), so that a persistent error does not spin the thread.
constexpr auto accept_retry_delay = std::chrono::seconds(1);

// "127.0.0.1:9154" or "[::1]:9154".
std::string endpoint_text(const tcp::endpoint& e) {
    const std::string host = e.address().to_string();
    return (e.address().is_v6() ? "[" + host + "]" : host) + ":" + std::to_string(e.port());
}

// True when opening a port this low needs root (ports below 1024).
bool privileged_port(const std::vector<MetricsAddress>& addresses) {
    return !addresses.empty() && addresses.front().endpoint.port() < 1024;
}
} // namespace

MetricsEndpoint::MetricsEndpoint(std::string listen, size_t destination_limit,
                                 std::chrono::seconds stall_time)
    : listen_(std::move(listen)),
      hub_(std::make_shared<EndpointHub>(destination_limit, stall_time)) {}

MetricsEndpoint::~MetricsEndpoint() {
    stop();
}

std::string MetricsEndpoint::open(std::chrono::milliseconds busy_wait) {
    const bool privileged = privileged_port(metrics_addresses(listen_));
    const auto deadline = std::chrono::steady_clock::now() + busy_wait;
    for (;;) {
        error_code ec;
        std::string why = open_error_ = try_open(ec);
        if (why.empty() || ec != asio::error::address_in_use || !privileged ||
            std::chrono::steady_clock::now() + busy_step > deadline)
            return why;
        std::this_thread::sleep_for(busy_step);
    }
}

std::string MetricsEndpoint::try_open(error_code& ec) {
    const auto addresses = metrics_addresses(listen_);
    if (addresses.empty()) return "bad address";
    std::vector<std::unique_ptr<tcp::acceptor>> opened;
    for (const auto& a : addresses) {
        auto acceptor = std::make_unique<tcp::acceptor>(io_);
        // Not SO_REUSEPORT: a second process on the same address (another
        // Postfix instance with the same setting) must fail, not share it.
        if (acceptor->open(a.endpoint.protocol(), ec); !ec)
            acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
        if (!ec && a.endpoint.address().is_v6()) acceptor->set_option(asio::ip::v6_only(true), ec);
        if (!ec) acceptor->bind(a.endpoint, ec);
        if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
        if (ec && a.optional &&
            (ec == asio::error::address_family_not_supported || ec.value() == EADDRNOTAVAIL)) {
            ec.clear();
            continue; // no IPv6 loopback here
        }
        if (ec) return endpoint_text(a.endpoint) + ": " + ec.message();
        opened.push_back(std::move(acceptor));
    }
    acceptors_ = std::move(opened);
    return {};
}

void MetricsEndpoint::attach(asio::io_context& loop, SnapshotFn snapshot) {
    attach(loop, LoopHooks{std::move(snapshot)});
}

void MetricsEndpoint::attach(asio::io_context& loop, LoopHooks hooks) {
    // The heartbeat (health.hpp) runs on the loop; the snapshot carries
    // the lag it measured.
    heartbeat_ = std::make_shared<Heartbeat>(loop, hub_->health, std::move(hooks.readiness));
    heartbeat_->start();
    hub_->snapshot = [snapshot = std::move(hooks.snapshot), beat = heartbeat_] {
        MetricsSnapshot s = snapshot();
        s.loop_lag = beat->lag();
        return s;
    };
    hub_->version = std::move(hooks.version);
    {
        std::lock_guard lock(hub_->mutex);
        hub_->loop = &loop;
        hub_->server = &io_;
    }
    retry_timer_ = std::make_unique<asio::steady_timer>(io_);
    if (!acceptors_.empty()) {
        for (auto& a : acceptors_)
            accept(*a);
    } else if (privileged_port(metrics_addresses(listen_)) && ::geteuid() != 0) {
        // Without root, opening it again could only fail.
        log::warn("metrics: cannot listen on " + listen_ + ": " + open_error_ +
                  " (a port below 1024 is not tried again without root privileges)");
    } else {
        retry_open();
    }
    thread_ = std::thread([this] {
        auto work = asio::make_work_guard(io_);
        io_.run();
    });
}

void MetricsEndpoint::stop() {
    asio::io_context* loop = nullptr;
    {
        std::lock_guard lock(hub_->mutex);
        loop = hub_->loop;
        hub_->loop = nullptr;
        hub_->server = nullptr;
    }
    // The heartbeat stops on the loop's thread (or goes with the loop).
    if (loop && heartbeat_) asio::post(*loop, [beat = heartbeat_] { beat->stop(); });
    heartbeat_.reset();
    io_.stop();
    if (!thread_.joinable()) return;
    // From the endpoint's own thread (a fatal error there): it cannot wait
    // for itself, and the process is about to end.
    if (thread_.get_id() == std::this_thread::get_id()) return;
    thread_.join();
    error_code ignored;
    for (auto& a : acceptors_)
        a->close(ignored);
}

std::vector<tcp::endpoint> MetricsEndpoint::local_endpoints() const {
    std::vector<tcp::endpoint> out;
    for (const auto& a : acceptors_) {
        error_code ec;
        auto e = a->local_endpoint(ec);
        if (!ec) out.push_back(e);
    }
    return out;
}

void MetricsEndpoint::accept(tcp::acceptor& acceptor) {
    acceptor.async_accept([this, &acceptor](const error_code& ec, tcp::socket sock) {
        if (ec == asio::error::operation_aborted) return;
        if (ec) {
            // Out of descriptors or memory: try again a little later.
            auto timer = std::make_shared<asio::steady_timer>(io_, accept_retry_delay);
            timer->async_wait([this, &acceptor, timer](const error_code& tec) {
                if (!tec) accept(acceptor);
            });
            return;
        }
        // Beyond the limit the connection closes at once (`sock` goes).
        if (hub_->connections < max_connections)
            std::make_shared<EndpointSession>(hub_, std::move(sock))->read();
        accept(acceptor);
    });
}

void MetricsEndpoint::retry_open() {
    retry_timer_->expires_after(std::chrono::seconds(failures_ < 10 ? 1 : 60));
    retry_timer_->async_wait([this](const error_code& ec) {
        if (ec) return;
        error_code open_ec;
        std::string why = try_open(open_ec);
        if (why.empty()) {
            if (warned_) log::info("metrics: listening on " + listen_);
            for (auto& a : acceptors_)
                accept(*a);
            return;
        }
        if (++failures_ == 10) {
            log::warn("metrics: cannot listen on " + listen_ + ": " + why +
                      " (trying again every minute)");
            warned_ = true;
        }
        retry_open();
    });
}

} // namespace cqmgr::qmgr
