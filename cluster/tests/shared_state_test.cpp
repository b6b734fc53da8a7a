// The shared dead marks, leases and rate cells against a real redis-server,
// with two clients standing for two hosts.
#include "cqmgr/cluster/redis_shared_state.hpp"
#include "redis_fixture.hpp"

using namespace cqmgr;
using namespace cqmgr::cluster;
using namespace cqmgr::cluster::testing;
using namespace std::chrono_literals;

namespace {

class SharedStateTest : public RedisFixture {
  protected:
    void SetUp() override {
        RedisFixture::SetUp();
        if (IsSkipped()) return;
        server.start();
        a_client = make_client(server.address());
        b_client = make_client(server.address());
        a_client->start();
        b_client->start();
        ASSERT_TRUE(run_until([&] { return a_client->up() && b_client->up(); }));
        a.emplace(a_client, "test:");
        b.emplace(b_client, "test:");
        warm();
    }

    // The cluster has used this server before: no fence (see lease_acquire).
    void warm() { call(*a_client, {"SET", a->instance_key(), a_client->instance()}); }

    LeaseAnswer acquire(SharedState& s, const std::string& id, int limit, int64_t ttl = 60'000) {
        std::optional<LeaseAnswer> got;
        s.lease_acquire("smtp:example.com", id, limit, ttl, [&](const LeaseAnswer& x) { got = x; });
        EXPECT_TRUE(run_until([&] { return got.has_value(); }));
        return got.value_or(LeaseAnswer{true});
    }
    static double ms_now() {
        return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
    }
    RateAnswer take(SharedState& s, const RateSpec& r, double horizon_ms = 0, double own_tat = 0) {
        std::optional<RateAnswer> got;
        s.rate_take("smtp", r, horizon_ms, own_tat, [&](const RateAnswer& x) { got = x; });
        EXPECT_TRUE(run_until([&] { return got.has_value(); }));
        return got.value_or(RateAnswer{true});
    }
    RenewAnswer renew(SharedState& s, const std::vector<std::string>& ids, int limit,
                      int64_t ttl = 60'000) {
        std::optional<RenewAnswer> got;
        s.lease_renew("smtp:example.com", ids, limit, ttl, [&](const RenewAnswer& x) { got = x; });
        EXPECT_TRUE(run_until([&] { return got.has_value(); }));
        if (!got) got.emplace().failed = true;
        return *got;
    }
    bool done_ok(std::function<void(std::function<void(bool)>)> start) {
        std::optional<bool> got;
        start([&](bool ok) { got = ok; });
        EXPECT_TRUE(run_until([&] { return got.has_value(); }));
        return got.value_or(false);
    }

    RedisServer server;
    std::shared_ptr<RedisClient> a_client, b_client;
    std::optional<RedisSharedState> a, b;
};

} // namespace

TEST_F(SharedStateTest, ScriptsLoadThemselvesAgainAfterARestart) {
    const std::string& sha = gcra_script().sha1();
    EXPECT_EQ(call(*a_client, {"SCRIPT", "EXISTS", sha}).elements.at(0).integer, 0);
    EXPECT_TRUE(take(*a, *parse_rate("10/s")).allowed); // NOSCRIPT, then EVAL
    EXPECT_EQ(call(*a_client, {"SCRIPT", "EXISTS", sha}).elements.at(0).integer, 1);
    server.kill();
    ASSERT_TRUE(run_until([&] { return !a_client->up(); }));
    server.start();
    ASSERT_TRUE(run_until([&] { return a_client->up(); }));
    EXPECT_TRUE(take(*a, *parse_rate("10/s")).allowed);
}

TEST_F(SharedStateTest, RateIsSharedBetweenHosts) {
    RateSpec r = *parse_rate("10/s,3"); // 100 ms apart, 3 at once
    EXPECT_TRUE(take(*a, r).allowed);
    EXPECT_TRUE(take(*b, r).allowed);
    EXPECT_TRUE(take(*a, r).allowed);
    RateAnswer denied = take(*b, r);
    EXPECT_FALSE(denied.failed);
    EXPECT_FALSE(denied.allowed);
    EXPECT_GT(denied.retry_after_ms, 0);
    EXPECT_LE(denied.retry_after_ms, 100);
    run_for(std::chrono::milliseconds(static_cast<int>(denied.retry_after_ms) + 2));
    EXPECT_TRUE(take(*b, r).allowed);
}

