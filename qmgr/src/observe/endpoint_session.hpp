// One HTTP connection of the metrics endpoint (metrics_endpoint.hpp), on
// the endpoint's thread: /metrics with the loop's snapshot, /healthz and
// /readyz from what the loop's heartbeat left (health.hpp), without asking
// the loop.
#pragma once

#include "cqmgr/protocol/asio.hpp"
#include "health.hpp"
#include "metrics.hpp"
#include "process_metrics.hpp"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace cqmgr::qmgr {

// What the loop's snapshot handlers share with the endpoint's thread; it
// outlives both (each handler holds it).
struct EndpointHub {
    using SnapshotFn = std::function<MetricsSnapshot()>;

    EndpointHub(size_t limit, std::chrono::seconds stall_time)
        : destination_limit(limit), health(std::make_shared<HealthState>(stall_time)) {}

    const size_t destination_limit;
    const std::shared_ptr<HealthState> health; // shared with the heartbeat
    // Read on the endpoint's thread only.
    ProcessMetrics process;
    // Set once by attach(), before any scrape asks for them; snapshot is
    // called on the loop's thread only.
    SnapshotFn snapshot;
    std::string version;
    std::mutex mutex;                   // guards what follows
    asio::io_context* loop = nullptr;   // where snapshots are taken, once attached
    asio::io_context* server = nullptr; // the endpoint's, while it serves
    std::shared_ptr<const MetricsSnapshot> last;
    // Sessions alive; on the endpoint's thread only (or once it has ended).
    size_t connections = 0;
};

// Reads a request, answers it, and reads the next while the client keeps
// the connection.  It owns itself through the handlers pending on it.
class EndpointSession : public std::enable_shared_from_this<EndpointSession> {
  public:
    EndpointSession(std::shared_ptr<EndpointHub> hub, asio::ip::tcp::socket sock);
    ~EndpointSession();

    // Reads the next request.
    void read();

  private:
    void on_request(const error_code& ec);
    // Asks the loop for a snapshot; the previous one is served if the loop
    // is late, none before the loop is attached.
    void ask_snapshot();
    // Serves `snap` (no daemon metrics when there is none), unless the
    // request was answered already (the loop came after the timeout).
    void on_snapshot(std::shared_ptr<const MetricsSnapshot> snap);
    // Writes the reply, then reads the next request or closes.
    void reply(boost::beast::http::status status, std::string body,
               const char* type = "text/plain; charset=utf-8");
    void close();

    std::shared_ptr<EndpointHub> hub_;
    boost::beast::tcp_stream stream_;
    asio::steady_timer timer_; // the wait for the loop's snapshot
    boost::beast::flat_buffer buffer_;
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
    bool waiting_ = false; // for a snapshot
    bool keep_alive_ = false;
    bool head_ = false;
    unsigned version_ = 11;
};

} // namespace cqmgr::qmgr
