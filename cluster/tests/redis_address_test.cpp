#include "cqmgr/cluster/redis_address.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::cluster;

TEST(RedisAddress, Forms) {
    auto a = parse_redis_address("127.0.0.1:6380");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->host, "127.0.0.1");
    EXPECT_EQ(a->port, 6380);
    EXPECT_EQ(a->text(), "127.0.0.1:6380");
    EXPECT_EQ(parse_redis_address("redis.example")->port, 6379);
    auto v6 = parse_redis_address("[::1]:7000");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->host, "::1");
    EXPECT_EQ(v6->text(), "[::1]:7000");
    auto u = parse_redis_address("unix:/var/run/redis.sock");
    ASSERT_TRUE(u);
    EXPECT_TRUE(u->is_unix());
    EXPECT_EQ(u->text(), "unix:/var/run/redis.sock");
}

TEST(RedisAddress, Rejects) {
    for (const char* bad : {"", "host:", "host:0", "host:70000", "host:x", "unix:", "unix:rel",
                            "[::1", "[::1]x", ":6379", "a b:1"})
        EXPECT_FALSE(parse_redis_address(bad)) << bad;
}
