#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/transport_params.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::conf;

namespace {
struct Fixture {
    MainCf cf;
    QmgrParams globals;
    std::vector<std::string> warnings;

    explicit Fixture(const std::string& text) {
        register_defaults(cf, "vm");
        EXPECT_TRUE(cf.load_text(text, "/etc/postfix/main.cf")) << cf.error();
        globals = QmgrParams::load(cf, {}, QmgrParams::Options{false});
    }
    TransportParams get(const std::string& t) {
        return read_transport_params(cf, globals, t,
                                     [&](const std::string& w) { warnings.push_back(w); });
    }
    std::string fatal(const std::string& t) {
        try {
            get(t);
        } catch (const ConfigError& e) {
            return e.postfix_text();
        }
        return {};
    }
};
} // namespace

TEST(TransportParams, FallBackToTheGlobals) {
    Fixture f("default_destination_concurrency_limit = 7\n"
              "default_recipient_refill_delay = 1m\n"
              "default_destination_concurrency_negative_feedback = 1/concurrency\n");
    auto p = f.get("smtp");
    EXPECT_EQ(p.destination_concurrency_limit, 7);
    EXPECT_EQ(p.destination_recipient_limit, 50);
    EXPECT_EQ(p.initial_destination_concurrency, 5);
    EXPECT_EQ(p.recipient_refill_delay, 60);
    EXPECT_EQ(p.delivery_slot_discount, 50);
    EXPECT_TRUE(p.negative_feedback.per_concurrency);
    EXPECT_DOUBLE_EQ(p.positive_feedback.at(3), 1);
    EXPECT_TRUE(f.warnings.empty());
}

TEST(TransportParams, LocalHasItsOwnDefaults) {
    Fixture f("");
    auto p = f.get("local");
    EXPECT_EQ(p.destination_concurrency_limit, 2);
    EXPECT_EQ(p.destination_recipient_limit, 1);
    EXPECT_EQ(p.initial_destination_concurrency, 2); // capped at the limit
    Fixture g("local_destination_concurrency_limit = 9\n");
    EXPECT_EQ(g.get("local").destination_concurrency_limit, 9);
}

TEST(TransportParams, OverridesAndPostfixAdjustments) {
    Fixture f("relay_destination_concurrency_limit = 3\n"
              "relay_recipient_refill_delay = 10\n" // bare number: seconds
              "relay_transport_rate_delay = 1m\n"
              "slow_destination_rate_delay = 5s\n"
              "slow_destination_concurrency_limit = 50\n"
              "relay_destination_concurrency_positive_feedback = 1/4\n"
              "nolimit_destination_concurrency_limit = 0\n"
              "nolimit_initial_destination_concurrency = 9\n");
    auto r = f.get("relay");
    EXPECT_EQ(r.destination_concurrency_limit, 3);
    EXPECT_EQ(r.initial_destination_concurrency, 3);
    EXPECT_EQ(r.recipient_refill_delay, 10);
    EXPECT_EQ(r.transport_rate_delay, 60);
    EXPECT_DOUBLE_EQ(r.positive_feedback.at(8), 0.25);
    auto s = f.get("slow");
    EXPECT_EQ(s.destination_rate_delay, 5);
    EXPECT_EQ(s.destination_concurrency_limit, 1); // a rate delay forces one at a time
    EXPECT_EQ(s.initial_destination_concurrency, 1);
    auto n = f.get("nolimit");
    EXPECT_EQ(n.destination_concurrency_limit, 0);
    EXPECT_EQ(n.initial_destination_concurrency, 9); // not capped by "no limit"
}

TEST(TransportParams, BadValuesStopAtFirstUse) {
    Fixture f("relay_destination_concurrency_limit = lots\n"
              "a_initial_destination_concurrency = 0\n"
              "b_delivery_slot_discount = 101\n"
              "c_recipient_refill_delay = 0\n"
              "d_destination_rate_delay = 1y\n"
              "e_destination_concurrency_negative_feedback =\n"
              "f_destination_concurrency_limit = -4\n");
    EXPECT_EQ(f.fatal("relay"),
              "bad numerical configuration: relay_destination_concurrency_limit = lots");
    EXPECT_EQ(f.fatal("a"), "invalid a_initial_destination_concurrency parameter value 0 < 1");
    EXPECT_EQ(f.fatal("b"), "invalid b_delivery_slot_discount parameter value 101 > 100");
    EXPECT_EQ(f.fatal("c"), "invalid c_recipient_refill_delay: 0 (min 1)");
    EXPECT_EQ(f.fatal("d"), "parameter d_destination_rate_delay: bad time value or unit: 1y");
    EXPECT_EQ(f.fatal("e"),
              "bad string length 0 < 1: e_destination_concurrency_negative_feedback = ");
    EXPECT_EQ(f.get("f").destination_concurrency_limit, -4); // accepted, as in Postfix
    EXPECT_EQ(f.fatal("smtp"), "");
}

TEST(TransportParams, SchedulerPolicy) {
    // rak unless set; a transport's own value over the global; anything but
    // rak or finch stops at the transport's first use.
    EXPECT_EQ(Fixture("").get("smtp").cqmgr_scheduler_policy, "rak");
    Fixture f("cqmgr_scheduler_policy = finch\n"
              "relay_cqmgr_scheduler_policy = rak\n"
              "bad_cqmgr_scheduler_policy = fifo\n");
    EXPECT_EQ(f.get("smtp").cqmgr_scheduler_policy, "finch");
    EXPECT_EQ(f.get("relay").cqmgr_scheduler_policy, "rak");
    EXPECT_EQ(
        f.fatal("bad"),
        "invalid bad_cqmgr_scheduler_policy parameter value \"fifo\" (expected rak or finch)");
}

TEST(TransportParams, MalformedFeedbackWarnsAndUsesOne) {
    Fixture f("default_destination_concurrency_positive_feedback = 2\n"
              "x_destination_concurrency_negative_feedback = 1/sqrt_concurrency\n");
    auto p = f.get("x");
    EXPECT_DOUBLE_EQ(p.positive_feedback.at(4), 1);
    EXPECT_DOUBLE_EQ(p.negative_feedback.at(4), 1);
    EXPECT_FALSE(p.negative_feedback.per_concurrency);
    ASSERT_EQ(f.warnings.size(), 2u);
    // The global's text is reported under the global's name; stock names
    // no file or line.
    EXPECT_EQ(f.warnings[0], "default_destination_concurrency_"
                             "positive_feedback: ignoring malformed or unreasonable feedback: 2");
    EXPECT_EQ(f.warnings[1], "x_destination_concurrency_negative_"
                             "feedback: ignoring malformed or unreasonable feedback: "
                             "1/sqrt_concurrency");
    EXPECT_EQ(p.positive_feedback_param, "default_destination_concurrency_positive_feedback");
    EXPECT_EQ(p.negative_feedback_param, "x_destination_concurrency_negative_feedback");
}

TEST(TransportParams, TableReadsOnceAndCaches) {
    Fixture f("relay_destination_recipient_limit = 5\nbroken_delivery_slot_cost = x\n");
    TransportTable table(f.cf, f.globals);
    const auto& a = table.get("relay");
    EXPECT_EQ(a.destination_recipient_limit, 5);
    EXPECT_EQ(&table.get("relay"), &a);
    EXPECT_THROW(table.get("broken"), ConfigError);
    EXPECT_EQ(table.size(), 1u);
}
