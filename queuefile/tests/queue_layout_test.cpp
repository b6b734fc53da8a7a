#include "cqmgr/queuefile/queue_layout.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::queuefile;

TEST(QueueLayout, PathsMatchPostfix) {
    // Examples produced by Postfix's own path function
    // (docs/postfix-facts.md §1.3).
    QueueLayout d1({"deferred", "defer"}, 1);
    EXPECT_EQ(d1.path("deferred", "1E24012D687"), "deferred/1/1E24012D687");
    EXPECT_EQ(d1.path("deferred", "4SVLCh0sf8z9HdB"), "deferred/1/4SVLCh0sf8z9HdB");
    EXPECT_EQ(d1.path("active", "4SVLCh0sf8z9HdB"), "active/4SVLCh0sf8z9HdB");
    QueueLayout d2({"deferred", "defer"}, 2);
    EXPECT_EQ(d2.path("defer", "4SVLCh0sf8z9HdB"), "defer/1/E/4SVLCh0sf8z9HdB");
    QueueLayout d3({"DEFERRED"}, 3);
    EXPECT_EQ(d3.path("deferred", "AB"), "deferred/A/B/_/AB");
    // A path a stock qmgr used (recorded with strace): defer/9/9C6E8A76820.
    EXPECT_EQ(d1.path("defer", "9C6E8A76820"), "defer/9/9C6E8A76820");
}

TEST(QueueLayout, IdValidity) {
    EXPECT_TRUE(queue_id_ok("9C6E8A76820"));
    EXPECT_TRUE(queue_id_ok("4SVLCh0sf8z9HdB"));
    EXPECT_FALSE(queue_id_ok("123.456"));
    EXPECT_FALSE(queue_id_ok(""));
    EXPECT_FALSE(queue_id_ok(std::string(256, 'A')));
}
