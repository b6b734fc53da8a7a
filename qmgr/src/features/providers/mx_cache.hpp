// The MX resolver's answers, kept for their TTL: bounded in size (the least
// recently used answer goes first), each TTL clamped to the resolver's
// bounds, so that a reply can neither pin an answer for days nor make
// every delivery ask again.  Pure: the caller passes the time.
#pragma once

#include "mx_answer.hpp"
#include "mx_channel.hpp"

#include <chrono>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cqmgr::qmgr {

class MxCache {
  public:
    using Clock = std::chrono::steady_clock;

    explicit MxCache(const MxResolverOptions& options) : options_(options) {}

    // The fresh answer for `key` (an mx_lookup_key()), or null; an expired
    // one is dropped.  Valid until the next put().
    const MxAnswer* get(const std::string& key, Clock::time_point now);
    // Keeps `answer` for `key` from `now` for its clamped TTL (ttl_for());
    // nothing for a TTL of 0 (busy, or failure_ttl 0).
    void put(const std::string& key, const MxAnswer& answer, Clock::time_point now);
    // How long `answer` is kept.
    std::chrono::seconds ttl_for(const MxAnswer& answer) const;

    size_t size() const { return entries_.size(); }

  private:
    struct Entry {
        MxAnswer answer;
        Clock::time_point expires;
        std::list<std::string>::iterator age; // in lru_
    };
    MxResolverOptions options_;
    std::unordered_map<std::string, Entry> entries_;
    std::list<std::string> lru_; // most recently used first
};

} // namespace cqmgr::qmgr
