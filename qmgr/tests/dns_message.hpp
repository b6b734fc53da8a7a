// DNS replies written byte by byte, for the tests of the MX reply
// conversion: names are written uncompressed, in the wire format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cqmgr::qmgr::testing {

using Bytes = std::vector<unsigned char>;

inline void put16(Bytes& b, unsigned v) {
    b.push_back(static_cast<unsigned char>(v >> 8));
    b.push_back(static_cast<unsigned char>(v));
}

inline void put32(Bytes& b, uint32_t v) {
    put16(b, v >> 16);
    put16(b, v & 0xffff);
}

// `name` as labels ("" is the root); a label may hold any byte.
inline void put_name(Bytes& b, const std::string& name) {
    size_t start = 0;
    while (start < name.size()) {
        size_t dot = name.find('.', start);
        if (dot == std::string::npos) dot = name.size();
        b.push_back(static_cast<unsigned char>(dot - start));
        b.insert(b.end(), name.begin() + long(start), name.begin() + long(dot));
        start = dot + 1;
    }
    b.push_back(0);
}

struct Record {
    std::string name;
    unsigned type = 15;
    uint32_t ttl = 300;
    Bytes data;
};

inline Record mx(const std::string& name, unsigned pref, const std::string& host,
                 uint32_t ttl = 300) {
    Record r{name, 15, ttl, {}};
    put16(r.data, pref);
    put_name(r.data, host);
    return r;
}

inline Record cname(const std::string& name, const std::string& target) {
    Record r{name, 5, 300, {}};
    put_name(r.data, target);
    return r;
}

inline Record soa(const std::string& zone, uint32_t ttl, uint32_t minimum) {
    Record r{zone, 6, ttl, {}};
    put_name(r.data, "ns." + zone);
    put_name(r.data, "hostmaster." + zone);
    for (uint32_t v : {1u, 3600u, 600u, 86400u})
        put32(r.data, v);
    put32(r.data, minimum);
    return r;
}

// A reply to an MX question for `qname` with `rcode`.
inline Bytes reply(const std::string& qname, unsigned rcode, const std::vector<Record>& answers,
                   const std::vector<Record>& authority = {}) {
    Bytes b;
    put16(b, 0x1234);
    put16(b, 0x8180 | rcode);
    put16(b, 1);
    put16(b, unsigned(answers.size()));
    put16(b, unsigned(authority.size()));
    put16(b, 0);
    put_name(b, qname);
    put16(b, 15);
    put16(b, 1);
    for (const auto* section : {&answers, &authority})
        for (const Record& r : *section) {
            put_name(b, r.name);
            put16(b, r.type);
            put16(b, 1);
            put32(b, r.ttl);
            put16(b, unsigned(r.data.size()));
            b.insert(b.end(), r.data.begin(), r.data.end());
        }
    return b;
}

} // namespace cqmgr::qmgr::testing
