// The HTTP endpoint that serves /metrics (cqmgr_metrics_listen), with
// prometheus-cpp's Exposer.
//
// The Exposer answers from threads of its own (civetweb's), while every
// piece of daemon state belongs to the event loop's thread.  A scrape
// therefore never reads that state itself: it posts a request to the loop,
// which copies what the metrics show into a snapshot in one handler (20 to
// 60 microseconds with 20,000 messages over 1,000 destinations, measured;
// building and serializing the reply then takes 0.3 to 0.6 ms on the
// scraper's thread), and waits for it, at
// most two seconds; if the loop is that late, the previous snapshot is
// served.  The families are then built and serialized on the scraper's
// thread.  We chose this over updating prometheus-cpp's metric objects at
// every event and refreshing gauges on a timer because the daemon then pays
// only when someone scrapes, not at every delivery and every second, the
// counters stay in one place (Counters, which the control socket reads too),
// and a scrape sees one consistent moment.  The loop never waits for the
// scraper: delivery is never blocked by a scrape.
//
// The daemon neither forks nor execs, so the Exposer's threads break no
// fork/exec assumption.  The socket is opened before the jail (main.cpp),
// so that a privileged port works after -u, and TCP needs nothing from the
// file system, so a chrooted daemon serves it as well.  When the address is
// busy (a predecessor that has not quite exited after `postfix reload`),
// opening is retried from the loop: every second for ten seconds, quietly,
// then every minute after a warning.
#pragma once

#include "cqmgr/protocol/asio.hpp"
#include "metrics.hpp"

#include <functional>
#include <memory>
#include <string>

namespace prometheus {
class Exposer;
}

namespace cqmgr::qmgr {

class MetricsEndpoint {
  public:
    using SnapshotFn = std::function<MetricsSnapshot()>;

    // `listen` as cqmgr_metrics_listen has it (PORT, IPv4:PORT or [IPv6]:PORT).
    MetricsEndpoint(std::string listen, size_t destination_limit);
    ~MetricsEndpoint();

    // Opens the listening socket; returns "" or why it failed.
    std::string open();
    // From now on scrapes take their snapshot with `snapshot`, on `io`'s
    // thread; until then they answer with no daemon metrics.  When open()
    // failed, it is retried from `io`.
    void attach(asio::io_context& io, SnapshotFn snapshot);

  private:
    struct Collector;
    void retry_open();

    std::string listen_;
    std::shared_ptr<Collector> collector_;
    std::unique_ptr<prometheus::Exposer> exposer_;
    asio::io_context* io_ = nullptr;
    std::unique_ptr<asio::steady_timer> retry_timer_;
    int failures_ = 0;
    bool warned_ = false;
};

} // namespace cqmgr::qmgr
