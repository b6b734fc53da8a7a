#include "cqmgr/conf/command_line.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::conf;

namespace {
std::optional<CommandLine> parse(std::vector<std::string> args, std::string& err) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    return parse_command_line(static_cast<int>(argv.size()), argv.data(), err);
}
} // namespace

TEST(CommandLine, StockQmgrEntry) {
    std::string err;
    auto cl = parse({"cqmgr", "-l", "-n", "qmgr", "-t", "unix", "-u", "-o", "a=b c"}, err);
    ASSERT_TRUE(cl) << err;
    EXPECT_EQ(cl->process_name, "cqmgr");
    EXPECT_EQ(cl->service_name, "qmgr");
    EXPECT_TRUE(cl->single_process);
    EXPECT_TRUE(cl->unprivileged);
    ASSERT_EQ(cl->overrides.size(), 1u);
    EXPECT_EQ(cl->overrides[0].second, "b c");
}

TEST(CommandLine, RejectsLeftoversAndUnknownOptions) {
    std::string err;
    EXPECT_FALSE(parse({"cqmgr", "-l", "extra"}, err));
    EXPECT_NE(err.find("unexpected command-line argument"), std::string::npos);
    EXPECT_FALSE(parse({"cqmgr", "-q"}, err));
    EXPECT_NE(err.find("invalid option"), std::string::npos);
    EXPECT_FALSE(parse({"cqmgr", "-o", "novalue"}, err));
}
