// Kept answers of the resolve service (see resolve_cache.hpp).
#include "resolve_cache.hpp"

#include "cqmgr/common/address.hpp"

namespace cqmgr::qmgr {

namespace {

bool letter_or_digit(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// True when `s` is labels of `ok` characters separated by single dots,
// with no empty label.
template <typename Ok> bool dotted(std::string_view s, Ok ok) {
    if (s.empty() || s.front() == '.' || s.back() == '.') return false;
    char prev = 0;
    for (char c : s) {
        if (c == '.') {
            if (prev == '.') return false;
        } else if (!ok(c)) {
            return false;
        }
        prev = c;
    }
    return true;
}

} // namespace

ResolveCacheConfig resolve_cache_config(size_t limit, const ResolverSettings& s) {
    ResolveCacheConfig c;
    c.limit = limit;
    if (limit == 0) return c; // stock's single answer: exact questions only
    c.sender_matters = !s.sender_dependent_default_transport_maps.empty() ||
                       !s.sender_dependent_relayhost_maps.empty() || s.rewrite_service_overrides ||
                       !s.rewrite_service_found;
    // The local part reaches trivial-rewrite's answer only through these
    // two tables (looked up by the whole address) and through rewriting,
    // which a plain local part does not meet.  Settings on trivial-rewrite's
    // own master.cf line are not followed here: with any, or with no line
    // found, answers stay per address.
    c.domain_answers = s.transport_maps.empty() && s.relocated_maps.empty() &&
                       s.rewrite_service_found && !s.rewrite_service_overrides;
    return c;
}

bool plain_local_part(std::string_view local) {
    if (local.empty() || local.front() == '-') return false;
    return dotted(local, [](char c) {
        return letter_or_digit(c) || c == '_' || c == '+' || c == '=' || c == '-';
    });
}

bool plain_domain(std::string_view domain) {
    return dotted(domain, [](char c) { return letter_or_digit(c) || c == '-'; });
}

bool ResolveCache::make_key(std::string_view request_class, std::string_view sender,
                            std::string_view address, bool allow_domain, bool& by_domain) {
    by_domain = false;
    key_.clear();
    if (address.empty()) return false;
    std::string_view rest = address;
    if (allow_domain && config_.domain_answers &&
        request_class == protocol::resolve_class::regular) {
        // Neither a plain local part nor a plain domain holds an '@': this
        // is an address with exactly one.
        auto parts = split_address(address);
        if (parts.has_at && plain_local_part(parts.local) && plain_domain(parts.domain)) {
            by_domain = true;
            rest = parts.domain;
        }
    }
    key_.push_back(by_domain ? 'D' : 'A');
    key_.append(request_class).push_back('\0');
    if (config_.sender_matters) key_.append(sender);
    key_.push_back('\0');
    key_.append(rest);
    return true;
}

void ResolveCache::check_generation(uint64_t generation) {
    if (generation == generation_) return;
    entries_.clear();
    order_.clear();
    generation_ = generation;
}

void ResolveCache::trim(Clock::time_point now) {
    while (!order_.empty()) {
        auto it = entries_.find(*order_.front().key);
        bool current = it != entries_.end() && it->second.seq == order_.front().seq;
        if (current && now - it->second.when < ttl && entries_.size() < config_.limit) break;
        order_.pop_front();
        if (current) entries_.erase(it);
    }
}

std::optional<protocol::ResolveReply>
ResolveCache::find(std::string_view request_class, std::string_view sender,
                   std::string_view address, Clock::time_point now, uint64_t generation) {
    if (config_.limit == 0) {
        // As stock: only a non-empty address is answered from the cache.
        if (address.empty() || !last_.set || address != last_.address ||
            request_class != last_.request_class || sender != last_.sender ||
            now - last_.when >= ttl)
            return std::nullopt;
        return last_.reply;
    }
    check_generation(generation);
    bool by_domain = false;
    if (!make_key(request_class, sender, address, true, by_domain)) return std::nullopt;
    auto it = entries_.find(key_);
    if (it == entries_.end() && by_domain) {
        // A domain whose answer changed the address is kept per address.
        make_key(request_class, sender, address, false, by_domain);
        it = entries_.find(key_);
    }
    if (it == entries_.end() || now - it->second.when >= ttl) return std::nullopt;
    protocol::ResolveReply reply = it->second.reply;
    if (by_domain) reply.recipient.assign(address);
    return reply;
}

void ResolveCache::store(std::string_view request_class, std::string_view sender,
                         std::string_view address, const protocol::ResolveReply& reply,
                         Clock::time_point now, uint64_t generation) {
    bool by_domain = false;
    if (config_.limit == 0) {
        // The last answer replaces the one before, whatever it was.
        last_.set = true;
        last_.request_class.assign(request_class);
        last_.sender.assign(sender);
        last_.address.assign(address);
        last_.reply = reply;
        last_.when = now;
        return;
    }
    check_generation(generation);
    // A lookup failure is asked again next time; so is an answer from a
    // server that is going away.
    if (reply.is_fail() || reply.server_flags != 0) return;
    if (!make_key(request_class, sender, address, true, by_domain)) return;
    // A domain answer needs the address back unchanged; else it is kept
    // for this address only.
    if (by_domain && reply.recipient != address)
        make_key(request_class, sender, address, false, by_domain);
    trim(now);
    Entry e{reply, now, ++seq_};
    if (by_domain) e.reply.recipient.clear();
    auto [it, fresh] = entries_.try_emplace(key_, std::move(e));
    if (!fresh) it->second = std::move(e);
    order_.push_back({&it->first, it->second.seq});
}

} // namespace cqmgr::qmgr
