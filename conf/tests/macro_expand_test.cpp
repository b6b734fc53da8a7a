#include "cqmgr/conf/config_error.hpp"
#include "cqmgr/conf/macro_expand.hpp"

#include <gtest/gtest.h>
#include <map>

using namespace cqmgr::conf;

namespace {
struct Table {
    std::map<std::string, std::string> values;

    std::string expand(std::string_view text) const {
        return expand_macros(text, [this](const std::string& n) -> std::optional<std::string> {
            auto it = values.find(n);
            if (it == values.end()) return std::nullopt;
            return it->second;
        });
    }
    // The detail text of the error expanding `text` throws ("" if none).
    std::string error(std::string_view text) const {
        try {
            expand(text);
        } catch (const ConfigError& e) {
            EXPECT_EQ(e.postfix_text(), "macro processing error");
            return e.detail();
        }
        return {};
    }
};
} // namespace

TEST(MacroExpand, PlainReferences) {
    Table t{{{"a", "A"}, {"b", "$a-${a}-$(a)"}, {"empty", ""}}};
    EXPECT_EQ(t.expand("$a"), "A");
    EXPECT_EQ(t.expand("x$b.y"), "xA-A-A.y");
    EXPECT_EQ(t.expand("$unset|$empty|"), "||");
    EXPECT_EQ(t.expand("$$a costs $$5"), "$a costs $5");
    EXPECT_EQ(t.expand("$a_b"), "");    // the name is a_b
    EXPECT_EQ(t.expand("$a-b"), "A-b"); // '-' ends a name
    EXPECT_EQ(t.expand("${ a }"), "A"); // blanks around the name are fine
    EXPECT_EQ(t.expand("$(a)(x)"), "A(x)");
}

TEST(MacroExpand, ValuesAreExpandedAgainButDollarDollarOnlyOnce) {
    Table t{{{"price", "$$5"}, {"c", "$price"}}};
    EXPECT_EQ(t.expand("$c"), "$5");
}

TEST(MacroExpand, Conditionals) {
    Table t{{{"set", "v"}, {"empty", ""}}};
    EXPECT_EQ(t.expand("${set?yes}"), "yes");
    EXPECT_EQ(t.expand("${empty?yes}"), "");
    EXPECT_EQ(t.expand("${unset?yes}"), "");
    EXPECT_EQ(t.expand("${set:no}"), "");
    EXPECT_EQ(t.expand("${empty:no}${unset:no}"), "nono");
    EXPECT_EQ(t.expand("${set?{ a b }}"), " a b "); // inside braces: kept
    EXPECT_EQ(t.expand("${set?  {x}  }"), "x");     // around braces: dropped
    EXPECT_EQ(t.expand("${set? x}"), " x");         // bare text keeps its lead
    EXPECT_EQ(t.expand("${set ? x}"), " x");
    EXPECT_EQ(t.expand("${set?x:y}"), "x:y"); // bare text runs to the end
    EXPECT_EQ(t.expand("${set?{x}:{y}}|${empty?{x}:{y}}"), "x|y");
    EXPECT_EQ(t.expand("${empty?{x}:y z}"), "y z");
    EXPECT_EQ(t.expand("${set?{$set$set}}"), "vv");
    EXPECT_EQ(t.expand("${set?{{nested}}}"), "{nested}");
    EXPECT_EQ(t.expand("$(set?a)"), "a");
}

TEST(MacroExpand, Relational) {
    Table t{{{"level", "3.6"}, {"n", "10"}}};
    EXPECT_EQ(t.expand("${{$n} > {9} ? {num} : {str}}"), "num"); // numeric: 10 > 9
    EXPECT_EQ(t.expand("${{${n}x} > {9x} ? {a} : {b}}"), "b");   // "10x" < "9x" as text
    EXPECT_EQ(t.expand("${{01} == {1}?{same}:{differ}}"), "same");
    EXPECT_EQ(t.expand("${{abc} <= {abd}?{le}}"), "le");
    EXPECT_EQ(t.expand("${{a} != {a}}|${{a} == {a}}"), "|true");
    EXPECT_EQ(t.expand("${{} == {}?{empty}}"), "empty");
    EXPECT_EQ(t.expand("${{$level} <level {10} ? {old} : {new}}"), "old");
    EXPECT_EQ(t.expand("${{$level} >=level {3.6.0} ? {ge}}"), "ge");
    EXPECT_EQ(t.expand("${{2} <level {1} ? {no} : {yes}}"), "yes");
}

TEST(MacroExpand, SyntaxErrorsAreFatal) {
    Table t{{{"a", "A"}}};
    EXPECT_NE(t.error("${a").find("truncated macro reference"), std::string::npos);
    EXPECT_NE(t.error("x$").find("empty macro name"), std::string::npos);
    EXPECT_NE(t.error("$ a").find("empty macro name"), std::string::npos);
    EXPECT_NE(t.error("${}").find("empty macro name"), std::string::npos);
    EXPECT_NE(t.error("${a b}").find("attribute name syntax error"), std::string::npos);
    EXPECT_NE(t.error("${a-b}").find("attribute name syntax error"), std::string::npos);
    EXPECT_NE(t.error("${a?{x} y}").find("\":\" expected"), std::string::npos);
    EXPECT_NE(t.error("${a:{x}:{y}}").find("unexpected input"), std::string::npos);
    EXPECT_NE(t.error("${a?{x}").find("truncated"), std::string::npos);
    EXPECT_NE(t.error("${{a} ~= {b}}").find("expected at"), std::string::npos);
    EXPECT_NE(t.error("${{a}{b}}").find("expected at"), std::string::npos);
    EXPECT_NE(t.error("${{a} <foo {b}}").find("bad operator suffix"), std::string::npos);
    EXPECT_NE(t.error("${{a} == b}").find("{expression}"), std::string::npos);
    EXPECT_NE(t.error("${{a} == {b} x}").find("\"?\" or \":\" expected"), std::string::npos);
    EXPECT_NE(t.error("${{x} <level {1}}").find("malformed compatibility level"),
              std::string::npos);
}

TEST(MacroExpand, BadNumericComparisonIsFatal) {
    Table t;
    try {
        t.expand("${{99999999999999999999} == {1}}");
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.postfix_text(), "mac_exp_eval: bad conversion: 99999999999999999999");
    }
}

TEST(MacroExpand, NestingLimit) {
    // A chain p0 -> p1 -> ... -> pK = "end": expanding "$p0" nests K + 1
    // calls deep (the last one for the literal); more than 100 is an error.
    auto chain = [](int k) {
        Table t;
        for (int i = 0; i < k; ++i)
            t.values["p" + std::to_string(i)] = "$p" + std::to_string(i + 1);
        t.values["p" + std::to_string(k)] = "end";
        return t;
    };
    EXPECT_EQ(chain(99).expand("$p0"), "end");
    EXPECT_NE(chain(100).error("$p0").find("unreasonable macro call nesting"), std::string::npos);
    Table loop{{{"a", "x$a"}}};
    EXPECT_NE(loop.error("$a").find("unreasonable macro call nesting"), std::string::npos);
    // Relational operands restart Postfix's count; our own guard still stops
    // a cycle through them (stock Postfix would run out of stack).
    Table cycle{{{"a", "${{$a} == {x}}"}}};
    EXPECT_NE(cycle.error("$a").find("unreasonable macro call nesting"), std::string::npos);
}
