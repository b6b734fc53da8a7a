#include "net.hpp"

#include "error.hpp"
#include "fsutil.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace compat {

// Binds all sockets before closing any, so the ports are distinct.
std::vector<std::uint16_t> allocate_ports(std::size_t count) {
    std::vector<int> fds;
    std::vector<std::uint16_t> ports;
    auto close_all = [&fds] {
        for (int fd : fds)
            close(fd);
    };
    for (std::size_t i = 0; i < count; ++i) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            Error e = sys_error("socket");
            close_all();
            throw e;
        }
        fds.push_back(fd);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sa.sin_port = 0;
        if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
            Error e = sys_error("bind 127.0.0.1:0");
            close_all();
            throw e;
        }
        socklen_t len = sizeof sa;
        if (getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
            Error e = sys_error("getsockname");
            close_all();
            throw e;
        }
        ports.push_back(ntohs(sa.sin_port));
    }
    for (int fd : fds)
        if (close(fd) != 0) throw sys_error("close port-probe socket");
    return ports;
}

// Scans /proc/net/tcp for a listener (state 0A) on the loopback or wildcard address.
bool is_listening(std::uint16_t port) {
    std::string table = read_file("/proc/net/tcp");
    std::istringstream in(table);
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line)) {
        char local[64] = {0}, remote[64] = {0}, state[8] = {0};
        int slot = 0;
        if (std::sscanf(line.c_str(), " %d: %63s %63s %7s", &slot, local, remote, state) != 4)
            continue;
        std::string l(local);
        auto colon = l.find(':');
        if (colon == std::string::npos) continue;
        std::string addr = l.substr(0, colon);
        unsigned long p = std::strtoul(l.substr(colon + 1).c_str(), nullptr, 16);
        if (p != port || std::string(state) != "0A") continue;
        if (addr == "0100007F" || addr == "00000000") return true;
    }
    return false;
}

namespace {

// Counts /proc/net/tcp entries in state `state` per local port.
std::vector<int> count_local_ports(const std::vector<std::uint16_t>& ports, const char* state) {
    std::vector<int> counts(ports.size(), 0);
    std::string table;
    try {
        table = read_file("/proc/net/tcp");
    } catch (const Error&) {
        return counts;
    }
    std::istringstream in(table);
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line)) {
        char local[64] = {0}, remote[64] = {0}, st[8] = {0};
        int slot = 0;
        if (std::sscanf(line.c_str(), " %d: %63s %63s %7s", &slot, local, remote, st) != 4)
            continue;
        if (std::string(st) != state) continue;
        std::string l(local);
        auto colon = l.find(':');
        if (colon == std::string::npos || l.substr(0, colon) != "0100007F") continue;
        unsigned long p = std::strtoul(l.substr(colon + 1).c_str(), nullptr, 16);
        for (std::size_t i = 0; i < ports.size(); ++i)
            if (ports[i] == p) ++counts[i];
    }
    return counts;
}

} // namespace

// Parses "rem_address ... inode" of every ESTABLISHED line.
std::vector<unsigned long> client_socket_inodes(std::uint16_t port) {
    std::vector<unsigned long> out;
    std::string table;
    try {
        table = read_file("/proc/net/tcp");
    } catch (const Error&) {
        return out;
    }
    std::istringstream in(table);
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string sl, local, remote, st, queues, timer, retr, uid, timeout, inode;
        if (!(f >> sl >> local >> remote >> st >> queues >> timer >> retr >> uid >> timeout >>
              inode))
            continue;
        if (st != "01") continue;
        auto colon = remote.find(':');
        if (colon == std::string::npos || remote.substr(0, colon) != "0100007F") continue;
        if (std::strtoul(remote.substr(colon + 1).c_str(), nullptr, 16) != port) continue;
        out.push_back(std::strtoul(inode.c_str(), nullptr, 10));
    }
    return out;
}

// Reads the /proc/PID/fd symlinks ("socket:[INODE]").
bool process_has_socket(pid_t pid, const std::vector<unsigned long>& inodes) {
    std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return false;
    bool found = false;
    while (struct dirent* e = readdir(d)) {
        char buf[128];
        ssize_t n = readlinkat(dirfd(d), e->d_name, buf, sizeof buf - 1);
        if (n <= 0) continue;
        buf[n] = '\0';
        unsigned long ino = 0;
        if (std::sscanf(buf, "socket:[%lu]", &ino) == 1 &&
            std::find(inodes.begin(), inodes.end(), ino) != inodes.end())
            found = true;
    }
    closedir(d);
    return found;
}

// State 01 = ESTABLISHED.
int established_connections(std::uint16_t port) {
    return count_local_ports({port}, "01")[0];
}

ConnectionSampler::ConnectionSampler(std::vector<std::uint16_t> ports)
    : ports_(std::move(ports)), peaks_(ports_.size()) {
    for (auto& p : peaks_)
        p = 0;
    if (!ports_.empty()) thread_ = std::thread([this] { loop(); });
}

ConnectionSampler::~ConnectionSampler() {
    stop();
}

// Joins the sampling thread; safe to call twice.
void ConnectionSampler::stop() noexcept {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

int ConnectionSampler::peak(std::size_t i) const {
    return peaks_.at(i).load();
}

// One /proc/net/tcp read per 50 ms for all ports. A count only counts once it
// was seen in two samples in a row: a connection that overlaps the next one for
// a few milliseconds while it is being closed is not concurrency.
void ConnectionSampler::loop() {
    std::vector<int> prev(ports_.size(), 0);
    while (!stop_) {
        auto counts = count_local_ports(ports_, "01");
        for (std::size_t i = 0; i < counts.size(); ++i) {
            int held = std::min(counts[i], prev[i]);
            if (held > peaks_[i]) peaks_[i] = held;
        }
        prev = counts;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

} // namespace compat
