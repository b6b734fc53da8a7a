// Delivery requests, live: real queue files handed to the real discard,
// error, retry and smtp agents (the last to smtp-sink), checking the typed
// outcome, the agent's log line, the done markers it writes and the
// bounce/defer logs it creates.
#include "cqmgr/test/delivery_client.hpp"
#include "live_env.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::protocol;
using live::run;
using live::awaitable;
namespace asio = boost::asio;
using Kind = DeliveryOutcome::Kind;

namespace {
DeliveryTimeouts timeouts() {
    using namespace std::chrono_literals;
    return DeliveryTimeouts::from_settings(10s, 20s);
}

DeliveryOutcome deliver(const std::string& transport, const DeliveryRequest& req) {
    return run(deliver_once("private/" + transport, req, timeouts()));
}

live::QueueFile active_file(const std::string& id) {
    return live::read_queue_file(live::env().queue_dir + "/active/" + id);
}
} // namespace

TEST(LiveDelivery, DiscardAgentDeliversAndMarksDone) {
    std::string id = live::submit_active("alice@example.org", {"a@disc.example", "b@disc.example"},
                                         "discard me");
    auto req = live::request_for(id, "test discard");
    ASSERT_EQ(req.recipients.size(), 2u);
    auto o = deliver("discard", req);
    ASSERT_EQ(o.kind, Kind::replied) << o.warning;
    EXPECT_EQ(o.reply.status, 0);
    EXPECT_EQ(o.reply.hop, HopStatus{});
    // Flag bit 0 (DEL_REQ_FLAG_SUCCESS): the agent marked both recipients done.
    for (const auto& r : active_file(id).recipients)
        EXPECT_TRUE(r.done) << r.address;
    auto line = live::wait_for_log(id + ": to=<b@disc.example>");
    ASSERT_TRUE(line);
    EXPECT_NE(line->find("relay=none"), std::string::npos) << *line;
    EXPECT_NE(line->find("status=sent (test discard)"), std::string::npos) << *line;
    // The 88-byte MSG_STATS was accepted: delays= is computed from it.
    EXPECT_NE(line->find("delays="), std::string::npos) << *line;
}

TEST(LiveDelivery, ErrorAgentBouncesIntoTheBounceLog) {
    std::string id = live::submit_active("alice@example.org", {"c@dest.example"}, "bounce me");
    auto o = deliver("error", live::request_for(id, "5.1.1 no such user here"));
    ASSERT_EQ(o.kind, Kind::replied) << o.warning;
    // Bounced recipients are finished: status 0, and the log holds the record.
    EXPECT_EQ(o.reply.status, 0);
    std::string log = live::slurp(live::log_path("bounce", id));
    EXPECT_NE(log.find("recipient=c@dest.example"), std::string::npos) << log;
    EXPECT_NE(log.find("status=5.1.1"), std::string::npos) << log;
    EXPECT_NE(log.find("reason=no such user here"), std::string::npos) << log;
    auto line = live::wait_for_log(id + ": to=<c@dest.example>");
    ASSERT_TRUE(line);
    EXPECT_NE(line->find("status=bounced (no such user here)"), std::string::npos) << *line;
}

TEST(LiveDelivery, RetryAgentDefers) {
    std::string id = live::submit_active("alice@example.org", {"d@dest.example"}, "defer me");
    auto o = deliver("retry", live::request_for(id, "4.3.2 try later"));
    ASSERT_EQ(o.kind, Kind::replied) << o.warning;
    EXPECT_EQ(o.reply.status, -1); // 4294967295 on the wire
    EXPECT_TRUE(o.deferred());
    std::string log = live::slurp(live::log_path("defer", id));
    EXPECT_NE(log.find("reason=try later"), std::string::npos) << log;
    EXPECT_FALSE(active_file(id).recipients[0].done);
}

TEST(LiveDelivery, SmtpAgentToSink) {
    std::string id = live::submit_active("alice@example.org", {"e@dest.example", "f@dest.example"},
                                         "smtp me");
    auto o = deliver("smtp",
                     live::request_for(id, "[127.0.0.1]:" + std::to_string(live::env().ports.sink)));
    ASSERT_EQ(o.kind, Kind::replied) << o.warning;
    EXPECT_EQ(o.reply.status, 0);
    EXPECT_TRUE(o.reply.hop.reason.empty()) << o.reply.hop.reason;
    for (const auto& r : active_file(id).recipients)
        EXPECT_TRUE(r.done) << r.address;
    auto line = live::wait_for_log(id + ": to=<f@dest.example>");
    ASSERT_TRUE(line);
    EXPECT_NE(line->find("status=sent (250"), std::string::npos) << *line;
}

TEST(LiveDelivery, SmtpAgentDeadHostGivesHopStatus) {
    std::string id = live::submit_active("alice@example.org", {"g@dest.example"}, "dead host");
    auto o = deliver("smtp",
                     live::request_for(id, "[127.0.0.1]:" + std::to_string(live::env().ports.dead)));
    ASSERT_EQ(o.kind, Kind::replied) << o.warning;
    EXPECT_EQ(o.reply.status, -1);
    // The hop status is what qmgr turns into "delivery temporarily suspended".
    EXPECT_EQ(o.reply.hop.status, "4.4.1");
    EXPECT_NE(o.reply.hop.reason.find("Connection refused"), std::string::npos) << o.reply.hop.reason;
}

TEST(LiveDelivery, SmtpAgent5xxBounces) {
    std::string id = live::submit_active("alice@example.org", {"h@dest.example"}, "rejected");
    auto o = deliver("smtp",
                     live::request_for(id, "[127.0.0.1]:" + std::to_string(live::env().ports.reject)));
    ASSERT_EQ(o.kind, Kind::replied) << o.warning;
    EXPECT_EQ(o.reply.status, 0);
    EXPECT_NE(live::slurp(live::log_path("bounce", id)).find("recipient=h@dest.example"),
              std::string::npos);
}

TEST(LiveDelivery, MissingQueueFileIsDeferred) {
    DeliveryRequest r;
    r.queue_id = "ABCDEF12345";
    r.data_offset = 100;
    r.data_size = 10;
    r.nexthop = "test discard";
    r.recipients.push_back({"", "x@disc.example", 200, "", 0});
    auto o = deliver("discard", r);
    // The agent rejects the request (mail_open_ok fails) and answers -1.
    EXPECT_TRUE(o.deferred());
    EXPECT_EQ(o.kind, Kind::replied) << kind_name(o.kind) << ": " << o.warning;
    EXPECT_EQ(o.reply.status, -1);
}
