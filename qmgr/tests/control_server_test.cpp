// The control socket server on a temporary socket, served by an
// io_context on a thread of its own, with blocking clients: good and bad
// requests, an oversized one, a refused user, the 17th client, a client
// that does not read its replies, and clients that go quiet.
#include "control_server.hpp"
#include "cqmgr/control/reply.hpp"
#include "temp_dir.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <grp.h>
#include <gtest/gtest.h>
#include <mutex>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;

namespace {

// Generous for a loaded machine: no test waits this long when it passes.
constexpr int io_timeout_ms = 20000;

// A blocking client of the control socket.
class Client {
  public:
    explicit Client(const std::string& path) {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    ~Client() {
        if (fd_ >= 0) ::close(fd_);
    }
    bool connected() const { return fd_ >= 0; }
    bool send(std::string_view bytes) {
        while (!bytes.empty()) {
            ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (n <= 0) return false;
            bytes.remove_prefix(static_cast<size_t>(n));
        }
        return true;
    }
    // The next line (without its newline); "" at EOF or timeout, with
    // eof() telling which.
    std::string line() {
        for (;;) {
            if (auto nl = buf_.find('\n'); nl != std::string::npos) {
                std::string l = buf_.substr(0, nl);
                buf_.erase(0, nl + 1);
                return l;
            }
            if (!fill()) return "";
        }
    }
    // True when the server closes the connection (reading and dropping
    // whatever comes before).
    bool at_eof() {
        while (fill())
            buf_.clear();
        return eof_;
    }
    // The reply to one request.
    nlohmann::json ask(std::string_view request) {
        if (!send(std::string(request) + "\n")) return nullptr;
        std::string l = line();
        return l.empty() ? nlohmann::json(nullptr) : nlohmann::json::parse(l);
    }

  private:
    bool fill() {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, io_timeout_ms) != 1) return false;
        char b[65536];
        ssize_t n = ::recv(fd_, b, sizeof b, 0);
        if (n <= 0) {
            eof_ = true;
            return false;
        }
        buf_.append(b, static_cast<size_t>(n));
        return true;
    }

    int fd_ = -1;
    std::string buf_;
    bool eof_ = false;
};

nlohmann::json error_json(const std::string& text) {
    return {{"ok", false}, {"error", text}};
}

struct Server : ::testing::Test {
    TempDir dir{"cqmgr-control-test"};
    std::string path = dir.file("ctl");
    asio::io_context io;
    std::unique_ptr<ControlServer> server;
    std::thread runner;
    std::mutex mu;
    std::vector<std::string> warnings;
    ControlServer::Answer answer = [](std::string_view line, uid_t uid) {
        if (line == "big") return std::string(65536, 'x') + "\n";
        control::Json j;
        j["ok"] = true;
        j["line"] = std::string(line);
        j["uid"] = uid;
        return control::reply_line(j);
    };

    // Others than root reach the socket through the directory.
    void SetUp() override { ::chmod(dir.str().c_str(), 0755); }
    void TearDown() override { stop(); }
    // Starts the server with `o` (its path set here) on the io thread.
    void start(ControlServer::Options o = {}) {
        o.path = path;
        if (o.allowed.empty()) o.allowed = {::getuid()};
        server = std::make_unique<ControlServer>(io, o, answer, [this](const std::string& w) {
            std::lock_guard lock(mu);
            warnings.push_back(w);
        });
        auto started = server->start();
        ASSERT_TRUE(started) << started.error().message();
        runner = std::thread([this] {
            auto guard = asio::make_work_guard(io);
            io.run();
        });
    }
    // The server's client count, read on its own thread.
    size_t clients() {
        std::promise<size_t> p;
        asio::post(io, [&] { p.set_value(server->clients()); });
        return p.get_future().get();
    }
    // Waits until the server serves `n` clients; false after the timeout.
    bool wait_for_clients(size_t n) {
        for (int i = 0; i < io_timeout_ms / 10; ++i) {
            if (clients() == n) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }
    void stop() {
        if (!runner.joinable()) return;
        asio::post(io, [this] {
            server->stop();
            io.stop();
        });
        runner.join();
    }
};

} // namespace

TEST_F(Server, SocketIsMode0660AndAStaleOneIsReplaced) {
    // A stale socket from an earlier process.
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    ::close(fd);
    start();
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0660u);
    Client c(path);
    EXPECT_EQ(c.ask("summary")["ok"], true);
}

