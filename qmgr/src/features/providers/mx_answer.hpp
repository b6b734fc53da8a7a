// What a lookup of a destination domain's MX set came to, and how a DNS
// reply becomes one.  The conversion is pure (no channel, no clock): it
// takes c-ares's status and the reply's bytes as they came off the wire,
// so that the fuzzer (qmgr/fuzz/fuzz_mx_reply.cpp) can feed it anything.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

// The kinds of result.  Only `answer` and `no_mx` say where the domain's
// mail goes; the others leave the destination on its own.
enum class MxOutcome : uint8_t {
    answer,         // MX records: `hosts` (empty for a null MX, RFC 7505)
    no_mx,          // the domain exists but has no MX record
    nxdomain,       // the domain does not exist
    timeout,        // no answer by the lookup's deadline
    server_failure, // SERVFAIL, REFUSED, a malformed reply, no server
    busy,           // too many lookups waiting: refused without asking
};

// "answer", "no_mx", "nxdomain", "timeout", "server_failure", "busy": for
// log lines, probes and the control socket.
const char* outcome_name(MxOutcome outcome);

struct MxAnswer {
    MxOutcome outcome = MxOutcome::server_failure;
    // The MX host names, lowercased and without the trailing dot, by
    // preference and then by name, each once.
    //   answer: the hosts of the MX records; empty for a null MX (the
    //     domain takes no mail, so it belongs to no provider by its MX).
    //   no_mx: the domain itself.  smtp(8) then delivers to the domain's
    //     own address records (the implicit MX of RFC 5321 5.1): the
    //     domain is its own mail host, and provider_of() matches it, its
    //     parents' suffixes included, like any MX host.
    //   otherwise: empty.
    std::vector<std::string> hosts{};
    // How long the answer holds, as the reply says (before the cache
    // clamps it): the least TTL of the MX records for `answer`; for
    // `no_mx` and `nxdomain` the negative TTL of the SOA record in the
    // authority section (the lesser of its TTL and its MINIMUM), or 0
    // when there is none; 0 for the rest.
    std::chrono::seconds ttl{0};

    // True when the hosts tell where the domain's mail goes.
    bool resolved() const { return outcome == MxOutcome::answer || outcome == MxOutcome::no_mx; }
    friend bool operator==(const MxAnswer&, const MxAnswer&) = default;
};

// Most MX hosts one answer may have; a reply with more is taken as a
// server failure (no provider is made of a partial set).
inline constexpr size_t max_mx_hosts = 64;

// Turns a finished query into an answer: `ares_status` is the status
// c-ares gave the query's callback (ARES_SUCCESS, ARES_ENODATA,
// ARES_ENOTFOUND, ARES_ETIMEOUT, ...) and `reply` the reply's bytes (empty
// when there are none); `domain` is the domain asked for (lowercased,
// without a trailing dot).  A reply that does not parse, or that names a
// host that is not a plain host name (letters, digits, '-', '_' and inner
// dots, at most 253 characters), is a server failure.
MxAnswer mx_answer_from_reply(int ares_status, std::span<const unsigned char> reply,
                              std::string_view domain);

// The domain as lookups and caches key it: lowercased, without a trailing
// dot; empty when it is not a plain host name (then nothing is asked).
std::string mx_lookup_key(std::string_view domain);

} // namespace cqmgr::qmgr
