#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/conf/param_table.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace cqmgr::conf;

namespace {
// The postfix_text of the ConfigError `f` throws ("" if none).
template <typename F> std::string fatal_text(F f) {
    try {
        f();
    } catch (const ConfigError& e) {
        return e.postfix_text();
    }
    return {};
}
} // namespace

TEST(MainCf, ContinuationCommentsLastWins) {
    std::vector<std::string> warnings;
    MainCf cf([&](const std::string& w) { warnings.push_back(w); });
    ASSERT_TRUE(cf.load_text("# comment\n"
                             "a = one\n"
                             "b = x,\n"
                             "    y\n"
                             "\n"
                             "a = two\n"
                             "c = same\n"
                             "c = same\n"));
    EXPECT_EQ(cf.str("a"), "two");
    EXPECT_EQ(cf.str("b"), "x,    y"); // continuation text is kept as written
    EXPECT_EQ(cf.list("b"), (std::vector<std::string>{"x", "y"}));
    // Overriding a different value warns; repeating the same value does not.
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0], "main.cf, line 6: overriding earlier entry: a=one");
    EXPECT_EQ(cf.where("a"), "main.cf, line 6");
    EXPECT_EQ(cf.where("b"), "main.cf, line 3");
}

TEST(MainCf, NameAndValueSyntax) {
    MainCf cf;
    ASSERT_TRUE(cf.load_text("name=value\n"
                             "spaced   =   v a l   \n"
                             "odd-name.x = 1\n"
                             "empty =\n"
                             "eq = a=b\n"));
    EXPECT_EQ(cf.str("name"), "value");
    EXPECT_EQ(cf.str("spaced"), "v a l");
    EXPECT_EQ(cf.str("odd-name.x"), "1");
    EXPECT_TRUE(cf.is_set("empty"));
    EXPECT_EQ(cf.str("empty"), "");
    EXPECT_EQ(cf.str("eq"), "a=b");
}

TEST(MainCf, LineWithoutEqualsIsFatal) {
    MainCf cf;
    EXPECT_FALSE(cf.load_text("a = 1\n\nbogus line\n"));
    EXPECT_EQ(cf.error(), "main.cf, line 3: missing '=' after attribute name: \"bogus line\"");
    MainCf cf2;
    EXPECT_FALSE(cf2.load_text("= value\n", "/etc/postfix/main.cf"));
    EXPECT_EQ(cf2.error(), "/etc/postfix/main.cf, line 1: missing attribute name: \"= value\"");
}

TEST(MainCf, IndentedFirstLineIsSkippedWithAWarning) {
    std::vector<std::string> warnings;
    MainCf cf([&](const std::string& w) { warnings.push_back(w); });
    ASSERT_TRUE(cf.load_text("  a = 1\nb = 2\n"));
    EXPECT_FALSE(cf.is_set("a"));
    EXPECT_EQ(cf.str("b"), "2");
    ASSERT_EQ(warnings.size(), 1u);
}

TEST(MainCf, LoadDirSetsConfigDirectory) {
    auto dir =
        std::filesystem::temp_directory_path() / ("cqmgr-conf-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "main.cf") << "queue_directory = $config_directory/q\n";
    MainCf cf;
    ASSERT_TRUE(cf.load_dir(dir.string()));
    EXPECT_EQ(cf.str("queue_directory"), dir.string() + "/q");
    EXPECT_EQ(cf.config_dir(), dir.string());
    // main.cf may override config_directory (Postfix warns).
    std::ofstream(dir / "main.cf") << "config_directory = /elsewhere\n";
    std::vector<std::string> warnings;
    MainCf cf2([&](const std::string& w) { warnings.push_back(w); });
    ASSERT_TRUE(cf2.load_dir(dir.string()));
    EXPECT_EQ(cf2.str("config_directory"), "/elsewhere");
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("overriding earlier entry: config_directory=" + dir.string()),
              std::string::npos);
    std::filesystem::remove_all(dir);
    MainCf missing;
    EXPECT_FALSE(missing.load_dir(dir.string()));
    EXPECT_NE(missing.error().find("main.cf"), std::string::npos);
}

TEST(MainCf, OverridesDefaultsAndUnknownNames) {
    MainCf cf;
    cf.set_default("relay_domains", "");
    cf.set_default("fast_flush_domains", "$relay_domains");
    ASSERT_TRUE(cf.load_text("relay_domains = example.com\n"));
    EXPECT_EQ(cf.str("fast_flush_domains"), "example.com");
    cf.set("relay_domains", "other.example");
    EXPECT_EQ(cf.str("fast_flush_domains"), "other.example");
    EXPECT_EQ(cf.where("relay_domains"), "command line");
    EXPECT_EQ(cf.str("no_such_parameter"), "");
    EXPECT_FALSE(cf.raw("no_such_parameter"));
    EXPECT_FALSE(cf.is_set("fast_flush_domains"));
    EXPECT_TRUE(cf.is_known("fast_flush_domains"));
}

