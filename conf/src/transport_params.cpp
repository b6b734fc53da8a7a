#include "cqmgr/conf/transport_params.hpp"

#include "cqmgr/conf/scheduler_policy.hpp"

namespace cqmgr::conf {

namespace {

// Reads <transport><suffix> as an int, or returns the typed global.
int64_t int2(const MainCf& cf, const std::string& t, const char* suffix, int64_t fallback,
             int64_t min, int64_t max) {
    std::string name = t + suffix;
    if (!cf.is_known(name)) return fallback; // Postfix checks the fallback too; it already passed
    return cf.integer(name, fallback, min, max);
}

// Reads <transport><suffix> as a time (bare numbers in seconds), or returns
// the typed global.
int64_t time2(const MainCf& cf, const std::string& t, const char* suffix, int64_t fallback,
              int64_t min) {
    std::string name = t + suffix;
    if (!cf.is_known(name)) return fallback;
    return cf.time(name, "0s", 's', min, 0);
}

// Reads a feedback value: <transport><suffix>, else the global's text.  A
// malformed value warns and gives the neutral feedback 1.  `param` gets the
// name of the parameter the value is attributed to.
Feedback feedback(const MainCf& cf, const std::string& t, const char* suffix,
                  const char* global_name, const std::string& global_value,
                  const MainCf::Warn& warn, std::string& param) {
    std::string name = t + suffix;
    std::string value = cf.is_known(name) ? cf.str(name, global_value, 1) : global_value;
    param = value != global_value ? name : std::string(global_name);
    if (auto fb = parse_feedback(value)) return *fb;
    if (warn) warn(param + ": ignoring malformed or unreasonable feedback: " + value);
    return Feedback{};
}

} // namespace

TransportParams read_transport_params(const MainCf& cf, const QmgrParams& g, const std::string& t,
                                      const MainCf::Warn& warn) {
    TransportParams p;
    p.name = t;
    // `local` has registered defaults of its own for these two (2 and 1).
    p.destination_concurrency_limit = int2(cf, t, "_destination_concurrency_limit",
                                           t == "local" ? g.local_destination_concurrency_limit
                                                        : g.default_destination_concurrency_limit,
                                           0, 0);
    p.destination_recipient_limit = int2(cf, t, "_destination_recipient_limit",
                                         t == "local" ? g.local_destination_recipient_limit
                                                      : g.default_destination_recipient_limit,
                                         0, 0);
    p.initial_destination_concurrency =
        int2(cf, t, "_initial_destination_concurrency", g.initial_destination_concurrency, 1, 0);
    p.transport_rate_delay =
        time2(cf, t, "_transport_rate_delay", g.default_transport_rate_delay, 0);
    p.destination_rate_delay =
        time2(cf, t, "_destination_rate_delay", g.default_destination_rate_delay, 0);
    if (p.destination_rate_delay > 0) p.destination_concurrency_limit = 1;
    if (p.destination_concurrency_limit != 0 &&
        p.destination_concurrency_limit < p.initial_destination_concurrency)
        p.initial_destination_concurrency = p.destination_concurrency_limit;
    p.delivery_slot_cost = int2(cf, t, "_delivery_slot_cost", g.default_delivery_slot_cost, 0, 0);
    p.delivery_slot_loan = int2(cf, t, "_delivery_slot_loan", g.default_delivery_slot_loan, 0, 0);
    p.delivery_slot_discount =
        int2(cf, t, "_delivery_slot_discount", g.default_delivery_slot_discount, 0, 100);
    p.minimum_delivery_slots =
        int2(cf, t, "_minimum_delivery_slots", g.default_minimum_delivery_slots, 0, 0);
    p.recipient_limit = int2(cf, t, "_recipient_limit", g.default_recipient_limit, 0, 0);
    p.extra_recipient_limit =
        int2(cf, t, "_extra_recipient_limit", g.default_extra_recipient_limit, 0, 0);
    p.recipient_refill_limit =
        int2(cf, t, "_recipient_refill_limit", g.default_recipient_refill_limit, 1, 0);
    p.recipient_refill_delay =
        time2(cf, t, "_recipient_refill_delay", g.default_recipient_refill_delay, 1);
    p.positive_feedback = feedback(cf, t, "_destination_concurrency_positive_feedback",
                                   "default_destination_concurrency_positive_feedback",
                                   g.default_destination_concurrency_positive_feedback, warn,
                                   p.positive_feedback_param);
    p.negative_feedback = feedback(cf, t, "_destination_concurrency_negative_feedback",
                                   "default_destination_concurrency_negative_feedback",
                                   g.default_destination_concurrency_negative_feedback, warn,
                                   p.negative_feedback_param);
    p.destination_concurrency_failed_cohort_limit =
        int2(cf, t, "_destination_concurrency_failed_cohort_limit",
             g.default_destination_concurrency_failed_cohort_limit, 0, 0);
    p.cqmgr_urgent_agent_share =
        int2(cf, t, "_cqmgr_urgent_agent_share", g.cqmgr_urgent_agent_share, 0, 100);
    std::string share = t + "_cqmgr_destination_agent_share";
    p.cqmgr_destination_agent_share =
        cf.is_known(share) ? cf.percent(share, 0) : g.cqmgr_destination_agent_share;
    p.cqmgr_scheduler_policy =
        read_scheduler_policy(cf, t + "_cqmgr_scheduler_policy", g.cqmgr_scheduler_policy);
    return p;
}

TransportTable::TransportTable(const MainCf& cf, const QmgrParams& globals, MainCf::Warn warn)
    : cf_(cf), globals_(globals), warn_(std::move(warn)) {}

const TransportParams& TransportTable::get(const std::string& transport) {
    if (auto it = cache_.find(transport); it != cache_.end()) return it->second;
    return cache_.emplace(transport, read_transport_params(cf_, globals_, transport, warn_))
        .first->second;
}

} // namespace cqmgr::conf
