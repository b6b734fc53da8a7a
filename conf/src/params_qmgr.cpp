// qmgr(8)'s own parameters and their per-transport overrides, with their
// Postfix 3.7.11 defaults and bounds, and the QmgrParams and
// TransportParams members each fills.
#include "param_rows.hpp"

namespace cqmgr::conf {

namespace {

using namespace rows;
constexpr auto Qm = ParamReader::Qmgr;
using TP = TransportParams;

// qmgr's own parameter tables in the order the trigger server reads them:
// int, str, bool, time.
constexpr auto kQmgr = std::to_array<ParamSpec>({
    P("qmgr_message_active_limit", T::Int, "20000", 1, 0, Qm, true, "messages in the active queue")
        .to(&Q::qmgr_message_active_limit),
    P("qmgr_message_recipient_limit", T::Int, "20000", 1, 0, Qm, true,
      "in-memory recipients; raised to the active limit")
        .to(&Q::qmgr_message_recipient_limit),
    P("qmgr_message_recipient_minimum", T::Int, "10", 1, 0, Qm, true,
      "recipients read per message at least")
        .to(&Q::qmgr_message_recipient_minimum),
    P("default_recipient_limit", T::Int, "20000", 0, 0, Qm, true, "per-transport recipient pool")
        .to(&Q::default_recipient_limit),
    P("default_extra_recipient_limit", T::Int, "1000", 0, 0, Qm, true,
      "extra slots for stacked jobs")
        .to(&Q::default_extra_recipient_limit),
    P("default_recipient_refill_limit", T::Int, "100", 1, 0, Qm, true,
      "refill when this many slots are free")
        .to(&Q::default_recipient_refill_limit),
    P("default_delivery_slot_cost", T::Int, "5", 0, 0, Qm, true, "deliveries per preemption slot")
        .to(&Q::default_delivery_slot_cost),
    P("default_delivery_slot_loan", T::Int, "3", 0, 0, Qm, true, "preemption loan")
        .to(&Q::default_delivery_slot_loan),
    P("default_delivery_slot_discount", T::Int, "50", 0, 100, Qm, true, "percent discount on slots")
        .to(&Q::default_delivery_slot_discount),
    P("default_minimum_delivery_slots", T::Int, "3", 0, 0, Qm, true,
      "slots before preemption applies")
        .to(&Q::default_minimum_delivery_slots),
    P("initial_destination_concurrency", T::Int, "5", 1, 0, Qm, true, "initial window")
        .to(&Q::initial_destination_concurrency),
    P("default_destination_concurrency_limit", T::Int, "20", 0, 0, Qm, true,
      "parallel deliveries per destination")
        .to(&Q::default_destination_concurrency_limit),
    P("default_destination_recipient_limit", T::Int, "50", 0, 0, Qm, true,
      "recipients per delivery")
        .to(&Q::default_destination_recipient_limit),
    P("local_destination_recipient_limit", T::Int, "1", 0, 0, Qm, true,
      "local transport's own default")
        .to(&Q::local_destination_recipient_limit),
    P("local_destination_concurrency_limit", T::Int, "2", 0, 0, Qm, true,
      "local transport's own default")
        .to(&Q::local_destination_concurrency_limit),
    P("default_destination_concurrency_failed_cohort_limit", T::Int, "1", 0, 0, Qm, true,
      "failed cohorts before a destination is dead")
        .to(&Q::default_destination_concurrency_failed_cohort_limit),
    P("address_verify_pending_request_limit", T::Int, "5000", 1, 0, Qm, true,
      "probe messages in memory")
        .to(&Q::address_verify_pending_request_limit),
    P("defer_transports", T::String, "", 0, 0, Qm, true, "transports that defer everything")
        .to(&Q::defer_transports),
    P("default_destination_concurrency_positive_feedback", T::String, "1", 1, 0, Qm, true,
      "window increase per success")
        .to(&Q::default_destination_concurrency_positive_feedback),
    P("default_destination_concurrency_negative_feedback", T::String, "1", 1, 0, Qm, true,
      "window decrease per failure")
        .to(&Q::default_destination_concurrency_negative_feedback),
    P("default_filter_nexthop", T::String, "", 0, 0, Qm, true,
      "nexthop for content filters without one")
        .to(&Q::default_filter_nexthop),
    P("disable_verp_bounces", T::Bool, "no", 0, 0, Qm, true, "plain instead of VERP bounce flushes")
        .to(&Q::disable_verp_bounces),
    P("destination_concurrency_feedback_debug", T::Bool, "no", 0, 0, Qm, true,
      "feedback debug logging")
        .to(&Q::destination_concurrency_feedback_debug),
    P("confirm_delay_cleared", T::Bool, "no", 0, 0, Qm, true,
      "report delivery after a delay warning")
        .to(&Q::confirm_delay_cleared),
    P("queue_run_delay", T::Time, "300s", 1, 0, Qm, true, "deferred queue scan period")
        .to(&Q::queue_run_delay),
    P("minimal_backoff_time", T::Time, "300s", 1, 0, Qm, true, "smallest retry delay")
        .to(&Q::minimal_backoff_time),
    P("maximal_backoff_time", T::Time, "4000s", 1, 0, Qm, true, "largest retry delay")
        .to(&Q::maximal_backoff_time),
    P("maximal_queue_lifetime", T::Time, "5d", 0, 8640000, Qm, true, "expiry of normal mail")
        .to(&Q::maximal_queue_lifetime),
    P("bounce_queue_lifetime", T::Time, "5d", 0, 8640000, Qm, true, "expiry of null-sender mail")
        .to(&Q::bounce_queue_lifetime),
    P("transport_retry_time", T::Time, "60s", 1, 0, Qm, true, "dead transport throttle time")
        .to(&Q::transport_retry_time),
    P("qmgr_clog_warn_time", T::Time, "300s", 0, 0, Qm, true, "clog warning interval (0: off)")
        .to(&Q::qmgr_clog_warn_time),
    P("default_recipient_refill_delay", T::Time, "5s", 1, 0, Qm, true, "refill after this long")
        .to(&Q::default_recipient_refill_delay),
    P("default_transport_rate_delay", T::Time, "0s", 0, 0, Qm, true,
      "pause between deliveries per transport")
        .to(&Q::default_transport_rate_delay),
    P("default_destination_rate_delay", T::Time, "0s", 0, 0, Qm, true,
      "pause between deliveries per destination")
        .to(&Q::default_destination_rate_delay),
    P("qmgr_daemon_timeout", T::Time, "1000s", 1, 0, Qm, true, "watchdog")
        .to(&Q::qmgr_daemon_timeout),
    P("qmgr_ipc_timeout", T::Time, "60s", 1, 0, Qm, true, "IPC timeout").to(&Q::qmgr_ipc_timeout),
});

static_assert(rows::all_fit(kQmgr));

// qmgr_transport_create()'s order.
constexpr auto kSuffixes = std::to_array<TransportSuffix>({
    S(kQmgr, "_destination_concurrency_limit", "default_destination_concurrency_limit",
      {.number = &TP::destination_concurrency_limit}, "local_destination_concurrency_limit"),
    S(kQmgr, "_destination_recipient_limit", "default_destination_recipient_limit",
      {.number = &TP::destination_recipient_limit}, "local_destination_recipient_limit"),
    S(kQmgr, "_initial_destination_concurrency", "initial_destination_concurrency",
      {.number = &TP::initial_destination_concurrency}),
    S(kQmgr, "_transport_rate_delay", "default_transport_rate_delay",
      {.number = &TP::transport_rate_delay}),
    S(kQmgr, "_destination_rate_delay", "default_destination_rate_delay",
      {.number = &TP::destination_rate_delay}),
    S(kQmgr, "_delivery_slot_cost", "default_delivery_slot_cost",
      {.number = &TP::delivery_slot_cost}),
    S(kQmgr, "_delivery_slot_loan", "default_delivery_slot_loan",
      {.number = &TP::delivery_slot_loan}),
    S(kQmgr, "_delivery_slot_discount", "default_delivery_slot_discount",
      {.number = &TP::delivery_slot_discount}),
    S(kQmgr, "_minimum_delivery_slots", "default_minimum_delivery_slots",
      {.number = &TP::minimum_delivery_slots}),
    S(kQmgr, "_recipient_limit", "default_recipient_limit", {.number = &TP::recipient_limit}),
    S(kQmgr, "_extra_recipient_limit", "default_extra_recipient_limit",
      {.number = &TP::extra_recipient_limit}),
    S(kQmgr, "_recipient_refill_limit", "default_recipient_refill_limit",
      {.number = &TP::recipient_refill_limit}),
    S(kQmgr, "_recipient_refill_delay", "default_recipient_refill_delay",
      {.number = &TP::recipient_refill_delay}),
    S(kQmgr, "_destination_concurrency_positive_feedback",
      "default_destination_concurrency_positive_feedback",
      {.text = &TP::positive_feedback_param, .feedback = &TP::positive_feedback}),
    S(kQmgr, "_destination_concurrency_negative_feedback",
      "default_destination_concurrency_negative_feedback",
      {.text = &TP::negative_feedback_param, .feedback = &TP::negative_feedback}),
    S(kQmgr, "_destination_concurrency_failed_cohort_limit",
      "default_destination_concurrency_failed_cohort_limit",
      {.number = &TP::destination_concurrency_failed_cohort_limit}),
});

static_assert(rows::all_suffixes_fit(kSuffixes));

} // namespace

std::span<const ParamSpec> qmgr_params() {
    return kQmgr;
}

std::span<const TransportSuffix> transport_suffixes() {
    return kSuffixes;
}

} // namespace cqmgr::conf
