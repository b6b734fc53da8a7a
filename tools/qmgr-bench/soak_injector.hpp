// The soak's injection into one side: message n (soak_traffic.hpp) is due
// `n / rate` seconds after the start and sent over one SMTP session to
// the side's smtpd, in a thread of its own, so that a slow submission
// delays neither the other side nor the run's events.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace bench {

class SoakInjector {
  public:
    // Starts the thread; message 0 is due at boot_seconds() `start`.
    SoakInjector(std::uint16_t smtpd_port, double start, double rate, std::string log_path);
    SoakInjector(const SoakInjector&) = delete;
    SoakInjector& operator=(const SoakInjector&) = delete;
    ~SoakInjector(); // stops and joins

    // Sends nothing after the message in progress; waits for the thread.
    void stop();

    // Messages attempted so far (numbers 0 .. attempted() - 1).
    std::uint64_t attempted() const { return attempted_.load(); }
    // Those that were never accepted (three tries failed).
    std::set<std::uint64_t> failed() const;
    // Those sent again after a failed try: a try whose reply was lost may
    // have queued the message anyway, so their duplicates are the
    // injection's, not the queue manager's.
    std::set<std::uint64_t> retried() const;
    // How far the injection is behind its schedule now, in seconds.
    double lag() const { return lag_.load(); }

  private:
    void loop();
    void note(const std::string& line);

    std::uint16_t port_;
    double start_;
    double rate_;
    std::string log_path_;
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> attempted_{0};
    std::atomic<double> lag_{0};
    mutable std::mutex mu_;
    std::set<std::uint64_t> failed_;
    std::set<std::uint64_t> retried_;
    std::thread thread_;
};

} // namespace bench
