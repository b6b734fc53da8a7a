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

TEST(RedisTarget, OneServerOrSentinels) {
    auto one = parse_redis_target("10.0.0.5:6380");
    ASSERT_TRUE(one);
    EXPECT_FALSE(one->via_sentinel());
    EXPECT_EQ(one->server.text(), "10.0.0.5:6380");
    // A host called "sentinel" is a host.
    EXPECT_EQ(parse_redis_target("sentinel:7000")->server.text(), "sentinel:7000");
    auto s = parse_redis_target("sentinel:mail@10.0.0.1,10.0.0.2:26380,[::1]");
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->via_sentinel());
    EXPECT_EQ(s->master_name, "mail");
    ASSERT_EQ(s->sentinels.size(), 3u);
    EXPECT_EQ(s->sentinels[0].text(), "10.0.0.1:26379");
    EXPECT_EQ(s->sentinels[1].text(), "10.0.0.2:26380");
    EXPECT_EQ(s->sentinels[2].text(), "[::1]:26379");
}

TEST(RedisTarget, Rejects) {
    for (const char* bad : {"sentinel:@h:1", "sentinel:m@", "sentinel:m@h:1,", "sentinel:m@,h",
                            "sentinel:m@unix:/s", "sentinel:a b@h", "sentinel:m@h:0"})
        EXPECT_FALSE(parse_redis_target(bad)) << bad;
}
