#include "cqmgr/state/record.hpp"

#include <gtest/gtest.h>

namespace cqmgr::state {
namespace {

DestinationRecord sample() {
    DestinationRecord r;
    r.transport = "smtp";
    r.destination = "[127.0.0.1]:2525";
    r.nexthop = "[127.0.0.1]:2525";
    r.dead_until = 1764000300;
    r.dead_status = "4.4.1";
    r.dead_reason = "delivery temporarily suspended: connect to 127.0.0.1[127.0.0.1]:2525: "
                    "Connection refused";
    r.window = 7;
    r.last_delivery = 1764000000;
    r.last_dsn_status = "4.4.1";
    r.last_dsn_text = "connect to 127.0.0.1[127.0.0.1]:2525: Connection refused";
    r.updated_at = 1764000001;
    return r;
}

// Why decode_record() refuses the pair; none when it decodes it.
std::optional<RecordError::Kind> refusal(std::string_view key, std::string_view value) {
    auto r = decode_record(key, value);
    if (r) return std::nullopt;
    return r.error().kind;
}

DestinationRecord round_trip(const DestinationRecord& r) {
    auto back = decode_record(record_key(r.transport, r.destination), encode_record(r));
    EXPECT_TRUE(back) << back.error().message();
    return back.value_or(DestinationRecord{});
}

TEST(Record, RoundTrip) {
    DestinationRecord r = sample();
    EXPECT_EQ(round_trip(r), r);
    r.learned_concurrency = 12;
    r.learned_at = 1763999000;
    EXPECT_EQ(round_trip(r), r);
    r.learned_rate_delay = 3;
    EXPECT_EQ(round_trip(r), r);
    r.learned_concurrency = 0;
    EXPECT_EQ(round_trip(r), r);
    r.learned_class = "rate_limit";
    r.learned_status = "4.7.0";
    r.learned_reason = "host said: 421 4.7.0 Try again later, closing connection.";
    EXPECT_EQ(round_trip(r), r);
    r.learned_quota = 60;
    r.learned_window = 61;
    EXPECT_EQ(round_trip(r), r);
    r.learned_rate_delay = 0;
    EXPECT_EQ(round_trip(r), r);
}

// A value of version 1, as the first stores were written: the sample's
// fields, and a learned concurrency of `learned` (flag bit 0) if not 0.
std::string version1(const DestinationRecord& r, int learned) {
    std::string v;
    auto put = [&v](uint64_t x, int n) {
        for (int i = 0; i < n; ++i)
            v.push_back(static_cast<char>((x >> (8 * i)) & 0xff));
    };
    put(1, 1);
    put(learned ? 1 : 0, 1);
    put(static_cast<uint64_t>(r.dead_until), 8);
    put(static_cast<uint64_t>(r.last_delivery), 8);
    put(static_cast<uint64_t>(r.updated_at), 8);
    put(static_cast<uint32_t>(r.window), 4);
    put(static_cast<uint32_t>(learned), 4);
    for (const std::string* s :
         {&r.nexthop, &r.dead_status, &r.dead_reason, &r.last_dsn_status, &r.last_dsn_text}) {
        put(s->size(), 2);
        v += *s;
    }
    return v;
}

TEST(Record, Version1IsStillRead) {
    DestinationRecord r = sample();
    std::string key = record_key(r.transport, r.destination);
    auto back = decode_record(key, version1(r, 0));
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, r);
    // Its learned concurrency counts from the record's last change.
    back = decode_record(key, version1(r, 6));
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(back->learned_concurrency, 6);
    EXPECT_EQ(back->learned_rate_delay, 0);
    EXPECT_EQ(back->learned_at, r.updated_at);
}

TEST(Record, Version2IsStillRead) {
    // Version 2 is version 3 without the learned reply's three strings (all
    // empty here: 3 lengths of 2 bytes).
    DestinationRecord r = sample();
    r.learned_concurrency = 4;
    r.learned_at = 1763999000;
    std::string v = encode_record(r);
    v.resize(v.size() - 6 - 8);
    v[0] = 2;
    auto back = decode_record(record_key(r.transport, r.destination), v);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, r);
}

TEST(Record, Version3IsStillRead) {
    // Version 3 is version 4 without the window's quota (two i32).
    DestinationRecord r = sample();
    r.learned_rate_delay = 2;
    r.learned_at = 1763999000;
    r.learned_class = "rate_limit";
    std::string v = encode_record(r);
    v.resize(v.size() - 8);
    v[0] = 3;
    auto back = decode_record(record_key(r.transport, r.destination), v);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, r);
}

TEST(Record, AliveAndEmpty) {
    DestinationRecord r;
    r.transport = "t";
    r.destination = "d";
    EXPECT_EQ(round_trip(r), r);
    // A destination name may hold anything, a NUL included.
    r.destination = std::string("a\0b", 3);
    EXPECT_EQ(round_trip(r), r);
}

