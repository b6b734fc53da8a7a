// Request/reply encodings checked byte for byte against the strace captures of
// stock qmgr 3.7.11 (shared/captures/deliver-ok, dead-destination,
// deliver-5xx-bounce).
#include "cqmgr/protocol/base64.hpp"
#include "cqmgr/protocol/messages.hpp"

#include <cstring>
#include <gtest/gtest.h>

using namespace cqmgr::protocol;
using namespace std::string_literals;

namespace {
// The `time` attribute qmgr sent in the deliver-ok capture.
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
    EXPECT_EQ(base64_encode(s.to_bytes()), captured_time);
}

TEST(DeliveryRequest, EncodesLikeStockQmgr) {
    DeliveryRequest r;
    r.flags = 3;
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
    std::string err;
    auto r = decode_delivery_reply(*l, &err);
    ASSERT_TRUE(r) << err;
    EXPECT_EQ(r->status, -1);
    EXPECT_EQ(r->hop.status, "4.4.1");
    EXPECT_EQ(r->hop.reason, "connect to 127.0.0.1[127.0.0.1]:2601: Connection refused");
}

TEST(DeliveryReply, RejectsMissingSecondStatus) {
    auto l = decode_one("status\0\0diag_type\0\0\0"s);
    ASSERT_TRUE(l);
    std::string err;
    EXPECT_FALSE(decode_delivery_reply(*l, &err));
    EXPECT_NE(err.find("expected status"), std::string::npos);
}

TEST(Resolve, RequestAndReplyMatchCapture) {
    EXPECT_EQ(encode_resolve_request("resolve", "alice@example.org", "bob@dest.example"),
              "request\0resolve\0sender\0alice@example.org\0address\0bob@dest.example\0\0"s);
    auto l = decode_one("flags\0" "0\0transport\0smtp\0nexthop\0[127.0.0.1]:2601\0recipient\0"
                        "bob@dest.example\0flags\0" "4096\0\0"s);
    ASSERT_TRUE(l);
    auto r = decode_resolve_reply(*l, nullptr);
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
    // From the capture: pid 0x563a (":V"), generation 2, TAKEN then AVAIL.
    EXPECT_EQ(encode_master_status(0x563a, 2, master_stat_taken),
              ":V\0\0\x02\0\0\0\0\0\0\0"s);
    EXPECT_EQ(encode_master_status(0x563a, 2, master_stat_avail),
              ":V\0\0\x02\0\0\0\x01\0\0\0"s);
}