TEST_F(Server, ARegularFileIsNotReplaced) {
    {
        FILE* f = std::fopen(path.c_str(), "w");
        std::fclose(f);
    }
    ControlServer s(io, {.path = path, .allowed = {0}}, answer, {});
    auto started = s.start();
    ASSERT_FALSE(started);
    EXPECT_EQ(started.error().kind, ServeError::Kind::not_a_socket);
    EXPECT_EQ(started.error().message(), path + ": exists and is not a socket");
}

// Run as root with an owner, the socket is the owner's from its creation:
// bind() runs with the owner's effective ids (no chown by path), and
// root's ids are back afterwards.
TEST_F(Server, AsRootTheSocketIsMadeWithTheOwnersIds) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    ASSERT_EQ(::chown(dir.str().c_str(), 65534, 65534), 0);
    const mode_t old = ::umask(077); // as master gives its children
    start({.allowed = {0}, .owner_uid = 65534, .owner_gid = 65534});
    ::umask(old);
    EXPECT_EQ(::geteuid(), 0u);
    EXPECT_EQ(::getegid(), 0u);
    struct stat st {};
    ASSERT_EQ(::lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0660u);
    EXPECT_EQ(st.st_uid, 65534u);
    EXPECT_EQ(st.st_gid, 65534u);
    Client c(path);
    EXPECT_EQ(c.ask("summary")["ok"], true);
}

// Where the owner cannot create it, root does not either: the socket is
// never root's own file waiting for a chown.
TEST_F(Server, AsRootNoSocketWhereTheOwnerMayNotWrite) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    ControlServer s(io, {.path = path, .allowed = {0}, .owner_uid = 65534, .owner_gid = 65534},
                    answer, {});
    auto started = s.start();
    ASSERT_FALSE(started);
    EXPECT_EQ(started.error().kind, ServeError::Kind::bind);
    EXPECT_EQ(started.error().message(), "bind " + path + ": Permission denied");
    EXPECT_EQ(::geteuid(), 0u);
    EXPECT_EQ(::getegid(), 0u);
    struct stat st {};
    EXPECT_NE(::lstat(path.c_str(), &st), 0);
}

TEST_F(Server, AnswersRequestsOneAtATime) {
    start();
    Client c(path);
    ASSERT_TRUE(c.connected());
    EXPECT_EQ(c.ask("summary"),
              (nlohmann::json{{"ok", true}, {"line", "summary"}, {"uid", ::getuid()}}));
    // A trailing CR goes; two requests in one write get two replies in order.
    ASSERT_TRUE(c.send("one\r\ntwo\n"));
    EXPECT_EQ(nlohmann::json::parse(c.line())["line"], "one");
    EXPECT_EQ(nlohmann::json::parse(c.line())["line"], "two");
    // A request in pieces.
    ASSERT_TRUE(c.send("thr"));
    ASSERT_TRUE(c.send("ee\n"));
    EXPECT_EQ(nlohmann::json::parse(c.line())["line"], "three");
}

TEST_F(Server, OversizedRequestIsRefusedAndTheServerGoesOn) {
    start();
    Client c(path);
    ASSERT_TRUE(c.send(std::string(5000, 'a') + "\nsummary\n"));
    EXPECT_EQ(nlohmann::json::parse(c.line()), error_json("request too long"));
    EXPECT_TRUE(c.at_eof());
    // The longest request that fits is served.
    Client d(path);
    EXPECT_EQ(d.ask(std::string(4095, 'b'))["line"].get<std::string>().size(), 4095u);
    EXPECT_EQ(d.ask("summary")["ok"], true);
}

TEST_F(Server, SixteenClientsAtOnceAndNoMore) {
    start();
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < 16; ++i) {
        clients.push_back(std::make_unique<Client>(path));
        ASSERT_EQ(clients.back()->ask("hello")["ok"], true) << "client " << i;
    }
    Client extra(path);
    ASSERT_TRUE(extra.connected());
    EXPECT_EQ(nlohmann::json::parse(extra.line()), error_json("too many control connections"));
    EXPECT_TRUE(extra.at_eof());
    // Once one goes (and the server has seen it go), a new one is served.
    clients.pop_back();
    ASSERT_TRUE(wait_for_clients(15));
    Client again(path);
    EXPECT_EQ(again.ask("hello")["ok"], true);
    for (auto& c : clients)
        EXPECT_EQ(c->ask("still")["ok"], true);
}