TEST_F(SharedStateTest, RateOverASecondIsTheSpec) {
    // Two hosts asking as fast as they can for 1 s at 50/s,1: about 50
    // starts in all (not an exact count: the second's edges fall anywhere).
    // A loaded machine may not ask 50 times in that second; then most of
    // what it asked is allowed, since its asks are spaced widely.
    RateSpec r = *parse_rate("50/s,1");
    int allowed = 0, asked = 0;
    auto end = Clock::now() + 1s;
    std::function<void(SharedState&)> ask = [&](SharedState& s) {
        ++asked;
        s.rate_take("smtp", r, 0, 0, [&](const RateAnswer& x) {
            allowed += x.allowed;
            if (Clock::now() < end) ask(s);
        });
    };
    ask(*a);
    ask(*b);
    run_for(1200ms);
    EXPECT_GE(allowed, std::min(40, asked / 3)) << asked << " asked";
    EXPECT_LE(allowed, 52);
}

TEST_F(SharedStateTest, HostsBookConsecutiveStarts) {
    // 2/s,1 (500 ms apart), booked up to 1.2 s ahead: the first start is
    // now, the next two (one per host) are due 500 and 1,000 ms after it,
    // and a fourth is refused until it is within the horizon.  Each due
    // time is known to within the call's round trip here, so the check is
    // that the spacing of 500 ms fits between those bounds.
    RateSpec r = *parse_rate("2/s,1");
    struct Booked {
        RateAnswer answer;
        double earliest_due = 0, latest_due = 0; // ms on this host's clock
    };
    auto book = [&](SharedState& s) {
        double sent = ms_now();
        Booked b{take(s, r, 1200)};
        double answered = ms_now();
        b.earliest_due = sent + b.answer.wait_ms;
        b.latest_due = answered + b.answer.wait_ms;
        EXPECT_TRUE(b.answer.allowed);
        return b;
    };
    double began = ms_now();
    Booked first = book(*a);
    EXPECT_EQ(first.answer.wait_ms, 0);
    Booked second = book(*b), third = book(*a);
    EXPECT_GT(second.answer.wait_ms, 0);
    EXPECT_GT(third.answer.wait_ms, second.answer.wait_ms);
    for (auto [x, y] : {std::pair{&first, &second}, std::pair{&second, &third}}) {
        EXPECT_LE(y->earliest_due - x->latest_due, 500.5);
        EXPECT_GE(y->latest_due - x->earliest_due, 499.5);
    }
    RateAnswer over = take(*b, r, 1200);
    EXPECT_FALSE(over.failed);
    if (ms_now() - began < 250) { // (else the machine stalled long enough for it to fit)
        EXPECT_FALSE(over.allowed);
        EXPECT_GT(over.retry_after_ms, 0);
        EXPECT_LE(over.retry_after_ms, 300);
    }
}

TEST_F(SharedStateTest, AHostsOwnLastStartHoldsInAFreshCell) {
    // A cell Redis has lost (here: never had) starts from the asking host's
    // own TAT: 10/s,1 and a host whose last start was just now (its TAT
    // 100 ms on) is refused for about 100 ms, or, booking, waits for it.
    RateSpec r = *parse_rate("10/s,1");
    RateAnswer refused = take(*a, r, 0, 100);
    EXPECT_FALSE(refused.failed);
    EXPECT_FALSE(refused.allowed);
    EXPECT_GT(refused.retry_after_ms, 50);
    EXPECT_LE(refused.retry_after_ms, 100);
    RateAnswer booked = take(*b, r, 1000, 100);
    EXPECT_TRUE(booked.allowed);
    EXPECT_GT(booked.wait_ms, 50);
    EXPECT_LE(booked.wait_ms, 100);
    // Its own TAT in the past (or none) changes nothing.
    EXPECT_TRUE(take(*a, *parse_rate("10/s,5"), 0, -50).allowed);
}

TEST_F(SharedStateTest, LeasesCapTheClusterConcurrency) {
    EXPECT_TRUE(acquire(*a, "a1", 2).granted);
    EXPECT_TRUE(acquire(*b, "b1", 2).granted);
    LeaseAnswer full = acquire(*b, "b2", 2);
    EXPECT_FALSE(full.failed);
    EXPECT_FALSE(full.granted);
    EXPECT_EQ(full.live, 2);
    EXPECT_TRUE(acquire(*a, "a1", 2).granted); // held already: renewed
    EXPECT_TRUE(done_ok([&](auto d) { a->lease_release("smtp:example.com", "a1", d); }));
    EXPECT_TRUE(acquire(*b, "b2", 2).granted);
    EXPECT_FALSE(acquire(*a, "a1", 2).granted);
}