TEST(MainCf, ExpansionErrorsNameTheParameter) {
    MainCf cf;
    ASSERT_TRUE(cf.load_text("x = 1\nloop = a$loop\nbad = ${x\n", "/etc/postfix/main.cf"));
    try {
        cf.str("loop");
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.postfix_text(), "dictionary mail_dict: macro processing error");
        EXPECT_EQ(e.where(), "/etc/postfix/main.cf, line 2");
        EXPECT_NE(e.detail().find("parameter loop: unreasonable macro call nesting"),
                  std::string::npos);
    }
    EXPECT_EQ(fatal_text([&] { cf.str("bad"); }), "dictionary mail_dict: macro processing error");
}

TEST(MainCf, TypedValuesAreCheckedLikePostfix) {
    MainCf cf;
    ASSERT_TRUE(cf.load_text("queue_run_delay = 5m\n"
                             "maximal_queue_lifetime = 2\n"
                             "minimal_backoff_time = later\n"
                             "maximal_backoff_time = soon\n"
                             "qmgr_message_active_limit = -3\n"
                             "negative = -3\n"
                             "flag = YES\n"
                             "truth = true\n"
                             "n = 12x\n"
                             "discount = 101\n"
                             "size = 99999999999\n"));
    EXPECT_EQ(cf.time("queue_run_delay", "300s"), 300);
    EXPECT_EQ(cf.time("maximal_queue_lifetime", "5d"), 2 * 86400); // unit from the default
    EXPECT_EQ(cf.time("maximal_queue_lifetime", "5", 'd'), 2 * 86400);
    EXPECT_EQ(cf.time("unset_param", "60s"), 60);
    EXPECT_EQ(cf.integer("unset_param", 7), 7);
    EXPECT_EQ(cf.integer("negative", 20, 0), -3); // a 0 minimum is no minimum
    EXPECT_TRUE(cf.boolean("flag", false));
    EXPECT_EQ(cf.long_integer("size", 0), 99999999999);
    EXPECT_EQ(fatal_text([&] { cf.time("minimal_backoff_time", "300s", 's', 1); }),
              "parameter minimal_backoff_time: bad time value or unit: later");
    // No digits read as 0 and 's' is a unit: "soon" is 0 seconds to Postfix.
    EXPECT_EQ(fatal_text([&] { cf.time("maximal_backoff_time", "4000s", 's', 1); }),
              "invalid maximal_backoff_time: 0 (min 1)");
    EXPECT_EQ(fatal_text([&] { cf.integer("qmgr_message_active_limit", 20000, 1); }),
              "invalid qmgr_message_active_limit parameter value -3 < 1");
    EXPECT_EQ(fatal_text([&] { cf.integer("n", 1); }), "bad numerical configuration: n = 12x");
    EXPECT_EQ(fatal_text([&] { cf.integer("discount", 50, 0, 100); }),
              "invalid discount parameter value 101 > 100");
    EXPECT_EQ(fatal_text([&] { cf.boolean("truth", false); }),
              "bad boolean configuration: truth = true");
    EXPECT_EQ(fatal_text([&] { cf.time("queue_run_delay", "300s", 's', 600); }),
              "invalid queue_run_delay: 300 (min 600)");
    EXPECT_EQ(fatal_text([&] { cf.time("maximal_queue_lifetime", "5d", 'd', 0, 86400); }),
              "invalid maximal_queue_lifetime: 172800 (max 86400)");
    EXPECT_EQ(fatal_text([&] { cf.str("flag", "", 4); }), "bad string length 3 < 4: flag = YES");
    try {
        cf.integer("n", 1);
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.where(), "main.cf, line 9");
        EXPECT_EQ(std::string(e.what()), "main.cf, line 9: bad numerical configuration: n = 12x");
    }
}

TEST(MainCf, HostDependentDefaults) {
    MainCf a;
    register_defaults(a, "vm");
    EXPECT_EQ(a.str("myhostname"), "vm.localdomain");
    EXPECT_EQ(a.str("mydomain"), "localdomain");
    EXPECT_EQ(a.str("mydestination"), "vm.localdomain, localhost.localdomain, localhost");
    MainCf b;
    register_defaults(b, "mx1.example.org");
    EXPECT_EQ(b.str("myhostname"), "mx1.example.org");
    EXPECT_EQ(b.str("mydomain"), "example.org");
    MainCf c;
    register_defaults(c, "vm");
    ASSERT_TRUE(c.load_text("mydomain = example.net\n"));
    EXPECT_EQ(c.str("myhostname"), "vm.example.net");
    MainCf d;
    register_defaults(d, "vm");
    ASSERT_TRUE(d.load_text("mydomain = $myhostname\n"));
    EXPECT_EQ(d.str("myhostname"), "vm."); // Postfix: then not a valid host name
}

TEST(MainCf, CompatibilityLevelDefaults) {
    MainCf cf;
    register_defaults(cf, "vm");
    EXPECT_EQ(cf.str("smtputf8_enable"), "no");
    EXPECT_EQ(cf.str("relay_domains"), "vm.localdomain, localhost.localdomain, localhost");
    EXPECT_EQ(cf.str("syslog_name"), "postfix");
    cf.set("compatibility_level", "3.6");
    EXPECT_EQ(cf.str("smtputf8_enable"), "yes");
    EXPECT_EQ(cf.str("fast_flush_domains"), "");
    EXPECT_EQ(cf.str("respectful_logging"), "yes");
    cf.set("multi_instance_name", "postfix-out");
    EXPECT_EQ(cf.str("syslog_name"), "postfix-out");
}
