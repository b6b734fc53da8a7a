#include "cqmgr/conf/values.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::conf;

TEST(Values, Integers) {
    EXPECT_EQ(parse_int("20000"), 20000);
    EXPECT_EQ(parse_int("  12"), 12); // strtol skips leading blanks
    EXPECT_EQ(parse_int("+5"), 5);
    EXPECT_EQ(parse_int("-5"), -5);
    EXPECT_EQ(parse_int("-0"), 0);
    EXPECT_EQ(parse_int("2147483647"), 2147483647);
    EXPECT_EQ(parse_int("-2147483648"), -2147483648LL);
    for (const char* bad :
         {"", " ", "12x", "12 ", "0x10", "1e3", "2147483648", "-2147483649", "five", "+", "1.5"})
        EXPECT_FALSE(parse_int(bad)) << bad;
}

TEST(Values, Longs) {
    EXPECT_EQ(parse_long("10240000"), 10240000);
    EXPECT_EQ(parse_long("9223372036854775807"), INT64_MAX);
    EXPECT_FALSE(parse_long("9223372036854775808"));
    EXPECT_FALSE(parse_long("10k"));
}

TEST(Values, Times) {
    EXPECT_EQ(parse_time("300", 's'), 300);
    EXPECT_EQ(parse_time("300s", 's'), 300);
    EXPECT_EQ(parse_time("5m", 's'), 300);
    EXPECT_EQ(parse_time("2h", 's'), 7200);
    EXPECT_EQ(parse_time("5d", 's'), 432000);
    EXPECT_EQ(parse_time("1w", 's'), 604800);
    EXPECT_EQ(parse_time("5", 'd'), 432000); // bare number: the default unit
    EXPECT_EQ(parse_time("5s", 'd'), 5);
    EXPECT_EQ(parse_time("10sec", 's'), 10); // only the first letter counts
    EXPECT_EQ(parse_time("3minutes", 's'), 180);
    EXPECT_EQ(parse_time(" 7", 's'), 7);
    EXPECT_EQ(parse_time("+7", 's'), 7);
    EXPECT_EQ(parse_time("s", 's'), 0); // no digits: 0, with unit s (as Postfix)
    EXPECT_EQ(parse_time("0", 's'), 0);
    EXPECT_EQ(parse_time("2147483647", 's'), 2147483647);
    EXPECT_EQ(parse_time("3549w", 's'), 3549LL * 604800);
    EXPECT_EQ(parse_time("24854d", 's'), 24854LL * 86400);
    for (const char* bad : {"", "-1", "-1s", "10 s", "10S", "5M", "1y", "1.5h", "3550w", "24855d",
                            "596524h", "35791394m", "2147483648", "x"})
        EXPECT_FALSE(parse_time(bad, 's')) << bad;
}

TEST(Values, Booleans) {
    EXPECT_EQ(parse_bool("yes"), true);
    EXPECT_EQ(parse_bool("YES"), true);
    EXPECT_EQ(parse_bool("No"), false);
    for (const char* bad : {"", "true", "false", "1", "0", "y", "n", " yes", "yes ", "on"})
        EXPECT_FALSE(parse_bool(bad)) << bad;
}

TEST(Values, Lists) {
    EXPECT_EQ(split_list(" deferred,defer ,, x\ty\r\nz "),
              (std::vector<std::string>{"deferred", "defer", "x", "y", "z"}));
    EXPECT_TRUE(split_list(" , ").empty());
    // Only comma, blank, tab, CR and LF separate (not vertical tab).
    EXPECT_EQ(split_list("a\vb"), (std::vector<std::string>{"a\vb"}));
}

TEST(Values, HostNames) {
    for (const char* good :
         {"mail.example.com", "a", "x-1.example", "host_1", "1a.example", "123.example.com4"})
        EXPECT_TRUE(valid_hostname(good)) << good;
    for (const char* bad :
         {"", "a..b", ".a", "a.", "-a", "a-", "a-.b", "a b", "1.2.3.4", "123", "a@b"})
        EXPECT_FALSE(valid_hostname(bad)) << bad;
    EXPECT_TRUE(valid_hostname(std::string(63, 'a')));
    EXPECT_FALSE(valid_hostname(std::string(64, 'a')));
    std::string long_name;
    for (int i = 0; i < 5; ++i)
        long_name += std::string(60, 'a') + ".";
    long_name += "b";
    EXPECT_FALSE(valid_hostname(long_name)); // 306 characters
}

TEST(Values, HostNameProblemsInPostfixWords) {
    const std::pair<std::string, std::string> cases[] = {
        {"-bad-", "misplaced hyphen: -bad-"},
        {"a..b", "misplaced delimiter: a..b"},
        {"", "empty hostname"},
        {"a b", "invalid character 32(decimal): a b"},
        {"123", "numeric hostname: 123"},
        {std::string(64, 'a'), "hostname label too long: " + std::string(64, 'a')},
    };
    for (const auto& [name, why] : cases)
        EXPECT_EQ(hostname_problem(name), "valid_hostname: " + why) << name;
    EXPECT_EQ(hostname_problem("mail.example.com"), std::nullopt);
}
