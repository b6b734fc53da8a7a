// qmgr's own requests to the defer and flush services give up after
// qmgr_ipc_timeout, not after a fixed minute: a service that accepts the
// connection and then says nothing.
#include "cqmgr/test/temp_dir.hpp"
#include "fast_flush.hpp"
#include "notices.hpp"

#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace cqmgr;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
// A queue directory as the working directory, with silent services: their
// sockets listen, but nothing ever accepts or answers.
struct SilentServices {
    test::TempDir dir{"cqmgr-notices"};
    test::InDirectory in{dir.path()};
    std::vector<int> fds;

    explicit SilentServices(std::initializer_list<const char*> paths) {
        fs::create_directories("private");
        fs::create_directories("public");
        for (const char* p : paths) {
            int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
            sockaddr_un sun{};
            sun.sun_family = AF_UNIX;
            std::snprintf(sun.sun_path, sizeof sun.sun_path, "%s", p);
            EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun), 0);
            EXPECT_EQ(::listen(fd, 10), 0);
            fds.push_back(fd);
        }
    }
    ~SilentServices() {
        for (int fd : fds)
            ::close(fd);
    }
};

// Runs `f` to completion; returns how long it took.
std::chrono::steady_clock::duration run(std::function<awaitable<void>()> f) {
    asio::io_context io;
    auto start = std::chrono::steady_clock::now();
    asio::co_spawn(io, f(), asio::detached);
    io.run();
    return std::chrono::steady_clock::now() - start;
}
} // namespace

TEST(Notices, DeferralAppendGivesUpAfterQmgrIpcTimeout) {
    SilentServices s({"private/defer"});
    int status = 0;
    queuefile::Recipient r(0, "u@example.com", "", "", 0);
    auto took = run([&]() -> awaitable<void> {
        qmgr::ServiceSlots slots(co_await asio::this_coro::executor, 1);
        status = co_await qmgr::send_deferral(slots, "defer", "ABC", 0, r, "4.0.0", "why", 1s);
    });
    EXPECT_EQ(status, -1);
    EXPECT_LT(took, 30s); // with a fixed 60 s, a minute
}

TEST(Notices, FlushAddGivesUpAfterQmgrIpcTimeout) {
    SilentServices s({"public/flush"});
    qmgr::FlushDomains all("example.com", false);
    auto took = run([&]() -> awaitable<void> {
        qmgr::ServiceSlots slots(co_await asio::this_coro::executor, 1);
        co_await qmgr::flush_add_deferred(all, slots, "flush", "ABC", "u@example.com", 1s);
    });
    EXPECT_LT(took, 30s);
}
