// bounce/defer/trace, verify and flush, live: append records through the real
// services, ask for the notices, and check the notification mail that the
// bounce daemon queues (sender, recipient, content) and the logs it keeps or
// removes.
#include "cqmgr/protocol/flush_client.hpp"
#include "cqmgr/protocol/status_client.hpp"
#include "cqmgr/test/verify_client.hpp"
#include "live_env.hpp"

#include <algorithm>
#include <gtest/gtest.h>

using namespace cqmgr::protocol;
using live::run;
using live::awaitable;
namespace asio = boost::asio;

namespace {
CommandTimeouts ipc() {
    return CommandTimeouts::ipc(std::chrono::seconds(10));
}

NoticeRequest notice(int nrequest, int flags, const std::string& id, const live::QueueFile& q) {
    NoticeRequest n;
    n.nrequest = nrequest;
    n.flags = flags;
    n.queue_id = id;
    n.encoding = q.encoding;
    n.smtputf8 = q.smtputf8;
    n.sender = q.sender;
    n.envelope_id = q.envelope_id;
    return n;
}

RequestRecipient first_recipient(const live::QueueFile& q) {
    const auto& r = q.recipients.at(0);
    return {r.orig_rcpt, r.address, r.offset, r.dsn_orcpt, r.notify_flags};
}

// Sends `n` to `service` and returns the one notification it queued.
live::QueueFile notify_and_collect(const std::string& service, const NoticeRequest& n) {
    auto before = live::incoming_ids();
    auto r = run(status_notify("private/" + service, n, CommandTimeouts::notice(std::chrono::seconds(10))));
    EXPECT_TRUE(r.ok()) << r.error << " status=" << r.status;
    auto fresh = live::new_incoming(before);
    if (fresh.size() != 1) {
        ADD_FAILURE() << "expected one notification in incoming/, got " << fresh.size();
        return {};
    }
    return live::read_queue_file(live::env().queue_dir + "/incoming/" + fresh[0]);
}

std::string active_path(const std::string& id) {
    return live::env().queue_dir + "/active/" + id;
}
} // namespace

TEST(LiveStatus, DeferAppendWarnThenFlush) {
    std::string id = live::submit_active("alice@example.org", {"p@dest.example"}, "defer log");
    auto q = live::read_queue_file(active_path(id));
    auto a = defer_append_request(0, id, first_recipient(q),
                                  {"4.4.1", "", "", "", "", "", "host unreachable (test)"});
    auto r = run(status_append("private/defer", a, ipc()));
    ASSERT_TRUE(r.ok()) << r.error << " status=" << r.status;
    std::string log = live::slurp(live::log_path("defer", id));
    EXPECT_NE(log.find("recipient=p@dest.example"), std::string::npos) << log;
    EXPECT_NE(log.find("action=delayed"), std::string::npos) << log;
    EXPECT_NE(log.find("reason=host unreachable (test)"), std::string::npos) << log;

    // The delay warning goes to the sender and keeps the log.
    auto warn = notify_and_collect("defer", notice(bounce_cmd::warn, 0, id, q));
    EXPECT_TRUE(warn.has_sender);
    EXPECT_EQ(warn.sender, "");
    ASSERT_EQ(warn.recipients.size(), 1u);
    EXPECT_EQ(warn.recipients[0].address, "alice@example.org");
    EXPECT_NE(warn.content.find("Subject: Delayed Mail (still being retried)"), std::string::npos);
    EXPECT_NE(warn.content.find("host unreachable (test)"), std::string::npos);
    EXPECT_NE(warn.content.find("X-Postfix-Queue-ID: " + id), std::string::npos);
    EXPECT_TRUE(live::exists(live::log_path("defer", id)));

    // Flushing the defer log (what qmgr does on expiry, with DELRCPT) returns
    // the message, marks the recipient done and removes the log.
    auto bounce = notify_and_collect("defer", notice(bounce_cmd::flush, bounce_flag::delrcpt, id, q));
    EXPECT_EQ(bounce.sender, "");
    ASSERT_EQ(bounce.recipients.size(), 1u);
    EXPECT_EQ(bounce.recipients[0].address, "alice@example.org");
    EXPECT_NE(bounce.content.find("Subject: Undelivered Mail Returned to Sender"), std::string::npos);
    EXPECT_NE(bounce.content.find("host unreachable (test)"), std::string::npos);
    EXPECT_NE(bounce.content.find("Final-Recipient: rfc822; p@dest.example"), std::string::npos)
        << bounce.content;
    EXPECT_FALSE(live::exists(live::log_path("defer", id)));
    EXPECT_TRUE(live::read_queue_file(active_path(id)).recipients[0].done);
}

TEST(LiveStatus, BounceAppendThenFlush) {
    std::string id = live::submit_active("bob@example.org", {"q@dest.example"}, "bounce log");
    auto q = live::read_queue_file(active_path(id));
    // A 4.x status is forced to 5.0.0, as bounce_append() does.
    auto a = bounce_append_request(0, id, first_recipient(q),
                                   {"4.7.1", "", "", "", "", "", "mailbox is gone (test)"});
    ASSERT_EQ(a.dsn.status, "5.0.0");
    auto r = run(status_append("private/bounce", a, ipc()));
    ASSERT_TRUE(r.ok()) << r.error;
    std::string log = live::slurp(live::log_path("bounce", id));
    EXPECT_NE(log.find("status=5.0.0"), std::string::npos) << log;
    EXPECT_NE(log.find("action=failed"), std::string::npos) << log;

    auto n = notify_and_collect("bounce", notice(bounce_cmd::flush, 0, id, q));
    EXPECT_EQ(n.sender, "");
    ASSERT_EQ(n.recipients.size(), 1u);
    EXPECT_EQ(n.recipients[0].address, "bob@example.org");
    EXPECT_NE(n.content.find("Subject: Undelivered Mail Returned to Sender"), std::string::npos);
    EXPECT_NE(n.content.find("mailbox is gone (test)"), std::string::npos);
    EXPECT_NE(n.content.find("Status: 5.0.0"), std::string::npos) << n.content;
    // The original message is attached.
    EXPECT_NE(n.content.find("Subject: bounce log"), std::string::npos);
    EXPECT_FALSE(live::exists(live::log_path("bounce", id)));
}

