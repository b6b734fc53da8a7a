// The clients against in-process fake services: every failure (refused
// connect, EOF, timeout) must become the typed outcome stock qmgr would act
// on, and the clients must stay usable afterwards.  Malformed announcements
// and replies from delivery agents: agent_replies_test.cpp.
#include "cqmgr/protocol/flush_client.hpp"
#include "cqmgr/protocol/rewrite_client.hpp"
#include "cqmgr/protocol/status_client.hpp"
#include "cqmgr/test/delivery_client.hpp"
#include "cqmgr/test/temp_dir.hpp"
#include "cqmgr/test/verify_client.hpp"
#include "fake_server.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::protocol;
using namespace std::string_literals;
using cqmgr::awaitable;
using fake::Socket;
namespace asio = boost::asio;
using Kind = DeliveryOutcome::Kind;

namespace {

const std::string delivery_hello = "protocol\0delivery_request_protocol\0\0"s;
const std::string rewrite_hello = "protocol\0trivial_rewrite_protocol\0\0"s;
const std::string status_hello = "protocol\0delivery_status_protocol\0\0"s;

DeliveryRequest sample_request(int recipients = 1) {
    DeliveryRequest r;
    r.queue_id = "ABC123";
    r.data_offset = 100;
    r.data_size = 50;
    r.nexthop = "dest.example";
    r.sender = "s@x";
    for (int i = 0; i < recipients; ++i)
        r.recipients.push_back({"", "r" + std::to_string(i) + "@dest.example", 200 + i, "", 0});
    return r;
}

DeliveryTimeouts quick() {
    using namespace std::chrono_literals;
    return {1s, 1s, 1s, 1s};
}

// An agent that reads the whole request and answers with `reply`.
fake::Server::Script agent_replying(std::string reply, int* recipients_seen = nullptr) {
    return [reply, recipients_seen](Socket& s, int) -> awaitable<void> {
        if (!co_await fake::send(s, delivery_hello)) co_return;
        fake::ListReader r;
        AttrList head;
        if (!co_await r.read(s, head)) co_return;
        EXPECT_EQ(head.attrs.size(), 23u) << head.describe_names();
        int n = parse_int(head.get("recipient_count").value_or("x")).value_or(0);
        for (int i = 0; i < n; ++i) {
            AttrList rcpt;
            if (!co_await r.read(s, rcpt)) co_return;
        }
        if (recipients_seen) *recipients_seen = n;
        co_await fake::send(s, reply);
        // Like a real agent, wait for the client to close.
        AttrList none;
        co_await r.read(s, none);
    };
}

const std::string ok_reply =
    "status\0\0diag_type\0\0diag_text\0\0mta_type\0\0mta_mname\0\0action\0\0reason\0\0status\0"
    "0\0\0"s;

} // namespace

TEST(DeliveryClient, RepliedOutcome) {
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    int seen = 0;
    fake::Server agent(io, dir.file("smtp"), agent_replying(ok_reply, &seen));
    auto o = fake::run(io, deliver_once(dir.file("smtp"), sample_request(3), quick()));
    EXPECT_EQ(o.kind, Kind::replied) << o.warning;
    EXPECT_EQ(o.reply.status, 0);
    EXPECT_FALSE(o.deferred());
    EXPECT_EQ(seen, 3);
}

TEST(DeliveryClient, DeferralReplyKeepsHopStatus) {
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    fake::Server agent(io, dir.file("smtp"),
                       agent_replying("status\0"
                                      "4.4.1\0diag_type\0\0diag_text\0\0mta_type\0\0"
                                      "mta_mname\0\0action\0\0reason\0refused\0status\0"
                                      "4294967295\0\0"s));
    auto o = fake::run(io, deliver_once(dir.file("smtp"), sample_request(), quick()));
    EXPECT_EQ(o.kind, Kind::replied);
    EXPECT_EQ(o.reply.status, -1);
    EXPECT_EQ(o.reply.hop.status, "4.4.1");
    EXPECT_EQ(o.reply.hop.reason, "refused");
    EXPECT_TRUE(o.deferred());
}

