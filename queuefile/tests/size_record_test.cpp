// parse_size_record against the C library's sscanf, which Postfix's qmgr
// uses on the same payload: the count and every field must agree, for
// cleanup's own payloads and for damaged ones.
#include "cqmgr/queuefile/size_record.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace cqmgr::queuefile;
using namespace std::string_literals;

namespace {
// A record whose fields all hold a value no parse would produce, so that a
// field left alone shows.
SizeRecord sentinel() {
    return SizeRecord{-7, -7, -7, -7, -7, -7};
}

// What sscanf makes of `payload` (cut at its first NUL, as Postfix sees it).
std::pair<int, SizeRecord> by_sscanf(const std::string& payload) {
    SizeRecord s = sentinel();
    std::string text = payload.substr(0, payload.find('\0'));
    int n = std::sscanf(text.c_str(), "%ld %ld %d %d %ld %d", &s.data_size, &s.data_offset,
                        &s.rcpt_count, &s.qmgr_flags, &s.cont_length, &s.smtputf8);
    return {n, s};
}

void expect_same(const std::string& payload) {
    auto [n, want] = by_sscanf(payload);
    SizeRecord got = sentinel();
    EXPECT_EQ(parse_size_record(payload, got), n) << '"' << payload << '"';
    EXPECT_EQ(got.data_size, want.data_size) << '"' << payload << '"';
    EXPECT_EQ(got.data_offset, want.data_offset) << '"' << payload << '"';
    EXPECT_EQ(got.rcpt_count, want.rcpt_count) << '"' << payload << '"';
    EXPECT_EQ(got.qmgr_flags, want.qmgr_flags) << '"' << payload << '"';
    EXPECT_EQ(got.cont_length, want.cont_length) << '"' << payload << '"';
    EXPECT_EQ(got.smtputf8, want.smtputf8) << '"' << payload << '"';
}
} // namespace

TEST(SizeRecord, CleanupsPayloadRoundTrips) {
    SizeRecord s{1234, 567, 3, 0x11, 1200, 8};
    std::string text = format_size_record(s);
    SizeRecord got;
    ASSERT_EQ(parse_size_record(text, got), 6);
    EXPECT_EQ(got.data_size, 1234);
    EXPECT_EQ(got.data_offset, 567);
    EXPECT_EQ(got.rcpt_count, 3);
    EXPECT_EQ(got.qmgr_flags, 0x11);
    EXPECT_EQ(got.cont_length, 1200);
    EXPECT_EQ(got.smtputf8, 8);
    expect_same(text);
}

TEST(SizeRecord, AgreesWithSscanfOnOddPayloads) {
    const std::vector<std::string> cases = {
        "",
        "   ",
        "\t\n\v\f\r ",
        "12",
        "12 ",
        "  12  34",
        "1 2 3",
        "1 2 3 4 5 6 7",
        "-1 -2 -3 -4 -5 -6",
        "+1 +2 +3 +4 +5 +6",
        "-",
        "+",
        "- 5",
        "1 -",
        "1 - 2",
        "12x 3",
        "12 x3",
        "x",
        "1,2,3",
        "1\t2\n3\v4\f5\r6",
        "0x10 20",
        "007 010 08 09 0 00",
        "1 2 3\0 4 5 6"s,
        "\0 1 2 3"s,
        "99999999999999999999 1 2 3 4 5",
        "-99999999999999999999 1 2 3 4 5",
        "9223372036854775807 -9223372036854775808 2147483647 -2147483648 1 1",
        "1 1 2147483648 4294967296 1 99999999999",
        "1 1 -2147483649 -4294967297 1 -99999999999999999999",
        "1 2 3 4 5 6x",
        "1 2 3 4 5 -",
        "              1234             567               3              17           "
        "1200               8",
    };
    for (const auto& c : cases)
        expect_same(c);
}

TEST(SizeRecord, AgreesWithSscanfOnRandomPayloads) {
    // Short strings over an alphabet of the characters that matter.
    const std::string alphabet = "0123456789 \t\n+-x9\v\f\r";
    std::mt19937 rng(17);
    std::uniform_int_distribution<size_t> len(0, 40), pick(0, alphabet.size() - 1);
    for (int i = 0; i < 20000; ++i) {
        std::string s(len(rng), ' ');
        for (auto& ch : s)
            ch = alphabet[pick(rng)];
        expect_same(s);
    }
}
