// Request/reply encodings checked byte for byte against what a stock qmgr
// 3.7.11 sent and received, recorded with strace while it delivered a
// message, deferred one to a dead destination and bounced one on a 5xx
// (docs/postfix-facts.md §3 to §6).
#include "cqmgr/protocol/base64.hpp"
#include "cqmgr/protocol/flush_client.hpp"
#include "cqmgr/protocol/messages.hpp"
#include "cqmgr/protocol/status_client.hpp"
#include "cqmgr/test/verify_client.hpp"

#include <cstring>
#include <gtest/gtest.h>

using namespace cqmgr::protocol;
using namespace std::string_literals;

namespace {
// The `time` attribute a stock qmgr sent with a delivery request (recorded).
const std::string captured_time =
    "vlQCawAAAABaqwkAAAAAAL5UAmsAAAAATOYJAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    "AAAAAAAAAAAAAAAAAAAAAAAA==";
} // namespace

TEST(MsgStats, MatchesCapturedLayout) {
    MsgStats s;
    s.incoming_arrival = {1795314878, 633690};
    auto raw = base64_decode(captured_time);
    ASSERT_TRUE(raw);
    ASSERT_EQ(raw->size(), 88u);
    int64_t sec, usec;
    std::memcpy(&sec, raw->data() + 16, 8);
    std::memcpy(&usec, raw->data() + 24, 8);
    s.active_arrival = {sec, usec};
    auto bytes = s.to_bytes();
    EXPECT_EQ(base64_encode(std::string_view(bytes.data(), bytes.size())), captured_time);
}

TEST(DeliveryRequest, EncodesLikeStockQmgr) {
    DeliveryRequest r;
    r.flags = del_flag::deflt; // 3, as the capture has it
    r.queue_id = "9C6E8A76820";
    r.data_offset = 346;
    r.data_size = 261;
    r.nexthop = "[127.0.0.1]:2601";
    r.sender = "alice@example.org";
    r.stats.incoming_arrival = {1795314878, 633690};
    auto raw = base64_decode(captured_time);
    std::memcpy(&r.stats.active_arrival.sec, raw->data() + 16, 8);
    std::memcpy(&r.stats.active_arrival.usec, raw->data() + 24, 8);
    r.recipients.push_back({"bob@dest.example", "bob@dest.example", 245,
                            "rfc822;bob@dest.example", 0});
    r.recipients.push_back({"carol@dest.example", "carol@dest.example", 324,
                            "rfc822;carol@dest.example", 0});
    std::string expected =
        "flags\0" "3\0queue_name\0active\0queue_id\0" "9C6E8A76820\0offset\0" "346\0size\0"
        "261\0nexthop\0[127.0.0.1]:2601\0encoding\0\0smtputf8\0" "0\0sender\0alice@example.org\0"
        "envelope_id\0\0ret_flags\0" "0\0time\0"s +
        captured_time +
        "\0log_client_name\0\0log_client_address\0\0log_client_port\0\0log_protocol_name\0\0"
        "log_helo_name\0\0sasl_method\0\0sasl_username\0\0sasl_sender\0\0log_ident\0\0"
        "rewrite_context\0local\0recipient_count\0" "2\0\0"
        "original_recipient\0bob@dest.example\0recipient\0bob@dest.example\0offset\0" "245\0"
        "dsn_orig_rcpt\0rfc822;bob@dest.example\0notify_flags\0" "0\0\0"
        "original_recipient\0carol@dest.example\0recipient\0carol@dest.example\0offset\0" "324\0"
        "dsn_orig_rcpt\0rfc822;carol@dest.example\0notify_flags\0" "0\0\0"s;
    EXPECT_EQ(r.encode().size(), 732u); // the captured write was 732 bytes
    EXPECT_EQ(r.encode(), expected);
}

TEST(DeliveryReply, DecodesDeferral) {
    auto l = decode_one("status\0" "4.4.1\0diag_type\0\0diag_text\0\0mta_type\0\0mta_mname\0\0"
                        "action\0\0reason\0connect to 127.0.0.1[127.0.0.1]:2601: Connection "
                        "refused\0status\0" "4294967295\0\0"s);
    ASSERT_TRUE(l);
    auto r = decode_delivery_reply(*l);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->status, -1);
    EXPECT_EQ(r->hop.status, "4.4.1");
    EXPECT_EQ(r->hop.reason, "connect to 127.0.0.1[127.0.0.1]:2601: Connection refused");
}

