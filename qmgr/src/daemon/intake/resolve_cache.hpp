// Answers of trivial-rewrite's resolve service kept for reuse.
//
// Stock's resolve client keeps one answer: the last, reused for the same
// (class, sender, address) for 30 s.  That is this cache with a limit of
// 0, the default.  With `cqmgr_resolve_cache_limit` above 0 it keeps up to
// that many answers, each for the same 30 s, and drops them all when the
// connection to trivial-rewrite is new: trivial-rewrite restarts itself
// when one of its tables changes, so an answer never outlives the process
// that gave it by more than the 30 s that stock's own cache allows.
//
// Where the configuration makes the answer depend on the domain alone
// (docs/design.md, "The resolve cache"), one answer serves every recipient
// of that domain whose local part is plain: the answer of trivial-rewrite
// for a plain local part is the same transport, nexthop and flags, and the
// address unchanged.  That is what makes a cache pay on mail to many
// different recipients at the same domains.
#pragma once

#include "cqmgr/protocol/messages.hpp"
#include "cqmgr/protocol/rewrite_client.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cqmgr::qmgr {

struct ResolveCacheConfig {
    // Answers kept at most; 0 keeps only the last one, as stock does.
    size_t limit = 0;
    // An answer for a plain local part serves the whole domain.
    bool domain_answers = false;
    // The sender takes part in the key (sender-dependent maps are set).
    bool sender_matters = true;
};

// Which configuration allows what (docs/design.md, "The resolve cache"):
// `main` looks a parameter up as trivial-rewrite reads it (main.cf and the
// -o settings of its master.cf line).
struct ResolverSettings {
    std::string transport_maps, relocated_maps;
    std::string sender_dependent_default_transport_maps, sender_dependent_relayhost_maps;
    bool rewrite_service_found = false;     // trivial-rewrite's line in master.cf
    bool rewrite_service_overrides = false; // that line sets parameters with -o
};
ResolveCacheConfig resolve_cache_config(size_t limit, const ResolverSettings& s);

// A local part for which trivial-rewrite changes nothing and looks nothing
// up: letters, digits and "._+=-", no routing operator, no quoting, not
// starting with '-' or '.', no empty label.
bool plain_local_part(std::string_view local);
// A domain made of letters, digits, '-' and inner dots only.
bool plain_domain(std::string_view domain);

class ResolveCache {
  public:
    using Clock = std::chrono::steady_clock;
    static constexpr auto ttl = std::chrono::seconds(30);

    explicit ResolveCache(ResolveCacheConfig config) : config_(config) {}

    // The kept answer to the question, if there is one younger than `ttl`
    // from the connection `generation` (ignored with a limit of 0, as stock
    // ignores it).
    std::optional<protocol::ResolveReply> find(std::string_view request_class,
                                               std::string_view sender, std::string_view address,
                                               Clock::time_point now, uint64_t generation);
    // Keeps `reply`, the answer to the question, from connection
    // `generation`.
    void store(std::string_view request_class, std::string_view sender, std::string_view address,
               const protocol::ResolveReply& reply, Clock::time_point now, uint64_t generation);

    // Answers held now (expired ones included until they are dropped).
    size_t size() const { return config_.limit == 0 ? (last_.set ? 1 : 0) : entries_.size(); }
    const ResolveCacheConfig& config() const { return config_; }

  private:
    struct Entry {
        protocol::ResolveReply reply; // recipient empty for a domain answer
        Clock::time_point when;
        uint64_t seq;
    };
    // Builds the key of the question into key_ (by its domain where that
    // is allowed and `allow_domain`); false when it has none.
    bool make_key(std::string_view request_class, std::string_view sender, std::string_view address,
                  bool allow_domain, bool& by_domain);
    // Drops every answer when the connection is not the one they came from.
    void check_generation(uint64_t generation);
    // Drops expired answers from the front of the order, and the oldest
    // while the cache is full.
    void trim(Clock::time_point now);

    ResolveCacheConfig config_;
    // With a limit of 0: stock's one answer, its question kept in strings
    // that keep their buffers from one answer to the next (each recipient
    // of a large message stores one).
    struct Last {
        bool set = false;
        std::string request_class, sender, address;
        protocol::ResolveReply reply;
        Clock::time_point when;
    } last_;
    std::unordered_map<std::string, Entry> entries_;
    // Keys in the order they were stored: stores never renew an answer's
    // time, so this is also the order in which they expire.  An element
    // whose seq is no longer its entry's is left over from an earlier store
    // of the same key and is skipped.
    struct Order {
        const std::string* key;
        uint64_t seq;
    };
    std::deque<Order> order_;
    uint64_t seq_ = 0;
    uint64_t generation_ = 0;
    std::string key_; // the key being looked up, kept to avoid allocations
};

} // namespace cqmgr::qmgr
