// The benchmark's limit-enforcing receiver (see limit_receiver.hpp).
#include "limit_receiver.hpp"

#include "clock.hpp"
#include "error.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <map>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

namespace bench {
namespace {

// A listening socket on address:port; throws naming the address.
int listen_on(const std::string& address, std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    if (inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1)
        throw compat::Error("receiver: expected an IPv4 address, found '" + address + "'");
    int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    ::setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(l, 1024) != 0) {
        std::string why = std::strerror(errno);
        ::close(l);
        throw compat::Error("receiver: expected to listen on " + address + ":" +
                            std::to_string(port) + ", found " + why);
    }
    return l;
}

// The domain of "MAIL FROM:<user@domain> ..." ("" for the null sender).
std::string sender_domain(const std::string& line) {
    auto lt = line.find('<');
    auto gt = line.find('>', lt == std::string::npos ? 0 : lt);
    if (lt == std::string::npos || gt == std::string::npos) return "";
    std::string addr = line.substr(lt + 1, gt - lt - 1);
    auto at = addr.rfind('@');
    return at == std::string::npos ? "" : addr.substr(at + 1);
}

// True if the command word of `line` is `verb` (case-insensitive).
bool is(const std::string& line, const char* verb) {
    size_t n = std::strlen(verb);
    return line.size() >= n && strncasecmp(line.c_str(), verb, n) == 0 &&
           (line.size() == n || line[n] == ' ' || line[n] == ':');
}

// A GCRA cell: the theoretical arrival time of the next message.
struct Cell {
    double tat = 0;
};

const char* kind_name(ReceiverEvent::Kind k) {
    switch (k) {
    case ReceiverEvent::connected:
        return "connect";
    case ReceiverEvent::refused:
        return "refused";
    case ReceiverEvent::mail:
        return "mail";
    case ReceiverEvent::rate_refused:
        return "rate-refused";
    case ReceiverEvent::blocked:
        return "blocked";
    case ReceiverEvent::delivered:
        return "delivered";
    case ReceiverEvent::closed:
        return "close";
    }
    return "?";
}

} // namespace

// The loop's state: sessions by fd and the rate cells.
struct LimitReceiver::Loop {
    enum class State { command, data, waiting };
    struct Session {
        std::string client;
        std::string in;
        State state = State::command;
        double reply_at = 0; // waiting: when the end of DATA is answered
        std::string from_domain;
        bool has_mail = false; // a MAIL accepted in this transaction
        int rcpts = 0;         // its RCPTs
        bool closing = false;
    };

    LimitReceiver& r;
    const ReceiverLimits& lim;
    FILE* log = nullptr;
    std::map<int, Session> sessions;
    int open = 0;
    std::map<std::string, Cell> cells;                // by client in block mode, else ""
    std::map<std::string, double> blocked_until;      // block mode, by client
    std::map<std::string, std::deque<double>> minute; // accepted MAIL per client, last 60 s

    void note(ReceiverEvent::Kind k, const Session& s, double now) {
        if (log)
            std::fprintf(log, "%.6f %s %s %s open=%d\n", now, kind_name(k), s.client.c_str(),
                         s.from_domain.c_str(), open);
        std::lock_guard lock(r.mu_);
        r.events_.push_back({now, k, s.client, s.from_domain});
    }

    void send(int fd, const std::string& text) {
        std::string out = text + "\r\n";
        (void)!::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }

    // True if a MAIL from `client` now is within the rate (and counts it).
    bool within_rate(const std::string& client, double now) {
        if (lim.rate <= 0) return true;
        double t = lim.rate_period / lim.rate;
        double tolerance = (std::max(lim.rate_burst > 0 ? lim.rate_burst : lim.rate, 1) - 1) * t;
        Cell& c = cells[lim.block_seconds > 0 ? client : ""];
        double tat = std::max(c.tat, now);
        if (tat - now > tolerance + 1e-9) return false;
        c.tat = tat + t;
        return true;
    }

    // Counts an accepted MAIL towards its client's last minute.
    void count_minute(const std::string& client, double now) {
        auto& q = minute[client];
        q.push_back(now);
        while (!q.empty() && q.front() <= now - 60)
            q.pop_front();
        if (static_cast<int>(q.size()) > r.peak_client_minute_)
            r.peak_client_minute_ = static_cast<int>(q.size());
    }

