#include "maillog.hpp"

#include "error.hpp"

#include <cctype>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace compat {

// Checks the two Postfix queue ID forms: short = upper-case hex (at least 6
// digits); long = base-52 time/inode digits without vowels, joined by 'z'.
bool looks_like_queue_id(std::string_view s) {
    if (s.size() >= 6 && s.size() <= 20) {
        bool hex = true;
        for (char c : s)
            if (!std::isdigit(static_cast<unsigned char>(c)) && !(c >= 'A' && c <= 'F'))
                hex = false;
        if (hex) return true;
    }
    if (s.size() < 10 || s.size() > 30) return false;
    bool has_z = false;
    for (char c : s) {
        if (!std::isalnum(static_cast<unsigned char>(c))) return false;
        if (std::string_view("AEIOUaeiou").find(c) != std::string_view::npos) return false;
        if (c == 'z') has_z = true;
    }
    return has_z;
}

// Finds "prog[pid]: " and splits off an optional "QUEUEID: " prefix.
std::optional<LogLine> parse_log_line(std::string_view line) {
    size_t colon = line.find("]: ");
    while (colon != std::string_view::npos) {
        size_t open = line.rfind('[', colon);
        if (open != std::string_view::npos && open + 1 < colon) {
            std::string_view digits = line.substr(open + 1, colon - open - 1);
            bool ok = !digits.empty();
            for (char c : digits)
                ok = ok && std::isdigit(static_cast<unsigned char>(c));
            size_t sp = line.rfind(' ', open);
            size_t pstart = sp == std::string_view::npos ? 0 : sp + 1;
            if (ok && pstart < open) {
                LogLine l;
                l.raw = std::string(line);
                l.program = std::string(line.substr(pstart, open - pstart));
                size_t slash = l.program.rfind('/');
                l.service = slash == std::string::npos ? l.program : l.program.substr(slash + 1);
                l.pid = std::stol(std::string(digits));
                std::string_view rest = line.substr(colon + 3);
                size_t idcolon = rest.find(": ");
                if (idcolon != std::string_view::npos &&
                    looks_like_queue_id(rest.substr(0, idcolon))) {
                    l.queue_id = std::string(rest.substr(0, idcolon));
                    rest = rest.substr(idcolon + 2);
                }
                l.text = std::string(rest);
                return l;
            }
        }
        colon = line.find("]: ", colon + 1);
    }
    return std::nullopt;
}

namespace {

// Value of ", key=" up to the next ", " (or the end); "" if absent.
std::string field(std::string_view text, std::string_view key) {
    std::string pat = ", " + std::string(key) + "=";
    size_t p = text.find(pat);
    if (p == std::string_view::npos) return "";
    p += pat.size();
    size_t end = text.find(", ", p);
    std::string_view v =
        text.substr(p, end == std::string_view::npos ? std::string_view::npos : end - p);
    return std::string(v);
}

} // namespace

// Extracts recipient, orig_to, relay, dsn and status from a delivery line.
std::optional<Delivery> parse_delivery(std::string_view text) {
    if (text.rfind("to=<", 0) != 0) return std::nullopt;
    size_t close = text.find(">, ");
    if (close == std::string_view::npos) return std::nullopt;
    Delivery d;
    d.to = std::string(text.substr(4, close - 4));
    std::string_view rest = text.substr(close + 1);
    std::string orig = field(rest, "orig_to");
    if (orig.size() >= 2 && orig.front() == '<' && orig.back() == '>')
        orig = orig.substr(1, orig.size() - 2);
    d.orig_to = orig;
    d.relay = field(rest, "relay");
    d.dsn = field(rest, "dsn");
    d.delay = field(rest, "delay");
    std::string status = field(rest, "status");
    size_t sp = status.find(' ');
    d.status = sp == std::string::npos ? status : status.substr(0, sp);
    if (d.status.empty()) return std::nullopt;
    return d;
}

// Splits on '\n'; a trailing partial line is dropped.
std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> out;
    size_t pos = 0;
    for (;;) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) break;
        out.emplace_back(text, pos, nl - pos);
        pos = nl + 1;
    }
    return out;
}

// pread from the saved offset; keeps a partial last line for the next call.
std::vector<std::string> MaillogTail::read_new_lines() {
    std::vector<std::string> out;
    int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return out;
        throw sys_error("open " + path_);
    }
    std::string data;
    char buf[65536];
    off_t off = static_cast<off_t>(offset_);
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf, off);
        if (n < 0) {
            if (errno == EINTR) continue;
            Error e = sys_error("read " + path_);
            close(fd);
            throw e;
        }
        if (n == 0) break;
        data.append(buf, static_cast<size_t>(n));
        off += n;
    }
    if (close(fd) != 0) throw sys_error("close " + path_);
    size_t last_nl = data.rfind('\n');
    if (last_nl == std::string::npos) return out;
    data.resize(last_nl + 1);
    offset_ += data.size();
    return split_lines(data);
}

} // namespace compat
