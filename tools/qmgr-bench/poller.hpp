// What an admin's monitoring does to a running cqmgr, for the "polled" side
// of `tools/bench --poll`: `cqmgrctl top --interval 0.1` (a summary and a
// queues request ten times a second over one connection, its frames thrown
// away) and a Prometheus scrape of /metrics ten times a second; or, with
// an interval of scrapes, only those (what a Prometheus server does).
#pragma once

#include "instance.hpp"
#include "process.hpp"

#include <cstdint>
#include <string>

namespace bench {

class Poller {
  public:
    // Nothing runs until the first step(); `log` gets cqmgrctl's output.
    // `scrape_every` (seconds), when not 0: scrapes alone at that interval.
    Poller(const compat::Instance& inst, std::string cqmgrctl, std::uint16_t metrics_port,
           std::string log, double scrape_every = 0);
    Poller(const Poller&) = delete;
    Poller& operator=(const Poller&) = delete;
    ~Poller();

    // Starts cqmgrctl top once the control socket exists (again if it ends),
    // and scrapes when the next scrape is due; call it every few milliseconds.
    void step();
    // Ends cqmgrctl top.
    void stop() noexcept;

    int scrapes() const { return scrapes_; }
    int failed_scrapes() const { return failed_scrapes_; }
    int top_starts() const { return top_starts_; }

  private:
    const compat::Instance& inst_;
    std::string cqmgrctl_;
    std::uint16_t metrics_port_;
    std::string log_;
    double scrape_every_; // 0: top and 10 Hz
    compat::Process top_;
    double next_scrape_ = 0;
    int scrapes_ = 0;
    int failed_scrapes_ = 0;
    int top_starts_ = 0;
};

} // namespace bench
