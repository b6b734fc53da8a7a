#include "endpoint_session.hpp"

#include <prometheus/text_serializer.h>

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
// A request's header and body: a scrape sends a few hundred bytes.
constexpr uint32_t max_request_header = 8192;
constexpr uint64_t max_request_body = 1024;
} // namespace

EndpointSession::EndpointSession(std::shared_ptr<EndpointHub> hub, tcp::socket sock)
    : hub_(std::move(hub)), stream_(std::move(sock)), timer_(stream_.get_executor()),
      buffer_(max_request_header + max_request_body) {
    ++hub_->connections;
}

EndpointSession::~EndpointSession() {
    --hub_->connections;
}

void EndpointSession::read() {
    parser_.emplace();
    parser_->header_limit(max_request_header);
    parser_->body_limit(max_request_body);
    stream_.expires_after(io_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](const error_code& ec, size_t) { self->on_request(ec); });
}

void EndpointSession::on_request(const error_code& ec) {
    // The client went, was too slow, or sent what is not a request within
    // the limits: the connection goes, without a reply.
    if (ec) return close();
    const auto& req = parser_->get();
    keep_alive_ = req.keep_alive();
    head_ = req.method() == http::verb::head;
    version_ = req.version();
    std::string_view target(req.target().data(), req.target().size());
    target = target.substr(0, target.find('?'));
    const bool health = target == "/healthz" || target == "/readyz";
    if (target != "/metrics" && !health) return reply(http::status::not_found, "Not Found\n");
    if (req.method() != http::verb::get && !head_)
        return reply(http::status::method_not_allowed, "Method Not Allowed\n");
    if (!health) return ask_snapshot();
    // Answered here, from what the loop's heartbeat left: a stalled loop
    // could not answer at all.
    const auto answer = target == "/healthz" ? hub_->health->healthz(HealthState::Clock::now())
                                             : hub_->health->readyz();
    reply(answer.ok ? http::status::ok : http::status::service_unavailable, answer.text);
}

void EndpointSession::ask_snapshot() {
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

void EndpointSession::on_snapshot(std::shared_ptr<const MetricsSnapshot> snap) {
    if (!waiting_) return;
    waiting_ = false;
    timer_.cancel();
    std::vector<prometheus::MetricFamily> families;
    if (snap) families = build_metrics(*snap, hub_->destination_limit);
    // The process's own, read now, whether or not the loop answered.
    hub_->process.families(families, hub_->version);
    reply(http::status::ok, prometheus::TextSerializer().Serialize(families),
          "text/plain; version=0.0.4; charset=utf-8");
}

void EndpointSession::reply(http::status status, std::string body, const char* type) {
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

void EndpointSession::close() {
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
}

} // namespace cqmgr::qmgr
