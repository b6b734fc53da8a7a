// The three attribute formats (docs/postfix-facts.md §3.1): exact
// bytes as Postfix 3.7.11's attr_print0 / attr_print_plain / attr_print64
// write them, strict decoding, nested tables, limits.
#include "cqmgr/protocol/attr.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::protocol;
using namespace std::string_literals;

namespace {
// The example list of docs/postfix-facts.md §3.1: a=b, n=5, {k=v}.
std::string sample(AttrFormat f) {
    AttrWriter w(f);
    w.str("a", "b").num("n", 5).table({{"k", "v"}}).end();
    return w.take();
}

// Decodes `wire` in `f`, feeding it one byte at a time.
AttrParser::Status parse_bytewise(AttrFormat f, const std::string& wire, AttrList& out,
                                  std::string* error = nullptr, AttrLimits limits = {}) {
    AttrParser p(f, limits);
    for (size_t i = 0; i < wire.size(); ++i) {
        std::string_view one(wire.data() + i, 1);
        auto st = p.parse(one, out);
        if (st == AttrParser::Status::error && error) *error = p.error();
        if (st == AttrParser::Status::list) {
            EXPECT_EQ(i + 1, wire.size()) << "list ended early at byte " << i;
        }
        if (st != AttrParser::Status::need_more) return st;
    }
    return AttrParser::Status::need_more;
}

// What decode_one() said was wrong ("(decoded)" when it was not).
std::string error_of(const cqmgr::Result<AttrList, ProtocolError>& r) {
    return r ? "(decoded)" : r.error().message();
}
} // namespace

TEST(AttrFormats, NullHashMatchesFactsSheet) {
    // docs/postfix-facts.md §3.1: `61 00 62 00 7b 00 6b 00 76 00 7d 00 00`.
    AttrWriter w;
    w.str("a", "b").table({{"k", "v"}}).end();
    EXPECT_EQ(w.bytes(), "a\0b\0{\0k\0v\0}\0\0"s);
}

TEST(AttrFormats, Base64MatchesFactsSheet) {
    // docs/postfix-facts.md §3.1, as Postfix's encoder wrote it:
    // YQ==:Yg==\nbg==:NQ==\new==\naw==:dg==\nfQ==\n\n
    EXPECT_EQ(sample(AttrFormat::base64), "YQ==:Yg==\nbg==:NQ==\new==\naw==:dg==\nfQ==\n\n");
}

TEST(AttrFormats, PlainMatchesFactsSheet) {
    // docs/postfix-facts.md §3.1: name=value\n, the hash delimiters go out
    // with their NUL.
    EXPECT_EQ(sample(AttrFormat::plain), "a=b\nn=5\n{\0\nk=v\n}\0\n\n"s);
}

TEST(AttrFormats, NumbersAndDataInEveryFormat) {
    AttrWriter p(AttrFormat::plain);
    p.num("i", -1).lnum("l", -1).data("d", "\0\x01"s).end();
    EXPECT_EQ(p.bytes(), "i=4294967295\nl=18446744073709551615\nd=AAE=\n\n");
    // base64: numbers are printed, then encoded; data is encoded once.
    AttrWriter b(AttrFormat::base64);
    b.num("i", 7).data("d", "\0\x01"s).str("s", "x\0y"s).end();
    EXPECT_EQ(b.bytes(), "aQ==:Nw==\nZA==:AAE=\ncw==:eA==\n\n");
    AttrWriter z;
    z.data("time", "\0\x01"s).end();
    EXPECT_EQ(z.bytes(), "time\0AAE=\0\0"s);
}

TEST(AttrFormats, EmptyListIsOneTerminator) {
    EXPECT_EQ(AttrWriter(AttrFormat::null).end().bytes(), "\0"s);
    EXPECT_EQ(AttrWriter(AttrFormat::plain).end().bytes(), "\n");
    EXPECT_EQ(AttrWriter(AttrFormat::base64).end().bytes(), "\n");
}

TEST(AttrFormats, EveryFormatDecodesToTheSameList) {
    for (auto f : {AttrFormat::null, AttrFormat::plain, AttrFormat::base64}) {
        SCOPED_TRACE(format_name(f));
        auto l = decode_one(sample(f), f);
        ASSERT_TRUE(l) << l.error().message();
        EXPECT_EQ(l->describe_names(), "a, n, {k}");
        EXPECT_EQ(l->get("n"), "5");
        EXPECT_EQ(l->table()->table[0].value, "v");
        // Re-encoding reproduces the bytes.
        EXPECT_EQ(encode_list(*l, f), sample(f));
        AttrList bytewise;
        EXPECT_EQ(parse_bytewise(f, sample(f), bytewise), AttrParser::Status::list);
        EXPECT_EQ(bytewise, *l);
    }
}

TEST(AttrFormats, PlainValueMayContainEquals) {
    auto l = decode_one("reason=a=b\n\n", AttrFormat::plain);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->get("reason"), "a=b");
}

TEST(AttrFormats, PlainAcceptsDelimitersWithoutNul) {
    auto l = decode_one("{\nk=v\n}\n\n", AttrFormat::plain);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->describe_names(), "{k}");
}

