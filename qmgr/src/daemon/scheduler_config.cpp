#include "scheduler_config.hpp"

namespace cqmgr::qmgr {

core::SchedulerConfig scheduler_config(const conf::QmgrParams& p, bool verbose) {
    core::SchedulerConfig c;
    c.verbose = verbose;
    c.message_recipient_limit = static_cast<int>(p.qmgr_message_recipient_limit);
    c.message_recipient_minimum = static_cast<int>(p.qmgr_message_recipient_minimum);
    c.minimal_backoff_time = static_cast<int>(p.minimal_backoff_time);
    c.transport_retry_time = static_cast<int>(p.transport_retry_time);
    // helpful_warnings = no silences the clog warnings.
    c.clog_warn_time = p.helpful_warnings ? static_cast<int>(p.qmgr_clog_warn_time) : 0;
    c.message_active_limit = static_cast<int>(p.qmgr_message_active_limit);
    return c;
}

core::Feedback core_feedback(const conf::Feedback& f) {
    core::Feedback c;
    using Kind = core::Feedback::Kind;
    c.kind = !f.per_concurrency ? Kind::constant
             : f.sqrt           ? Kind::per_sqrt_window
                                : Kind::per_window;
    c.base = f.base;
    return c;
}

core::TransportConfig transport_config(const conf::TransportParams& t) {
    auto i = [](int64_t v) { return static_cast<int>(v); };
    core::TransportConfig c;
    c.dest_concurrency_limit = i(t.destination_concurrency_limit);
    c.init_dest_concurrency = i(t.initial_destination_concurrency);
    c.dest_recipient_limit = i(t.destination_recipient_limit);
    c.recipient_limit = i(t.recipient_limit);
    c.extra_recipient_limit = i(t.extra_recipient_limit);
    c.refill_limit = i(t.recipient_refill_limit);
    c.refill_delay = i(t.recipient_refill_delay);
    c.slot_cost = i(t.delivery_slot_cost);
    c.slot_loan = i(t.delivery_slot_loan);
    c.slot_discount = i(t.delivery_slot_discount);
    c.min_slots = i(t.minimum_delivery_slots);
    c.fail_cohort_limit = i(t.destination_concurrency_failed_cohort_limit);
    c.pos_feedback = core_feedback(t.positive_feedback);
    c.neg_feedback = core_feedback(t.negative_feedback);
    c.dest_rate_delay = i(t.destination_rate_delay);
    c.transport_rate_delay = i(t.transport_rate_delay);
    return c;
}

namespace {
// Transport `t`'s process limit from master.cf, 0 when unknown.
int process_limit(const conf::TransportParams& t, const conf::QmgrParams& p) {
    auto limit = p.transport_process_limits.find(t.name);
    return limit == p.transport_process_limits.end() ? 0 : static_cast<int>(limit->second);
}
} // namespace

void share_config(core::TransportConfig& c, const conf::TransportParams& t,
                  const conf::QmgrParams& p) {
    if (!p.lanes() && !p.destination_shares) return;
    c.process_limit = process_limit(t, p);
    if (p.lanes()) {
        c.urgent_share = static_cast<int>(t.cqmgr_urgent_agent_share);
        c.bulk_share = static_cast<int>(p.cqmgr_bulk_agent_share);
    }
    c.dest_share = static_cast<int>(t.cqmgr_destination_agent_share);
}

core::SchedulerPolicy core_policy(const std::string& name) {
    return name == "finch" ? core::SchedulerPolicy::finch : core::SchedulerPolicy::rak;
}

void policy_config(core::TransportConfig& c, const conf::TransportParams& t,
                   const conf::QmgrParams& p) {
    c.policy = core_policy(t.cqmgr_scheduler_policy);
    if (c.policy == core::SchedulerPolicy::finch) c.process_limit = process_limit(t, p);
}

} // namespace cqmgr::qmgr
