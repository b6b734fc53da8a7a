// Every bound a feature may place on one destination (queue), as one value,
// and the one place where they combine into what selection uses.
//
//   hold     the administrator's suspension: no new delivery starts
//   cap      the administrator's concurrency cap
//   learned  what the adaptive limits learned from the receivers: a
//            concurrency cap, a pause after each delivery, and a hold
//            until a fixed window's quota comes back
//   share    the destination share: at most this many deliveries in flight
//            while other destinations of the transport want agents
//            (work-conserving, with a slow start: share.cpp)
//   gate     the driver's gate (cluster leases, rate tokens it holds)
//   rule     what a reply rule's action set (the daemon's
//            cqmgr_reply_actions): a hold, a cap and a pause after each
//            delivery, each until the rule's time is over
//
// None of them makes a queue dead or pauses it (Queue::ready() does not
// read them): its deliveries in flight still give feedback and its
// concurrency window still moves.  They only stop or narrow new selections,
// and a bound below what is in flight takes nothing back.
#pragma once

#include "cqmgr/core/admin.hpp"
#include "cqmgr/core/learned.hpp"

#include <cstdint>
#include <optional>
#include <utility>

namespace cqmgr::core {

// Which of the bounds a change sets (Scheduler::set_limit, LimitBook).
enum class Bound : uint8_t { hold, cap, learned, share, gate, rule };

// A reply rule's action on a queue, or on every queue of a transport: no
// new delivery while `hold`, at most `concurrency` at once (0: no cap), a
// pause of `pause` seconds after each delivery (0: none, as a learned
// pause: one delivery at a time then).  It ends by itself at `until` (0:
// when the driver ends it).  Like the others it only stops or narrows new
// selections: it never makes a queue dead, so nothing is deferred by it.
struct RuleLimit {
    bool hold = false;
    int concurrency = 0;
    int pause = 0;
    int64_t until = 0;

    bool any() const { return hold || concurrency > 0 || pause > 0; }
    bool operator==(const RuleLimit&) const = default;
};

struct Limits {
    std::optional<AdminHold> hold;
    std::optional<AdminCap> cap;
    LearnedLimit learned;
    int share = 0; // deliveries in flight; 0 = none
    // The share binds even while no other destination waits: a probe of
    // one delivery after a death, which is about the receiver, not about
    // the agents.
    bool share_always = false;
    std::optional<int> gate; // deliveries in flight; none = no gate
    std::optional<RuleLimit> rule;

    bool operator==(const Limits&) const = default;

    // No new delivery may start.
    bool stopped() const {
        return hold.has_value() || (rule && rule->hold) || learned.held_until != 0;
    }
    // The window selection works with, given the concurrency window
    // `window`: the smallest bound, and one delivery at a time while a
    // pause (learned or a rule's) applies; the share counts only
    // `with_share` (it binds only while other destinations want agents,
    // share.cpp), and no more of it than the queue has `earned` (its slow
    // start, share.cpp).  Inline: selection asks for every queue it looks
    // at.
    int window(int window, bool with_share = true, int earned = 0x7fffffff) const {
        int w = cap && cap->concurrency < window ? cap->concurrency : window;
        if (learned.concurrency > 0 && learned.concurrency < w) w = learned.concurrency;
        if ((with_share || share_always) && share > 0) {
            int s = share < earned ? share : earned;
            if (s < w) w = s;
        }
        if (rule && rule->concurrency > 0 && rule->concurrency < w) w = rule->concurrency;
        if (pause() > 0 && w > 1) w = 1;
        return gate && *gate < w ? *gate : w;
    }
    // Seconds to pause after each delivery the receiver saw, the longer of
    // the learned and the rule's pause; 0 = none.
    int pause() const {
        return rule && rule->pause > learned.rate_delay ? rule->pause : learned.rate_delay;
    }
};

// A change to one bound: which, and its new value in that field of
// `value` (the other fields are not read).  An empty value removes the
// bound: no hold, no cap, nothing learned, a share of 0, no gate.
struct LimitChange {
    Bound which = Bound::hold;
    Limits value;

    static LimitChange hold(std::optional<AdminHold> hold) {
        LimitChange c{Bound::hold, {}};
        c.value.hold = std::move(hold);
        return c;
    }
    static LimitChange cap(std::optional<AdminCap> cap) {
        LimitChange c{Bound::cap, {}};
        c.value.cap = cap;
        return c;
    }
    static LimitChange learned(LearnedLimit learned) {
        LimitChange c{Bound::learned, {}};
        c.value.learned = learned;
        return c;
    }
    static LimitChange share(int agents, bool always = false) {
        LimitChange c{Bound::share, {}};
        c.value.share = agents;
        c.value.share_always = always;
        return c;
    }
    static LimitChange gate(std::optional<int> gate) {
        LimitChange c{Bound::gate, {}};
        c.value.gate = gate;
        return c;
    }
    static LimitChange rule(std::optional<RuleLimit> rule) {
        LimitChange c{Bound::rule, {}};
        c.value.rule = rule;
        return c;
    }
};

} // namespace cqmgr::core