TEST_F(Server, AUserNotAllowedGetsOneErrorAndIsLogged) {
    start({.allowed = {::getuid() + 1}});
    Client c(path);
    ASSERT_TRUE(c.connected());
    EXPECT_EQ(nlohmann::json::parse(c.line()), error_json("permission denied"));
    EXPECT_TRUE(c.at_eof());
    std::lock_guard lock(mu);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0],
              "control: connection from uid " + std::to_string(::getuid()) + " refused");
}

TEST_F(Server, AnUnprivilegedProcessIsRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to become nobody";
    start({.allowed = {0}});
    ::chmod(path.c_str(), 0666); // so that nobody may connect at all
    // The child becomes nobody before it connects; the kernel reports
    // that user to the server.  Only the child's own system calls run
    // after the fork (the server thread does not exist in the child).
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
            ::setresuid(65534, 65534, 65534) != 0)
            ::_exit(2);
        int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        std::memcpy(sa.sun_path, path.c_str(), path.size());
        if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) ::_exit(3);
        // The server may have answered and closed already: no check.
        (void)::send(fd, "summary\n", 8, MSG_NOSIGNAL);
        char buf[256];
        size_t got = 0;
        pollfd p{fd, POLLIN, 0};
        while (got < sizeof buf && ::poll(&p, 1, io_timeout_ms) == 1) {
            ssize_t n = ::recv(fd, buf + got, sizeof buf - got, 0);
            if (n <= 0) break;
            got += static_cast<size_t>(n);
        }
        const char want[] = "{\"ok\":false,\"error\":\"permission denied\"}\n";
        ::_exit(got == sizeof want - 1 && std::memcmp(buf, want, got) == 0 ? 0 : 5);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    std::lock_guard lock(mu);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0], "control: connection from uid 65534 refused");
}

TEST_F(Server, AClientThatDoesNotReadIsDropped) {
    start({.write_timeout = std::chrono::seconds(1)});
    Client slow(path);
    // 64 KiB replies: a few fill the socket buffers, then the write waits
    // for a reader that never comes.
    std::string many;
    for (int i = 0; i < 100; ++i)
        many += "big\n";
    ASSERT_TRUE(slow.send(many));
    // Meanwhile others are served.
    Client other(path);
    EXPECT_EQ(other.ask("summary")["ok"], true);
    // The slow client is dropped while `other` stays.
    EXPECT_TRUE(wait_for_clients(1));
    int lines = 0;
    while (!slow.line().empty())
        ++lines;
    EXPECT_TRUE(slow.at_eof());
    EXPECT_LT(lines, 100);
}

TEST_F(Server, AClientWithoutARequestIsClosedAfterTheIdleTimeout) {
    std::vector<std::string> debug;
    start({.idle_timeout = std::chrono::seconds(1), .debug = [&](const std::string& line) {
               std::lock_guard lock(mu);
               debug.push_back(line);
           }});
    Client quiet(path);
    Client trickle(path);
    ASSERT_TRUE(quiet.connected() && trickle.connected());
    // Bytes without a newline are no request.
    ASSERT_TRUE(trickle.send("summ"));
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(quiet.at_eof());
    EXPECT_TRUE(trickle.at_eof());
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(900));
    EXPECT_TRUE(wait_for_clients(0));
    std::lock_guard lock(mu);
    ASSERT_EQ(debug.size(), 2u);
    EXPECT_EQ(debug[0], "control: closing connection from uid " + std::to_string(::getuid()) +
                            ": no request for 1s");
    EXPECT_TRUE(warnings.empty());
}

TEST_F(Server, AClientThatKeepsAskingStays) {
    // Requests every 0.5 s against a 3 s limit: each one starts the wait
    // afresh, so the connection outlives the limit several times over.
    start({.idle_timeout = std::chrono::seconds(3)});
    Client poller(path);
    for (int i = 0; i < 14; ++i) {
        ASSERT_EQ(poller.ask("summary")["ok"], true) << "request " << i;
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    EXPECT_EQ(clients(), 1u);
}

TEST_F(Server, NoIdleTimeoutWithZero) {
    start({.idle_timeout = std::chrono::seconds(0)});
    Client c(path);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(c.ask("summary")["ok"], true);
}
