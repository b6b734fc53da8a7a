// The HTTP endpoint that serves /metrics (cqmgr_metrics_listen), and the
// health endpoints /healthz and /readyz (health.hpp).
//
// It answers on a thread of its own (with its own io_context; Boost.Beast
// reads the requests and writes the replies), while every piece of daemon
// state belongs to the event loop's thread.  A scrape therefore never reads
// that state itself: it posts a request to the loop, which copies what the
// metrics show into a snapshot in one handler (20 to 60 microseconds with
// 20,000 messages over 1,000 destinations, measured; building and
// serializing the reply then takes 0.3 to 0.6 ms on the endpoint's thread)
// and posts it back; if the loop has not answered within two seconds, the
// previous snapshot is served.  The families are built and serialized on
// the endpoint's thread.  We chose this over updating prometheus-cpp's
// metric objects at every event and refreshing gauges on a timer because
// the daemon then pays only when someone scrapes, not at every delivery and
// every second, the counters stay in one place (Counters, which the control
// socket reads too), and a scrape sees one consistent moment.  The loop
// never waits for the endpoint: delivery is never blocked by a scrape.
// The process metrics (process_metrics.hpp) and the health answers are
// read on the endpoint's thread, without the loop.
//
// The listening sockets are opened before the jail (pre_jail.cpp), so that a
// port below 1024 works after -u, and TCP needs nothing from the file
// system, so a chrooted daemon serves it as well.  The thread starts only
// after the jail (attach()).  master(8) starts a queue manager only once
// its predecessor has been reaped, so after `postfix reload` the address
// is free; it can still be busy for a moment after `postfix stop` and a
// quick start (master exits without waiting for its children), or held by
// another program.  A busy port below 1024 is therefore tried again before
// the jail, as root, for up to a few seconds (open()'s `busy_wait`): after
// the privilege drop it could never be opened.  Any other port is tried
// again from the endpoint's thread: every second for ten seconds, quietly,
// then every minute after a warning.
#pragma once

#include "cqmgr/protocol/asio.hpp"
#include "health.hpp"
#include "metrics.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace cqmgr::qmgr {

struct EndpointHub;

class MetricsEndpoint {
  public:
    using SnapshotFn = std::function<MetricsSnapshot()>;
    // What the endpoint asks of the daemon once attached.
    struct LoopHooks {
        SnapshotFn snapshot;                   // on the loop's thread
        Heartbeat::ReadinessFn readiness = {}; // on the loop's thread; none: ready
        std::string version = {};              // for cqmgr_build_info
    };

    // `listen` as cqmgr_metrics_listen has it (PORT, IPv4:PORT or
    // [IPv6]:PORT; metrics_listen.hpp); `stall_time` is
    // cqmgr_health_stall_time.  Opens what the process metrics read from
    // /proc (before the jail).
    MetricsEndpoint(std::string listen, size_t destination_limit,
                    std::chrono::seconds stall_time = std::chrono::seconds(10));
    // Stops the endpoint's thread first (stop()).
    ~MetricsEndpoint();
    MetricsEndpoint(const MetricsEndpoint&) = delete;
    MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

    // Opens the listening sockets; returns "" or why it failed.  While an
    // address is in use, a port below 1024 is tried again every 100 ms for
    // up to `busy_wait`.
    std::string open(std::chrono::milliseconds busy_wait = std::chrono::milliseconds(0));
    // Starts serving on a thread of its own, and the heartbeat on `loop`
    // (health.hpp).  From now on scrapes take their snapshot with
    // `hooks.snapshot`, on `loop`'s thread.  When open() failed, it is
    // tried again (see above).
    void attach(asio::io_context& loop, LoopHooks hooks);
    void attach(asio::io_context& loop, SnapshotFn snapshot);
    // Stops serving and ends the thread (a scrape waiting for the loop
    // gets no reply); idempotent.  Called before the process exits, so
    // that exit() never runs while the thread does.
    void stop();

    // The addresses listened on (for tests).
    std::vector<asio::ip::tcp::endpoint> local_endpoints() const;

  private:
    // One attempt at opening every address; "" or why not (`ec` says
    // what failed).
    std::string try_open(error_code& ec);
    void retry_open();
    void accept(asio::ip::tcp::acceptor& acceptor);

    std::string listen_;
    std::shared_ptr<EndpointHub> hub_;     // what the loop's handlers share with the thread
    std::shared_ptr<Heartbeat> heartbeat_; // on the loop, once attached
    asio::io_context io_{1};               // the endpoint's thread's
    std::vector<std::unique_ptr<asio::ip::tcp::acceptor>> acceptors_;
    std::string open_error_; // why open() failed
    std::unique_ptr<asio::steady_timer> retry_timer_;
    int failures_ = 0;
    bool warned_ = false;
    std::thread thread_;
};

} // namespace cqmgr::qmgr
