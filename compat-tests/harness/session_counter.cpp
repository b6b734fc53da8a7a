// An exact count of a sink's concurrent sessions (see session_counter.hpp).
#include "session_counter.hpp"

#include "error.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <netinet/in.h>
#include <optional>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace compat {
namespace {

sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    return a;
}

void nonblocking(int fd) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// One relayed session: the sender's connection and ours to smtp-sink, and
// the bytes each way not yet written.
// `span` is its index in spans_; `head` what the client sent until its
// first MAIL FROM (up to 4 KiB).
struct Session {
    int client = -1, server = -1;
    std::string to_server, to_client;
    size_t span = 0;
    std::string head;
    bool sender_known = false;
};

// Moves what `from` has to `pending` and writes what it can to `to`; false
// when `from` ended (EOF or error) or `to` failed.  What is read is also
// appended to `seen`, when given.
bool pump(int from, int to, std::string& pending, bool readable, std::string* seen = nullptr) {
    if (readable) {
        char buf[16384];
        ssize_t n = ::read(from, buf, sizeof buf);
        if (n == 0) return false;
        if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
        if (n > 0) pending.append(buf, static_cast<size_t>(n));
        if (n > 0 && seen) seen->append(buf, static_cast<size_t>(n));
    }
    while (!pending.empty()) {
        ssize_t n = ::send(to, pending.data(), pending.size(), MSG_NOSIGNAL);
        if (n < 0) return errno == EAGAIN || errno == EINTR;
        pending.erase(0, static_cast<size_t>(n));
    }
    return true;
}

// The domain of the first complete MAIL FROM line in `head`, lower case
// ("" for the null sender or none without a domain), if there is one.
std::optional<std::string> mail_from_domain(const std::string& head) {
    std::string lower(head);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    size_t at = lower.find("mail from:");
    if (at == std::string::npos) return std::nullopt;
    size_t eol = lower.find('\n', at);
    if (eol == std::string::npos) return std::nullopt;
    std::string line = lower.substr(at, eol - at);
    size_t close = line.find('>');
    std::string addr = line.substr(0, close == std::string::npos ? line.size() : close);
    size_t sign = addr.rfind('@');
    return sign == std::string::npos ? std::string() : addr.substr(sign + 1);
}

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

SessionCounter::SessionCounter(std::uint16_t port, std::uint16_t backend, std::string log_path)
    : port_(port), backend_(backend), log_path_(std::move(log_path)) {}

SessionCounter::~SessionCounter() {
    stop();
}

void SessionCounter::start() {
    if (thread_.joinable()) return;
    int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a = loopback(port_);
    if (::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(l, 128) != 0) {
        std::string why = std::strerror(errno);
        ::close(l);
        throw Error("session counter: expected to listen on 127.0.0.1:" + std::to_string(port_) +
                    ", found " + why);
    }
    nonblocking(l);
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) {
        ::close(l);
        throw Error("session counter: pipe: " + std::string(std::strerror(errno)));
    }
    wake_write_ = p[1];
    thread_ = std::thread([this, l, r = p[0]] { loop(l, r); });
    // Woken at each event, not when a busy machine gets round to it.
    sched_param sp{};
    sp.sched_priority = 1;
    pthread_setschedparam(thread_.native_handle(), SCHED_FIFO, &sp);
}

void SessionCounter::stop() noexcept {
    if (!thread_.joinable()) return;
    char c = 0;
    (void)!::write(wake_write_, &c, 1);
    thread_.join();
    ::close(wake_write_);
    wake_write_ = -1;
}

