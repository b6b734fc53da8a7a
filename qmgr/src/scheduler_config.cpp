#include "scheduler_config.hpp"

#include "feedback_debug.hpp"
#include "log.hpp"

namespace cqmgr::qmgr {

core::SchedulerConfig scheduler_config(const conf::QmgrParams& p) {
    core::SchedulerConfig c;
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
    c.kind = f.per_concurrency ? core::Feedback::Kind::per_window : core::Feedback::Kind::constant;
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

TransportSettings::TransportSettings(const conf::MainCf& cf, const conf::QmgrParams& params)
    : params_(params),
      table_(cf, params, [this](const std::string& w) { warnings_.push_back(w); }) {}

core::TransportConfig TransportSettings::operator()(const std::string& transport) {
    try {
        warnings_.clear();
        const conf::TransportParams& t = table_.get(transport);
        // Stock reads each feedback value, warns about it, then shows it
        // in a debug line, before the next one: the same order here.
        auto show = [&](const std::string& param, const conf::Feedback& fb) {
            std::string prefix = param + ": ";
            std::erase_if(warnings_, [&](const std::string& w) {
                if (!w.starts_with(prefix)) return false;
                log::warn(w);
                return true;
            });
            if (params_.destination_concurrency_feedback_debug)
                log_feedback_setting(transport, param, core_feedback(fb),
                                     static_cast<int>(params_.initial_destination_concurrency));
        };
        show(t.positive_feedback_param, t.positive_feedback);
        show(t.negative_feedback_param, t.negative_feedback);
        for (const auto& w : warnings_)
            log::warn(w);
        return transport_config(t);
    } catch (const conf::ConfigError& e) {
        log::fatal(e.postfix_text());
    }
}

} // namespace cqmgr::qmgr
