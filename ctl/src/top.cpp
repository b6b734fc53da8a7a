#include "top.hpp"

#include "client.hpp"
#include "terminal.hpp"
#include "top_view.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <fcntl.h>
#include <iterator>
#include <optional>
#include <poll.h>
#include <unistd.h>

namespace cqmgr::ctl {

namespace {

using Clock = std::chrono::steady_clock;

// Signals reach the loop through this pipe (the handler writes the signal
// number), so that poll() wakes up for them without races.
int signal_pipe[2] = {-1, -1};

void on_signal(int signo) {
    const int saved = errno;
    const unsigned char b = static_cast<unsigned char>(signo);
    ssize_t n = ::write(signal_pipe[1], &b, 1);
    (void)n;
    errno = saved;
}

// Installs on_signal for the signals top handles; restores the old
// handlers when it goes away.
class SignalGuard {
  public:
    SignalGuard() {
        if (::pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < std::size(signals); ++i)
            ::sigaction(signals[i], &sa, &saved[i]);
    }
    ~SignalGuard() {
        if (signal_pipe[0] < 0) return;
        for (size_t i = 0; i < std::size(signals); ++i)
            ::sigaction(signals[i], &saved[i], nullptr);
        ::close(signal_pipe[0]);
        ::close(signal_pipe[1]);
        signal_pipe[0] = signal_pipe[1] = -1;
    }

  private:
    static constexpr int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH};
    struct sigaction saved[std::size(signals)]{};
};

// One poll of the daemon.
struct Sample {
    nlohmann::json summary;
    nlohmann::json queues;
    Clock::time_point at;
};

// The error reply of a request, as a ControlError-like failure of the poll.
struct Refused {
    std::string text;
};

// Polls summary and queues.  Throws ControlError or Refused.
Sample take_sample(Client& client, std::chrono::milliseconds timeout) {
    Sample s;
    s.at = Clock::now();
    s.summary = client.request("summary", timeout);
    if (auto e = reply_error(s.summary)) throw Refused{*e};
    s.queues = client.request("queues", timeout);
    if (auto e = reply_error(s.queues)) throw Refused{*e};
    return s;
}

// The whole frame as bytes for the terminal (or plain lines for a pipe).
std::string frame_bytes(const std::vector<std::string>& lines, bool screen) {
    std::string out;
    if (!screen) {
        for (const auto& l : lines)
            out += l + '\n';
        return out + '\n';
    }
    out = esc_home;
    for (size_t i = 0; i < lines.size(); ++i) {
        out += lines[i];
        out += esc_clear_line;
        if (i + 1 < lines.size()) out += '\n';
    }
    return out + esc_clear_below;
}

} // namespace

int run_top(const std::string& path, const Options& opts) {
    const auto timeout = std::chrono::milliseconds(static_cast<long long>(opts.timeout * 1000));
    const auto interval = std::chrono::milliseconds(static_cast<long long>(opts.interval * 1000));

    // The first poll happens before the screen is taken over, so that its
    // failure is reported like a one-shot command's.
    Client client(path);
    client.connect();
    std::optional<Sample> last;
    try {
        last = take_sample(client, timeout);
    } catch (const Refused& r) {
        std::fprintf(stderr, "cqmgrctl: %s\n", r.text.c_str());
        return 1;
    }

    SignalGuard signals;
    Terminal term(0, 1);
    const bool screen = ::isatty(1);
    std::optional<TopRates> rates;
    std::string status;
    long frames = 0;
    auto next_poll = last->at + interval;

    for (;;) {
        TopInput in;
        in.summary = &last->summary;
        in.queues = &last->queues;
        in.rates = rates;
        in.socket = path;
        in.status = status;
        in.interval = opts.interval;
        in.now = static_cast<int64_t>(std::time(nullptr));
        // A pipe or file gets whole frames: every destination, lines uncut.
        if (screen)
            term.size(in.rows, in.cols);
        else
            in.rows = in.cols = 100000;
        term.write(frame_bytes(render_top(in), screen));
        if (opts.iterations && ++frames >= *opts.iterations) return 0;

        // Wait for the next poll, a key or a signal.
        bool poll_now = false;
        while (!poll_now) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(next_poll - Clock::now());
            if (left.count() <= 0) {
                poll_now = true;
                break;
            }
            pollfd fds[2] = {{signal_pipe[0], POLLIN, 0}, {term.interactive() ? 0 : -1, POLLIN, 0}};
            const int n = ::poll(fds, 2, static_cast<int>(left.count()));
            if (n < 0 && errno != EINTR) return 2;
            if (n <= 0) continue;
            bool redraw = false;
            if (fds[0].revents) {
                unsigned char sig;
                while (::read(signal_pipe[0], &sig, 1) == 1) {
                    if (sig == SIGWINCH)
                        redraw = true;
                    else
                        return 0;
                }
            }
            if (fds[1].revents) {
                char key;
                const ssize_t r = ::read(0, &key, 1);
                if (r == 0) return 0; // the terminal went away
                if (r == 1 && (key == 'q' || key == 'Q' || key == 3)) return 0;
                if (r == 1 && (key == ' ' || key == '\f')) poll_now = true;
            }
            if (redraw) break;
        }
        if (!poll_now) continue;

        next_poll = Clock::now() + interval;
        try {
            Sample s = take_sample(client, timeout);
            const double elapsed = std::chrono::duration<double>(s.at - last->at).count();
            rates = top_rates(last->summary, s.summary, elapsed);
            last = std::move(s);
            status.clear();
        } catch (const ControlError& e) {
            client.close();
            status = std::string(e.what()) + "; retrying";
        } catch (const Refused& r) {
            client.close();
            status = "cqmgr: " + r.text + "; retrying";
        }
    }
}

} // namespace cqmgr::ctl
