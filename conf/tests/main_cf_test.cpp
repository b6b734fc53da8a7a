#include "cqmgr/conf/main_cf.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::conf;

TEST(MainCf, ContinuationCommentsLastWins) {
    std::vector<std::string> warnings;
    MainCf cf([&](const std::string& w) { warnings.push_back(w); });
    cf.load_text("# comment\n"
                 "a = one\n"
                 "b = x,\n"
                 "    y\n"
                 "\n"
                 "a = two\n"
                 "bogus line\n");
    EXPECT_EQ(cf.str("a"), "two");
    EXPECT_EQ(cf.str("b"), "x, y");
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("line 7"), std::string::npos);
}

TEST(MainCf, Expansion) {
    MainCf cf;
    cf.set_default("relay_domains", "");
    cf.set_default("fast_flush_domains", "$relay_domains");
    cf.load_text("queue_directory = /q\n"
                 "x = ${queue_directory}/a $(queue_directory)/b $queue_directory/c\n"
                 "y = ${empty?{nonempty}}${queue_directory?set}${empty:{was empty}}\n"
                 "loop = $loop\n");
    EXPECT_EQ(cf.str("x"), "/q/a /q/b /q/c");
    EXPECT_EQ(cf.str("y"), "setwas empty");
    EXPECT_EQ(cf.str("fast_flush_domains"), "");
    EXPECT_EQ(cf.str("loop"), ""); // warns, does not hang
    cf.set_default("syslog_name", "${multi_instance_name?{$multi_instance_name}:{postfix}}");
    EXPECT_EQ(cf.str("syslog_name"), "postfix");
    cf.set("multi_instance_name", "postfix-out");
    EXPECT_EQ(cf.str("syslog_name"), "postfix-out");
}

TEST(MainCf, TypedValuesFallBackWithWarning) {
    std::vector<std::string> warnings;
    MainCf cf([&](const std::string& w) { warnings.push_back(w); });
    cf.load_text("queue_run_delay = 5m\n"
                 "maximal_queue_lifetime = 2\n"
                 "minimal_backoff_time = soon\n"
                 "qmgr_message_active_limit = -3\n"
                 "flag = YES\n");
    EXPECT_EQ(cf.time("queue_run_delay", "300s"), 300);
    EXPECT_EQ(cf.time("maximal_queue_lifetime", "5d", 'd'), 2 * 86400);
    EXPECT_EQ(cf.time("minimal_backoff_time", "300s", 's', 1), 300);
    EXPECT_EQ(cf.integer("qmgr_message_active_limit", 20000, 1), 20000);
    EXPECT_EQ(cf.time("unset_param", "60s"), 60);
    EXPECT_TRUE(cf.boolean("flag", false));
    EXPECT_EQ(warnings.size(), 2u);
}

TEST(MainCf, Lists) {
    EXPECT_EQ(split_list(" deferred,defer ,, x\ty "),
              (std::vector<std::string>{"deferred", "defer", "x", "y"}));
}
