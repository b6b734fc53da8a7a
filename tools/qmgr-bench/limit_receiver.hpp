// A receiver of the benchmark's own that enforces limits the way large
// providers do: for all its listening addresses together (one provider),
// at most so many SMTP sessions at once and so many messages a minute,
// answering 421 or 450 beyond them; or, in the "block" mode Yahoo's
// `[TSS04]` shows, a client that goes past its rate is told `421` at every
// MAIL for a while.  It speaks just enough ESMTP for smtp(8) (EHLO with
// PIPELINING, MAIL, RCPT, DATA, RSET, NOOP, QUIT) and keeps no mail.
//
// It runs in one thread that handles every connection, so its count of
// sessions open at once is exact: a session counts from the moment it is
// accepted (refused ones included: the sender opened them) until the
// receiver closes it or sees it closed.  Within one wakeup, ends and input
// are handled before new connections, as the harness's SessionCounter does.
// Every event is kept with its time (boot_seconds()) for the workloads'
// figures and written to a log.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bench {

struct ReceiverLimits {
    std::vector<std::string> addresses; // IPv4 listen addresses, all of one provider
    std::uint16_t port = 25;
    std::string name = "mx.receiver.test"; // greeting and EHLO name (not the sender's myhostname)
    // Sessions at once beyond which a new one is answered session_reply at
    // the greeting and closed (0: no limit).
    int sessions = 0;
    std::string session_reply = "421 4.7.0 Too many concurrent SMTP connections, try again later";
    // Messages (accepted MAIL commands) per rate_period, with bursts of at
    // most rate_burst (0: rate) after a quiet spell: a GCRA, as receivers and
    // cqmgr count (0: no limit).  Counted for the whole provider, or per
    // client in block mode.
    int rate = 0;
    double rate_period = 60;
    int rate_burst = 0;
    // The answer to a MAIL beyond the rate (a reply that starts with 421
    // also ends the session).
    std::string rate_reply = "450 4.7.1 Too many messages from this client, rate limited, "
                             "try again later";
    // > 0: block mode.  A client whose MAIL goes past the rate is answered
    // block_reply ("%c" is its address) at every MAIL for this many seconds,
    // each time ending the session, and is counted afresh afterwards.
    double block_seconds = 0;
    std::string block_reply = "421 4.7.0 [TSS04] Messages from %c temporarily deferred due to "
                              "unexpected volume or user complaints - 4.16.55.1";
    double data_seconds = 0; // wait before answering the end of DATA
};

struct ReceiverEvent {
    enum Kind {
        connected,    // a session accepted and greeted
        refused,      // a session answered session_reply and closed
        mail,         // MAIL accepted
        rate_refused, // MAIL answered rate_reply
        blocked,      // MAIL answered block_reply (the session closed)
        delivered,    // end of DATA answered 250
        closed,       // a greeted session ended
    };
    double at = 0; // boot_seconds()
    Kind kind = connected;
    std::string client;        // the client's address
    std::string sender_domain; // mail, delivered: the MAIL FROM domain
};

class LimitReceiver {
  public:
    // Binds every address (throws compat::Error if one cannot be bound)
    // and starts serving; events also go to `log_path`.
    LimitReceiver(ReceiverLimits limits, std::string log_path);
    LimitReceiver(const LimitReceiver&) = delete;
    LimitReceiver& operator=(const LimitReceiver&) = delete;
    ~LimitReceiver(); // stops

    // Ends every session and stops listening; the figures stay.
    void stop() noexcept;

    // The most sessions open at once so far, refused ones included.
    int peak() const { return peak_; }
    // The most messages accepted from one client within any 60 s so far.
    int peak_client_minute() const { return peak_client_minute_; }
    // Every event so far, in the order handled.
    std::vector<ReceiverEvent> events() const;
    // The block-mode blocks so far: when each began and ended.
    std::vector<std::pair<double, double>> blocks() const;

  private:
    struct Loop;
    void run(std::vector<int> listeners, int wake);

    ReceiverLimits limits_;
    std::string log_path_;
    std::thread thread_;
    int wake_write_ = -1;
    std::atomic<int> peak_{0};
    std::atomic<int> peak_client_minute_{0};
    mutable std::mutex mu_;
    std::vector<ReceiverEvent> events_;
    std::vector<std::pair<double, double>> blocks_;
};

// Figures over a receiver's events.
struct ReceiverCounts {
    std::uint64_t sessions = 0;     // accepted and greeted
    std::uint64_t refused = 0;      // refused at the greeting
    std::uint64_t mails = 0;        // MAIL accepted
    std::uint64_t rate_refused = 0; // MAIL refused for the rate
    std::uint64_t blocked = 0;      // MAIL refused in a block
    std::uint64_t delivered = 0;
    // Delivery attempts (refused sessions and every MAIL) and, of them,
    // those refused, in percent.
    std::uint64_t attempts() const { return refused + mails + rate_refused + blocked; }
    double refused_pct() const;
};

// Counts the events within [from, to).
ReceiverCounts count_events(const std::vector<ReceiverEvent>& events, double from = 0,
                            double to = 1e300);

} // namespace bench