TEST(DeliveryClient, MissingSocketIsUnavailable) {
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    auto o = fake::run(io, deliver_once(dir.file("nosuch"), sample_request(), quick()));
    EXPECT_EQ(o.kind, Kind::unavailable);
    EXPECT_EQ(o.reply.hop.status, "4.3.0");
    EXPECT_EQ(o.reply.hop.reason, "mail transport unavailable");
    EXPECT_EQ(o.warning,
              "connect to transport " + (dir.file("nosuch")) + ": No such file or directory");
}

TEST(DeliveryClient, ImmediateEofSurfacesAtTheWrite) {
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    fake::Server agent(io, dir.file("smtp"), [](Socket& s, int) -> awaitable<void> {
        s.close();
        co_return;
    });
    AgentSession session(io.get_executor());
    // Like stock qmgr, the session opens: the EOF is not yet an error...
    EXPECT_TRUE(fake::run(io, session.open(dir.file("smtp"), quick())));
    // ...the request write is where the dead agent shows.
    auto o = fake::run(io, session.deliver(sample_request()));
    EXPECT_EQ(o.kind, Kind::unavailable);
    EXPECT_EQ(o.warning, "write to process (smtp): Broken pipe");
}

// A call whose request cannot go out hears of it from the loop; an owner
// that abandons the call before then hears nothing (found by the
// conversation fuzzer: the failure came all the same).
TEST(DeliveryClient, AbandonedAfterAFailedWriteHearsNothing) {
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    fake::Server agent(io, dir.file("smtp"), [](Socket& s, int) -> awaitable<void> {
        s.close();
        co_return;
    });
    struct Owner : AgentCall {
        using AgentCall::AgentCall;
        int announced = 0, replied = 0;
        void on_announced(bool) override { ++announced; }
        void on_replied(DeliveryOutcome&&) override { ++replied; }
    };
    boost::intrusive_ptr<Owner> call(new Owner(io.get_executor()));
    ASSERT_TRUE(call->start(dir.file("smtp"), quick()));
    while (call->announced == 0 && io.run_one() > 0) {
    }
    ASSERT_EQ(call->announced, 1);
    call->send("request"); // the agent is gone: the failure is posted
    call->close();
    io.restart();
    io.poll();
    EXPECT_EQ(call->replied, 0);
}

TEST(DeliveryClient, EofBeforeReplyIsCrash) {
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    fake::Server agent(io, dir.file("smtp"), [](Socket& s, int) -> awaitable<void> {
        co_await fake::send(s, delivery_hello);
        fake::ListReader r;
        AttrList head;
        co_await r.read(s, head);
        s.close(); // dies mid-request
    });
    auto o = fake::run(io, deliver_once(dir.file("smtp"), sample_request(), quick()));
    EXPECT_EQ(o.kind, Kind::crashed);
    EXPECT_EQ(o.reply.hop.status, "4.3.0");
    EXPECT_EQ(o.reply.hop.reason, "unknown mail transport error");
    EXPECT_EQ(o.reply.status, -1);
    // Stock's wording for an agent that dies after the request.
    EXPECT_EQ(o.warning, dir.file("smtp") + " socket: malformed response");
}

TEST(DeliveryClient, SilentAgentTimesOut) {
    using namespace std::chrono_literals;
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    fake::Server agent(io, dir.file("smtp"), [](Socket& s, int) -> awaitable<void> {
        co_await fake::send(s, delivery_hello);
        fake::ListReader r;
        AttrList none;
        while (co_await r.read(s, none)) {
        }
    });
    DeliveryTimeouts t = quick();
    t.reply = 200ms;
    auto start = std::chrono::steady_clock::now();
    auto o = fake::run(io, deliver_once(dir.file("smtp"), sample_request(), t));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
    EXPECT_EQ(o.kind, Kind::crashed);
    EXPECT_EQ(o.warning, dir.file("smtp") + " socket: timeout");
}

