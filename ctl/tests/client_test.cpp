// The client's I/O and error handling against an in-process canned server,
// and cqmgrctl's output and exit statuses over it.  A fake daemon: what the
// real daemon answers is the compat scenarios' business.
#include "canned_server.hpp"
#include "client.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::ctl;
using namespace cqmgr::ctl::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

// The error `call` throws: its kind and text (Kind::Connect and "" when it
// throws nothing, which the callers' expectations then report).
std::pair<ControlError::Kind, std::string> failure(const std::function<void()>& call) {
    try {
        call();
    } catch (const ControlError& e) {
        return {e.kind, e.what()};
    }
    ADD_FAILURE() << "no ControlError";
    return {ControlError::Kind::Connect, ""};
}

} // namespace

TEST(Client, SeveralRequestsOverOneConnection) {
    CannedServer server(CannedServer::samples);
    Client client(server.path());
    client.connect();
    EXPECT_EQ(client.request("summary", 5s), sample("summary"));
    EXPECT_EQ(client.request("queues", 5s), sample("queues"));
    EXPECT_EQ(client.request("message 4F3A2B1C", 5s), sample("message"));
    EXPECT_EQ(server.connections(), 1);
}

TEST(Client, RepliesSplitOrJoinedOnTheWire) {
    CannedServer server([](int fd) {
        // The first reply with the start of the second in one write, the
        // rest of the second after the second request.
        read_request(fd);
        write_all(fd, R"({"ok":true,"n":1})"
                      "\n"
                      R"({"ok":tr)");
        read_request(fd);
        ::usleep(20000);
        write_all(fd, "ue,\"n\":2}\n");
        read_request(fd);
    });
    Client client(server.path());
    EXPECT_EQ(client.request("a", 5s)["n"], 1); // connects on its own
    EXPECT_EQ(client.request("b", 5s)["n"], 2);
}

TEST(Client, KeepsTheReplyAsItCame) {
    // Keys out of alphabetical order, and spacing: --json prints this line.
    const std::string line = R"({"ok":true,"z":1,"a":{"y":2, "b":3}})";
    CannedServer server([&](int fd) {
        read_request(fd);
        write_all(fd, line + "\n");
    });
    Client client(server.path());
    EXPECT_EQ(client.request("summary", 5s)["z"], 1);
    EXPECT_EQ(client.last_reply(), line);
}

TEST(Client, ReconnectsWhenTheDaemonClosedAnIdleConnection) {
    std::atomic<bool> closed{false};
    CannedServer server([&closed](int fd) {
        // One reply, then the connection ends, as after max_idle.
        write_all(fd, sample_reply(read_request(fd)) + "\n");
        ::shutdown(fd, SHUT_RDWR);
        closed = true;
    });
    Client client(server.path());
    EXPECT_EQ(client.request("summary", 5s), sample("summary"));
    while (!closed)
        std::this_thread::sleep_for(1ms);
    EXPECT_EQ(client.request("queues", 5s), sample("queues"));
    EXPECT_EQ(server.connections(), 2);
}

TEST(Client, ClosedWithoutAReply) {
    CannedServer server([](int fd) { read_request(fd); });
    Client client(server.path());
    auto [kind, text] = failure([&] { client.request("summary", 5s); });
    EXPECT_EQ(kind, ControlError::Kind::Io);
    EXPECT_NE(text.find("closed the connection without a reply"), std::string::npos) << text;
    EXPECT_FALSE(client.connected());
}

TEST(Client, NotJson) {
    CannedServer server([](int fd) {
        read_request(fd);
        write_all(fd, "hello\n");
    });
    Client client(server.path());
    EXPECT_EQ(failure([&] { client.request("summary", 5s); }).first, ControlError::Kind::Protocol);
}

TEST(Client, NoReplyInTime) {
    CannedServer server([](int fd) {
        read_request(fd);
        read_request(fd); // until the client gives up and closes
    });
    Client client(server.path());
    auto [kind, text] = failure([&] { client.request("summary", 100ms); });
    EXPECT_EQ(kind, ControlError::Kind::Io);
    EXPECT_NE(text.find("no reply"), std::string::npos) << text;
}

TEST(Client, ConnectFailuresNameThePath) {
    cqmgr::test::TempDir dir("ctl-test");
    Client missing(dir.str() + "/none");
    EXPECT_EQ(failure([&] { missing.connect(); }),
              std::make_pair(ControlError::Kind::Connect, "cannot connect to " + dir.str() +
                                                              "/none: No such file or directory"));
    // A socket nobody listens on (a daemon that died): refused.
    const std::string stale = dir.str() + "/stale";
    {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strcpy(addr.sun_path, stale.c_str());
        ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        ::close(fd);
    }
    Client refused(stale);
    EXPECT_EQ(failure([&] { refused.connect(); }),
              std::make_pair(ControlError::Kind::Connect,
                             "cannot connect to " + stale + ": Connection refused"));
    Client too_long(std::string(200, 'x'));
    EXPECT_THROW(too_long.connect(), ControlError);
}

TEST(ReplyError, OkOrTheErrorText) {
    EXPECT_FALSE(reply_error(json::parse(R"({"ok":true})")));
    EXPECT_EQ(reply_error(json::parse(R"({"ok":false,"error":"x"})")), "x");
    EXPECT_EQ(reply_error(json::parse(R"({"ok":false})")), "request failed");
    EXPECT_EQ(reply_error(json::parse(R"({})")), "reply without \"ok\"");
}

// cqmgrctl itself over the canned server: output, stderr, exit status.
TEST(Cqmgrctl, JsonTableErrorAndNoSocket) {
    CannedServer server(CannedServer::samples);
    auto run = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {CQMGRCTL, "--socket", server.path()});
        return run_process(args);
    };
    ProcessResult r = run({"summary", "--json"});
    EXPECT_EQ(r.exit_status, 0);
    EXPECT_EQ(json::parse(r.out), sample("summary"));
    EXPECT_EQ(r.out.back(), '\n');

    r = run({"deliveries"});
    EXPECT_EQ(r.exit_status, 0);
    EXPECT_EQ(r.out, "TRANSPORT  QUEUE        QUEUE_ID  RCPTS    AGE\n"
                     "smtp       example.com  4F3A2B1C      2  0.42s\n");

    r = run({"message", "NOSUCH"});
    EXPECT_EQ(r.exit_status, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "cqmgrctl: no such message in the active queue\n");

    r = run({"message", "NOSUCH", "--json"});
    EXPECT_EQ(r.exit_status, 1);
    EXPECT_EQ(json::parse(r.out), sample("message_error"));

    r = run({"message"});
    EXPECT_EQ(r.exit_status, 64);
    EXPECT_NE(r.err.find("usage: cqmgrctl message QUEUE_ID"), std::string::npos);

    r = run_process({CQMGRCTL, "--socket", server.path() + ".none", "summary"});
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_NE(r.err.find("cannot connect to " + server.path() + ".none"), std::string::npos);
    EXPECT_NE(r.err.find("root and mail_owner"), std::string::npos) << r.err;
}

// top with --iterations and no terminal prints plain frames.
TEST(Cqmgrctl, TopWithoutATerminal) {
    CannedServer server(CannedServer::samples);
    ProcessResult r = run_process(
        {CQMGRCTL, "--socket", server.path(), "top", "--interval", "0.1", "--iterations", "2"});
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_EQ(r.out.find("\x1b"), std::string::npos);
    EXPECT_NE(r.out.find("deliveries/s -"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("deliveries/s 0.0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("smtp       example.com"), std::string::npos) << r.out;
    EXPECT_EQ(server.connections(), 1);
}
