#include "address.hpp"

#include "cqmgr/common/address.hpp"

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

std::string quote_local(std::string_view addr) {
    if (addr.empty()) return {};
    // A source route (@a,@b:user@c) keeps its route unquoted.
    size_t start = 0;
    if (addr.front() == '@') {
        auto colon = addr.find(':');
        if (colon != std::string_view::npos) start = colon + 1;
    }
    auto parts = split_address(addr);
    size_t end = parts.has_at && parts.local.size() >= start ? parts.local.size() : addr.size();
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
    auto parts = split_address(addr);
    std::string_view lp = parts.local;
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
    if (parts.has_at) out.append("@").append(parts.domain);
    return out;
}

std::string verp_sender(std::string_view sender, std::string_view delims,
                        std::string_view orig_rcpt, std::string_view rcpt) {
    auto s = split_address(sender);
    auto r = split_address(orig_rcpt.empty() ? rcpt : orig_rcpt);
    std::string out(s.local);
    out += delims.size() > 0 ? delims[0] : '+';
    out.append(r.local);
    if (!r.domain.empty()) {
        out += delims.size() > 1 ? delims[1] : '=';
        out.append(r.domain);
    }
    if (!s.domain.empty()) {
        out += '@';
        out.append(s.domain);
    }
    return out;
}

} // namespace cqmgr::qmgr
