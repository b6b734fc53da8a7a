#include "poller.hpp"

#include "clock.hpp"
#include "control_link.hpp"
#include "error.hpp"

#include <unistd.h>

namespace bench {

namespace {
constexpr double poll_interval = 0.1; // seconds: 10 Hz
}

Poller::Poller(const compat::Instance& inst, std::string cqmgrctl, std::uint16_t metrics_port,
               std::string log, double scrape_every)
    : inst_(inst), cqmgrctl_(std::move(cqmgrctl)), metrics_port_(metrics_port),
      log_(std::move(log)), scrape_every_(scrape_every) {}

Poller::~Poller() {
    stop();
}

// top is restarted if it exits (e.g. it started before the socket was
// served); a failed scrape is counted, not fatal, since the endpoint starts
// a moment after the queue manager.
void Poller::step() {
    if (scrape_every_ == 0 && !top_.running() &&
        ::access((inst_.queue_dir() + "/private/cqmgr").c_str(), F_OK) == 0) {
        compat::SpawnOptions o;
        o.argv = {cqmgrctl_, "-c", inst_.conf_dir(), "top", "--interval", "0.1"};
        o.output_path = log_;
        top_ = compat::Process::spawn(o);
        ++top_starts_;
    }
    double now = boot_seconds();
    if (now < next_scrape_) return;
    next_scrape_ = now + (scrape_every_ > 0 ? scrape_every_ : poll_interval);
    try {
        http_get(metrics_port_, "/metrics", std::chrono::milliseconds(2000));
        ++scrapes_;
    } catch (const compat::Error&) {
        ++failed_scrapes_;
    }
}

// SIGTERM ends top at once.
void Poller::stop() noexcept {
    top_.terminate(std::chrono::seconds(2));
}

} // namespace bench
