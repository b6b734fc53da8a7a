// The queue manager's side of master(8)'s child conventions:
//   fd 3/4  in-flow token pipe (read end / write end), shared with cleanup;
//   fd 5    status channel: 12-byte TAKEN/AVAIL records around each trigger,
//           and EOF there means master has gone away (or is reloading);
//   fd 6    the listen socket (unix) or FIFO on which triggers arrive.
// Triggers are single bytes (I, D, A, F, W); everything else is ignored.
#pragma once

#include "cqmgr/protocol/asio.hpp"

#include <functional>
#include <memory>
#include <string>

namespace cqmgr::qmgr {

// How the in-flow token count changes after a feed pass, as stock decides
// it.  With in_flow_delay at 0 there is no flow control at all.  Below the
// process limit: one token for a message just taken from incoming, or, when
// no incoming scan runs, a top-up to the limit; above it, the surplus is
// taken back.  Positive: tokens to add; negative: tokens to take.
int flow_token_change(int64_t in_flow_delay, int tokens, int process_limit, bool fed_incoming,
                      bool incoming_scan_running);

// Cleanup's in-flow token pipe as the feeder tops it up after each pass:
// master's descriptors in the daemon, a counter in the feeder's tests.
class FlowTokens {
  public:
    virtual ~FlowTokens() = default;
    // The number of tokens in the pipe now.
    virtual int tokens() const = 0;
    // Adds `change` tokens (takes them back when negative); returns the
    // number written.
    virtual int feed_tokens(int change) = 0;
};

class MasterLink final : public FlowTokens {
  public:
    using TriggerHandler = std::function<void(std::string_view bytes)>;

    // `transport` is the -t value ("unix" or "fifo").  `pre_accept` runs
    // when a trigger is waiting, before it is taken: if it exits the
    // process, the trigger stays for the next queue manager.
    MasterLink(asio::io_context& io, std::string transport, std::function<void()> pre_accept,
               TriggerHandler on_trigger, std::function<void()> on_master_gone);

    // Starts watching fd 5 and the listen socket.  Returns false when master's
    // descriptors are absent (we were started by hand): then it stays inactive.
    bool start();

    // Adjusts cleanup's in-flow tokens after a feed pass by `change` (see
    // flow_token_change()), given the count now in the pipe.  Returns the
    // number of tokens written (0 when tokens were taken back).
    int feed_tokens(int change) override;
    // The number of tokens in the pipe now (0 when not under master).
    int tokens() const override;

    bool active() const { return active_; }

  private:
    void do_watch_status();
    void do_accept();
    void on_accept(asio::local::stream_protocol::socket conn);
    void do_read_fifo();
    // Writes one status record; exits quietly if master cannot take it.
    void send_status(int avail);

    asio::io_context& io_;
    std::string transport_;
    std::function<void()> pre_accept_;
    TriggerHandler on_trigger_;
    std::function<void()> on_master_gone_;
    bool active_ = false;
    unsigned generation_ = 0;
    int pid_ = 0; // ours, for status records (we never fork)
    std::unique_ptr<asio::posix::stream_descriptor> status_;
    std::unique_ptr<asio::local::stream_protocol::acceptor> acceptor_;
    std::unique_ptr<asio::posix::stream_descriptor> fifo_;
    std::array<char, 1024> fifo_buf_{};
    char status_buf_ = 0;
};

} // namespace cqmgr::qmgr