TEST(AttrFormats, Base64KeepsNulInData) {
    AttrWriter w(AttrFormat::base64);
    w.data("d", "a\0b"s).end();
    auto l = decode_one(w.bytes(), AttrFormat::base64);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->get("d"), "a\0b"s);
    EXPECT_EQ(encode_list(*l, AttrFormat::base64), w.bytes());
}

TEST(AttrFormats, StrictErrorsSayWhatWasExpected) {
    struct Case {
        AttrFormat f;
        std::string wire;
        std::string error;
    };
    const Case cases[] = {
        {AttrFormat::null, "}\0\0"s, "expected '{' before '}', got a lone '}'"},
        {AttrFormat::null, "{\0k\0v\0\0"s, "expected '}' to close the table, got the end of the list"},
        {AttrFormat::null, "{\0{\0"s, "expected tables nested at most 1 deep, got a deeper '{'"},
        {AttrFormat::plain, "novalue\n\n", "expected name=value, got \"novalue\" without a value"},
        {AttrFormat::plain, "=v\n\n", "expected an attribute name, got an empty one with a value"},
        {AttrFormat::plain, "a=x\0y\n\n"s, "expected a value without NUL for \"a\""},
        {AttrFormat::plain, "a\0b=c\n\n"s, "expected an attribute name without NUL, got \"a\\x00b\""},
        {AttrFormat::base64, "YQ=:Yg==\n\n", "expected a base64 attribute name, got \"YQ=\""},
        {AttrFormat::base64, "YQ==:Y!==\n\n", "expected a base64 value for \"a\", got \"Y!==\""},
        {AttrFormat::base64, "YQ==:Yg==:\n\n", "expected a newline after the base64 value of \"YQ==\", got ':'"},
        {AttrFormat::base64, "YQ==\n\n", "expected name:value, got \"a\" without a value"},
        {AttrFormat::base64, "YQBi:Yg==\n\n", "expected an attribute name without NUL, got \"a\\x00b\""},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(std::string(format_name(c.f)) + ": " + c.wire);
        auto l = decode_one(c.wire, c.f);
        ASSERT_FALSE(l);
        EXPECT_EQ(l.error().kind, ProtocolError::Kind::malformed);
        EXPECT_EQ(l.error().message(), c.error);
        AttrList out;
        std::string bytewise_err;
        EXPECT_EQ(parse_bytewise(c.f, c.wire, out, &bytewise_err), AttrParser::Status::error);
        EXPECT_EQ(bytewise_err, c.error);
    }
}

TEST(AttrFormats, LimitsApplyToDecodedLengths) {
    AttrLimits lim;
    lim.max_value = 3;
    // "abc" is 4 base64 characters, within the limit; "abcd" is 8, beyond it.
    EXPECT_TRUE(decode_one("YQ==:YWJj\n\n", AttrFormat::base64, lim));
    EXPECT_EQ(error_of(decode_one("YQ==:YWJjZA==\n\n", AttrFormat::base64, lim)),
              "expected an attribute value of at most 4 bytes of base64, got a longer one");
    EXPECT_EQ(error_of(decode_one("a=abcd\n\n", AttrFormat::plain, lim)),
              "expected an attribute value of at most 3 bytes, got a longer one");
}

// Found by the fuzzer: eight base64 characters fit the encoded bound for a
// four-byte limit but decode to six bytes.
TEST(AttrFormats, DecodedBase64BeyondTheLimitIsRejected) {
    AttrLimits lim;
    lim.max_value = 4;
    lim.max_name = 4;
    EXPECT_EQ(error_of(decode_one("YQ==:YWJjZGVm\n\n", AttrFormat::base64, lim)),
              "expected an attribute value of at most 4 bytes for \"a\", got 6 once decoded");
    EXPECT_EQ(error_of(decode_one("YWJjZGVm:YQ==\n\n", AttrFormat::base64, lim)),
              "expected an attribute name of at most 4 bytes, got 6 once decoded");
    EXPECT_TRUE(decode_one("YWJjZA==:YWJjZA==\n\n", AttrFormat::base64, lim));
}

TEST(AttrFormats, TableEntryLimitMatchesPostfix) {
    AttrWriter w;
    std::vector<std::pair<std::string, std::string>> entries;
    for (int i = 0; i < 1025; ++i)
        entries.emplace_back("k" + std::to_string(i), "v");
    w.table(entries).end();
    EXPECT_EQ(error_of(decode_one(w.bytes())),
              "expected at most 1024 entries in one table, got more");
    entries.pop_back();
    AttrWriter ok;
    ok.table(entries).end();
    EXPECT_TRUE(decode_one(ok.bytes()));
}

TEST(AttrFormats, ParserContinuesWithTheNextList) {
    for (auto f : {AttrFormat::null, AttrFormat::plain, AttrFormat::base64}) {
        SCOPED_TRACE(format_name(f));
        AttrWriter w(f);
        w.str("protocol", "x").end().num("status", 0).end();
        std::string wire = w.take();
        std::string_view in(wire);
        AttrParser p(f);
        AttrList one, two;
        ASSERT_EQ(p.parse(in, one), AttrParser::Status::list);
        EXPECT_FALSE(p.mid_list());
        ASSERT_EQ(p.parse(in, two), AttrParser::Status::list);
        EXPECT_TRUE(in.empty());
        EXPECT_EQ(one.get("protocol"), "x");
        EXPECT_EQ(two.get("status"), "0");
    }
}