TEST(DeliveryReply, RejectsMissingSecondStatus) {
    auto l = decode_one("status\0\0diag_type\0\0\0"s);
    ASSERT_TRUE(l);
    auto r = decode_delivery_reply(*l);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, ProtocolError::Kind::names);
    EXPECT_NE(r.error().message().find("expected status"), std::string::npos);
}

TEST(Resolve, RequestAndReplyMatchCapture) {
    EXPECT_EQ(encode_resolve_request("resolve", "alice@example.org", "bob@dest.example"),
              "request\0resolve\0sender\0alice@example.org\0address\0bob@dest.example\0\0"s);
    auto l = decode_one("flags\0" "0\0transport\0smtp\0nexthop\0[127.0.0.1]:2601\0recipient\0"
                        "bob@dest.example\0flags\0" "4096\0\0"s);
    ASSERT_TRUE(l);
    auto r = decode_resolve_reply(*l);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->transport, "smtp");
    EXPECT_EQ(r->nexthop, "[127.0.0.1]:2601");
    EXPECT_EQ(r->flags, resolve_flag::class_default);
}

TEST(Notice, BounceFlushMatchesCapture) {
    NoticeRequest n;
    n.nrequest = bounce_cmd::flush;
    n.queue_id = "9D5D6A768A3";
    n.sender = "owner@bounces.example";
    auto bytes = n.encode();
    EXPECT_EQ(bytes.size(), 134u);
    EXPECT_EQ(bytes, "nrequest\0" "1\0flags\0" "0\0queue_name\0active\0queue_id\0" "9D5D6A768A3\0"
                     "encoding\0\0smtputf8\0" "0\0sender\0owner@bounces.example\0envelope_id\0\0"
                     "ret_flags\0" "0\0\0"s);
}

TEST(Announcement, Checked) {
    auto l = decode_one("protocol\0delivery_request_protocol\0\0"s);
    ASSERT_TRUE(l);
    EXPECT_TRUE(is_announcement(*l, delivery_protocol));
    EXPECT_FALSE(is_announcement(*l, rewrite_protocol));
}

TEST(MasterStatus, TwelveBytes) {
    // As a stock qmgr wrote them: pid 0x563a (":V"), generation 2, TAKEN
    // then AVAIL (docs/postfix-facts.md §7.3).
    EXPECT_EQ(encode_master_status(0x563a, 2, master_stat_taken),
              ":V\0\0\x02\0\0\0\0\0\0\0"s);
    EXPECT_EQ(encode_master_status(0x563a, 2, master_stat_avail),
              ":V\0\0\x02\0\0\0\x01\0\0\0"s);
}

TEST(Append, EncodesRcptAndDsnFieldsInOrder) {
    // docs/postfix-facts.md §6.2: nrequest=0, flags, queue_id, the
    // recipient's five, the hop status's seven.
    AppendRequest a;
    a.flags = del_flag::record; // 0x400
    a.queue_id = "9D5D6A768A3";
    a.recipient = {"o@x", "r@x", 634, "rfc822;o@x", 2};
    a.dsn = {"4.4.1", "", "", "", "", "delayed", "connect refused"};
    EXPECT_EQ(a.encode(),
              "nrequest\0" "0\0flags\0" "1024\0queue_id\0" "9D5D6A768A3\0"
              "original_recipient\0o@x\0recipient\0r@x\0offset\0" "634\0"
              "dsn_orig_rcpt\0rfc822;o@x\0notify_flags\0" "2\0"
              "status\0" "4.4.1\0diag_type\0\0diag_text\0\0mta_type\0\0mta_mname\0\0"
              "action\0delayed\0reason\0connect refused\0\0"s);
}