TEST(Record, StartsWithTheVersion) {
    std::string v = encode_record(sample());
    ASSERT_FALSE(v.empty());
    EXPECT_EQ(static_cast<uint8_t>(v[0]), record_format);
}

TEST(Record, LongStringsAreCut) {
    DestinationRecord r = sample();
    r.last_dsn_text = std::string(70000, 'x');
    DestinationRecord back = round_trip(r);
    EXPECT_EQ(back.last_dsn_text.size(), 65535u);
}

TEST(Record, EveryTruncationIsRefused) {
    DestinationRecord r = sample();
    std::string key = record_key(r.transport, r.destination);
    std::string v = encode_record(r);
    for (size_t n = 0; n < v.size(); ++n) {
        auto back = decode_record(key, v.substr(0, n));
        ASSERT_FALSE(back) << n;
        EXPECT_EQ(back.error().kind, RecordError::Kind::truncated) << n;
        EXPECT_FALSE(back.error().message().empty());
    }
}

TEST(Record, TrailingBytesAreRefused) {
    DestinationRecord r = sample();
    auto back = decode_record(record_key("smtp", "x"), encode_record(r) + "z");
    ASSERT_FALSE(back);
    EXPECT_EQ(back.error().kind, RecordError::Kind::trailing_bytes);
    EXPECT_EQ(back.error().message(), "trailing bytes in record");
}

TEST(Record, UnknownVersionIsRefused) {
    std::string v = encode_record(sample());
    v[0] = 5;
    auto back = decode_record(record_key("smtp", "x"), v);
    ASSERT_FALSE(back);
    EXPECT_EQ(back.error().kind, RecordError::Kind::unknown_version);
    EXPECT_EQ(back.error().message(), "unknown record version 5");
    v[0] = 0;
    back = decode_record(record_key("smtp", "x"), v);
    ASSERT_FALSE(back);
    EXPECT_EQ(back.error().message(), "unknown record version 0");
}

TEST(Record, BadKeysAreRefused) {
    std::string v = encode_record(sample());
    for (std::string key : {std::string("no-separator"), std::string("\0x", 2)}) {
        auto back = decode_record(key, v);
        ASSERT_FALSE(back);
        EXPECT_EQ(back.error().kind, RecordError::Kind::bad_key);
        EXPECT_EQ(back.error().message(), "bad key");
    }
}

TEST(Record, InconsistentFieldsAreRefused) {
    DestinationRecord r = sample();
    r.dead_status.clear(); // dead without a reason
    EXPECT_EQ(refusal(record_key("smtp", "x"), encode_record(r)), RecordError::Kind::bad_field);
    r = sample();
    r.window = -1;
    EXPECT_EQ(refusal(record_key("smtp", "x"), encode_record(r)), RecordError::Kind::bad_field);
    std::string v = encode_record(sample());
    v[1] = 1; // an unknown flag (version 1's only flag is not one of version 2)
    EXPECT_EQ(refusal(record_key("smtp", "x"), v), RecordError::Kind::bad_field);
    r = sample();
    r.learned_concurrency = 3; // learned, but not when
    EXPECT_EQ(refusal(record_key("smtp", "x"), encode_record(r)), RecordError::Kind::bad_field);
    r = sample();
    r.learned_at = 1763999000; // when, but nothing learned
    EXPECT_EQ(refusal(record_key("smtp", "x"), encode_record(r)), RecordError::Kind::bad_field);
    r = sample();
    r.learned_class = "connection_limit"; // a reply, but nothing learned
    EXPECT_EQ(refusal(record_key("smtp", "x"), encode_record(r)), RecordError::Kind::bad_field);
    r = sample();
    r.learned_rate_delay = -2;
    r.learned_at = 1763999000;
    EXPECT_EQ(refusal(record_key("smtp", "x"), encode_record(r)), RecordError::Kind::bad_field);
    r = sample();
    r.learned_quota = 5; // a quota without its window
    r.learned_at = 1763999000;
    EXPECT_EQ(refusal(record_key("smtp", "x"), encode_record(r)), RecordError::Kind::bad_field);
}

// Every single flipped byte either is refused or decodes to some record:
// never a crash or an out-of-bounds read (run under ASan in tools/test).
TEST(Record, FlippedBytesNeverCrash) {
    DestinationRecord r = sample();
    std::string key = record_key(r.transport, r.destination);
    std::string v = encode_record(r);
    for (size_t i = 0; i < v.size(); ++i)
        for (int bit = 0; bit < 8; ++bit) {
            std::string w = v;
            w[i] = static_cast<char>(w[i] ^ (1 << bit));
            (void)decode_record(key, w);
        }
}

} // namespace
} // namespace cqmgr::state