TEST(DeliveryClient, UsableAfterFailures) {
    // One agent socket whose first connection dies and second one answers.
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    auto good = agent_replying(ok_reply);
    fake::Server agent(io, dir.file("smtp"), [good](Socket& s, int index) -> awaitable<void> {
        if (index == 0) {
            co_await fake::send(s, delivery_hello);
            fake::ListReader r;
            AttrList head;
            co_await r.read(s, head);
            co_await fake::send(s, "garbage");
            s.close();
            co_return;
        }
        co_await good(s, index);
    });
    auto first = fake::run(io, deliver_once(dir.file("smtp"), sample_request(), quick()));
    EXPECT_EQ(first.kind, Kind::crashed);
    auto second = fake::run(io, deliver_once(dir.file("smtp"), sample_request(), quick()));
    EXPECT_EQ(second.kind, Kind::replied) << second.warning;
}

namespace {
// A trivial-rewrite stand-in: answers resolve requests with `transport` and
// the address echoed; `per_connection` requests, then it closes.
fake::Server::Script rewrite_server(int per_connection, int server_flags = 0) {
    return [=](Socket& s, int) -> awaitable<void> {
        if (!co_await fake::send(s, rewrite_hello)) co_return;
        fake::ListReader r;
        for (int i = 0; i < per_connection; ++i) {
            AttrList req;
            if (!co_await r.read(s, req)) co_return;
            if (req.get("request") == "rewrite") {
                AttrWriter w;
                w.num("flags", server_flags)
                    .str("address", std::string(req.get("address").value_or("")) + "@rewritten")
                    .end();
                co_await fake::send(s, w.take());
                continue;
            }
            AttrWriter w;
            w.num("flags", server_flags)
                .str("transport", "smtp")
                .str("nexthop", "nh")
                .str("recipient", req.get("address").value_or(""))
                .num("flags", resolve_flag::class_default)
                .end();
            co_await fake::send(s, w.take());
        }
    };
}
} // namespace

TEST(RewriteClient, SharesOneConnection) {
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    fake::Server server(io, dir.file("rewrite"), rewrite_server(100));
    RewriteClient c(io.get_executor(), dir.file("rewrite"));
    for (int i = 0; i < 3; ++i) {
        auto r = fake::run(io, c.resolve("resolve", "s@x", "a" + std::to_string(i) + "@y"));
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_EQ(r->recipient, "a" + std::to_string(i) + "@y");
        EXPECT_EQ(r->flags, resolve_flag::class_default);
    }
    auto w = fake::run(io, c.rewrite("local", "u"));
    ASSERT_TRUE(w) << w.error().message();
    EXPECT_EQ(*w, "u@rewritten");
    EXPECT_EQ(c.connects(), 1);
    EXPECT_EQ(server.accepted(), 1);
}

TEST(RewriteClient, ReconnectsWhenTheServerClosed) {
    using namespace std::chrono_literals;
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    fake::Server server(io, dir.file("rewrite"), rewrite_server(1));
    RewriteClient c(io.get_executor(), dir.file("rewrite"));
    ASSERT_TRUE(fake::run(io, c.resolve("resolve", "", "a@y")));
    // Let the server's close arrive, so the client sees a readable socket.
    fake::run(io, [&]() -> awaitable<int> {
        asio::steady_timer t(io, 50ms);
        co_await t.async_wait(asio::use_awaitable);
        co_return 0;
    }());
    auto r = fake::run(io, c.resolve("resolve", "", "b@y"));
    EXPECT_TRUE(r) << r.error().message();
    EXPECT_EQ(c.connects(), 2);
}