    void mail_command(int fd, Session& s, const std::string& line, double now) {
        s.from_domain = sender_domain(line);
        if (lim.block_seconds > 0) {
            auto it = blocked_until.find(s.client);
            bool in_block = it != blocked_until.end() && now < it->second;
            if (!in_block && !within_rate(s.client, now)) {
                blocked_until[s.client] = now + lim.block_seconds;
                cells.erase(s.client);
                std::lock_guard lock(r.mu_);
                r.blocks_.emplace_back(now, now + lim.block_seconds);
                in_block = true;
            }
            if (in_block) {
                std::string text = lim.block_reply;
                if (auto p = text.find("%c"); p != std::string::npos) text.replace(p, 2, s.client);
                send(fd, text);
                note(ReceiverEvent::blocked, s, now);
                s.closing = true;
                return;
            }
        } else if (!within_rate(s.client, now)) {
            send(fd, lim.rate_reply);
            note(ReceiverEvent::rate_refused, s, now);
            if (lim.rate_reply.rfind("421", 0) == 0) s.closing = true;
            return;
        }
        count_minute(s.client, now);
        s.has_mail = true;
        s.rcpts = 0;
        send(fd, "250 2.1.0 Ok");
        note(ReceiverEvent::mail, s, now);
    }

    // Answers the end of DATA.
    void delivered(int fd, Session& s, double now) {
        send(fd, "250 2.0.0 Ok: queued");
        note(ReceiverEvent::delivered, s, now);
        s.state = State::command;
        s.has_mail = false;
    }

    // Handles the complete lines in the session's input, until it waits.
    void process(int fd, Session& s, double now) {
        size_t pos = 0;
        while (!s.closing && s.state != State::waiting) {
            size_t nl = s.in.find('\n', pos);
            if (nl == std::string::npos) break;
            std::string line = s.in.substr(pos, nl - pos);
            pos = nl + 1;
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (s.state == State::data) {
                if (line != ".") continue;
                if (lim.data_seconds > 0) {
                    s.state = State::waiting;
                    s.reply_at = now + lim.data_seconds;
                } else {
                    delivered(fd, s, now);
                }
                continue;
            }
            if (is(line, "EHLO"))
                send(fd, "250-" + lim.name + "\r\n250-PIPELINING\r\n250 8BITMIME");
            else if (is(line, "HELO"))
                send(fd, "250 " + lim.name);
            else if (is(line, "MAIL"))
                mail_command(fd, s, line, now);
            // After a refused MAIL, the pipelined RCPT and DATA are refused
            // too, so that no message is taken for delivered.
            else if (is(line, "RCPT")) {
                if (!s.has_mail) {
                    send(fd, "503 5.5.1 Error: need MAIL command");
                } else {
                    ++s.rcpts;
                    send(fd, "250 2.1.5 Ok");
                }
            } else if (is(line, "DATA")) {
                if (!s.has_mail || s.rcpts == 0) {
                    send(fd, "503 5.5.1 Error: need RCPT command");
                } else {
                    send(fd, "354 End data with <CR><LF>.<CR><LF>");
                    s.state = State::data;
                }
            } else if (is(line, "RSET")) {
                s.has_mail = false;
                send(fd, "250 2.0.0 Ok");
            } else if (is(line, "NOOP"))
                send(fd, "250 2.0.0 Ok");
            else if (is(line, "QUIT")) {
                send(fd, "221 2.0.0 Bye");
                s.closing = true;
            } else
                send(fd, "502 5.5.2 Error: command not recognized");
        }
        s.in.erase(0, pos);
    }

    void close_session(int fd, double now) {
        auto it = sessions.find(fd);
        ::close(fd);
        --open;
        note(ReceiverEvent::closed, it->second, now);
        sessions.erase(it);
    }

    void accept_from(int listener, double now) {
        for (;;) {
            sockaddr_in a{};
            socklen_t len = sizeof a;
            int c = ::accept4(listener, reinterpret_cast<sockaddr*>(&a), &len,
                              SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (c < 0) return;
            char buf[INET_ADDRSTRLEN] = "?";
            inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
            Session s;
            s.client = buf;
            ++open;
            if (open > r.peak_) r.peak_ = open;
            if (lim.sessions > 0 && open > lim.sessions) {
                send(c, lim.session_reply);
                note(ReceiverEvent::refused, s, now);
                ::close(c);
                --open;
                continue;
            }
            send(c, "220 " + lim.name + " ESMTP");
            note(ReceiverEvent::connected, s, now);
            sessions.emplace(c, std::move(s));
        }
    }
};

LimitReceiver::LimitReceiver(ReceiverLimits limits, std::string log_path)
    : limits_(std::move(limits)), log_path_(std::move(log_path)) {
    std::vector<int> listeners;
    try {
        for (const auto& a : limits_.addresses)
            listeners.push_back(listen_on(a, limits_.port));
    } catch (...) {
        for (int l : listeners)
            ::close(l);
        throw;
    }
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) {
        for (int l : listeners)
            ::close(l);
        throw compat::sys_error("receiver: pipe");
    }
    wake_write_ = p[1];
    thread_ = std::thread([this, listeners, r = p[0]] { run(listeners, r); });
    // Woken at each event, not when a busy machine gets round to it.
    sched_param sp{};
    sp.sched_priority = 1;
    pthread_setschedparam(thread_.native_handle(), SCHED_FIFO, &sp);
}

