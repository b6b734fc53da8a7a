// Sender groups (cqmgr_sender_limits): the limits one sender's mail has on
// one destination or provider, whatever other senders' mail does there.
//
// The daemon gives a message a group (a small number; 0 is none) when it
// takes the message in, and tells the scheduler the group's limit once
// (Scheduler::set_sender_limit).  The scheduler keeps, per transport, one
// SenderLoad for each group and scope with mail (the scope of a queue is
// the destination itself, or with a limit per provider the queue's
// provider, which the driver tells: sender_scope_key()), which counts the
// group's deliveries there and the state of its rate, and one SenderPart
// per group and queue with the group's waiting entries.  A job whose group is at its limit on a
// queue is passed over in the job walk and in the search for a preempting job, as a job whose
// queues are all at their windows is, while other senders' jobs for the
// same queue go ahead (sender.cpp).
#pragma once

#include <cstdint>

namespace cqmgr::core {

// A message's sender group: 0 is none (the mail of every sender not in
// cqmgr_sender_limits, which costs nothing).
using SenderGroup = uint16_t;

// What a sender limit counts across: one destination (queue), or every
// destination of a provider on the transport (Queue::provider; a queue
// outside every provider is counted on its own).
enum class SenderPer : uint8_t { destination, provider };

// The limit of one sender group, as cqmgr_sender_limits gives it:
// `[concurrency=N] [rate=N/PERIOD[,BURST]] per destination|provider`.
struct SenderLimit {
    int concurrency = 0;        // deliveries in flight per scope; 0 = no limit
    int64_t rate_count = 0;     // starts per rate_period_ms per scope; 0 = no rate
    int64_t rate_period_ms = 0; // >= 1 with a rate
    int64_t rate_burst = 0;     // starts at once after a quiet spell; >= 1 with a rate
    SenderPer per = SenderPer::destination;

    bool operator==(const SenderLimit&) const = default;
    // Whether it limits anything at all.
    bool any() const { return concurrency > 0 || rate_count > 0; }
    // The spacing of starts at the steady rate, in seconds (the core's
    // clock); 0 without a rate.
    double interval() const {
        return rate_count > 0
                   ? static_cast<double>(rate_period_ms) / 1000.0 / static_cast<double>(rate_count)
                   : 0.0;
    }
};

} // namespace cqmgr::core
