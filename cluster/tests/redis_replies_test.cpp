// What cqmgr makes of Redis's replies: the shapes the scripts and commands
// give are read, and anything else (a damaged or hostile server) is no
// answer: nothing can make a wait of NaN, infinity or centuries.
#include "cqmgr/cluster/redis_replies.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

using namespace cqmgr::cluster;

namespace {

RedisReply integer(int64_t v) {
    RedisReply r;
    r.type = RedisReply::Type::integer;
    r.integer = v;
    return r;
}
RedisReply text(std::string s) {
    RedisReply r;
    r.type = RedisReply::Type::string;
    r.str = std::move(s);
    return r;
}
RedisReply array(std::vector<RedisReply> e) {
    RedisReply r;
    r.type = RedisReply::Type::array;
    r.elements = std::move(e);
    return r;
}
RedisReply nil() {
    RedisReply r;
    r.type = RedisReply::Type::nil;
    return r;
}

} // namespace

TEST(RedisReplies, RateWaitsThatAreNoNumberOfMillisecondsAreNoAnswer) {
    RateAnswer ok = read_rate_answer(array({integer(0), text("12.5")}));
    EXPECT_FALSE(ok.failed);
    EXPECT_FALSE(ok.allowed);
    EXPECT_EQ(ok.retry_after_ms, 12.5);
    RateAnswer booked = read_rate_answer(array({integer(1), text("300")}));
    EXPECT_TRUE(booked.allowed);
    EXPECT_EQ(booked.wait_ms, 300);
    for (const char* bad : {"nan", "NaN", "inf", "-inf", "1e300", "-1", "12ms", "", " 1", "0x10"})
        EXPECT_TRUE(read_rate_answer(array({integer(0), text(bad)})).failed) << bad;
    EXPECT_TRUE(read_rate_answer(array({integer(2), text("1")})).failed);
    EXPECT_TRUE(read_rate_answer(array({text("1"), text("1")})).failed);
    EXPECT_TRUE(read_rate_answer(array({integer(1)})).failed);
    EXPECT_TRUE(read_rate_answer(nil()).failed);
    EXPECT_TRUE(read_rate_answer(RedisReply::failure("down")).failed);
}

TEST(RedisReplies, Leases) {
    LeaseAnswer a = read_lease_answer(array({integer(1), integer(2), integer(0)}));
    EXPECT_FALSE(a.failed);
    EXPECT_TRUE(a.granted);
    EXPECT_EQ(a.live, 2);
    LeaseAnswer fenced = read_lease_answer(array({integer(0), integer(1), integer(2500)}));
    EXPECT_FALSE(fenced.granted);
    EXPECT_EQ(fenced.retry_after_ms, 2500);
    EXPECT_FALSE(read_lease_answer(array({integer(0), integer(3)})).failed); // older script
    EXPECT_TRUE(read_lease_answer(array({integer(1), integer(-1)})).failed);
    EXPECT_TRUE(read_lease_answer(array({integer(7), integer(1)})).failed);
    EXPECT_TRUE(read_lease_answer(array({integer(0), integer(1), integer(-5)})).failed);
    EXPECT_TRUE(read_lease_answer(array({integer(0), integer(1), text("5")})).failed);

    RenewAnswer r = read_renew_answer(array({integer(3), text("101")}), 3);
    EXPECT_FALSE(r.failed);
    EXPECT_EQ(r.live, 3);
    EXPECT_EQ(r.kept, (std::vector<bool>{true, false, true}));
    EXPECT_TRUE(read_renew_answer(array({integer(3), text("10")}), 3).failed);
    EXPECT_TRUE(read_renew_answer(array({integer(3), text("1x1")}), 3).failed);
    EXPECT_TRUE(read_renew_answer(array({integer(3)}), 0).failed);
    EXPECT_TRUE(read_renew_answer(integer(3), 0).failed);
}

TEST(RedisReplies, DeadMarks) {
    auto [failed, m] = read_dead_mark(array({text("4.4.1\tconnect refused"), integer(5000)}));
    EXPECT_FALSE(failed);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->status, "4.4.1");
    EXPECT_EQ(m->reason, "connect refused");
    EXPECT_EQ(m->remaining_ms, 5000);
    auto none = read_dead_mark(nil());
    EXPECT_FALSE(none.first);
    EXPECT_FALSE(none.second);
    EXPECT_FALSE(read_dead_mark(array({text("4.4.1\tx"), integer(-1)})).second);
    // A mark is a deferral with a reason that is one printable line.
    for (const char* bad : {"5.1.1\tbounce", "4.4\tx", "4.4.1x\tx", "4.4.1\tline\nforged"})
        EXPECT_TRUE(read_dead_mark(array({text(bad), integer(5000)})).first) << bad;
    EXPECT_TRUE(read_dead_mark(array({integer(1), integer(5000)})).first);
}

