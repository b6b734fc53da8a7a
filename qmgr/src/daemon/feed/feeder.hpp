// Scan and feed: what brings messages into the active queue.  At start-up
// the files a previous queue manager left in active go back to incoming;
// then incoming and deferred are scanned (incoming on triggers, deferred
// also every queue_run_delay), and one ready file per pass of the event
// loop is handed to the coordinator, the two scans taking turns, while the
// active queue has room.  After each pass cleanup's in-flow tokens are
// topped up.  A file-system error while taking a file pauses the feed with
// backoff instead of failing file after file.  With the due index
// (cqmgr_deferred_due_index, due_index.hpp), a periodic pass of the
// deferred scan takes the files that are due from the index, and lists
// only the hash directories that changed, for the names it does not know.
#pragma once

#include "clock.hpp"
#include "counters.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/protocol/asio.hpp"
#include "cqmgr/queuefile/active_queue.hpp"
#include "dead_backlog.hpp"
#include "due_index.hpp"
#include "master_link.hpp"
#include "recovery_ramp.hpp"
#include "scan.hpp"
#include "store_retry.hpp"
#include "warning_limiter.hpp"

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cqmgr::qmgr {

class Feeder {
  public:
    // What the coordinator answers for one ready file.
    enum class Taken {
        yes,   // the message is in the active queue now
        no,    // not taken (gone, locked, corrupt): go on with the scans
        pause, // a file-system error: pause feeding for a while
    };
    struct Hooks {
        // Messages in the active queue now.
        std::function<int()> active_count;
        // True when a message with this queue ID is in memory already.
        std::function<bool(const std::string& id)> in_memory;
        // Takes the ready file `id` of `queue` (`mode` as the scan saw it).
        std::function<Taken(const std::string& id, const std::string& queue, int scan_flags,
                            mode_t mode)>
            take;
        // An F trigger: revive every dead transport and destination.
        std::function<void()> flush_dead;
    };

    Feeder(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
           const queuefile::ActiveQueue& store, StoreRetry& retry, FlowTokens& tokens, Hooks hooks,
           Counters& counters, RecoveryRamp& ramp, DeadBacklog& backlog);

    // Recovers active/, starts both scans and the periodic deferred scan.
    void start();
    // Handles the bytes of one trigger request.
    void on_trigger(std::string_view bytes);
    // Asks for a feed pass soon (a message left, or a scan request came).
    void wake();
    // Asks for a pass of the deferred scan (due files only; with the due
    // index, a pass that uses it).
    void scan_deferred() {
        // A pass that begins now for the ramp alone may hold files unseen.
        ramp_.pass_requested(!scans_[deferred].running());
        scans_[deferred].request(scan_flag::start);
        wake();
    }

    // For the control socket: whether feeding pauses after a file-system
    // error, and the queues whose scans are running.
    bool paused() const { return paused_; }
    std::vector<std::string> scanning() const {
        std::vector<std::string> v;
        for (const Scan& s : scans_)
            if (s.running()) v.push_back(s.queue());
        return v;
    }
    // For the metrics: incoming/ and deferred/ as their scans saw them
    // (nullopt before a first pass ended), and the files a previous queue
    // manager left in active that are still to be taken.
    std::optional<queuefile::QueueScanner::Census> incoming_census() const {
        return scans_[incoming].census();
    }
    std::optional<queuefile::QueueScanner::Census> deferred_census() const {
        return scans_[deferred].census();
    }
    std::size_t leftovers_waiting() const { return leftovers_.size() - leftover_next_; }
    // Whether the start-up scans are done: what a previous queue manager
    // left in active was offered and a pass of the incoming scan reached
    // its end; a pass of the deferred scan did.
    bool incoming_scanned() const {
        return leftovers_waiting() == 0 && scans_[incoming].passes_ended() > 0;
    }
    bool deferred_scanned() const { return scans_[deferred].passes_ended() > 0; }

  private:
    enum { incoming, deferred };
    // Asks the deferred scan for a pass (or modifiers) on behalf of
    // anything but the recovery ramp.
    void request_deferred(int flags);
    // One pass: at most one message taken, then the in-flow tokens.
    void feed();
    // The next name of scan `s`; a pass of the deferred scan that ends here
    // is reported to the parts that follow them.
    std::optional<std::string> next_name(Scan& s);
    // Notes, for the due index, a pass of the deferred scan that began
    // since the last call.
    void pass_seen(const Scan& s);
    // True when the running pass of the deferred scan is a partial one
    // that takes the due files from the due index.
    bool uses_due_index(const Scan& s) const;
    // What the due index knows of a file offered (times 0: nothing), and
    // whether the scan's listing returned its name (else the index did).
    struct Known {
        int64_t time = 0;
        int64_t born = 0;
        bool listed = true;
    };
    // The next file of the deferred scan with the due index on: a due one
    // from the index (`k`: what it knew), else the next listed name the
    // index does not know.  nullopt with `more` set when a batch of known
    // names was passed over.
    std::optional<std::string> next_deferred(Scan& s, Known& k, bool& more);
    // Offers the next name of scan `s` to the coordinator; false when the
    // scan had none.
    bool offer(Scan& s, bool& taken);
    // Offers the next file a previous queue manager left in active, taken
    // where it is; false when none is left.
    bool offer_leftover(bool& taken);
    // Hands the ready file `id` of `queue` to the coordinator; a message
    // taken ends the pause backoff, a file-system error starts a pause.
    Taken take(const std::string& id, const std::string& queue, int scan_flags, mode_t mode);
    // Stops feeding for the current backoff after a file-system error.
    void pause();
    void arm_deferred_timer();

    asio::io_context& io_;
    const conf::QmgrParams& params_;
    const WallClock& clock_;
    const queuefile::ActiveQueue& store_;
    StoreRetry& retry_;
    FlowTokens& tokens_; // cleanup's in-flow tokens (master's pipe)
    Hooks hooks_;
    // The files a previous queue manager left in active (read at start())
    // and the next one to offer.
    std::vector<std::string> leftovers_;
    std::size_t leftover_next_ = 0;
    Counters& counters_;
    RecoveryRamp& ramp_;
    DeadBacklog& backlog_;
    std::array<Scan, 2> scans_{Scan("incoming"), Scan("deferred")};
    int first_ = incoming; // the scan that goes first in the next pass
    bool posted_ = false;
    bool paused_ = false;
    int pause_seconds_ = 0; // the current backoff; 0 after a good pass
    asio::steady_timer pause_timer_;
    asio::steady_timer deferred_timer_;
    DueIndex due_;
    unsigned due_pass_ = 0;     // the deferred scan's pass pass_seen() saw last
    bool due_complete_ = false; // whether that pass lists and looks at every file
    unsigned timer_passes_ = 0; // passes the queue_run_delay timer asked for
};

} // namespace cqmgr::qmgr
