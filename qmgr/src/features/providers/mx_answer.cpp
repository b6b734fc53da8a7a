// A DNS reply to an MX query made into an MxAnswer (see mx_answer.hpp).
#include "mx_answer.hpp"

#include "address.hpp"

#include <algorithm>
#include <ares.h>
#include <climits>
#include <optional>
#include <utility>

namespace cqmgr::qmgr {

namespace {

constexpr unsigned type_soa = 6, type_mx = 15, class_in = 1;

// True when `name` (lowercased, no trailing dot) is a plain host name:
// labels of letters, digits, '-' and '_', of 1 to 63 characters, separated
// by single dots, 253 characters at most.
bool plain_host_name(std::string_view name) {
    if (name.empty() || name.size() > 253) return false;
    size_t label = 0;
    for (char c : name) {
        if (c == '.') {
            if (label == 0) return false;
            label = 0;
            continue;
        }
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
        if (!ok || ++label > 63) return false;
    }
    return label > 0;
}

// Reads a DNS message's records, only as far as the TTLs need: bounds are
// checked at every step, and any step out of bounds ends the walk.
class Walk {
  public:
    explicit Walk(std::span<const unsigned char> m) : m_(m) {}

    bool u16(size_t at, unsigned& v) const {
        if (at + 2 > m_.size()) return false;
        v = unsigned(m_[at]) << 8 | m_[at + 1];
        return true;
    }
    bool u32(size_t at, uint32_t& v) const {
        unsigned hi = 0, lo = 0;
        if (!u16(at, hi) || !u16(at + 2, lo)) return false;
        v = uint32_t(hi) << 16 | lo;
        return true;
    }
    // Steps over an encoded name at `pos` (labels, then a zero byte or a
    // compression pointer, which is not followed).
    bool skip_name(size_t& pos) const {
        for (int labels = 0; labels <= 128; ++labels) {
            if (pos >= m_.size()) return false;
            unsigned len = m_[pos];
            if (len == 0) {
                pos += 1;
                return true;
            }
            if ((len & 0xC0) == 0xC0) {
                if (pos + 2 > m_.size()) return false;
                pos += 2;
                return true;
            }
            if (len & 0xC0) return false; // an extended label type
            pos += 1 + len;
        }
        return false;
    }
    struct Record {
        unsigned type = 0, cls = 0;
        uint32_t ttl = 0;
        size_t data = 0, data_len = 0;
    };
    // Reads the record at `pos` and steps past it.
    bool record(size_t& pos, Record& r) const {
        unsigned len = 0;
        if (!skip_name(pos) || !u16(pos, r.type) || !u16(pos + 2, r.cls) || !u32(pos + 4, r.ttl) ||
            !u16(pos + 8, len))
            return false;
        r.data = pos + 10;
        r.data_len = len;
        if (r.data + len > m_.size()) return false;
        pos = r.data + len;
        // RFC 2181 8: a TTL with the top bit set is taken as 0.
        if (r.ttl > uint32_t(INT32_MAX)) r.ttl = 0;
        return true;
    }

    // The least TTL of the answer section's MX records, and the negative
    // TTL of the authority section's SOA record (the lesser of its TTL and
    // its MINIMUM, RFC 2308 5), each when there is one.
    void ttls(std::optional<uint32_t>& mx, std::optional<uint32_t>& negative) const {
        unsigned qd = 0, an = 0, ns = 0;
        if (!u16(4, qd) || !u16(6, an) || !u16(8, ns)) return;
        size_t pos = 12;
        for (unsigned i = 0; i < qd; ++i)
            if (!skip_name(pos) || (pos += 4) > m_.size()) return;
        Record r;
        for (unsigned i = 0; i < an; ++i) {
            if (!record(pos, r)) return;
            if (r.type == type_mx && r.cls == class_in) mx = std::min(mx.value_or(r.ttl), r.ttl);
        }
        for (unsigned i = 0; i < ns; ++i) {
            if (!record(pos, r)) return;
            uint32_t minimum = 0;
            // MINIMUM is the last of the SOA's five numbers, after two names.
            if (r.type == type_soa && r.data_len >= 22 && u32(r.data + r.data_len - 4, minimum)) {
                if (minimum > uint32_t(INT32_MAX)) minimum = 0;
                negative = std::min(r.ttl, minimum);
                return;
            }
        }
    }

