#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/values.hpp"

#include <gtest/gtest.h>
#include <set>

using namespace cqmgr::conf;

TEST(ParamTable, NamesAreUnique) {
    std::set<std::string_view> names;
    for (auto table : {global_params(), qmgr_params(), cqmgr_params()})
        for (auto& p : table)
            EXPECT_TRUE(names.insert(p.name).second) << p.name;
}

TEST(ParamTable, LiteralDefaultsSatisfyTheirOwnTypeAndBounds) {
    for (auto table : {global_params(), qmgr_params(), cqmgr_params()})
        for (auto& p : table) {
            if (p.computed || p.def.find('$') != std::string_view::npos) continue;
            switch (p.type) {
            case ParamType::Int:
            case ParamType::Long: {
                auto n = p.type == ParamType::Int ? parse_int(p.def) : parse_long(p.def);
                ASSERT_TRUE(n) << p.name;
                EXPECT_TRUE(!p.min || *n >= p.min) << p.name;
                EXPECT_TRUE(!p.max || *n <= p.max) << p.name;
                break;
            }
            case ParamType::Time: {
                auto t = parse_time(p.def, 's');
                ASSERT_TRUE(t) << p.name;
                EXPECT_TRUE(!p.min || *t >= p.min) << p.name;
                EXPECT_TRUE(!p.max || *t <= p.max) << p.name;
                break;
            }
            case ParamType::Bool:
                EXPECT_TRUE(parse_bool(p.def)) << p.name;
                break;
            case ParamType::Percent: {
                auto n = parse_int(p.def);
                ASSERT_TRUE(n) << p.name;
                EXPECT_TRUE(*n >= 0 && *n <= 100) << p.name;
                break;
            }
            case ParamType::String:
                EXPECT_TRUE(!p.min || static_cast<int64_t>(p.def.size()) >= p.min) << p.name;
                break;
            }
        }
}

TEST(ParamTable, SixteenSuffixesWithQmgrFallbacks) {
    ASSERT_EQ(transport_suffixes().size(), 16u);
    for (auto& s : transport_suffixes()) {
        auto* p = find_param(s.fallback);
        ASSERT_NE(p, nullptr) << s.fallback;
        EXPECT_EQ(p, s.global) << s.fallback;
        EXPECT_EQ(p->reader, ParamReader::Qmgr) << s.fallback;
        EXPECT_EQ(p->type, s.type) << s.fallback;
    }
}

TEST(ParamTable, CqmgrParametersAreCqmgrsOwn) {
    for (auto& p : cqmgr_params()) {
        EXPECT_TRUE(p.name.starts_with("cqmgr_")) << p.name;
        EXPECT_EQ(p.reader, ParamReader::Cqmgr) << p.name;
        EXPECT_NE(p.field.kind, ParamField::Kind::None) << p.name;
        EXPECT_EQ(find_param(p.name), nullptr) << p.name; // Postfix's lookup does not see them
    }
    for (auto table : {global_params(), qmgr_params()})
        for (auto& p : table) {
            EXPECT_FALSE(p.name.starts_with("cqmgr_")) << p.name;
            EXPECT_NE(p.reader, ParamReader::Cqmgr) << p.name;
        }
}

TEST(ParamTable, CqmgrSuffixesFallBackToCqmgrRows) {
    ASSERT_EQ(cqmgr_transport_suffixes().size(), 3u);
    for (auto& s : cqmgr_transport_suffixes()) {
        ASSERT_NE(s.global, nullptr) << s.suffix;
        EXPECT_EQ(s.global->reader, ParamReader::Cqmgr) << s.suffix;
        EXPECT_EQ("_" + std::string(s.fallback), s.suffix);
        EXPECT_EQ(s.type, s.global->type) << s.suffix;
    }
}

TEST(ParamTable, CqmgrDefaultsAreNotRegistered) {
    // Postfix does not know them: $cqmgr_... expands to "" unless set.
    MainCf cf;
    register_defaults(cf, "vm");
    for (auto& p : cqmgr_params())
        EXPECT_FALSE(cf.is_known(std::string(p.name))) << p.name;
}

TEST(ParamTable, TransportDefaultsPointAtTheGlobals) {
    MainCf cf;
    register_defaults(cf, "vm");
    register_transport_defaults(cf, "relay");
    register_transport_defaults(cf, "local");
    EXPECT_EQ(cf.raw("relay_destination_concurrency_limit"),
              "$default_destination_concurrency_limit");
    EXPECT_EQ(cf.str("relay_destination_concurrency_limit"), "20");
    EXPECT_EQ(cf.str("local_destination_concurrency_limit"), "2");
    EXPECT_EQ(cf.str("local_destination_recipient_limit"), "1");
    EXPECT_EQ(cf.str("local_initial_destination_concurrency"), "5");
}
