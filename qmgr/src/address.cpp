#include "address.hpp"

namespace cqmgr::qmgr {

namespace {
// True when [b, e) is a sequence of atoms separated by single dots.
bool dot_string(std::string_view s) {
    if (s.empty() || s.front() == '.' || s.back() == '.') return false;
    for (size_t i = 0; i < s.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '.' && i + 1 < s.size() && s[i + 1] == '.') return false;
        if (c == ' ' || c < 32 || c == 127) return false;
        if (std::string_view("()<>@,;:\\\"[]").find(static_cast<char>(c)) != std::string_view::npos)
            return false;
    }
    return true;
}
} // namespace

std::string_view local_part(std::string_view addr) {
    auto at = addr.rfind('@');
    return at == std::string_view::npos ? addr : addr.substr(0, at);
}

std::string quote_local(std::string_view addr) {
    if (addr.empty()) return {};
    // A source route (@a,@b:user@c) keeps its route unquoted.
    size_t start = 0;
    if (addr.front() == '@') {
        auto colon = addr.find(':');
        if (colon != std::string_view::npos) start = colon + 1;
    }
    auto at = addr.rfind('@');
    size_t end = (at == std::string_view::npos || at < start) ? addr.size() : at;
    std::string_view lp = addr.substr(start, end - start);
    if (dot_string(lp)) return std::string(addr);
    std::string out(addr.substr(0, start));
    out += '"';
    for (char c : lp) {
        if (c == '"' || c == '\\' || c == '\r') out += '\\';
        out += c;
    }
    out += '"';
    out.append(addr.substr(end));
    return out;
}

std::string unquote_local(std::string_view addr) {
    auto at = addr.rfind('@');
    std::string_view lp = at == std::string_view::npos ? addr : addr.substr(0, at);
    std::string out;
    bool quoted = false;
    for (size_t i = 0; i < lp.size(); ++i) {
        char c = lp[i];
        if (c == '"') {
            quoted = !quoted;
            continue;
        }
        if (c == '\\' && quoted && i + 1 < lp.size()) c = lp[++i];
        out += c;
    }
    if (at != std::string_view::npos) out.append(addr.substr(at));
    return out;
}

std::string verp_sender(std::string_view sender, std::string_view delims,
                        std::string_view orig_rcpt, std::string_view rcpt) {
    std::string_view recipient = orig_rcpt.empty() ? rcpt : orig_rcpt;
    auto s_at = sender.rfind('@');
    size_t s_local = s_at == std::string_view::npos ? sender.size() : s_at;
    auto r_at = recipient.rfind('@');
    size_t r_local = r_at == std::string_view::npos ? recipient.size() : r_at;
    std::string out(sender.substr(0, s_local));
    out += delims.size() > 0 ? delims[0] : '+';
    out.append(recipient.substr(0, r_local));
    if (r_local + 1 < recipient.size()) {
        out += delims.size() > 1 ? delims[1] : '=';
        out.append(recipient.substr(r_local + 1));
    }
    if (s_local + 1 < sender.size()) {
        out += '@';
        out.append(sender.substr(s_local + 1));
    }
    return out;
}

} // namespace cqmgr::qmgr