TEST_F(SharedStateTest, LeasesOfADeadHostExpire) {
    EXPECT_TRUE(acquire(*a, "a1", 1, 150).granted);
    EXPECT_FALSE(acquire(*b, "b1", 1, 150).granted);
    run_for(250ms);
    EXPECT_TRUE(acquire(*b, "b1", 1, 150).granted);
    // The set goes away by itself once its last lease is over.
    run_for(250ms);
    EXPECT_EQ(call(*a_client, {"EXISTS", a->lease_key("smtp:example.com")}).integer, 0);
}

TEST_F(SharedStateTest, RenewTakesBackLeasesARestartLost) {
    EXPECT_TRUE(acquire(*a, "a1", 2).granted);
    EXPECT_TRUE(acquire(*a, "a2", 2).granted);
    call(*a_client, {"FLUSHALL"});
    RenewAnswer r = renew(*a, {"a1", "a2"}, 2);
    EXPECT_FALSE(r.failed);
    EXPECT_EQ(r.kept, (std::vector<bool>{true, true}));
    EXPECT_EQ(r.live, 2);
    EXPECT_FALSE(acquire(*b, "b1", 2).granted);
}

TEST_F(SharedStateTest, RenewTakesBackNoMoreThanTheLimit) {
    // Redis lost A's two leases; B took two meanwhile (limit 3): A gets
    // one back, the first it names (the one in use), not the second.
    EXPECT_TRUE(acquire(*a, "a1", 3).granted);
    EXPECT_TRUE(acquire(*a, "a2", 3).granted);
    call(*a_client, {"FLUSHALL"});
    warm();
    EXPECT_TRUE(acquire(*b, "b1", 3).granted);
    EXPECT_TRUE(acquire(*b, "b2", 3).granted);
    RenewAnswer r = renew(*a, {"a1", "a2"}, 3);
    EXPECT_EQ(r.kept, (std::vector<bool>{true, false}));
    EXPECT_EQ(r.live, 3);
    EXPECT_EQ(call(*a_client, {"ZCARD", a->lease_key("smtp:example.com")}).integer, 3);
    // Leases still held are renewed whatever the count.
    r = renew(*b, {"b1", "b2"}, 1);
    EXPECT_EQ(r.kept, (std::vector<bool>{true, true}));
}

TEST_F(SharedStateTest, AnotherServerFencesNewLeasesForALeaseTime) {
    // The instance key names another server (a restart, a failover): the
    // first step sets the fence; leases held are taken again meanwhile,
    // new ones wait for its end.
    call(*a_client, {"SET", a->instance_key(), "some-other-run-id"});
    EXPECT_EQ(renew(*a, {"a1"}, 2, 400).kept, (std::vector<bool>{true}));
    LeaseAnswer refused = acquire(*b, "b1", 2, 400);
    EXPECT_FALSE(refused.failed);
    EXPECT_FALSE(refused.granted);
    EXPECT_EQ(refused.live, 1);
    EXPECT_GT(refused.retry_after_ms, 200);
    EXPECT_LE(refused.retry_after_ms, 400);
    EXPECT_TRUE(acquire(*a, "a1", 2, 400).granted); // held already: renewed
    run_for(std::chrono::milliseconds(static_cast<int>(refused.retry_after_ms) + 20));
    EXPECT_TRUE(acquire(*b, "b1", 2, 400).granted);
    EXPECT_EQ(call(*a_client, {"GET", a->instance_key()}).str, a_client->instance());
}

TEST_F(SharedStateTest, AFreshServerFencesToo) {
    call(*a_client, {"FLUSHALL"});
    LeaseAnswer refused = acquire(*a, "a1", 2, 300);
    EXPECT_FALSE(refused.granted);
    EXPECT_GT(refused.retry_after_ms, 0);
}

TEST_F(SharedStateTest, DeadMarks) {
    DeadMark m{"4.4.1", "connect to mx.example.com[192.0.2.1]:25: Connection refused", 0};
    EXPECT_TRUE(done_ok([&](auto d) { a->dead_set("smtp", "example.com", m, 5000, d); }));
    std::optional<std::pair<bool, std::optional<DeadMark>>> got;
    b->dead_get("smtp", "example.com",
                [&](bool failed, std::optional<DeadMark> x) { got.emplace(failed, std::move(x)); });
    ASSERT_TRUE(run_until([&] { return got.has_value(); }));
    EXPECT_FALSE(got->first);
    ASSERT_TRUE(got->second);
    EXPECT_EQ(got->second->status, "4.4.1");
    EXPECT_EQ(got->second->reason, m.reason);
    EXPECT_GT(got->second->remaining_ms, 0);
    EXPECT_LE(got->second->remaining_ms, 5000);
    b->dead_clear("smtp", "example.com");
    got.reset();
    a->dead_get("smtp", "example.com",
                [&](bool failed, std::optional<DeadMark> x) { got.emplace(failed, std::move(x)); });
    ASSERT_TRUE(run_until([&] { return got.has_value(); }));
    EXPECT_FALSE(got->first);
    EXPECT_FALSE(got->second);
}

