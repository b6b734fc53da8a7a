// Per-transport scheduling parameters, read the first time a transport name
// (from the resolver) is seen and cached from then on, like qmgr(8)'s
// qmgr_transport_create(): <transport>_destination_concurrency_limit and the
// other 15 suffixes of param_table.hpp, each falling back to its default_*
// global when unset (`local` has its own concurrency 2 and recipient limit
// 1), then cqmgr's own suffixes.  The suffix tables name the member each
// fills; the members hold no defaults of their own.  Bad values throw ConfigError at that first
// use, as stock qmgr stops then; a malformed feedback value only warns (without a file and line, as
// stock words it) and uses 1.
#pragma once

#include "cqmgr/conf/feedback.hpp"
#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/conf/qmgr_params.hpp"

#include <cstdint>
#include <map>
#include <string>

namespace cqmgr::conf {

struct TransportParams {
    std::string name;
    // Values as qmgr uses them: a destination rate delay forces the
    // concurrency limit to 1, and the initial concurrency is capped at a
    // non-zero concurrency limit.
    int64_t destination_concurrency_limit{};
    int64_t destination_recipient_limit{};
    int64_t initial_destination_concurrency{};
    int64_t transport_rate_delay{};   // seconds
    int64_t destination_rate_delay{}; // seconds
    int64_t delivery_slot_cost{};
    int64_t delivery_slot_loan{};
    int64_t delivery_slot_discount{}; // percent
    int64_t minimum_delivery_slots{};
    int64_t recipient_limit{};
    int64_t extra_recipient_limit{};
    int64_t recipient_refill_limit{};
    int64_t recipient_refill_delay{}; // seconds
    Feedback positive_feedback;
    Feedback negative_feedback;
    // The parameter each feedback value came from, as stock names it in
    // warnings and debug lines: the transport's own parameter when its
    // value differs from the global's, else the global.
    std::string positive_feedback_param;
    std::string negative_feedback_param;
    int64_t destination_concurrency_failed_cohort_limit{};
    // Priority lanes: <transport>_cqmgr_urgent_agent_share, else the global.
    int64_t cqmgr_urgent_agent_share{};
    // Slow-destination isolation: <transport>_cqmgr_destination_agent_share
    // ("N" or "N%"), else the global.
    int64_t cqmgr_destination_agent_share{};
    // <transport>_cqmgr_scheduler_policy, else the global: rak or finch.
    std::string cqmgr_scheduler_policy;
};

// Reads the parameters of one transport (no caching).  `globals` supplies
// the default_* fallbacks.
TransportParams read_transport_params(const MainCf& cf, const QmgrParams& globals,
                                      const std::string& transport, const MainCf::Warn& warn = {});

// The lazy, caching lookup the scheduler uses.
class TransportTable {
  public:
    TransportTable(const MainCf& cf, const QmgrParams& globals, MainCf::Warn warn = {});

    // The parameters of `transport`, read on first use.  Throws ConfigError
    // (and caches nothing) when a value is bad.
    const TransportParams& get(const std::string& transport);

    // Number of transports read so far.
    size_t size() const { return cache_.size(); }

  private:
    const MainCf& cf_;
    const QmgrParams& globals_;
    MainCf::Warn warn_;
    std::map<std::string, TransportParams, std::less<>> cache_;
};

} // namespace cqmgr::conf
