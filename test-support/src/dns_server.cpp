// dnsmasq as the tests' DNS server (see dns_server.hpp).
#include "cqmgr/test/dns_server.hpp"

#include "cqmgr/test/spawn.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <netinet/in.h>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace cqmgr::test {

namespace {

// A loopback port that was free for UDP and TCP a moment ago.
int free_port() {
    for (int attempt = 0; attempt < 20; ++attempt) {
        int u = ::socket(AF_INET, SOCK_DGRAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (u < 0 || ::bind(u, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 ||
            ::getsockname(u, reinterpret_cast<sockaddr*>(&a), &len) < 0) {
            if (u >= 0) ::close(u);
            continue;
        }
        int t = ::socket(AF_INET, SOCK_STREAM, 0);
        bool tcp_free = t >= 0 && ::bind(t, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
        if (t >= 0) ::close(t);
        ::close(u);
        if (tcp_free) return ntohs(a.sin_port);
    }
    throw std::runtime_error("no free loopback port");
}

// True when something accepts TCP connections on 127.0.0.1:port.
bool accepting(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
}

} // namespace

bool DnsServer::available() {
    return ::access(binary, X_OK) == 0;
}

DnsServer::DnsServer(const std::vector<std::string>& options) {
    // Another process may take the port between free_port() and dnsmasq's
    // bind: then dnsmasq exits, and another port is tried.
    for (int attempt = 0; attempt < 3; ++attempt)
        if (try_start(options)) return;
    throw std::runtime_error("dnsmasq did not start");
}

bool DnsServer::try_start(const std::vector<std::string>& options) {
    port_ = free_port();
    std::vector<std::string> args{binary,
                                  "--no-daemon",
                                  "--conf-file=/dev/null",
                                  "--no-resolv",
                                  "--no-hosts",
                                  "--bind-interfaces",
                                  "--listen-address=127.0.0.1",
                                  "--port=" + std::to_string(port_),
                                  "--pid-file="};
    args.insert(args.end(), options.begin(), options.end());
    pid_ = spawn_quiet(std::move(args));
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < end) {
        if (accepting(port_)) return true;
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    throw std::runtime_error("dnsmasq did not answer within 10 s");
}

DnsServer::~DnsServer() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
}

} // namespace cqmgr::test