TEST_F(SharedStateTest, RedisDownAnswersFailedAtOnce) {
    server.kill();
    ASSERT_TRUE(run_until([&] { return !a_client->up(); }));
    EXPECT_TRUE(acquire(*a, "a1", 2).failed);
    EXPECT_TRUE(take(*a, *parse_rate("1/s")).failed);
    std::optional<bool> failed;
    a->dead_get("smtp", "x", [&](bool f, std::optional<DeadMark>) { failed = f; });
    ASSERT_TRUE(run_until([&] { return failed.has_value(); }));
    EXPECT_TRUE(*failed);
}

TEST_F(SharedStateTest, LeasesGoBackAtExitWithoutTheLoop) {
    EXPECT_TRUE(acquire(*a, "a1", 5).granted);
    EXPECT_TRUE(acquire(*a, "a2", 5).granted);
    EXPECT_TRUE(release_leases_blocking(
        a_client->options(), "test:", {{"smtp:example.com", "a1"}, {"smtp:example.com", "a2"}}));
    EXPECT_EQ(call(*b_client, {"ZCARD", a->lease_key("smtp:example.com")}).integer, 0);
    server.kill();
    EXPECT_FALSE(
        release_leases_blocking(a_client->options(), "test:", {{"smtp:example.com", "a3"}}));
}

// The board of the reply rules' actions: one record per field, the later
// action's or the ended one's; the version changes with the board only;
// records leave it at their expiry.
TEST_F(SharedStateTest, ABoardKeepsOneRecordPerFieldTheLaterOrTheEnded) {
    auto put = [&](SharedState& s, const BoardRecord& r) {
        return done_ok([&](std::function<void(bool)> d) { s.board_put("b", r, d); });
    };
    auto read = [&](SharedState& s, const std::string& known) {
        std::optional<BoardAnswer> got;
        s.board_read("b", known, [&](const BoardAnswer& x) { got = x; });
        EXPECT_TRUE(run_until([&] { return got.has_value(); }));
        return got.value_or(BoardAnswer::failure());
    };
    const auto now = static_cast<int64_t>(std::chrono::duration<double, std::milli>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count());
    BoardAnswer empty = read(*a, "");
    EXPECT_FALSE(empty.failed);
    EXPECT_FALSE(empty.changed); // no board, no version
    const BoardRecord x{"smtp:d", "smtp:d|1|rule 1", 1000, false, now + 60'000, "x\tvalue"};
    EXPECT_TRUE(put(*a, x));
    BoardAnswer first = read(*b, "");
    ASSERT_TRUE(first.changed);
    EXPECT_EQ(first.records, std::vector<BoardRecord>{x});
    EXPECT_FALSE(read(*b, first.version).changed);
    // The same again, or an older action: nothing changes.
    EXPECT_TRUE(put(*b, x));
    EXPECT_TRUE(put(*b, {"smtp:d", "smtp:d|0|rule 1", 500, false, now + 60'000, "old"}));
    EXPECT_FALSE(read(*a, first.version).changed);
    // A later one replaces it; ended, it stays ended.
    BoardRecord y{"smtp:d", "smtp:d|2|rule 1", 2000, false, now + 60'000, "y"};
    EXPECT_TRUE(put(*a, y));
    y.ended = true;
    EXPECT_TRUE(put(*b, y));
    BoardRecord back = y;
    back.ended = false;
    EXPECT_TRUE(put(*a, back));
    BoardAnswer ended = read(*a, first.version);
    ASSERT_TRUE(ended.changed);
    EXPECT_EQ(ended.records, std::vector<BoardRecord>{y});
    // A record past its time leaves the board, and the board's keys expire
    // with its last record.
    EXPECT_TRUE(put(*a, {"smtp:e", "smtp:e|1|rule 2", 1000, false, now + 300, "short"}));
    EXPECT_EQ(read(*a, "").records.size(), 2u);
    run_for(500ms);
    EXPECT_EQ(read(*a, "").records, std::vector<BoardRecord>{y});
    int64_t ttl = call(*a_client, {"PTTL", a->board_key("b")}).integer;
    EXPECT_GT(ttl, 0);
    EXPECT_LE(ttl, 60'000);
    EXPECT_TRUE(put(*a, {"smtp:f", "gone", 1000, false, now - 1, "past"})); // refused
    EXPECT_EQ(read(*a, "").records.size(), 1u);
}
