// A unix-socket server in a thread of the test that answers with canned
// bytes: a fake of the daemon, for the client's I/O and error handling
// only (what the daemon answers is tested against the real daemon).
#pragma once

#include "samples.hpp"

#include <atomic>
#include <cstring>
#include <functional>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace cqmgr::ctl::test {

// Reads one request line from `fd` (without its newline); "" at EOF.
inline std::string read_request(int fd) {
    std::string line;
    char c;
    while (::read(fd, &c, 1) == 1) {
        if (c == '\n') return line;
        line += c;
    }
    return line;
}

// Writes all of `text` to `fd`.
inline void write_all(int fd, const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
        if (n <= 0) return;
        done += static_cast<size_t>(n);
    }
}

// The sample reply for a request line, on one line: the name picks the
// sample (message with an ID other than the sample's gets the error
// sample); unknown names get an error reply.
inline std::string sample_reply(const std::string& request) {
    const std::string name = request.substr(0, request.find(' '));
    if (name == "message" && request != "message 4F3A2B1C") return sample("message_error").dump();
    for (const char* known :
         {"summary", "queues", "jobs", "message", "deliveries", "providers", "suspend"})
        if (name == known) return sample(known).dump();
    return R"({"ok":false,"error":"unknown request"})";
}

class CannedServer {
  public:
    // `serve` runs in the server thread for each connection, in turn.
    using Serve = std::function<void(int fd)>;

    explicit CannedServer(Serve serve) : serve_(std::move(serve)) {
        path_ = dir_.str() + "/ctl.sock";
        listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strcpy(addr.sun_path, path_.c_str());
        if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::listen(listen_fd_, 16) != 0 || ::pipe(stop_) != 0)
            throw std::runtime_error("canned server: cannot listen");
        thread_ = std::thread([this] { run(); });
    }
    ~CannedServer() {
        char b = 0;
        if (::write(stop_[1], &b, 1) != 1) {
        }
        thread_.join();
        ::close(listen_fd_);
        ::close(stop_[0]);
        ::close(stop_[1]);
    }
    const std::string& path() const { return path_; }
    int connections() const { return connections_; }

    // Answers every request with its sample reply until the client closes.
    static void samples(int fd) {
        for (;;) {
            const std::string request = read_request(fd);
            if (request.empty()) return;
            write_all(fd, sample_reply(request) + "\n");
        }
    }

  private:
    void run() {
        for (;;) {
            pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
            if (::poll(fds, 2, -1) < 0) continue;
            if (fds[1].revents) return;
            const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) continue;
            ++connections_;
            serve_(fd);
            ::close(fd);
        }
    }

    cqmgr::test::TempDir dir_{"ctl-test"};
    std::string path_;
    Serve serve_;
    int listen_fd_ = -1;
    int stop_[2] = {-1, -1};
    std::atomic<int> connections_{0};
    std::thread thread_;
};

} // namespace cqmgr::ctl::test
