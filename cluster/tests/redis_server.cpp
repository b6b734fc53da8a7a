// A redis-server child process for tests (see redis_server.hpp).
#include "redis_server.hpp"

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
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
    char tmpl[] = "/tmp/cqmgr-redis-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    if (how_ == Listen::loopback) port_ = free_port();
}

RedisServer::~RedisServer() {
    if (pid_ > 0) {
        ::kill(pid_, SIGCONT);
        kill();
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

std::string RedisServer::address() const {
    if (how_ == Listen::unix_socket) return "unix:" + dir_ + "/redis.sock";
    return "127.0.0.1:" + std::to_string(port_);
}

void RedisServer::start() {
    std::vector<std::string> args{
        server_binary,       "--save",      "",  "--appendonly", "no", "--dir", dir_, "--logfile",
        dir_ + "/redis.log", "--daemonize", "no"};
    if (how_ == Listen::unix_socket) {
        args.insert(args.end(), {"--port", "0", "--unixsocket", dir_ + "/redis.sock",
                                 "--unixsocketperm", "700"});
    } else {
        args.insert(args.end(), {"--port", std::to_string(port_), "--bind", "127.0.0.1"});
    }
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
        // Not the test's output: a pipe reader would wait for the server.
        int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(null, 2);
        std::vector<char*> argv;
        for (auto& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(server_binary, argv.data());
        ::_exit(127);
    }
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
