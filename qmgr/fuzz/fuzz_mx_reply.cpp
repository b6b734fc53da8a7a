// libFuzzer target for the MX reply handling of providers (mx_answer.hpp):
// a DNS server's reply, any bytes, through c-ares's ares_parse_mx_reply
// and our conversion (host names checked, lowercased, sorted; the TTLs
// read from the answer and authority sections), then provider_of() on the
// hosts.  The input's first byte picks the status c-ares gave the query
// (success, no data, NXDOMAIN, timeout, SERVFAIL); the rest is the reply.
//
// Invariants: each outcome has the hosts it promises (an answer's are
// plain host names, each once, at most max_mx_hosts; no MX gives the
// domain alone; a failure none); a TTL fits 31 bits; a host's keys are the
// name and then its suffixes, each shorter than the last.
#include "mx_answer.hpp"
#include "provider_match.hpp"

#include <algorithm>
#include <ares.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace cqmgr::qmgr;

namespace {

[[noreturn]] void finding(const std::string& what) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
    std::abort();
}

constexpr int statuses[] = {ARES_SUCCESS, ARES_ENODATA, ARES_ENOTFOUND, ARES_ETIMEOUT,
                            ARES_ESERVFAIL};

const std::string domain = "example.org";

void check(const MxAnswer& a) {
    if (a.ttl.count() < 0 || a.ttl.count() > INT32_MAX) finding("TTL out of range");
    switch (a.outcome) {
    case MxOutcome::answer: {
        if (a.hosts.size() > max_mx_hosts) finding("too many hosts");
        for (size_t i = 0; i < a.hosts.size(); ++i) {
            if (mx_lookup_key(a.hosts[i]) != a.hosts[i]) finding("not a plain host: " + a.hosts[i]);
            if (std::count(a.hosts.begin(), a.hosts.end(), a.hosts[i]) != 1)
                finding("a host twice: " + a.hosts[i]);
        }
        break;
    }
    case MxOutcome::no_mx:
        if (a.hosts != std::vector<std::string>{domain}) finding("no_mx without the domain");
        break;
    default:
        if (!a.hosts.empty()) finding("hosts with a failure");
        if (a.outcome != MxOutcome::nxdomain && a.ttl.count() != 0) finding("TTL with a failure");
    }
    for (const std::string& host : a.hosts) {
        auto keys = mx_host_keys(host);
        if (keys.empty() || keys[0] != host) finding("keys do not start with the host");
        for (size_t i = 1; i < keys.size(); ++i)
            if (keys[i].size() >= keys[i - 1].size() || keys[i][0] != '.' ||
                !host.ends_with(keys[i]))
                finding("a key that is not a shorter suffix: " + keys[i]);
    }
    // Every host under .org, or the domain listed: a provider; else none.
    auto lookup = [](std::string_view key) -> std::optional<std::string> {
        if (key == ".org") return "org";
        return std::nullopt;
    };
    auto p = provider_of(domain, a.hosts, lookup);
    bool all_org = !a.hosts.empty() && std::all_of(a.hosts.begin(), a.hosts.end(),
                                                   [](auto& h) { return h.ends_with(".org"); });
    if (p.has_value() != all_org) finding("provider_of disagrees with the hosts");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    int status = statuses[data[0] % std::size(statuses)];
    std::span<const unsigned char> reply(data + 1, size - 1);
    check(mx_answer_from_reply(status, reply, domain));
    return 0;
}