TEST(LiveStatus, VerpBounceFlushSendsOneNoticePerRecipient) {
    std::string id = live::submit_active("dora@example.org", {"v1@dest.example", "v2@dest.example"},
                                         "verp bounce");
    auto q = live::read_queue_file(active_path(id));
    ASSERT_EQ(q.recipients.size(), 2u);
    for (const auto& rc : q.recipients) {
        auto a = bounce_append_request(0, id, {rc.orig_rcpt, rc.address, rc.offset, rc.dsn_orcpt, 0},
                                       {"5.1.1", "", "", "", "", "", "unknown user (test)"});
        auto r = run(status_append("private/bounce", a, ipc()));
        ASSERT_TRUE(r.ok()) << r.error;
    }
    auto n = notice(bounce_cmd::verp, 0, id, q);
    n.verp_delimiters = "+=";
    auto before = live::incoming_ids();
    auto r = run(status_notify("private/bounce", n, ipc()));
    ASSERT_TRUE(r.ok()) << r.error << " status=" << r.status;
    std::vector<std::string> to;
    for (const auto& nid : live::new_incoming(before)) {
        auto f = live::read_queue_file(live::env().queue_dir + "/incoming/" + nid);
        EXPECT_EQ(f.sender, "");
        ASSERT_EQ(f.recipients.size(), 1u);
        to.push_back(f.recipients[0].address);
    }
    std::sort(to.begin(), to.end());
    EXPECT_EQ(to, (std::vector<std::string>{"dora+v1=dest.example@example.org",
                                            "dora+v2=dest.example@example.org"}));
    EXPECT_FALSE(live::exists(live::log_path("bounce", id)));
}

TEST(LiveStatus, TraceAppendThenTraceFlush) {
    std::string id = live::submit_active("carol@example.org", {"r@dest.example"}, "traced");
    auto q = live::read_queue_file(active_path(id));
    auto a = trace_append_request(del_flag::record, id, first_recipient(q),
                                  {"2.0.0", "", "", "", "", "delivered", "250 ok (test)"},
                                  "mx.dest.example[192.0.2.1]:25");
    auto r = run(status_append("private/trace", a, ipc()));
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_NE(live::slurp(live::log_path("trace", id))
                  .find("reason=delivery via mx.dest.example[192.0.2.1]:25: 250 ok (test)"),
              std::string::npos);
    auto n = notify_and_collect("trace", notice(bounce_cmd::trace, del_flag::record, id, q));
    EXPECT_EQ(n.sender, "");
    ASSERT_EQ(n.recipients.size(), 1u);
    EXPECT_EQ(n.recipients[0].address, "carol@example.org");
    EXPECT_NE(n.content.find("Action: delivered"), std::string::npos) << n.content;
    EXPECT_NE(n.content.find("250 ok (test)"), std::string::npos);
    EXPECT_FALSE(live::exists(live::log_path("trace", id)));
}

TEST(LiveStatus, ServiceRefusals) {
    // A malformed queue ID: the service answers -1 (the exchange completes).
    auto a = defer_append_request(0, "not/an/id", {"", "x@y", 1, "", 0}, {"4.0.0", "", "", "", "", "", "x"});
    auto r = run(status_append("private/defer", a, ipc()));
    EXPECT_TRUE(r.completed) << r.error;
    EXPECT_EQ(r.status, -1);
    // A flush for a message without a log: nothing to send, which is success.
    NoticeRequest n;
    n.nrequest = bounce_cmd::flush;
    n.queue_id = "ABCDEF12345";
    r = run(status_notify("private/bounce", n, ipc()));
    EXPECT_TRUE(r.completed) << r.error;
    // No such service socket.
    r = run(status_notify("private/nosuchservice", n, ipc()));
    EXPECT_FALSE(r.completed);
    EXPECT_EQ(r.error, "connect to private/nosuchservice: No such file or directory");
}

TEST(LiveStatus, VerifyUpdateThenQuery) {
    auto u = run(verify_update("private/verify", "probe@dest.example", verify_rcpt::bounce,
                               "no such mailbox (test)", ipc()));
    ASSERT_TRUE(u.ok()) << u.error << " status=" << u.status;
    auto q = run(verify_query("private/verify", "probe@dest.example", ipc()));
    ASSERT_TRUE(q.result.ok()) << q.result.error;
    EXPECT_EQ(q.recipient_status, verify_rcpt::bounce);
    EXPECT_EQ(q.reason, "no such mailbox (test)");
}

TEST(LiveStatus, FlushAdd) {
    auto ok = run(flush_add("public/flush", "relay.example", "ABCDEF12345", ipc()));
    ASSERT_TRUE(ok.completed) << ok.error;
    EXPECT_EQ(ok.status, flush_stat::ok);
    // flush(8) names the log after the site with '.' mapped to '_'.
    std::string log = live::slurp(live::env().queue_dir + "/flush/relay_example");
    EXPECT_NE(log.find("ABCDEF12345"), std::string::npos) << log;
    auto deny = run(flush_add("public/flush", "other.example", "ABCDEF12345", ipc()));
    ASSERT_TRUE(deny.completed) << deny.error;
    EXPECT_EQ(deny.status, flush_stat::deny);
}
