#include "metrics_endpoint.hpp"

#include "log.hpp"

#include <CivetServer.h>
#include <condition_variable>
#include <mutex>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

namespace cqmgr::qmgr {

namespace {
// How long a scrape waits for the loop's snapshot.
constexpr auto snapshot_timeout = std::chrono::seconds(2);

// civetweb's last complaint on this thread.  civetweb reports why it could
// not listen only through this callback (the exception says "possible
// problem binding to port"); it also calls it from its own threads, which
// then only write their own copy.
thread_local std::string civetweb_error;

int keep_civetweb_message(const mg_connection*, const char* message) {
    civetweb_error = message ? message : "";
    return 1; // handled: nothing on standard error
}
} // namespace

// The Collectable the Exposer calls on its threads (see the header).
struct MetricsEndpoint::Collector : prometheus::Collectable,
                                    std::enable_shared_from_this<Collector> {
    explicit Collector(size_t limit) : destination_limit(limit) {}

    std::vector<prometheus::MetricFamily> Collect() const override {
        std::shared_ptr<const MetricsSnapshot> snap = fresh_snapshot();
        if (!snap) return {};
        return build_metrics(*snap, destination_limit);
    }

    // A snapshot taken by the loop now, or the last one if the loop is late.
    std::shared_ptr<const MetricsSnapshot> fresh_snapshot() const {
        struct Request {
            std::mutex mutex;
            std::condition_variable done;
            std::shared_ptr<const MetricsSnapshot> snap;
        };
        auto req = std::make_shared<Request>();
        {
            std::lock_guard lock(mutex);
            if (!io) return nullptr;
            // The handler owns what it touches: the request and this
            // collector stay alive however long the loop takes.
            asio::post(*io, [self = shared_from_this(), req] {
                auto snap = std::make_shared<const MetricsSnapshot>(self->snapshot());
                std::lock_guard lock(req->mutex);
                req->snap = std::move(snap);
                req->done.notify_all();
            });
        }
        std::unique_lock lock(req->mutex);
        if (req->done.wait_for(lock, snapshot_timeout, [&] { return req->snap != nullptr; })) {
            std::lock_guard last_lock(mutex);
            last = req->snap;
            return req->snap;
        }
        std::lock_guard last_lock(mutex);
        return last;
    }

    const size_t destination_limit;
    mutable std::mutex mutex; // guards io, snapshot (once set) and last
    asio::io_context* io = nullptr;
    SnapshotFn snapshot;
    mutable std::shared_ptr<const MetricsSnapshot> last;
};

MetricsEndpoint::MetricsEndpoint(std::string listen, size_t destination_limit)
    : listen_(std::move(listen)), collector_(std::make_shared<Collector>(destination_limit)) {}

// Not reached while the daemon runs (it leaves with exit()); when it is,
// the Exposer's threads are joined first, and a scrape that waits for the
// loop gives up after snapshot_timeout.
MetricsEndpoint::~MetricsEndpoint() = default;

std::string MetricsEndpoint::open() {
    CivetCallbacks callbacks;
    callbacks.log_message = keep_civetweb_message;
    civetweb_error.clear();
    try {
        exposer_ = std::make_unique<prometheus::Exposer>(
            std::vector<std::string>{"listening_ports", listen_, "num_threads", "2"}, &callbacks);
    } catch (const std::exception& e) {
        return civetweb_error.empty() ? e.what() : civetweb_error;
    }
    exposer_->RegisterCollectable(collector_);
    return {};
}

void MetricsEndpoint::attach(asio::io_context& io, SnapshotFn snapshot) {
    {
        std::lock_guard lock(collector_->mutex);
        collector_->snapshot = std::move(snapshot);
        collector_->io = &io;
    }
    io_ = &io;
    if (!exposer_) retry_open();
}

void MetricsEndpoint::retry_open() {
    if (!retry_timer_) retry_timer_ = std::make_unique<asio::steady_timer>(*io_);
    retry_timer_->expires_after(std::chrono::seconds(failures_ < 10 ? 1 : 60));
    retry_timer_->async_wait([this](const error_code& ec) {
        if (ec) return;
        std::string why = open();
        if (why.empty()) {
            if (warned_) log::info("metrics: listening on " + listen_);
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