TEST(RewriteClient, ServerFlagsForceDisconnect) {
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    fake::Server server(io, dir.file("rewrite"), rewrite_server(100, 1));
    RewriteClient c(io.get_executor(), dir.file("rewrite"));
    ASSERT_TRUE(fake::run(io, c.resolve("resolve", "", "a@y")));
    ASSERT_TRUE(fake::run(io, c.resolve("resolve", "", "b@y")));
    EXPECT_EQ(c.connects(), 2);
}

TEST(RewriteClient, GarbageThenRecovery) {
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    auto good = rewrite_server(100);
    fake::Server server(io, dir.file("rewrite"), [good](Socket& s, int index) -> awaitable<void> {
        if (index == 0) {
            co_await fake::send(s, rewrite_hello);
            fake::ListReader r;
            AttrList req;
            co_await r.read(s, req);
            co_await fake::send(s, "flags\0"
                                   "0\0transport\0\0nexthop\0x\0recipient\0a@y\0flags\0"
                                   "0\0\0"s);
            co_await r.read(s, req);
            co_return;
        }
        co_await good(s, index);
    });
    RewriteClient c(io.get_executor(), dir.file("rewrite"));
    auto bad = fake::run(io, c.resolve("resolve", "", "a@y"));
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().kind, RewriteError::Kind::no_transport);
    EXPECT_EQ(bad.error().message(), "expected a transport in the reply from " +
                                         (dir.file("rewrite")) + " for <a@y>, got an empty one");
    auto good_r = fake::run(io, c.resolve("resolve", "", "a@y"));
    EXPECT_TRUE(good_r) << good_r.error().message();
    EXPECT_EQ(c.connects(), 2);
}

TEST(RewriteClient, ConcurrentCallersAreSerialised) {
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    fake::Server server(io, dir.file("rewrite"), rewrite_server(100));
    RewriteClient c(io.get_executor(), dir.file("rewrite"));
    auto many = [&]() -> awaitable<int> {
        int done = 0;
        auto ex = co_await asio::this_coro::executor;
        for (int i = 0; i < 5; ++i)
            asio::co_spawn(
                ex,
                [&c, &done, i]() -> awaitable<void> {
                    auto r = co_await c.resolve("resolve", "", "x" + std::to_string(i) + "@y");
                    EXPECT_TRUE(r) << r.error().message();
                    EXPECT_EQ(r->recipient, "x" + std::to_string(i) + "@y");
                    ++done;
                },
                asio::detached);
        while (done < 5) {
            asio::steady_timer t(ex, std::chrono::milliseconds(5));
            co_await t.async_wait(asio::use_awaitable);
        }
        co_return done;
    };
    EXPECT_EQ(fake::run(io, many()), 5);
    EXPECT_EQ(c.connects(), 1);
}

TEST(RewriteClient, RefusedConnectIsAnError) {
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    RewriteClient c(io.get_executor(), dir.file("rewrite"));
    auto r = fake::run(io, c.resolve("resolve", "", "a@y"));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, RewriteError::Kind::connect);
    EXPECT_EQ(r.error().detail, "No such file or directory");
    EXPECT_EQ(r.error().message(),
              "connect to " + (dir.file("rewrite")) + ": No such file or directory");
}

namespace {
// A bounce-service stand-in answering every request with `reply`; the
// request it saw is stored in `*seen`.
fake::Server::Script status_server(std::string hello, std::string reply, AttrList* seen) {
    return [=](Socket& s, int) -> awaitable<void> {
        if (!co_await fake::send(s, hello)) co_return;
        fake::ListReader r;
        AttrList req;
        if (!co_await r.read(s, req)) co_return;
        if (seen) *seen = req;
        co_await fake::send(s, reply);
    };
}
} // namespace

