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

DestinationRecord round_trip(const DestinationRecord& r) {
    std::string error;
    auto back = decode_record(record_key(r.transport, r.destination), encode_record(r), error);
    EXPECT_TRUE(back) << error;
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
    std::string error;
    auto back = decode_record(key, version1(r, 0), error);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(*back, r);
    // Its learned concurrency counts from the record's last change.
    back = decode_record(key, version1(r, 6), error);
    ASSERT_TRUE(back) << error;
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
    v.resize(v.size() - 6);
    v[0] = 2;
    std::string error;
    auto back = decode_record(record_key(r.transport, r.destination), v, error);
    ASSERT_TRUE(back) << error;
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
        std::string error;
        EXPECT_FALSE(decode_record(key, v.substr(0, n), error)) << n;
        EXPECT_FALSE(error.empty());
    }
}

TEST(Record, TrailingBytesAreRefused) {
    DestinationRecord r = sample();
    std::string error;
    EXPECT_FALSE(decode_record(record_key("smtp", "x"), encode_record(r) + "z", error));
    EXPECT_EQ(error, "trailing bytes in record");
}

TEST(Record, UnknownVersionIsRefused) {
    std::string v = encode_record(sample());
    std::string error;
    v[0] = 4;
    EXPECT_FALSE(decode_record(record_key("smtp", "x"), v, error));
    EXPECT_EQ(error, "unknown record version 4");
    v[0] = 0;
    EXPECT_FALSE(decode_record(record_key("smtp", "x"), v, error));
    EXPECT_EQ(error, "unknown record version 0");
}

TEST(Record, BadKeysAreRefused) {
    std::string v = encode_record(sample());
    std::string error;
    EXPECT_FALSE(decode_record("no-separator", v, error));
    EXPECT_FALSE(decode_record(std::string("\0x", 2), v, error));
}

TEST(Record, InconsistentFieldsAreRefused) {
    DestinationRecord r = sample();
    r.dead_status.clear(); // dead without a reason
    std::string error;
    EXPECT_FALSE(decode_record(record_key("smtp", "x"), encode_record(r), error));
    r = sample();
    r.window = -1;
    EXPECT_FALSE(decode_record(record_key("smtp", "x"), encode_record(r), error));
    std::string v = encode_record(sample());
    v[1] = 1; // an unknown flag (version 1's only flag is not one of version 2)
    EXPECT_FALSE(decode_record(record_key("smtp", "x"), v, error));
    r = sample();
    r.learned_concurrency = 3; // learned, but not when
    EXPECT_FALSE(decode_record(record_key("smtp", "x"), encode_record(r), error));
    r = sample();
    r.learned_at = 1763999000; // when, but nothing learned
    EXPECT_FALSE(decode_record(record_key("smtp", "x"), encode_record(r), error));
    r = sample();
    r.learned_class = "connection_limit"; // a reply, but nothing learned
    EXPECT_FALSE(decode_record(record_key("smtp", "x"), encode_record(r), error));
    r = sample();
    r.learned_rate_delay = -2;
    r.learned_at = 1763999000;
    EXPECT_FALSE(decode_record(record_key("smtp", "x"), encode_record(r), error));
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
            std::string error;
            (void)decode_record(key, w, error);
        }
}

} // namespace
} // namespace cqmgr::state
