#include "metrics_endpoint.hpp"

#include "log.hpp"
#include "metrics_listen.hpp"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <mutex>
#include <optional>
#include <prometheus/text_serializer.h>
#include <unistd.h>

namespace cqmgr::qmgr {

namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

namespace {
// How long a scrape waits for the loop's snapshot.
constexpr auto snapshot_timeout = std::chrono::seconds(2);
// How long reading a request (the wait for it included) or writing a reply
// may take before the connection is closed.
constexpr auto io_timeout = std::chrono::seconds(30);
// Connections served at once; more are closed at once.
constexpr size_t max_connections = 16;
// A request's header and body: a scrape sends a few hundred bytes.
constexpr uint32_t max_request_header = 8192;
constexpr uint64_t max_request_body = 1024;
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

// What the loop's snapshot handlers share with the endpoint's thread; it
// outlives both (each handler holds it).
struct MetricsEndpoint::Hub {
    explicit Hub(size_t limit) : destination_limit(limit) {}

    const size_t destination_limit;
    // Set once by attach(), before any scrape asks for it; called on the
    // loop's thread only.
    SnapshotFn snapshot;
    std::mutex mutex;                   // guards what follows
    asio::io_context* loop = nullptr;   // where snapshots are taken, once attached
    asio::io_context* server = nullptr; // the endpoint's, while it serves
    std::shared_ptr<const MetricsSnapshot> last;
    // Sessions alive; on the endpoint's thread only (or once it has ended).
    size_t connections = 0;
};

// One HTTP connection: reads a request, answers it, and reads the next
// while the client keeps the connection.  It owns itself through the
// handlers pending on it.
class MetricsEndpoint::Session : public std::enable_shared_from_this<Session> {
  public:
    Session(std::shared_ptr<Hub> hub, tcp::socket sock)
        : hub_(std::move(hub)), stream_(std::move(sock)), timer_(stream_.get_executor()) {
        ++hub_->connections;
    }
    ~Session() { --hub_->connections; }

    // Reads the next request.
    void read() {
        parser_.emplace();
        parser_->header_limit(max_request_header);
        parser_->body_limit(max_request_body);
        stream_.expires_after(io_timeout);
        http::async_read(
            stream_, buffer_, *parser_,
            [self = shared_from_this()](const error_code& ec, size_t) { self->on_request(ec); });
    }

  private:
    void on_request(const error_code& ec) {
        // The client went, was too slow, or sent what is not a request
        // within the limits: the connection goes, without a reply.
        if (ec) return close();
        const auto& req = parser_->get();
        keep_alive_ = req.keep_alive();
        head_ = req.method() == http::verb::head;
        version_ = req.version();
        std::string_view target(req.target().data(), req.target().size());
        target = target.substr(0, target.find('?'));
        if (target != "/metrics") return reply(http::status::not_found, "Not Found\n");
        if (req.method() != http::verb::get && !head_)
            return reply(http::status::method_not_allowed, "Method Not Allowed\n");
        ask_snapshot();
    }

    // Asks the loop for a snapshot; the previous one is served if the loop
    // is late, none before the loop is attached.
    void ask_snapshot() {
        waiting_ = true;
        asio::io_context* loop = nullptr;
        {
            std::lock_guard lock(hub_->mutex);
            loop = hub_->loop;
        }
        if (!loop) return on_snapshot(nullptr);
        asio::post(*loop, [hub = hub_, weak = weak_from_this()] {
            auto snap = std::make_shared<const MetricsSnapshot>(hub->snapshot());
            std::lock_guard lock(hub->mutex);
            hub->last = snap;
            if (hub->server)
                asio::post(*hub->server, [weak, snap] {
                    if (auto self = weak.lock()) self->on_snapshot(snap);
                });
        });
        timer_.expires_after(snapshot_timeout);
        timer_.async_wait([self = shared_from_this()](const error_code& ec) {
            if (ec || !self->waiting_) return;
            std::shared_ptr<const MetricsSnapshot> last;
            {
                std::lock_guard lock(self->hub_->mutex);
                last = self->hub_->last;
            }
            self->on_snapshot(std::move(last));
        });
    }

    // Serves `snap` (no daemon metrics when there is none), unless the
    // request was answered already (the loop came after the timeout).
    void on_snapshot(std::shared_ptr<const MetricsSnapshot> snap) {
        if (!waiting_) return;
        waiting_ = false;
        timer_.cancel();
        std::string body;
        if (snap)
            body = prometheus::TextSerializer().Serialize(
                build_metrics(*snap, hub_->destination_limit));
        reply(http::status::ok, std::move(body), "text/plain; version=0.0.4; charset=utf-8");
    }

    // Writes the reply, then reads the next request or closes.
    void reply(http::status status, std::string body,
               const char* type = "text/plain; charset=utf-8") {
        auto res = std::make_shared<http::response<http::string_body>>(status, version_);
        res->set(http::field::content_type, type);
        if (status == http::status::method_not_allowed) res->set(http::field::allow, "GET, HEAD");
        res->keep_alive(keep_alive_);
        res->content_length(body.size());
        if (!head_) res->body() = std::move(body);
        stream_.expires_after(io_timeout);
        http::async_write(stream_, *res,
                          [self = shared_from_this(), res](const error_code& ec, size_t) {
                              if (ec || !self->keep_alive_) return self->close();
                              self->read();
                          });
    }

    void close() {
        error_code ignored;
        stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
        stream_.close();
    }

    std::shared_ptr<Hub> hub_;
    beast::tcp_stream stream_;
    asio::steady_timer timer_; // the wait for the loop's snapshot
    beast::flat_buffer buffer_{max_request_header + max_request_body};
    std::optional<http::request_parser<http::string_body>> parser_;
    bool waiting_ = false; // for a snapshot
    bool keep_alive_ = false;
    bool head_ = false;
    unsigned version_ = 11;
};

MetricsEndpoint::MetricsEndpoint(std::string listen, size_t destination_limit)
    : listen_(std::move(listen)), hub_(std::make_shared<Hub>(destination_limit)) {}

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
    hub_->snapshot = std::move(snapshot);
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
    {
        std::lock_guard lock(hub_->mutex);
        hub_->loop = nullptr;
        hub_->server = nullptr;
    }
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
            std::make_shared<Session>(hub_, std::move(sock))->read();
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
