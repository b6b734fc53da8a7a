// The recovery ramp (cqmgr_recovery_rate, messages per second per
// destination; 0, the default, turns it off): deferred mail that has come
// due moves into the active queue at no more than that rate per
// destination, instead of all at once when a destination that was down
// comes back.
//
// The deferred scan asks admit() before it takes a due file.  A message
// that cqmgr deferred itself is in the DeferredIndex with its
// destinations; it is taken when at least one of them has a token left in
// its bucket (burst: one second's worth), and takes a token from each that
// has one.  A message not in the index (deferred by stock qmgr, or before
// a restart) takes a token from one bucket that all such messages share.
// A message that gets no token stays in deferred, unchanged, and the
// deferred scan runs again a second later (only due files, as a scan
// without A) until every due file has been taken.
//
// A rate alone does not bound the active queue when the destination takes
// less than R per second: the rest would pile up there.  So a bucket also
// stops while the messages it let through and that are still in the
// active queue (delivering or waiting) reach two seconds' worth (2R): the
// active queue then holds at most that much of the ramped mail per bucket,
// and the destination still has a second's worth waiting behind its
// deliveries.
//
// A pass that the ramp itself asked for (and nothing else did) looks up
// each file in the index before it stats it: a message whose destinations
// all have an empty bucket (or, when it is not in the index, while the
// shared bucket is empty) is held as it is, without a stat of its file.
// A held-back episode then costs a directory walk per second, not a stat
// per deferred file per second.  Any other request for a deferred scan
// (a trigger, the queue_run_delay timer) makes the pass a full one, so
// that files marked since (g+r, g+x) are seen as before.
//
// What an administrator asks for explicitly is not ramped: a scan with the
// A modifier (postqueue -f, sendmail -q, postfix flush: "everything now"),
// and files marked g+r (postqueue -i) or g+x (postsuper -e).  Mail that
// flush(8) moves to incoming (postqueue -s, cqmgrctl flush) and mail
// requeued with postsuper -r comes in through incoming, which the ramp
// does not touch.  docs/design.md explains the choices.
#pragma once

#include "clock.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/protocol/asio.hpp"
#include "deferred_index.hpp"
#include "message.hpp"
#include "token_bucket.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <sys/types.h>
#include <unordered_map>
#include <vector>

namespace cqmgr::qmgr {

class RecoveryRamp {
  public:
    // `rescan` asks for another pass of the deferred scan.
    RecoveryRamp(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
                 std::function<void()> rescan);

    // True when cqmgr_recovery_rate is set.
    bool on() const { return rate_ > 0; }
    // A message that cqmgr moves to deferred: remembers its destinations
    // and times, for the ramp and for the dead backlog (dead_backlog.hpp),
    // which shares the index.
    void deferred(const Message& m);
    // Whether the due deferred file `id` may move to the active queue now
    // (taking tokens when it may); `scan_flags` are its scan's, `mode` the
    // file's.  False: leave it in deferred for a later pass.
    bool admit(const std::string& id, int scan_flags, mode_t mode);
    // Whether the file `id` can be held back without looking at it: in a
    // pass the ramp asked for alone, when none of its buckets may let it
    // pass now.  Takes no token.
    bool hold_unseen(const std::string& id);
    // The deferred scan's pass that begins now was asked for by the ramp
    // alone (`ramp_only`), or by something else as well.
    void pass_requested(bool ramp_only) { ramp_only_pass_ = ramp_only; }
    // The file `id` left deferred for the active queue (after admit()).
    void promoted(const std::string& id);
    // Message `id` left the active queue.
    void left_active(const std::string& id);
    // A pass of the deferred scan ended: with files held back, another
    // pass comes a second after this one began (at once when it took
    // longer), and the first such pass of an episode is logged.
    void pass_done();

    const DeferredIndex& index() const { return index_; }
    DeferredIndex& index() { return index_; }
    // Messages let through by `destination`'s bucket ("" for the shared
    // one) that are still in the active queue.
    int outstanding(const std::string& destination) const {
        auto it = outstanding_.find(destination);
        return it == outstanding_.end() ? 0 : it->second;
    }

  private:
    // The bucket of `destination` ("" for messages not in the index).
    TokenBucket& bucket(const std::string& destination, int64_t now_us);
    // True when `destination`'s bucket may let one more message through
    // (taking its token when `take`).
    bool may_pass(const std::string& destination, int64_t now_us, bool take = true);
    // Calls `f` with each bucket message `id` takes from: its destinations'
    // when it is in the index, else the shared one ("").
    template <class F> void for_each_bucket(const std::string& id, F f);
    // Notes the start of a pass at its first look-up.
    void begin_pass();
    // Forgets old index entries and full buckets, once per queue run.
    void sweep();

    const conf::QmgrParams& params_;
    const WallClock& clock_;
    std::function<void()> rescan_;
    double rate_;
    DeferredIndex index_;
    std::unordered_map<std::string, TokenBucket> buckets_;
    int cap_; // messages of one bucket in the active queue at most (2R)
    // Per bucket, the messages it let through still in the active queue;
    // per such message, its buckets.
    std::unordered_map<std::string, int> outstanding_;
    std::unordered_map<std::string, std::vector<std::string>> charged_;
    // The last file admit() let through, and the buckets it took from.
    std::string admitted_id_;
    std::vector<std::string> admitted_from_;
    int held_ = 0;                // files held back in the pass that runs
    bool in_pass_ = false;        // admit() was asked since the last pass_done()
    bool ramp_only_pass_ = false; // see pass_requested()
    std::chrono::steady_clock::time_point pass_begun_; // the first admit() of the pass
    bool episode_ = false;                             // the last pass held files back
    int64_t last_sweep_ = 0;
    asio::steady_timer rescan_timer_;
    bool rescan_armed_ = false;
};

} // namespace cqmgr::qmgr
