// compat-fake-agent: a delivery "agent" that says exactly the bytes a
// scenario gives it, so that stock qmgr and cqmgr can be compared on the
// same malformed announcement or reply.  master(8) runs it through spawn(8),
// which connects the queue manager's socket to its standard input and output:
//
//   bogus unix - n n - - spawn user=nobody argv=${fake_agent} ANNOUNCEMENT [REPLY] [close]
//
// It writes ANNOUNCEMENT at once.  With a REPLY it then reads the whole
// delivery request (the attribute list and as many recipient lists as its
// recipient_count says) and writes REPLY.  Last it waits for the queue
// manager to close the connection, as a real agent does, unless the word
// `close` follows: then it exits at once (an agent that dies mid-reply, or
// mid-announcement when `close` takes the place of REPLY).
// Both byte strings take the escapes \0, \n, \r, \t, \\ and \xHH.
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace {

// Turns the command-line escapes into bytes.
std::string unescape(const char* s) {
    std::string out;
    for (; *s; ++s) {
        if (*s != '\\' || s[1] == '\0') {
            out += *s;
            continue;
        }
        char c = *++s;
        switch (c) {
        case '0':
            out += '\0';
            break;
        case 'n':
            out += '\n';
            break;
        case 'r':
            out += '\r';
            break;
        case 't':
            out += '\t';
            break;
        case 'x':
            if (std::isxdigit(static_cast<unsigned char>(s[1])) &&
                std::isxdigit(static_cast<unsigned char>(s[2]))) {
                out += static_cast<char>(std::strtol(std::string(s + 1, 2).c_str(), nullptr, 16));
                s += 2;
            } else {
                out += "\\x";
            }
            break;
        default:
            out += c;
        }
    }
    return out;
}

// Writes all of `bytes` to standard output; false when the peer is gone.
bool put(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = ::write(1, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

// Reads NUL-terminated strings from standard input.
class Tokens {
  public:
    // The next string; false at EOF or on an error.
    bool next(std::string& out) {
        for (;;) {
            auto nul = buf_.find('\0');
            if (nul != std::string::npos) {
                out = buf_.substr(0, nul);
                buf_.erase(0, nul + 1);
                return true;
            }
            char chunk[4096];
            ssize_t n = ::read(0, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            buf_.append(chunk, static_cast<size_t>(n));
        }
    }

  private:
    std::string buf_;
};

// Reads one attribute list; `count` gets the value of recipient_count if
// the list has one.  False at EOF.
bool read_list(Tokens& in, long& count) {
    std::string name, value;
    for (;;) {
        if (!in.next(name)) return false;
        if (name.empty()) return true;
        if (!in.next(value)) return false;
        if (name == "recipient_count") count = std::strtol(value.c_str(), nullptr, 10);
    }
}

// Reads until the queue manager closes its end.
void drain() {
    char chunk[4096];
    for (;;) {
        ssize_t n = ::read(0, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
    }
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2 || argc > 4) {
        std::fprintf(stderr, "usage: compat-fake-agent ANNOUNCEMENT [REPLY] [close]\n");
        return 2;
    }
    bool close_early = std::strcmp(argv[argc - 1], "close") == 0 && argc > 2;
    bool has_reply = argc == 4 || (argc == 3 && !close_early);
    if (!put(unescape(argv[1]))) return 0;
    if (has_reply) {
        Tokens in;
        long count = 0;
        if (!read_list(in, count)) return 0;
        for (long i = 0; i < count; ++i) {
            long ignored = 0;
            if (!read_list(in, ignored)) return 0;
        }
        if (!put(unescape(argv[2]))) return 0;
    }
    if (!close_early) drain();
    return 0;
}