LimitReceiver::~LimitReceiver() {
    stop();
}

void LimitReceiver::stop() noexcept {
    if (!thread_.joinable()) return;
    char c = 0;
    (void)!::write(wake_write_, &c, 1);
    thread_.join();
    ::close(wake_write_);
    wake_write_ = -1;
}

std::vector<ReceiverEvent> LimitReceiver::events() const {
    std::lock_guard lock(mu_);
    return events_;
}

std::vector<std::pair<double, double>> LimitReceiver::blocks() const {
    std::lock_guard lock(mu_);
    return blocks_;
}

// poll() over the wake pipe, the listeners and the sessions; a session
// waiting to answer the end of DATA sets the timeout.
void LimitReceiver::run(std::vector<int> listeners, int wake) {
    Loop L{*this, limits_, std::fopen(log_path_.c_str(), "a"), {}, 0, {}, {}, {}};
    for (;;) {
        std::vector<pollfd> fds{{wake, POLLIN, 0}};
        for (int l : listeners)
            fds.push_back({l, POLLIN, 0});
        size_t first_session = fds.size();
        double next_due = 0;
        for (auto& [fd, s] : L.sessions) {
            fds.push_back({fd, POLLIN, 0});
            if (s.state == Loop::State::waiting && (next_due == 0 || s.reply_at < next_due))
                next_due = s.reply_at;
        }
        int timeout = -1;
        if (next_due > 0)
            timeout = std::max(0, static_cast<int>(std::ceil((next_due - boot_seconds()) * 1000)));
        if (::poll(fds.data(), fds.size(), timeout) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (fds[0].revents) break;
        double now = boot_seconds();
        // Ends and input first (see limit_receiver.hpp), then due replies,
        // then new sessions.
        for (size_t i = first_session; i < fds.size(); ++i) {
            if (!fds[i].revents) continue;
            int fd = fds[i].fd;
            auto& s = L.sessions.at(fd);
            char buf[16384];
            ssize_t n = ::read(fd, buf, sizeof buf);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                L.close_session(fd, now);
                continue;
            }
            if (n > 0) s.in.append(buf, static_cast<size_t>(n));
            L.process(fd, s, now);
            if (s.closing) L.close_session(fd, now);
        }
        std::vector<int> done;
        for (auto& [fd, s] : L.sessions)
            if (s.state == Loop::State::waiting && s.reply_at <= now) {
                L.delivered(fd, s, now);
                L.process(fd, s, now);
                if (s.closing) done.push_back(fd);
            }
        for (int fd : done)
            L.close_session(fd, now);
        for (size_t i = 1; i < first_session; ++i)
            if (fds[i].revents & POLLIN) L.accept_from(fds[i].fd, now);
    }
    double now = boot_seconds();
    while (!L.sessions.empty())
        L.close_session(L.sessions.begin()->first, now);
    for (int l : listeners)
        ::close(l);
    ::close(wake);
    if (L.log) std::fclose(L.log);
}

double ReceiverCounts::refused_pct() const {
    std::uint64_t a = attempts();
    return a == 0 ? 0
                  : 100.0 * static_cast<double>(refused + rate_refused + blocked) /
                        static_cast<double>(a);
}

ReceiverCounts count_events(const std::vector<ReceiverEvent>& events, double from, double to) {
    ReceiverCounts c;
    for (const auto& e : events) {
        if (e.at < from || e.at >= to) continue;
        switch (e.kind) {
        case ReceiverEvent::connected:
            ++c.sessions;
            break;
        case ReceiverEvent::refused:
            ++c.refused;
            break;
        case ReceiverEvent::mail:
            ++c.mails;
            break;
        case ReceiverEvent::rate_refused:
            ++c.rate_refused;
            break;
        case ReceiverEvent::blocked:
            ++c.blocked;
            break;
        case ReceiverEvent::delivered:
            ++c.delivered;
            break;
        case ReceiverEvent::closed:
            break;
        }
    }
    return c;
}

} // namespace bench
