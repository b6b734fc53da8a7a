// Codec tests; expected bytes are those Postfix's own encoders write
// (docs/postfix-facts.md §3) and those a stock qmgr 3.7.11 sent, recorded
// with strace.
#include "cqmgr/protocol/attr.hpp"
#include "cqmgr/protocol/base64.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::protocol;
using namespace std::string_literals;

TEST(Attr, WritesNullTerminatedList) {
    AttrWriter w;
    w.str("a", "b").num("n", -1).lnum("l", 300).end();
    EXPECT_EQ(w.bytes(), "a\0b\0n\0"s "4294967295\0l\0"s "300\0\0"s);
}

TEST(Attr, CutsValueAtNul) {
    AttrWriter w;
    w.str("a", "x\0y"s).end();
    EXPECT_EQ(w.bytes(), "a\0x\0\0"s);
}

TEST(Attr, ParsesAcrossChunkBoundaries) {
    std::string wire = "status\0\0diag_type\0\0status\0"s "0\0\0"s;
    for (size_t split = 0; split <= wire.size(); ++split) {
        AttrParser p;
        AttrList out;
        std::string_view a(wire.data(), split), b(wire.data() + split, wire.size() - split);
        auto st = p.parse(a, out);
        if (st != AttrParser::Status::list) {
            ASSERT_EQ(st, AttrParser::Status::need_more) << split;
            ASSERT_EQ(p.parse(b, out), AttrParser::Status::list) << split;
        }
        ASSERT_EQ(out.attrs.size(), 3u);
        EXPECT_EQ(out.get("status", 1).value(), "0");
    }
}

TEST(Attr, HashBecomesNestedTable) {
    // docs/postfix-facts.md §3.1: `a=b`, `{k=v}`, end.
    auto l = decode_one("a\0b\0{\0k\0v\0}\0\0"s);
    ASSERT_TRUE(l);
    ASSERT_EQ(l->attrs.size(), 2u);
    EXPECT_EQ(l->get("a"), "b");
    const Attr* t = l->table();
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(t->table.size(), 1u);
    EXPECT_EQ(t->table[0], (Attr{"k", "v"}));
    EXPECT_EQ(l->describe_names(), "a, {k}");
    EXPECT_TRUE(l->names_are({"a", "{"}));
}

TEST(Attr, RejectsOversizedValues) {
    AttrParser p(AttrLimits{.max_name = 8, .max_value = 4, .max_attrs = 2});
    AttrList out;
    std::string wire = "a\0toolong\0\0"s;
    std::string_view in(wire);
    EXPECT_EQ(p.parse(in, out), AttrParser::Status::error);
    EXPECT_EQ(p.error(), "expected an attribute value of at most 4 bytes, got a longer one");
}

TEST(Attr, RejectsTooManyAttributes) {
    AttrParser p(AttrLimits{.max_name = 8, .max_value = 8, .max_attrs = 2});
    AttrList out;
    std::string wire = "a\0" "1\0b\0" "2\0c\0" "3\0\0"s;
    std::string_view in(wire);
    EXPECT_EQ(p.parse(in, out), AttrParser::Status::error);
}

TEST(Attr, TruncatedListIsReported) {
    auto l = decode_one("a\0b\0"s);
    ASSERT_FALSE(l);
    EXPECT_EQ(l.error().kind, ProtocolError::Kind::truncated);
    EXPECT_EQ(l.error().message(), "expected a complete attribute list, got a truncated one");
}

TEST(Attr, ParsesNumbersLikePostfix) {
    EXPECT_EQ(parse_int("4294967295"), -1);
    EXPECT_EQ(parse_int("0"), 0);
    EXPECT_EQ(parse_int("4096"), 4096);
    EXPECT_FALSE(parse_int("12x"));
    EXPECT_FALSE(parse_int(""));
    EXPECT_FALSE(parse_int("4294967296"));
    EXPECT_EQ(parse_long("346"), 346);
}

TEST(Base64, RoundTrips) {
    for (std::string s : {""s, "f"s, "fo"s, "foo"s, "foob"s, "fooba"s, "foobar"s, "\0\xff"s}) {
        auto e = base64_encode(s);
        EXPECT_EQ(base64_decode(e), s);
    }
    EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
    EXPECT_EQ(base64_encode("fo"), "Zm8=");
    EXPECT_FALSE(base64_decode("Zm8"));
    EXPECT_FALSE(base64_decode("Z=8="));
    EXPECT_FALSE(base64_decode("Zm!="));
}
