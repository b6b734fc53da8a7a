#include "cqmgr/control/request.hpp"
#include "request.hpp"
#include "usage_error.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::ctl;

TEST(Request, LinesOfTheSpecsRequests) {
    EXPECT_EQ(request_line("summary", {}), "summary");
    EXPECT_EQ(request_line("queues", {"smtp"}), "queues smtp");
    EXPECT_EQ(request_line("suspend", {"smtp:example.com", "for", "10m", "reason", "disk full"}),
              "suspend smtp:example.com for 10m reason disk full");
    EXPECT_EQ(request_line("throttle", {"example.com", "2", "for", "1h"}),
              "throttle example.com 2 for 1h");
    EXPECT_EQ(request_line("FLUSH", {"example.com"}), "FLUSH example.com");
}

TEST(Request, ArgumentCountsAreChecked) {
    EXPECT_THROW(request_line("message", {}), UsageError);
    EXPECT_THROW(request_line("summary", {"x"}), UsageError);
    EXPECT_THROW(request_line("throttle", {"example.com"}), UsageError);
    EXPECT_THROW(request_line("queues", {"a", "b"}), UsageError);
    try {
        request_line("resume", {});
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_STREQ(e.what(), "usage: cqmgrctl resume TRANSPORT[:DESTINATION] [sender GROUP]");
    }
}

// A newline in an argument would be a second request.
TEST(Request, ControlBytesAndOverlongLinesAreRefused) {
    EXPECT_THROW(request_line("suspend", {"smtp", "reason", "a\nresume smtp"}), UsageError);
    EXPECT_THROW(request_line("message", {"A\tB"}), UsageError);
    EXPECT_THROW(request_line("message", {"\xc3\xa9"}), UsageError);
    EXPECT_THROW(request_line("message", {""}), UsageError);
    EXPECT_NO_THROW(request_line("suspend", {"smtp", "reason", std::string(4096 - 21, 'x')}));
    EXPECT_THROW(request_line("suspend", {"smtp", "reason", std::string(4096 - 20, 'x')}),
                 UsageError);
}

TEST(Request, UnknownRequestsPassForANewerDaemon) {
    EXPECT_EQ(cqmgr::control::find_verb("frobnicate"), nullptr);
    EXPECT_EQ(request_line("frobnicate", {"a", "b"}), "frobnicate a b");
    ASSERT_NE(cqmgr::control::find_verb("Summary"), nullptr);
    EXPECT_EQ(cqmgr::control::find_verb("Summary")->name, "summary");
    EXPECT_EQ(cqmgr::control::verbs().size(), 13u);
}
