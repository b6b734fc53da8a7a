#include "cqmgr/conf/command_line.hpp"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace cqmgr::conf;

namespace {
cqmgr::Result<CommandLine, CommandLineError> parse(std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    return parse_command_line(static_cast<int>(argv.size()), argv.data());
}
std::string error_of(std::vector<std::string> args) {
    auto cl = parse(std::move(args));
    EXPECT_FALSE(cl);
    return cl ? std::string() : cl.error().message();
}
using Overrides = std::vector<std::pair<std::string, std::string>>;
} // namespace

TEST(CommandLine, StockQmgrEntry) {
    auto cl = parse(
        {"/usr/lib/postfix/sbin/cqmgr", "-l", "-n", "qmgr", "-t", "unix", "-u", "-o", "a=b c"});
    ASSERT_TRUE(cl) << cl.error().message();
    EXPECT_EQ(cl->process_name, "cqmgr");
    EXPECT_EQ(cl->service_name, "qmgr");
    EXPECT_TRUE(cl->single_process);
    EXPECT_TRUE(cl->unprivileged);
    EXPECT_TRUE(cl->transport_given);
    EXPECT_EQ(cl->overrides, (Overrides{{"a", "b c"}}));
    EXPECT_FALSE(check_trigger_server(*cl));
}

TEST(CommandLine, BundledAndAttachedForms) {
    auto cl = parse({"qmgr", "-lu", "-tfifo", "-vv", "-dDVcz", "-s2", "-oname = value", "-o",
                     "x=", "-i", "10", "-m5", "-C", "/tmp/cf"});
    ASSERT_TRUE(cl) << cl.error().message();
    EXPECT_EQ(cl->transport, "fifo");
    EXPECT_EQ(cl->verbose, 2);
    EXPECT_TRUE(cl->debug && cl->debug_me && cl->log_to_stderr && cl->chroot && cl->zero_limit);
    EXPECT_EQ(cl->listen_fds, 2);
    EXPECT_EQ(cl->overrides,
              (Overrides{{"name", "value"}, {"x", ""}, {"max_idle", "10"}, {"max_use", "5"}}));
    EXPECT_EQ(resolve_config_dir(*cl), "/tmp/cf");
}

TEST(CommandLine, OptionsEndAtDoubleDash) {
    EXPECT_EQ(error_of({"qmgr", "-l", "--", "-u"}), "unexpected command-line argument: -u");
    auto cl = parse({"qmgr", "-l", "--"});
    ASSERT_TRUE(cl) << cl.error().message();
}

TEST(CommandLine, Errors) {
    EXPECT_EQ(error_of({"qmgr", "-l", "extra"}), "unexpected command-line argument: extra");
    EXPECT_EQ(error_of({"qmgr", "-l", "extra", "-u"}), "unexpected command-line argument: extra");
    EXPECT_EQ(error_of({"qmgr", "-q"}), "invalid option: q");
    EXPECT_EQ(error_of({"qmgr", "-lx"}), "invalid option: x");
    EXPECT_EQ(error_of({"qmgr", "-n"}), "invalid option: n (it needs a value)");
    EXPECT_EQ(error_of({"qmgr", "-o", "novalue"}),
              "invalid \"-o novalue\" option value: missing '=' after attribute name");
    EXPECT_EQ(error_of({"qmgr", "-o", "=x"}),
              "invalid \"-o =x\" option value: missing attribute name");
    EXPECT_EQ(error_of({"qmgr", "-s", "0"}), "invalid socket_count: 0");
    EXPECT_EQ(error_of({"qmgr", "-s", "x"}), "invalid socket_count: x");
    auto cl = parse({"qmgr", "-s", "3x"}); // atoi, as Postfix
    ASSERT_TRUE(cl);
    EXPECT_EQ(cl->listen_fds, 3);
}

TEST(CommandLine, TriggerServerChecks) {
    auto cl = parse({"qmgr", "-t", "unix"});
    ASSERT_TRUE(cl);
    EXPECT_EQ(check_trigger_server(*cl), "service qmgr requires a process limit of 1");
    cl = parse({"qmgr", "-l"});
    EXPECT_EQ(check_trigger_server(*cl), "no transport type specified");
    cl = parse({"qmgr", "-l", "-t", "inet"});
    EXPECT_EQ(check_trigger_server(*cl), "unsupported transport type: inet");
    cl = parse({"qmgr", "-l", "-t", "UNIX"});
    EXPECT_FALSE(check_trigger_server(*cl));
    cl = parse({"qmgr", "-S"});
    EXPECT_FALSE(check_trigger_server(*cl));
}

TEST(CommandLine, ConfigDirectoryFromEnvironment) {
    auto cl = parse({"qmgr", "-l"});
    ASSERT_TRUE(cl);
    const char* old = std::getenv("MAIL_CONFIG");
    std::string saved = old ? old : "";
    ::setenv("MAIL_CONFIG", "/etc/postfix-out", 1);
    EXPECT_EQ(resolve_config_dir(*cl), "/etc/postfix-out");
    ::setenv("MAIL_CONFIG", "", 1);
    EXPECT_EQ(resolve_config_dir(*cl), "/etc/postfix");
    if (old)
        ::setenv("MAIL_CONFIG", saved.c_str(), 1);
    else
        ::unsetenv("MAIL_CONFIG");
}
