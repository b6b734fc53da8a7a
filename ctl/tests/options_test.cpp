#include "options.hpp"
#include "usage_error.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::ctl;

namespace {

Options parse(std::vector<std::string> args) {
    args.insert(args.begin(), "cqmgrctl");
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    return parse_options(static_cast<int>(args.size()), argv.data());
}

} // namespace

// docs/admin-guide.md's example, word for word.
TEST(Options, ConfigDirAndJsonAfterTheCommand) {
    const Options o = parse({"-c", "/etc/postfix", "summary", "--json"});
    EXPECT_EQ(o.config_dir, "/etc/postfix");
    EXPECT_TRUE(o.json);
    EXPECT_EQ(o.command, "summary");
    EXPECT_TRUE(o.args.empty());
    EXPECT_FALSE(o.socket);
}

TEST(Options, SocketTimeoutAndArguments) {
    const Options o = parse({"--socket=/tmp/s", "--timeout", "2.5", "suspend", "smtp:example.com",
                             "for", "10m", "reason", "maintenance"});
    EXPECT_EQ(o.socket, "/tmp/s");
    EXPECT_DOUBLE_EQ(o.timeout, 2.5);
    EXPECT_EQ(o.command, "suspend");
    EXPECT_EQ(o.args, (std::vector<std::string>{"smtp:example.com", "for", "10m", "reason",
                                                "maintenance"}));
}

TEST(Options, TopsOwnOptions) {
    Options o = parse({"top", "--interval", "0.5", "--iterations", "3"});
    EXPECT_EQ(o.command, "top");
    EXPECT_DOUBLE_EQ(o.interval, 0.5);
    EXPECT_EQ(o.iterations, 3);
    o = parse({"top"});
    EXPECT_DOUBLE_EQ(o.interval, 1);
    EXPECT_FALSE(o.iterations);
    EXPECT_THROW(parse({"summary", "--interval", "2"}), UsageError);
    EXPECT_THROW(parse({"top", "extra"}), UsageError);
    EXPECT_THROW(parse({"top", "--interval", "0"}), UsageError);
    EXPECT_THROW(parse({"top", "--interval", "1x"}), UsageError);
    EXPECT_THROW(parse({"top", "-n", "0"}), UsageError);
}

TEST(Options, DoubleDashEndsOptions) {
    const Options o = parse({"suspend", "smtp", "reason", "--", "-x"});
    EXPECT_EQ(o.args, (std::vector<std::string>{"smtp", "reason", "-x"}));
}

TEST(Options, Mistakes) {
    EXPECT_THROW(parse({}), UsageError);
    EXPECT_THROW(parse({"--bogus", "summary"}), UsageError);
    EXPECT_THROW(parse({"summary", "-c"}), UsageError);
    EXPECT_THROW(parse({"-c", "", "summary"}), UsageError);
    EXPECT_TRUE(parse({"--help"}).help);
    EXPECT_TRUE(parse({"--version"}).version);
}
