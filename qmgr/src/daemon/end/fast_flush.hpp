// The fast flush service's part in qmgr's own deferrals: like Postfix's
// defer_append(), after deferring a recipient itself, qmgr tells flush(8)
// the queue ID under the recipient's domain, when fast_flush_domains lists
// that domain.
//
// fast_flush_domains is matched as Postfix's domain lists match a domain name:
// patterns in order, the first hit decides, `!` inverts, a bare domain
// matches itself (and its subdomains when fast_flush_domains is named in
// parent_domain_matches_subdomains), `.domain` matches subdomains, and
// `/file` contributes the patterns in that file.  type:table patterns are not
// opened here: when matching reaches one, the answer is "ask" and the flush
// server, which opens the same list itself, decides.
#pragma once

#include "cqmgr/protocol/asio.hpp"
#include "service_slots.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

class FlushDomains {
  public:
    enum class Verdict { no, yes, ask };

    FlushDomains() = default;
    // `patterns` is the expanded parameter value; files are read now (stock
    // reads them before it drops privileges, and so must we).  A pattern
    // that is only "!" is fatal, as in Postfix.
    FlushDomains(std::string_view patterns, bool parent_style);

    // Whether mail for `domain` goes into the fast flush logs.
    Verdict match(std::string_view domain) const;
    // The type:table patterns, as written (without any "!").
    const std::vector<std::string>& tables() const { return tables_; }

  private:
    struct Pattern {
        bool negate = false;
        bool table = false;
        std::string text; // lowercased unless a table
    };
    // Adds the patterns of one line of text (recursively for /file).
    void parse(std::string_view text, bool negate);

    bool parent_style_ = false;
    std::vector<Pattern> patterns_;
    std::vector<std::string> tables_;
};

// Registers `queue_id` with `service` (public/<service>) under the domain of
// `address` unless `domains` rules it out; a failure other than "not
// eligible" is logged as stock logs it ("ID: flush service failure").
// `ipc_timeout` is qmgr_ipc_timeout.  The connection, if any, takes one of
// `slots` (service_slots.hpp).
awaitable<void> flush_add_deferred(const FlushDomains& domains, ServiceSlots& slots,
                                   std::string service, std::string queue_id, std::string address,
                                   std::chrono::seconds ipc_timeout);

// Asks `service` to deliver the mail deferred for `site`, as postqueue -s
// does, unless `domains` rules the site out.  Returns the flush status
// (protocol::flush_stat): `deny` without asking when the site is not
// eligible, `fail` when the service could not be reached.  The connection
// takes one of `slots`.
awaitable<int> flush_send_site(const FlushDomains& domains, ServiceSlots& slots,
                               std::string service, std::string site,
                               std::chrono::seconds ipc_timeout);

} // namespace cqmgr::qmgr