TEST(StatusClient, AppendAndNotice) {
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    AttrList seen;
    fake::Server defer(io, dir.file("defer"),
                       status_server(status_hello,
                                     "status\0"
                                     "0\0\0"s,
                                     &seen));
    auto a = defer_append_request(0, "ID", {"", "r@x", 5, "", 0},
                                  {"4.4.1", "", "", "", "", "", "refused"});
    auto r = fake::run(
        io, status_append(dir.file("defer"), a, CommandTimeouts::ipc(std::chrono::seconds(1))));
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(seen.get("nrequest"), "0");
    EXPECT_EQ(seen.get("action"), "delayed");
    NoticeRequest n;
    n.nrequest = bounce_cmd::warn;
    n.queue_id = "ID";
    r = fake::run(
        io, status_notify(dir.file("defer"), n, CommandTimeouts::notice(std::chrono::seconds(1))));
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(seen.get("nrequest"), "2");
}

TEST(StatusClient, FailuresAreIncompleteResults) {
    struct Case {
        std::string hello, reply, error_tail;
    };
    const Case cases[] = {
        {status_hello,
         "status\0"
         "4294967295\0\0"s,
         ""},
        {rewrite_hello, "",
         ": expected protocol=delivery_status_protocol, got protocol=trivial_rewrite_protocol"},
        {status_hello,
         "status\0"
         "0\0extra\0"
         "1\0\0"s,
         ": expected status=<number> alone, got status, extra"},
        {status_hello, "status\0-1\0\0"s, ": expected status=<number> alone, got status=-1"},
        {status_hello, "", ": premature disconnect"},
    };
    for (const auto& c : cases) {
        asio::io_context io;
        cqmgr::test::TempDir dir{"cqmgr-proto"};
        fake::Server svc(io, dir.file("bounce"), status_server(c.hello, c.reply, nullptr));
        NoticeRequest n;
        n.queue_id = "ID";
        auto r = fake::run(io, status_notify(dir.file("bounce"), n,
                                             CommandTimeouts::ipc(std::chrono::seconds(1))));
        EXPECT_FALSE(r.ok());
        EXPECT_EQ(r.status, -1);
        if (c.error_tail.empty()) {
            EXPECT_TRUE(r.completed); // the service said no
        } else {
            EXPECT_FALSE(r.completed);
            EXPECT_TRUE(r.error.ends_with(c.error_tail)) << r.error;
        }
    }
}

TEST(VerifyAndFlush, Exchanges) {
    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    AttrList seen;
    fake::Server verify(io, dir.file("verify"),
                        status_server("protocol\0address_verification_prrotocol\0\0"s,
                                      "status\0"
                                      "0\0recipient_status\0"
                                      "2\0reason\0gone\0\0"s,
                                      &seen));
    auto t = CommandTimeouts::ipc(std::chrono::seconds(1));
    auto u =
        fake::run(io, verify_update(dir.file("verify"), "u@x", verify_rcpt::bounce, "gone", t));
    EXPECT_TRUE(u.ok()) << u.error; // extra attributes after status are tolerated
    EXPECT_EQ(seen.get("recipient_status"), "2");
    auto q = fake::run(io, verify_query(dir.file("verify"), "u@x", t));
    EXPECT_TRUE(q.result.ok()) << q.result.error;
    EXPECT_EQ(q.recipient_status, 2);
    EXPECT_EQ(q.reason, "gone");

    fake::Server flush(io, dir.file("flush"),
                       status_server("protocol\0queue_flush_protocol\0\0"s,
                                     "status\0"
                                     "4\0\0"s,
                                     &seen));
    auto f = fake::run(io, flush_add(dir.file("flush"), "dest.example", "ID", t));
    EXPECT_TRUE(f.completed);
    EXPECT_EQ(f.status, flush_stat::deny);
    EXPECT_EQ(seen.get("site"), "dest.example");

    auto s = fake::run(io, flush_send_site(dir.file("flush"), "site.example", t));
    EXPECT_TRUE(s.completed);
    EXPECT_EQ(seen.get("request"), "send_site");
    EXPECT_EQ(seen.get("site"), "site.example");
}