TEST(RedisReplies, Boards) {
    BoardAnswer same = read_board_answer(array({text("run:3"), integer(0)}));
    EXPECT_FALSE(same.failed);
    EXPECT_FALSE(same.changed);
    EXPECT_EQ(same.version, "run:3");
    BoardAnswer b = read_board_answer(
        array({text("run:4"), integer(1), text("smtp:d"), text("1000 1 61000\nsmtp:d|1|r\n1\tx"),
               text("bad"), text("1000 2 61000\nid\nv"), text("smtp:e"),
               text("1000 0 61000\nid\nline\nforged")}));
    EXPECT_FALSE(b.failed);
    EXPECT_TRUE(b.changed);
    // The malformed records are left out; the good one is read.
    EXPECT_EQ(b.records,
              (std::vector<BoardRecord>{{"smtp:d", "smtp:d|1|r", 1000, true, 61000, "1\tx"}}));
    EXPECT_TRUE(read_board_answer(nil()).failed);
    EXPECT_TRUE(read_board_answer(array({text("v"), integer(2)})).failed);
    EXPECT_TRUE(read_board_answer(array({text("v"), integer(0), text("f"), text("r")})).failed);
    EXPECT_TRUE(read_board_answer(array({text("v"), integer(1), text("odd")})).failed);
}

TEST(RedisReplies, SentinelAndServer) {
    auto a = read_master_address(array({text("10.0.0.7"), text("6380")}));
    ASSERT_TRUE(a);
    EXPECT_EQ(a->text(), "10.0.0.7:6380");
    EXPECT_FALSE(read_master_address(nil())); // no such master
    EXPECT_FALSE(read_master_address(array({text("10.0.0.7"), text("0")})));
    EXPECT_FALSE(read_master_address(array({text("10.0.0.7"), text("65536")})));
    EXPECT_FALSE(read_master_address(array({text(""), text("6379")})));
    EXPECT_FALSE(read_master_address(array({text("a b"), text("6379")})));
    EXPECT_EQ(read_role(array({text("master"), integer(0), array({})})), "master");
    EXPECT_EQ(read_role(array({text("slave")})), "slave");
    EXPECT_EQ(read_role(array({text("leader")})), "");
    EXPECT_EQ(read_role(text("master")), "");
    std::string id(40, 'a');
    EXPECT_EQ(read_run_id(text("# Server\r\nredis_version:7.0.15\r\nrun_id:" + id + "\r\n")), id);
    EXPECT_FALSE(read_run_id(text("# Server\r\nxrun_id:" + id + "\r\n")));
    EXPECT_FALSE(read_run_id(text("run_id:abc\r\n")));
}

TEST(RedisReplies, AnArrayCountAloneAllocatesNothingHuge) {
    // hiredis makes an array's element table from its count: a server's
    // "*10000000" would be 80 MB (and "*4000000000" 32 GB) before any element came.  Guarded, the
    // reader refuses it (and the connection is dropped).
    for (bool guarded : {false, true}) {
        redisReader* r = redisReaderCreate();
        if (guarded) guard_reader(r);
        const char small[] = "*2\r\n:1\r\n:2\r\n";
        ASSERT_EQ(redisReaderFeed(r, small, sizeof small - 1), REDIS_OK);
        void* reply = nullptr;
        ASSERT_EQ(redisReaderGetReply(r, &reply), REDIS_OK);
        ASSERT_TRUE(reply);
        EXPECT_EQ(describe(from_hiredis(static_cast<redisReply*>(reply))), "[1, 2]");
        freeReplyObject(reply);
        const char huge[] = "*10000000\r\n";
        ASSERT_EQ(redisReaderFeed(r, huge, sizeof huge - 1), REDIS_OK);
        reply = nullptr;
        int rc = redisReaderGetReply(r, &reply);
        EXPECT_EQ(rc, guarded ? REDIS_ERR : REDIS_OK) << (guarded ? "guarded" : "hiredis alone");
        EXPECT_FALSE(reply);
        redisReaderFree(r);
    }
}
