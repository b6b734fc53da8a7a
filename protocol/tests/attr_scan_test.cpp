// The strict attribute scan on its own: what it consumes, its verdict, and
// the number and text rules it shares with Postfix (sscanf's %u, printable).
#include "cqmgr/protocol/attr_scan.hpp"

#include <cstdio>
#include <gtest/gtest.h>

using namespace cqmgr::protocol;
using namespace std::string_literals;
using namespace std::string_view_literals;
using Kind = ScanItem::Kind;

namespace {

constexpr ScanItem items[] = {
    {Kind::str, "a"},
    {Kind::num, "n"},
    {Kind::streq, "p", "x"},
};

struct Result {
    bool done, failed;
    size_t converted, consumed;
    std::string warning;
    bool operator==(const Result&) const = default;
};

// Scans `bytes` fed `step` bytes at a time (0: all at once); `closed`: the
// input then ends.
Result scan(std::string_view bytes, size_t step, bool closed = false) {
    AttrScan s(items, "S");
    size_t consumed = 0;
    while (!s.done() && consumed < bytes.size()) {
        size_t n = step == 0 ? bytes.size() - consumed : std::min(step, bytes.size() - consumed);
        std::string_view chunk = bytes.substr(consumed, n);
        size_t before = chunk.size();
        s.feed(chunk);
        consumed += before - chunk.size();
        if (!chunk.empty()) break; // the scan is done; the rest is not its
    }
    if (closed) s.end(false);
    return {s.done(), s.failed(), s.converted(), consumed, s.warning()};
}

} // namespace

TEST(AttrScan, CompleteList) {
    AttrScan s(items, "S");
    std::string_view in = "a\0one\0n\0"
                          "42\0p\0x\0\0rest"sv;
    EXPECT_EQ(s.feed(in), AttrScan::Status::done);
    EXPECT_EQ(in, "rest");
    EXPECT_FALSE(s.failed());
    EXPECT_EQ(s.converted(), 2u); // the fixed value does not count, as in stock
    EXPECT_EQ(s.value(0), "one");
    EXPECT_EQ(s.number(1), 42);
    EXPECT_EQ(s.warning(), "");
}

TEST(AttrScan, VerdictsAndWarnings) {
    struct Case {
        std::string bytes;
        bool closed;
        Result want;
    };
    const Case cases[] = {
        // Stopped without failing: the rest of the stream is left alone.
        {"b\0one\0\0"s, false, {true, false, 0, 2, "unexpected attribute b from S socket (expecting: a)"}},
        {"\0"s, false, {true, false, 0, 1, "missing attribute a in input from S socket"}},
        {"a\0one\0\0"s, false, {true, false, 1, 7, "missing attribute n in input from S socket"}},
        {"a\0\0n\0"
         "1\0p\0x\0z\0\0"s,
         false,
         {true, false, 2, 13, "unexpected attribute z from S socket (expecting: (list terminator))"}},
        // Failed.
        {"a\0\0n\0-\0"s,
         false,
         {true, true, 1, 7,
          "malformed numerical data from S socket while reading input attribute value: -"}},
        {"a\0\0n\0"
         "1\0p\0y\0\0"s,
         false,
         {true, true, 2, 11, "unexpected p y from S socket (expected: x)"}},
        {"a\0on"s,
         true,
         {true, true, 0, 4, "unexpected end-of-input from S socket while reading input attribute value"}},
        {"a\0"s,
         true,
         {true, true, 0, 2, "premature end-of-input on S socket while reading input attribute value"}},
        {"a\0\0"s,
         true,
         {true, true, 1, 3, "premature end-of-input on S socket while reading input attribute name"}},
        // Nothing at all: an empty result, no warning.
        {"", true, {true, false, 0, 0, ""}},
        // Not done yet.
        {"a\0on"s, false, {false, false, 0, 4, ""}},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(testing::PrintToString(c.bytes));
        for (size_t step : {0, 1, 3}) {
            Result r = scan(c.bytes, step, c.closed);
            EXPECT_EQ(r.done, c.want.done) << step;
            EXPECT_EQ(r.failed, c.want.failed) << step;
            EXPECT_EQ(r.converted, c.want.converted) << step;
            EXPECT_EQ(r.consumed, c.want.consumed) << step;
            EXPECT_EQ(r.warning, c.want.warning) << step;
        }
    }
}

TEST(AttrScan, TimeoutWording) {
    AttrScan between(items, "S");
    std::string_view in = "a\0\0"sv;
    between.feed(in);
    between.end(true);
    EXPECT_EQ(between.warning(), "timeout on S socket while reading input attribute name");
    AttrScan inside(items, "S");
    in = "a\0o"sv;
    inside.feed(in);
    inside.end(true);
    EXPECT_EQ(inside.warning(),
              "unexpected end-of-input from S socket while reading input attribute value");
}

TEST(AttrScan, OverLongStringFails) {
    AttrScan s(items, "S", 4);
    std::string_view in = "a\0"
                          "12345\0"sv;
    EXPECT_EQ(s.feed(in), AttrScan::Status::done);
    EXPECT_TRUE(s.failed());
    EXPECT_EQ(s.warning(), "string longer than 4 bytes from S socket while reading input attribute value");
    EXPECT_EQ(in, "\0"sv); // consumed up to the first byte too many, however cut
    AttrScan exact(items, "S", 4);
    in = "a\0"
         "1234\0"sv;
    EXPECT_EQ(exact.feed(in), AttrScan::Status::need_more);
}

TEST(AttrScan, WarningsArePrintable) {
    AttrScan s(items, "S");
    std::string_view in = "\x01\xc3\xa4\xff\0"sv;
    s.feed(in);
    EXPECT_EQ(s.warning(), "unexpected attribute ?\xc3\xa4? from S socket (expecting: a)");
}

TEST(AttrScan, UnsignedAsSscanfReadsIt) {
    // The same strings through the C library itself.
    const char* texts[] = {"0",
                           " 0",
                           "+0",
                           "-0",
                           "-1",
                           "\t5",
                           "\n7",
                           "\v7",
                           "00012",
                           "4294967295",
                           "4294967296",
                           "18446744073709551615",
                           "18446744073709551616",
                           "99999999999999999999999",
                           "-4294967297",
                           "-99999999999999999999",
                           "5 ",
                           "",
                           " ",
                           "-",
                           "+",
                           "0x1",
                           "1e3",
                           "--1",
                           "+-1",
                           " +7",
                           "7\t"};
    for (const char* t : texts) {
        unsigned v = 0;
        char junk = 0;
        bool c_ok = std::sscanf(t, "%u%c", &v, &junk) == 1 && junk == 0;
        auto ours = scan_unsigned(t);
        EXPECT_EQ(ours.has_value(), c_ok) << '"' << t << '"';
        if (ours && c_ok) {
            EXPECT_EQ(*ours, v) << '"' << t << '"';
        }
    }
}

TEST(AttrScan, PrintableAsPostfixHasIt) {
    EXPECT_EQ(printable("plain text ~"), "plain text ~");
    EXPECT_EQ(printable("tab\there\r\n"), "tab?here??");
    EXPECT_EQ(printable("\x7f\x80\xc1\xa4"), "????");   // DEL, lone continuation, bad lead
    EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9"); // UTF-8 kept
    EXPECT_EQ(printable("\xe2\x82\xac!"), "\xe2\x82\xac!");
    EXPECT_EQ(printable("\xc3"), "?"); // a lead byte alone
    EXPECT_EQ(printable("\xc3x"), "?x");
}
