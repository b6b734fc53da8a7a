#include "scheduler_config.hpp"
#include "test_params.hpp"

#include <gtest/gtest.h>

using namespace cqmgr;

using qmgr::testing::Config;

TEST(SchedulerConfig, GlobalsComeFromQmgrParams) {
    Config c("qmgr_message_active_limit = 300\n"
             "qmgr_message_recipient_limit = 100\n" // raised to the active limit
             "qmgr_message_recipient_minimum = 7\n"
             "minimal_backoff_time = 2m\n"
             "transport_retry_time = 9\n"
             "qmgr_clog_warn_time = 11\n");
    core::SchedulerConfig s = qmgr::scheduler_config(c.params);
    EXPECT_EQ(s.message_active_limit, 300);
    EXPECT_EQ(s.message_recipient_limit, 300);
    EXPECT_EQ(s.message_recipient_minimum, 7);
    EXPECT_EQ(s.minimal_backoff_time, 120);
    EXPECT_EQ(s.transport_retry_time, 9);
    EXPECT_EQ(s.clog_warn_time, 11);
}

TEST(SchedulerConfig, HelpfulWarningsOffSilencesClogWarnings) {
    Config c("helpful_warnings = no\n");
    EXPECT_EQ(qmgr::scheduler_config(c.params).clog_warn_time, 0);
}

TEST(SchedulerConfig, TransportValuesComeFromTransportParams) {
    Config c("relay_destination_concurrency_limit = 4\n"
             "relay_initial_destination_concurrency = 9\n" // capped at the limit
             "relay_destination_recipient_limit = 3\n"
             "relay_delivery_slot_discount = 20\n"
             "default_recipient_refill_delay = 1m\n"
             "relay_destination_concurrency_positive_feedback = 1/Concurrency\n"
             "relay_destination_concurrency_negative_feedback = 1/4\n"
             "relay_transport_rate_delay = 2s\n");
    auto t = qmgr::transport_config(conf::read_transport_params(c.cf, c.params, "relay"));
    EXPECT_EQ(t.dest_concurrency_limit, 4);
    EXPECT_EQ(t.init_dest_concurrency, 4);
    EXPECT_EQ(t.dest_recipient_limit, 3);
    EXPECT_EQ(t.slot_discount, 20);
    EXPECT_EQ(t.refill_delay, 60);
    EXPECT_EQ(t.transport_rate_delay, 2);
    // Any case of "concurrency" is the per-window form, as in Postfix.
    EXPECT_EQ(t.pos_feedback.kind, core::Feedback::Kind::per_window);
    EXPECT_DOUBLE_EQ(t.pos_feedback.value(4), 0.25);
    EXPECT_EQ(t.neg_feedback.kind, core::Feedback::Kind::constant);
    EXPECT_DOUBLE_EQ(t.neg_feedback.value(4), 0.25);
}

TEST(SchedulerConfig, LocalHasItsOwnDefaults) {
    Config c("");
    auto t = qmgr::transport_config(conf::read_transport_params(c.cf, c.params, "local"));
    EXPECT_EQ(t.dest_concurrency_limit, 2);
    EXPECT_EQ(t.dest_recipient_limit, 1);
    EXPECT_EQ(t.init_dest_concurrency, 2);
}

TEST(SchedulerConfig, RateDelayForcesConcurrencyOne) {
    Config c("slow_destination_rate_delay = 1s\n");
    auto t = qmgr::transport_config(conf::read_transport_params(c.cf, c.params, "slow"));
    EXPECT_EQ(t.dest_concurrency_limit, 1);
    EXPECT_EQ(t.dest_rate_delay, 1);
}

TEST(SchedulerConfig, LaneSharesOnlyWithAPriorityTable) {
    Config off("cqmgr_urgent_agent_share = 20\n");
    off.params.transport_process_limits["smtp"] = 100;
    auto t = qmgr::transport_config(conf::read_transport_params(off.cf, off.params, "smtp"));
    qmgr::share_config(t, conf::read_transport_params(off.cf, off.params, "smtp"), off.params);
    EXPECT_EQ(t.process_limit, 0);
    EXPECT_EQ(t.urgent_share, 0);
    EXPECT_EQ(t.bulk_share, 0);

    Config on("cqmgr_priority_maps = inline:{ a.example=urgent }\n"
              "cqmgr_urgent_agent_share = 20\n"
              "cqmgr_bulk_agent_share = 30\n"
              "relay_cqmgr_urgent_agent_share = 80\n");
    on.params.transport_process_limits["smtp"] = 100;
    for (const char* name : {"smtp", "relay"}) {
        auto p = conf::read_transport_params(on.cf, on.params, name);
        auto c = qmgr::transport_config(p);
        qmgr::share_config(c, p, on.params);
        if (std::string(name) == "smtp") {
            EXPECT_EQ(c.process_limit, 100);
            EXPECT_EQ(c.urgent_share, 20);
            EXPECT_EQ(c.bulk_share, 30);
        } else {
            // Not in master.cf: no process limit, so no reserve in effect.
            EXPECT_EQ(c.process_limit, 0);
            EXPECT_EQ(c.urgent_share, 80);
            EXPECT_EQ(c.bulk_share, 30);
        }
    }
}

TEST(SchedulerConfig, DestinationShareWithoutLanes) {
    Config c("cqmgr_destination_agent_share = 50%\n"
             "relay_cqmgr_destination_agent_share = 20\n"
             "cqmgr_urgent_agent_share = 20\n");
    c.params.transport_process_limits["smtp"] = 100;
    c.params.transport_process_limits["relay"] = 10;
    for (const char* name : {"smtp", "relay"}) {
        auto p = conf::read_transport_params(c.cf, c.params, name);
        auto t = qmgr::transport_config(p);
        qmgr::share_config(t, p, c.params);
        bool smtp = std::string(name) == "smtp";
        EXPECT_EQ(t.process_limit, smtp ? 100 : 10);
        EXPECT_EQ(t.dest_share, smtp ? 50 : 20);
        // No priority table: no lane shares.
        EXPECT_EQ(t.urgent_share, 0);
        EXPECT_EQ(t.bulk_share, 0);
    }
}
