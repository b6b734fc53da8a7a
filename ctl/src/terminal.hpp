// The terminal as `cqmgrctl top` uses it: keys one at a time without echo
// (cbreak: Ctrl-C still raises SIGINT), the alternate screen with the
// cursor hidden, and the window size.  Everything is put back when the
// object goes away, also when top ends through an exception or a signal
// (the loop turns signals into an orderly exit).
#pragma once

#include <string>
#include <termios.h>

namespace cqmgr::ctl {

class Terminal {
  public:
    // Takes over `in` (when it is a terminal) and `out` (when it is one).
    Terminal(int in, int out);
    ~Terminal();
    Terminal(const Terminal&) = delete;
    Terminal& operator=(const Terminal&) = delete;

    // True when keys can be read from `in`.
    bool interactive() const { return raw_; }
    // Rows and columns of `out`: TIOCGWINSZ, else $LINES/$COLUMNS, else 24x80.
    void size(int& rows, int& cols) const;
    // Writes `text` to `out` completely.
    void write(const std::string& text) const;

  private:
    int in_;
    int out_;
    bool raw_ = false;
    bool screen_ = false;
    termios saved_{};
};

// Escape sequences: move home, clear to the end of the line, clear to the
// end of the screen.
inline constexpr const char* esc_home = "\x1b[H";
inline constexpr const char* esc_clear_line = "\x1b[K";
inline constexpr const char* esc_clear_below = "\x1b[J";

} // namespace cqmgr::ctl
