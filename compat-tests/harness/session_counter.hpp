// An exact count of a sink's concurrent SMTP sessions, for scenarios where
// "never more than N at once" must hold to the last session (cluster
// limits).  Sampling /proc/net/tcp (ConnectionSampler) can miss a session
// shorter than its period; this counts every one.
//
// The counter is the receiver the senders talk to: it listens on the sink's
// port and relays each session to smtp-sink on a port of its own.  A
// session counts from the moment the counter accepts it until the moment
// it sees it end (either side closed it).  Both happen in the counter's
// one thread, in the order it handles them; the peak is the most that were
// open at once in that order.  Within one wakeup, the ends it finds are
// handled before the new connections: both happened before the wakeup and
// their order is not known.  Wakeups that had both are counted apart
// (mixed_wakeups()), and the thread runs with a real-time priority where
// it may (as root), so that it wakes at each event and such wakeups are
// rare.  Every open and close is written to a log with its time and the
// count after it.
//
// Each session is also put down to its sender: the domain of the first
// MAIL FROM the client sends in it (sender_peaks()), so that a scenario can
// count one sender's sessions among others' to the same destination.  A
// session counts for its sender from its start, as for the total.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace compat {

class SessionCounter {
  public:
    // Listens on 127.0.0.1:`port` once started and relays to
    // 127.0.0.1:`backend`; writes its events to `log_path`.
    SessionCounter(std::uint16_t port, std::uint16_t backend, std::string log_path);
    SessionCounter(const SessionCounter&) = delete;
    SessionCounter& operator=(const SessionCounter&) = delete;
    ~SessionCounter(); // stops

    // Starts listening (again, after a stop); throws Error if the port
    // cannot be bound.
    void start();
    // Stops listening and ends every session; the counts stay.
    void stop() noexcept;

    // The most sessions open at once so far, and those open now.
    int peak() const { return peak_; }
    int open() const { return open_; }
    // Sessions accepted so far.
    long sessions() const { return sessions_; }
    // Wakeups in which both a session ended and a new one was accepted.
    long mixed_wakeups() const { return mixed_; }
    // The most sessions of each sender domain (lower case; "" for sessions
    // without a MAIL FROM) that were open at once, in the same order of
    // events as peak().
    std::map<std::string, int> sender_peaks() const;
    // The most sessions of any of `senders` (domains, as sender_peaks()
    // names them) that were open at once: mail of several senders that is
    // limited together.
    int peak_of(const std::vector<std::string>& senders) const;

  private:
    void loop(int listener, int wake);
    std::uint16_t port_, backend_;
    std::string log_path_;
    std::thread thread_;
    int wake_write_ = -1;
    std::atomic<int> peak_{0};
    std::atomic<int> open_{0};
    std::atomic<long> sessions_{0};
    std::atomic<long> mixed_{0};
    // Each session's sender and the events that opened and closed it (in
    // the thread's order; closed = -1 while open).
    struct Span {
        long opened = 0, closed = -1;
        std::string sender;
    };
    mutable std::mutex spans_mutex_;
    std::vector<Span> spans_;
};

} // namespace compat