  private:
    std::span<const unsigned char> m_;
};

std::chrono::seconds seconds_of(std::optional<uint32_t> ttl) {
    return std::chrono::seconds(ttl.value_or(0));
}

// An answer without hosts.
MxAnswer failed(MxOutcome outcome) {
    return MxAnswer{.outcome = outcome};
}

// The domain without MX records: its own mail host (mx_answer.hpp).
MxAnswer no_mx(std::string_view domain, std::span<const unsigned char> reply) {
    std::optional<uint32_t> mx, negative;
    Walk(reply).ttls(mx, negative);
    return MxAnswer{
        .outcome = MxOutcome::no_mx, .hosts = {std::string(domain)}, .ttl = seconds_of(negative)};
}

// The answer of a reply that says NOERROR with answers: its MX records'
// hosts, or no_mx when the answers hold none (a CNAME alone).
MxAnswer answer_of(std::string_view domain, std::span<const unsigned char> reply) {
    if (reply.size() > size_t(INT_MAX)) return failed(MxOutcome::server_failure);
    ares_mx_reply* head = nullptr;
    int status = ares_parse_mx_reply(reply.data(), static_cast<int>(reply.size()), &head);
    if (status == ARES_ENODATA) return no_mx(domain, reply);
    if (status != ARES_SUCCESS) return failed(MxOutcome::server_failure);
    if (!head) return no_mx(domain, reply);
    std::vector<std::pair<unsigned, std::string>> found;
    bool bad = false;
    size_t records = 0;
    for (ares_mx_reply* r = head; r && !bad; r = r->next) {
        if (++records > max_mx_hosts) {
            bad = true;
            break;
        }
        std::string host = lower(r->host ? std::string_view(r->host) : std::string_view());
        if (!host.empty() && host.back() == '.') host.pop_back();
        // The root (".", a null MX) names no host.
        if (host.empty()) continue;
        if (!plain_host_name(host)) bad = true;
        found.emplace_back(r->priority, std::move(host));
    }
    ares_free_data(head);
    if (bad) return failed(MxOutcome::server_failure);
    std::sort(found.begin(), found.end());
    MxAnswer a{.outcome = MxOutcome::answer};
    for (auto& [pref, host] : found)
        if (std::find(a.hosts.begin(), a.hosts.end(), host) == a.hosts.end())
            a.hosts.push_back(std::move(host));
    std::optional<uint32_t> mx, negative;
    Walk(reply).ttls(mx, negative);
    a.ttl = seconds_of(mx);
    return a;
}

} // namespace

const char* outcome_name(MxOutcome outcome) {
    switch (outcome) {
    case MxOutcome::answer:
        return "answer";
    case MxOutcome::no_mx:
        return "no_mx";
    case MxOutcome::nxdomain:
        return "nxdomain";
    case MxOutcome::timeout:
        return "timeout";
    case MxOutcome::server_failure:
        return "server_failure";
    case MxOutcome::busy:
        return "busy";
    }
    return "server_failure";
}

MxAnswer mx_answer_from_reply(int ares_status, std::span<const unsigned char> reply,
                              std::string_view domain) {
    switch (ares_status) {
    case ARES_SUCCESS:
        return answer_of(domain, reply);
    case ARES_ENODATA: // NOERROR without answers
        return no_mx(domain, reply);
    case ARES_ENOTFOUND: // NXDOMAIN
    {
        std::optional<uint32_t> mx, negative;
        Walk(reply).ttls(mx, negative);
        return MxAnswer{.outcome = MxOutcome::nxdomain, .ttl = seconds_of(negative)};
    }
    case ARES_ETIMEOUT:
        return failed(MxOutcome::timeout);
    default:
        // SERVFAIL, REFUSED, FORMERR, NOTIMP, a refused connection, a reply
        // that does not parse, a name c-ares cannot send, a cancelled query.
        return failed(MxOutcome::server_failure);
    }
}

std::string mx_lookup_key(std::string_view domain) {
    std::string key = lower(domain);
    if (!key.empty() && key.back() == '.') key.pop_back();
    return plain_host_name(key) ? key : std::string();
}

} // namespace cqmgr::qmgr
