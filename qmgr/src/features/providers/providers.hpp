// Providers (cqmgr_provider_maps): which destination queues belong to
// which provider, so that the providers' limits (ClusterLimits with the
// provider scoping, cqmgr_provider_concurrency_limits and
// cqmgr_provider_rate_limits) can hold across all of them.
//
// Membership is decided when a queue is born: a destination whose name is
// listed in the maps belongs to that provider at once.  Otherwise, with an
// MX source (the DNS path), the destination's MX set is asked for and the
// queue starts on its own; when the answer comes, and the queue still
// exists, it joins the provider the answer names.  Nothing waits for DNS.
// A membership change is told to the listener (set_listener), never from
// inside a scheduler callback.  Membership goes with the queue
// (queue_freed).
//
// A destination outside every provider costs nothing per delivery: this
// observer hears only of queues' births and ends.
#pragma once

#include "cqmgr/protocol/asio.hpp"
#include "delivery_observer.hpp"
#include "mx_source.hpp"
#include "provider_maps.hpp"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

namespace cqmgr::qmgr {

class Providers : public DeliveryObserver {
  public:
    using Listener = std::function<void(const core::Queue&)>;

    Providers(asio::io_context& io, ProviderMaps maps, core::Scheduler& sched);

    // True when cqmgr_provider_maps names a table.
    bool active() const { return !maps_.empty(); }
    // The MX path (nullptr: only destinations listed by name are members).
    void use_mx(MxSource* mx) { mx_ = mx; }
    // Told of a queue whose membership changed after its birth.
    void set_listener(Listener l) { listener_ = std::move(l); }

    // The provider of queue `queue` of `transport`, or nullptr.
    const std::string* provider_of(const std::string& transport, const std::string& queue) const;
    // The number of the provider of queue `q` (0: none), for the
    // scheduler's sender limits per provider (Driver::queue_provider):
    // each provider has one for the daemon's life.
    uint32_t number_of(const core::Queue& q) const;
    // Every provider with members, and its members (transport, queue), in
    // order.
    using Members = std::set<std::pair<std::string, std::string>>;
    const std::map<std::string, Members>& members() const { return by_provider_; }
    const ProviderMaps& maps() const { return maps_; }

    // The domain whose MX set tells the provider of a destination named
    // `name`, or nothing: a literal ([host]) is not looked up, and a
    // port is not part of the domain.
    static std::optional<std::string> mx_domain(const std::string& name);

    // DeliveryObserver
    void queue_born(const core::Queue& q, std::optional<int>& gate) override;
    void queue_freed(const core::Queue& q) override;

  private:
    static std::string key_of(const std::string& transport, const std::string& queue) {
        return transport + '\0' + queue;
    }
    // Makes queue `key` a member of `provider` ("" for none).
    void set_member(const std::string& transport, const std::string& queue,
                    const std::string& provider);
    // The MX source's answer for a queue (lookup `seq`).
    void answered(const std::string& transport, const std::string& queue, uint64_t seq,
                  const std::string& provider);

    asio::io_context& io_;
    ProviderMaps maps_;
    core::Scheduler& sched_;
    MxSource* mx_ = nullptr;
    Listener listener_;
    // By transport + '\0' + queue: the provider, and whether the queue is
    // listed by name (then no MX answer changes it).
    struct Membership {
        std::string provider;
        bool listed = false;
    };
    std::unordered_map<std::string, Membership> member_;
    // Each provider's number (number_of), given as it first has a member.
    std::unordered_map<std::string, uint32_t> numbers_;
    std::map<std::string, Members> by_provider_;
    // Queues waiting for their MX answer, by key: the lookup's number (an
    // answer for a queue since freed and born again is not its own).
    std::unordered_map<std::string, uint64_t> pending_;
    uint64_t seq_ = 0;
};

} // namespace cqmgr::qmgr
