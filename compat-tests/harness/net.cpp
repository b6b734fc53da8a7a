#include "net.hpp"

#include "error.hpp"
#include "fsutil.hpp"

#include <arpa/inet.h>
#include <cstdio>
#include <cstdlib>
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

} // namespace compat