TEST(Append, BuildersForceStatusClassAndAction) {
    RequestRecipient r{"", "r@x", 1, "", 0};
    auto d = defer_append_request(0, "ID", r, {"5.1.1", "", "", "", "", "failed", "why"});
    EXPECT_EQ(d.dsn.status, "4.0.0");
    EXPECT_EQ(d.dsn.action, "delayed");
    d = defer_append_request(0, "ID", r, {"4.4.1", "", "", "", "", "", "why"});
    EXPECT_EQ(d.dsn.status, "4.4.1");
    auto b = bounce_append_request(0, "ID", r, {"4.4.1", "", "", "", "", "", "why"});
    EXPECT_EQ(b.dsn.status, "5.0.0");
    EXPECT_EQ(b.dsn.action, "failed");
    auto t = trace_append_request(0x400, "ID", r, {"2.0.0", "", "", "", "", "delivered", "ok"},
                                  "mx[1.2.3.4]:25");
    EXPECT_EQ(t.dsn.reason, "delivery via mx[1.2.3.4]:25: ok");
    t = trace_append_request(0x400, "ID", r, {"2.0.0", "", "", "", "", "delivered", "ok"}, "none");
    EXPECT_EQ(t.dsn.reason, "ok");
}

TEST(Dsn, ValidLikePostfix) {
    EXPECT_TRUE(dsn_status_valid("4.4.1"));
    EXPECT_TRUE(dsn_status_valid("5.123.123"));
    EXPECT_TRUE(dsn_status_valid("2.0.0 trailing text"));
    EXPECT_FALSE(dsn_status_valid("3.0.0"));
    EXPECT_FALSE(dsn_status_valid("4.1234.1"));
    EXPECT_FALSE(dsn_status_valid("4.1.1x"));
    EXPECT_FALSE(dsn_status_valid("4..1"));
    EXPECT_FALSE(dsn_status_valid("4.1."));
    EXPECT_FALSE(dsn_status_valid(""));
}

TEST(Rewrite, RequestAndReply) {
    // docs/postfix-facts.md §5.3.
    EXPECT_EQ(encode_rewrite_request("local", "u"),
              "request\0rewrite\0rule\0local\0address\0u\0\0"s);
    auto l = decode_one("flags\0" "0\0address\0u@test.example\0\0"s);
    ASSERT_TRUE(l);
    auto r = decode_rewrite_reply(*l);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->address, "u@test.example");
    auto bad = decode_rewrite_reply(*decode_one("address\0x\0\0"s));
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message(), "expected flags, address; got address");
}

TEST(Resolve, FlagHelpers) {
    ResolveReply r;
    r.flags = resolve_flag::routed | resolve_flag::class_relay;
    EXPECT_TRUE(r.is_routed());
    EXPECT_FALSE(r.is_final());
    EXPECT_EQ(r.address_class(), resolve_flag::class_relay);
    r.flags = resolve_flag::fail;
    EXPECT_TRUE(r.is_fail());
    EXPECT_EQ(r.address_class(), 0);
}

TEST(Verify, UpdateAndQueryRequests) {
    // docs/postfix-facts.md §6.7.
    EXPECT_EQ(encode_verify_update("u@x", verify_rcpt::bounce, "no such user"),
              "request\0update\0address\0u@x\0recipient_status\0" "2\0reason\0no such user\0\0"s);
    EXPECT_EQ(encode_verify_query("u@x"), "request\0query\0address\0u@x\0\0"s);
}

TEST(Flush, AddRequest) {
    EXPECT_EQ(encode_flush_add("dest.example", "ABC123"),
              "request\0add\0site\0dest.example\0queue_id\0ABC123\0\0"s);
}

TEST(Notice, TraceAndVerpVariants) {
    NoticeRequest n;
    n.nrequest = bounce_cmd::trace;
    n.flags = del_flag::record;
    n.queue_id = "ID";
    n.sender = "s@x";
    n.smtputf8 = 1;
    EXPECT_EQ(n.encode(), "nrequest\0" "5\0flags\0" "1024\0queue_name\0active\0queue_id\0ID\0"
                          "encoding\0\0smtputf8\0" "1\0sender\0s@x\0envelope_id\0\0"
                          "ret_flags\0" "0\0\0"s);
    n.nrequest = bounce_cmd::verp;
    n.flags = bounce_flag::delrcpt;
    n.verp_delimiters = "+=";
    EXPECT_EQ(n.encode(), "nrequest\0" "3\0flags\0" "2\0queue_name\0active\0queue_id\0ID\0"
                          "encoding\0\0smtputf8\0" "1\0sender\0s@x\0envelope_id\0\0"
                          "ret_flags\0" "0\0verp_delimiters\0+=\0\0"s);
    EXPECT_EQ(notice_failure_text(bounce_cmd::warn), "delay warning");
}
