#include "cqmgr/control/reply.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::control;

TEST(Reply, ErrorReplyIsOneLine) {
    EXPECT_EQ(reply_line(error_reply("request too long")),
              "{\"ok\":false,\"error\":\"request too long\"}\n");
}

TEST(Reply, KeysKeepTheirOrder) {
    Json j;
    j["ok"] = true;
    j["b"] = 1;
    j["a"] = nullptr;
    EXPECT_EQ(reply_line(j), "{\"ok\":true,\"b\":1,\"a\":null}\n");
}

TEST(Reply, BadUtf8IsReplacedNotThrown) {
    Json j;
    j["ok"] = true;
    j["reason"] = std::string("550 \xff\xfe bad\n");
    EXPECT_EQ(reply_line(j), "{\"ok\":true,\"reason\":\"550 \xef\xbf\xbd\xef\xbf\xbd bad\\n\"}\n");
}
