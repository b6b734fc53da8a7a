// The adaptive limits' provider scope (cqmgr_adaptive_limit_scope =
// provider): the member queues of a provider on a transport that learns
// limits form one group, which learns one limit from the strikes of all of
// them (docs/admin-guide.md, "Adaptive limits").  This observer keeps
// which group each queue is in, by queue slot, and each group's deliveries
// in flight, the count a strike is read against.
//
// Membership is the providers' (Providers): read at a queue's birth (this
// observer hears after them) and when a queue joins later (joined(), from
// the providers' listener); it goes with the queue.  A queue that joins
// with deliveries in flight brings them into its group's count, and their
// ends take them out.  A queue outside every provider costs one look at a
// slot per delivery, nothing more.
#pragma once

#include "cqmgr/core/scheduler.hpp"
#include "delivery_observer.hpp"

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cqmgr::qmgr {

class Providers;

class ProviderScope : public DeliveryObserver {
  public:
    // The members of one provider on one transport.
    struct Group {
        std::string transport;
        std::string provider;
        // Its name as a learned limit's target: "provider NAME" (no queue
        // is named with a space).
        core::AdminTarget target;
        int busy = 0; // deliveries in flight, over every member
    };
    // Whether a transport learns limits (only its queues join a group).
    using Covers = std::function<bool(const core::Transport&)>;

    ProviderScope(const Providers& providers, Covers covers);

    // The group of queue `q`, or nullptr: a look at its slot.
    Group* group(const core::Queue& q) const {
        return q.slot < by_slot_.size() ? by_slot_[q.slot] : nullptr;
    }
    // Queue `q` joined a provider after its birth (the providers' listener).
    void joined(const core::Queue& q);

    // The target a group's learned limit is kept under: transport and
    // "provider NAME".
    static core::AdminTarget target_of(const std::string& transport, const std::string& provider);
    // The provider a target names, if it is a group's ("" otherwise).
    static std::string provider_in(const core::AdminTarget& target);

    // DeliveryObserver
    void queue_born(const core::Queue& q, std::optional<int>& gate) override;
    void queue_freed(const core::Queue& q) override;

  private:
    // Puts queue `q` in the group of its provider (none: in no group).
    void place(const core::Queue& q);

    const Providers& providers_;
    Covers covers_;
    // By (transport, provider); a group stays once made (a provider has a
    // name from the admin's maps: their number is bounded).
    std::map<std::pair<std::string, std::string>, Group> groups_;
    std::vector<Group*> by_slot_;
};

} // namespace cqmgr::qmgr