void SessionCounter::loop(int listener, int wake) {
    FILE* log = std::fopen(log_path_.c_str(), "a");
    std::map<int, Session> sessions; // by client fd
    int open = 0;
    long event = 0; // opens and closes so far, for the spans' order
    auto note = [&](const char* what) {
        open_ = open;
        if (log) std::fprintf(log, "%.6f %s %d\n", now_seconds(), what, open);
    };
    auto end = [&](Session& s) {
        // Best effort: what the other side still had to say.
        if (!s.to_client.empty())
            (void)!::send(s.client, s.to_client.data(), s.to_client.size(), MSG_NOSIGNAL);
        if (!s.to_server.empty())
            (void)!::send(s.server, s.to_server.data(), s.to_server.size(), MSG_NOSIGNAL);
        ::close(s.client);
        ::close(s.server);
        open--;
        {
            std::lock_guard lock(spans_mutex_);
            spans_[s.span].closed = ++event;
        }
        note("close");
    };
    for (;;) {
        std::vector<pollfd> fds{{wake, POLLIN, 0}, {listener, POLLIN, 0}};
        for (auto& [fd, s] : sessions) {
            fds.push_back(
                {s.client, static_cast<short>(POLLIN | (s.to_client.empty() ? 0 : POLLOUT)), 0});
            fds.push_back(
                {s.server, static_cast<short>(POLLIN | (s.to_server.empty() ? 0 : POLLOUT)), 0});
        }
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (fds[0].revents) break;
        // Ends first (see session_counter.hpp).
        bool ended = false;
        for (size_t i = 2; i < fds.size(); i += 2) {
            Session& s = sessions.at(fds[i].fd);
            bool ok = true;
            if (fds[i].revents || fds[i + 1].revents) {
                ok = pump(s.client, s.server, s.to_server,
                          fds[i].revents & (POLLIN | POLLHUP | POLLERR),
                          s.sender_known ? nullptr : &s.head) &&
                     pump(s.server, s.client, s.to_client,
                          fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR));
            }
            if (!s.sender_known)
                if (auto domain = mail_from_domain(s.head); domain || s.head.size() > 4096) {
                    std::lock_guard lock(spans_mutex_);
                    spans_[s.span].sender = domain.value_or("");
                    s.sender_known = true;
                    s.head.clear();
                }
            if (!ok) {
                end(s);
                sessions.erase(fds[i].fd);
                ended = true;
            }
        }
        bool accepted = false;
        if (fds[1].revents & POLLIN) {
            for (;;) {
                int c = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
                if (c < 0) break;
                accepted = true;
                sessions_++;
                open++;
                if (open > peak_) peak_ = open;
                note("open");
                int b = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                sockaddr_in a = loopback(backend_);
                if (::connect(b, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
                    ::close(b);
                    ::close(c);
                    open--;
                    note("close (no sink)");
                    continue;
                }
                nonblocking(c);
                nonblocking(b);
                Session& s = sessions[c] = Session{c, b, {}, {}, 0, {}, false};
                std::lock_guard lock(spans_mutex_);
                s.span = spans_.size();
                spans_.push_back(Span{++event, -1, {}});
            }
        }
        if (ended && accepted) mixed_++;
    }
    for (auto& [fd, s] : sessions)
        end(s);
    ::close(listener);
    ::close(wake);
    if (log) std::fclose(log);
}

int SessionCounter::peak_of(const std::vector<std::string>& senders) const {
    std::lock_guard lock(spans_mutex_);
    // Their opens (+1) and closes (-1) in the order they happened.
    std::vector<std::pair<long, int>> events;
    for (const Span& sp : spans_) {
        if (std::find(senders.begin(), senders.end(), sp.sender) == senders.end()) continue;
        events.emplace_back(sp.opened, 1);
        if (sp.closed >= 0) events.emplace_back(sp.closed, -1);
    }
    std::sort(events.begin(), events.end());
    int open = 0, peak = 0;
    for (const auto& [when, delta] : events)
        peak = std::max(peak, open += delta);
    return peak;
}

std::map<std::string, int> SessionCounter::sender_peaks() const {
    std::vector<std::string> senders;
    {
        std::lock_guard lock(spans_mutex_);
        for (const Span& sp : spans_)
            if (std::find(senders.begin(), senders.end(), sp.sender) == senders.end())
                senders.push_back(sp.sender);
    }
    std::map<std::string, int> out;
    for (const auto& sender : senders)
        out[sender] = peak_of({sender});
    return out;
}

} // namespace compat
