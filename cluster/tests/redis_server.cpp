// A redis-server child process for tests (see redis_server.hpp).
#include "redis_server.hpp"

#include "cqmgr/cluster/redis_client.hpp"
#include "cqmgr/test/spawn.hpp"

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace cqmgr::cluster::testing {

namespace {

constexpr const char* server_binary = "/usr/bin/redis-server";

// A loopback port that was free a moment ago.
int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

} // namespace

bool RedisServer::available() {
    return ::access(server_binary, X_OK) == 0;
}

RedisServer::RedisServer(Listen how) : how_(how) {
    if (how_ == Listen::loopback) port_ = free_port();
}

RedisServer::~RedisServer() {
    if (pid_ > 0) {
        ::kill(pid_, SIGCONT);
        kill();
    }
}

std::string RedisServer::address() const {
    if (how_ == Listen::unix_socket) return "unix:" + dir_ + "/redis.sock";
    return "127.0.0.1:" + std::to_string(port_);
}

void RedisServer::start(const std::vector<std::string>& extra) {
    std::vector<std::string> args{
        server_binary,       "--save",      "",  "--appendonly", "no", "--dir", dir_, "--logfile",
        dir_ + "/redis.log", "--daemonize", "no"};
    if (how_ == Listen::unix_socket) {
        args.insert(args.end(), {"--port", "0", "--unixsocket", dir_ + "/redis.sock",
                                 "--unixsocketperm", "700"});
    } else {
        args.insert(args.end(), {"--port", std::to_string(port_), "--bind", "127.0.0.1"});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    spawn(std::move(args));
}

void RedisServer::start_sentinel(const std::string& name, const std::string& master) {
    auto colon = master.rfind(':');
    std::string conf = dir_ + "/sentinel.conf";
    FILE* f = std::fopen(conf.c_str(), "w");
    if (!f) throw std::runtime_error("cannot write " + conf);
    std::fprintf(f,
                 "port %d\nbind 127.0.0.1\ndir %s\nlogfile %s/sentinel.log\n"
                 "sentinel monitor %s %s %s 1\n"
                 "sentinel down-after-milliseconds %s 500\n"
                 "sentinel failover-timeout %s 3000\n",
                 port_, dir_.c_str(), dir_.c_str(), name.c_str(), master.substr(0, colon).c_str(),
                 master.substr(colon + 1).c_str(), name.c_str(), name.c_str());
    std::fclose(f);
    spawn({server_binary, conf, "--sentinel"});
}

RedisReply RedisServer::ask(const std::vector<std::string>& args) const {
    timeval tv{2, 0};
    redisContext* c = how_ == Listen::unix_socket
                          ? redisConnectUnixWithTimeout((dir_ + "/redis.sock").c_str(), tv)
                          : redisConnectWithTimeout("127.0.0.1", port_, tv);
    if (!c || c->err) {
        if (c) redisFree(c);
        return RedisReply::failure("cannot connect");
    }
    redisSetTimeout(c, tv);
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
        argv.push_back(a.data());
        lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lens.data()));
    RedisReply out = r ? from_hiredis(r) : RedisReply::failure("no reply");
    if (r) freeReplyObject(r);
    redisFree(c);
    return out;
}

void RedisServer::spawn(std::vector<std::string> args) {
    pid_ = cqmgr::test::spawn_quiet(std::move(args));
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!accepting()) {
        if (std::chrono::steady_clock::now() > until)
            throw std::runtime_error("redis-server did not start");
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

bool RedisServer::accepting() const {
    int fd;
    int rc;
    if (how_ == Listen::unix_socket) {
        fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::string path = dir_ + "/redis.sock";
        path.copy(a.sun_path, sizeof a.sun_path - 1);
        rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
        fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(static_cast<uint16_t>(port_));
        rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    ::close(fd);
    return rc == 0;
}

void RedisServer::kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    std::error_code ec;
    std::filesystem::remove(dir_ + "/redis.sock", ec);
}

void RedisServer::pause() {
    ::kill(pid_, SIGSTOP);
}
void RedisServer::resume() {
    ::kill(pid_, SIGCONT);
}

} // namespace cqmgr::cluster::testing
