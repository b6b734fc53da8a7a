#include "fast_flush.hpp"

#include "address.hpp"
#include "cqmgr/common/address.hpp"
#include "cqmgr/conf/values.hpp"
#include "cqmgr/protocol/flush_client.hpp"
#include "log.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>

namespace cqmgr::qmgr {

namespace {
constexpr std::string_view separators = ", \t\r\n";

// A lookup table reference ("type:name"), as opposed to a host name or an
// address literal.
bool is_table(std::string_view p) {
    return !p.empty() && p[0] != '[' && p.find(':') != p.npos;
}

// Postfix's host name pattern rules; `name` and `pattern` are lowercased.
bool host_matches(std::string_view name, std::string_view pattern, bool parent_style) {
    if (name == pattern) return true;
    if (name.size() <= pattern.size()) return false;
    std::string_view tail = name.substr(name.size() - pattern.size());
    if (tail != pattern) return false;
    if (parent_style) return name[name.size() - pattern.size() - 1] == '.';
    return pattern[0] == '.';
}
} // namespace

FlushDomains::FlushDomains(std::string_view patterns, bool parent_style)
    : parent_style_(parent_style) {
    parse(patterns, false);
}

void FlushDomains::parse(std::string_view text, bool negate) {
    size_t pos = 0;
    while (auto token = conf::next_braced_item(text, pos, separators)) {
        std::string_view item = *token;
        if (item[0] == '#') {
            std::string_view rest = text.substr(std::min(pos + 1, text.size()));
            log::warn("fast_flush_domains: comment at end of line is not supported: " +
                      std::string(item) + " " + std::string(rest));
            break;
        }
        bool neg = negate;
        while (!item.empty() && item[0] == '!') {
            neg = !neg;
            item.remove_prefix(1);
        }
        if (item.empty()) log::fatal("fast_flush_domains: no pattern after '!'");
        if (item[0] == '/') {
            std::ifstream in{std::string(item)};
            if (!in) {
                // Stock substitutes a table whose lookups fail; the flush
                // server does the same, so let it answer.
                patterns_.push_back({neg, true, std::string(item)});
                continue;
            }
            std::string line;
            while (std::getline(in, line))
                if (line.empty() || line[0] != '#') parse(line, neg);
        } else if (is_table(item)) {
            patterns_.push_back({neg, true, std::string(item)});
            tables_.emplace_back(item);
        } else {
            patterns_.push_back({neg, false, lower(item)});
        }
    }
}

FlushDomains::Verdict FlushDomains::match(std::string_view domain) const {
    std::string name = lower(domain);
    for (const auto& p : patterns_) {
        if (p.table) return Verdict::ask;
        if (host_matches(name, p.text, parent_style_)) return p.negate ? Verdict::no : Verdict::yes;
    }
    return Verdict::no;
}

awaitable<void> flush_add_deferred(const FlushDomains& domains, ServiceSlots& slots,
                                   std::string service, std::string queue_id, std::string address,
                                   std::chrono::seconds ipc_timeout) {
    std::string domain(split_address(address).domain);
    if (domain.empty()) co_return;
    if (domains.match(domain) == FlushDomains::Verdict::no) co_return;
    ServiceSlots::Held slot = co_await slots.hold();
    auto r = co_await protocol::flush_add("public/" + service, domain, queue_id,
                                          protocol::CommandTimeouts::ipc(ipc_timeout));
    if (!r.completed ||
        (r.status != protocol::flush_stat::ok && r.status != protocol::flush_stat::deny))
        log::warn(queue_id + ": " + service + " service failure");
}

awaitable<int> flush_send_site(const FlushDomains& domains, ServiceSlots& slots,
                               std::string service, std::string site,
                               std::chrono::seconds ipc_timeout) {
    if (domains.match(site) == FlushDomains::Verdict::no) co_return protocol::flush_stat::deny;
    ServiceSlots::Held slot = co_await slots.hold();
    auto r = co_await protocol::flush_send_site("public/" + service, site,
                                                protocol::CommandTimeouts::ipc(ipc_timeout));
    co_return r.completed ? r.status : protocol::flush_stat::fail;
}

} // namespace cqmgr::qmgr
