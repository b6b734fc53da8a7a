#include "terminal.hpp"

#include <cerrno>
#include <cstdlib>
#include <sys/ioctl.h>
#include <unistd.h>

namespace cqmgr::ctl {

namespace {

// Enter/leave the alternate screen, hide/show the cursor, clear.
constexpr const char* enter_screen = "\x1b[?1049h\x1b[?25l\x1b[2J\x1b[H";
constexpr const char* leave_screen = "\x1b[?25h\x1b[?1049l";

// A positive number from the environment, or `fallback`.
int env_number(const char* name, int fallback) {
    const char* v = std::getenv(name);
    if (!v) return fallback;
    const int n = std::atoi(v);
    return n > 0 ? n : fallback;
}

} // namespace

Terminal::Terminal(int in, int out) : in_(in), out_(out) {
    if (::isatty(in_) && ::tcgetattr(in_, &saved_) == 0) {
        termios t = saved_;
        t.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
        t.c_cc[VMIN] = 1;
        t.c_cc[VTIME] = 0;
        raw_ = ::tcsetattr(in_, TCSANOW, &t) == 0;
    }
    if (::isatty(out_)) {
        screen_ = true;
        write(enter_screen);
    }
}

Terminal::~Terminal() {
    if (screen_) write(leave_screen);
    if (raw_) ::tcsetattr(in_, TCSANOW, &saved_);
}

void Terminal::size(int& rows, int& cols) const {
    winsize ws{};
    if (::ioctl(out_, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
        rows = ws.ws_row;
        cols = ws.ws_col;
        return;
    }
    rows = env_number("LINES", 24);
    cols = env_number("COLUMNS", 80);
}

void Terminal::write(const std::string& text) const {
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(out_, text.data() + done, text.size() - done);
        if (n > 0)
            done += static_cast<size_t>(n);
        else if (n < 0 && errno != EINTR)
            return;
    }
}

} // namespace cqmgr::ctl
