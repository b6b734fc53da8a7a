// A reply rule's action as the hosts share it (see shared_action.hpp).
#include "shared_action.hpp"

#include <charconv>
#include <vector>

namespace cqmgr::qmgr {

namespace {

// `s` with its tabs and line ends as blanks: one field of one line.
std::string field(std::string_view s) {
    std::string out(s.substr(0, max_shared_field));
    for (char& c : out)
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return out;
}

// A field read back: no control character, not too long.
bool clean(std::string_view s) {
    if (s.size() > max_shared_field) return false;
    for (unsigned char c : s)
        if (c < 0x20 || c == 0x7f) return false;
    return true;
}

// Unix seconds from 0 to the year 9999.
std::optional<int64_t> seconds(std::string_view s) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size() || v < 0 || v > 253'402'300'799)
        return std::nullopt;
    return v;
}

bool sender_scope(ReplyAction::Scope s) {
    return s == ReplyAction::Scope::sender_destination || s == ReplyAction::Scope::sender_provider;
}

// The scope named `s`: one of the sender scopes in format 2, another in 1.
std::optional<ReplyAction::Scope> scope_of(std::string_view s, bool senders) {
    using S = ReplyAction::Scope;
    for (S scope :
         {S::destination, S::transport, S::provider, S::sender_destination, S::sender_provider})
        if (s == action_scope_name(scope) && sender_scope(scope) == senders) return scope;
    return std::nullopt;
}

} // namespace

std::string SharedAction::key() const {
    const std::string who = group.empty() ? std::string() : "sender " + group + " ";
    switch (scope) {
    case ReplyAction::Scope::transport:
        return transport;
    case ReplyAction::Scope::provider:
    case ReplyAction::Scope::sender_provider:
        return who + transport + ":provider " + name;
    default:
        return who + transport + ":" + name;
    }
}

std::string SharedAction::id() const {
    return key() + "|" + std::to_string(since) + "|" + rule;
}

std::string encode_shared_action(const SharedAction& a) {
    const bool senders = sender_scope(a.scope);
    std::string out = senders ? "2\t" : "1\t";
    out += action_scope_name(a.scope);
    auto add = [&out](const std::string& s) {
        out += '\t';
        out += s.empty() ? std::string("-") : field(s);
    };
    add(a.transport);
    add(a.name);
    if (senders) add(a.group);
    out += '\t' + std::to_string(a.since) + '\t' + std::to_string(a.until);
    for (const std::string* s : {&a.host, &a.rule, &a.action, &a.reason})
        out += '\t' + field(*s);
    return out;
}

std::optional<SharedAction> decode_shared_action(std::string_view text) {
    if (text.size() > max_shared_action_text) return std::nullopt;
    std::vector<std::string_view> f;
    for (size_t from = 0;;) {
        size_t tab = text.find('\t', from);
        f.push_back(text.substr(from, tab == std::string_view::npos ? tab : tab - from));
        if (tab == std::string_view::npos || f.size() > 11) break;
        from = tab + 1;
    }
    // Format 2 has the group after the name; without it, it reads as 1.
    const bool senders = f[0] == "2";
    std::string_view group;
    if (senders && f.size() == 11) {
        group = f[4];
        f.erase(f.begin() + 4);
        if (group.empty() || group == "-") return std::nullopt;
    } else if (senders || f[0] != "1") {
        return std::nullopt;
    }
    if (f.size() != 10) return std::nullopt;
    if (!clean(group)) return std::nullopt;
    for (std::string_view s : f)
        if (!clean(s)) return std::nullopt;
    SharedAction a;
    auto scope = scope_of(f[1], senders);
    auto since = seconds(f[4]);
    auto until = seconds(f[5]);
    if (!scope || !since || !until || f[2].empty() || f[2] == "-" || f[3].empty() || f[7].empty() ||
        f[8].empty())
        return std::nullopt;
    // A transport has no name; a destination or a provider has one.
    if ((*scope == ReplyAction::Scope::transport) != (f[3] == "-")) return std::nullopt;
    a.scope = *scope;
    a.transport = f[2];
    a.name = f[3] == "-" ? std::string() : std::string(f[3]);
    a.group = group;
    a.since = *since;
    a.until = *until;
    a.host = f[6];
    a.rule = f[7];
    a.action = f[8];
    a.reason = f[9];
    return a;
}

} // namespace cqmgr::qmgr
