// The record's byte format, version 4, all integers little-endian:
//   u8 version, u8 flags (none defined: 0),
//   i64 dead_until, i64 last_delivery, i64 updated_at, i64 learned_at,
//   i32 window, i32 learned_concurrency, i32 learned_rate_delay,
//   then eight strings, each a u16 length and its bytes: nexthop,
//   dead_status, dead_reason, last_dsn_status, last_dsn_text,
//   learned_class, learned_status, learned_reason,
//   then i32 learned_quota, i32 learned_window.
// Version 3 (still read) ended after learned_reason; version 2 (still
// read) after last_dsn_text.
// Version 1 (still read; written before learned limits were kept) had no
// learned_at and no learned_rate_delay, and flag bit 0 said whether its
// i32 after the window, a learned concurrency, was there.
// A decoder accepts exactly that, so a damaged value is refused rather than
// read as something else.  A later version gets a new first byte.
#include "cqmgr/state/record.hpp"

#include <limits>

namespace cqmgr::state {

namespace {

constexpr uint8_t v1_flag_learned = 1;
constexpr size_t max_string = std::numeric_limits<uint16_t>::max();

// Appends `v` as `n` little-endian bytes.
void put_int(std::string& out, uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_string(std::string& out, std::string_view s) {
    if (s.size() > max_string) s = s.substr(0, max_string);
    put_int(out, s.size(), 2);
    out.append(s);
}

// Reads the value front to back; any read past the end fails the decode.
class Reader {
  public:
    explicit Reader(std::string_view bytes) : rest_(bytes) {}

    bool ok() const { return ok_; }
    bool at_end() const { return rest_.empty(); }

    uint64_t u(int n) {
        if (!take(static_cast<size_t>(n))) return 0;
        uint64_t v = 0;
        for (int i = 0; i < n; ++i)
            v |= static_cast<uint64_t>(static_cast<unsigned char>(taken_[i])) << (8 * i);
        return v;
    }
    int64_t i64() { return static_cast<int64_t>(u(8)); }
    int32_t i32() { return static_cast<int32_t>(static_cast<uint32_t>(u(4))); }
    std::string str() {
        size_t n = static_cast<size_t>(u(2));
        if (!take(n)) return {};
        return std::string(taken_);
    }

  private:
    bool take(size_t n) {
        if (!ok_ || rest_.size() < n) {
            ok_ = false;
            return false;
        }
        taken_ = rest_.substr(0, n);
        rest_.remove_prefix(n);
        return true;
    }

    std::string_view rest_;
    std::string_view taken_;
    bool ok_ = true;
};

} // namespace

std::string record_key(std::string_view transport, std::string_view destination) {
    std::string key;
    key.reserve(transport.size() + 1 + destination.size());
    record_key(key, transport, destination);
    return key;
}

void record_key(std::string& key, std::string_view transport, std::string_view destination) {
    key.assign(transport);
    key.push_back('\0');
    key.append(destination);
}

std::string encode_record(const DestinationRecord& r) {
    std::string out;
    out.reserve(2 + 4 * 8 + 5 * 4 + 8 * 2 + r.nexthop.size() + r.dead_status.size() +
                r.dead_reason.size() + r.last_dsn_status.size() + r.last_dsn_text.size() +
                r.learned_class.size() + r.learned_status.size() + r.learned_reason.size());
    put_int(out, record_format, 1);
    put_int(out, 0, 1);
    put_int(out, static_cast<uint64_t>(r.dead_until), 8);
    put_int(out, static_cast<uint64_t>(r.last_delivery), 8);
    put_int(out, static_cast<uint64_t>(r.updated_at), 8);
    put_int(out, static_cast<uint64_t>(r.learned_at), 8);
    put_int(out, static_cast<uint32_t>(r.window), 4);
    put_int(out, static_cast<uint32_t>(r.learned_concurrency), 4);
    put_int(out, static_cast<uint32_t>(r.learned_rate_delay), 4);
    put_string(out, r.nexthop);
    put_string(out, r.dead_status);
    put_string(out, r.dead_reason);
    put_string(out, r.last_dsn_status);
    put_string(out, r.last_dsn_text);
    put_string(out, r.learned_class);
    put_string(out, r.learned_status);
    put_string(out, r.learned_reason);
    put_int(out, static_cast<uint32_t>(r.learned_quota), 4);
    put_int(out, static_cast<uint32_t>(r.learned_window), 4);
    return out;
}

std::string RecordError::message() const {
    switch (kind) {
    case Kind::bad_key:
        return "bad key";
    case Kind::unknown_version:
        return "unknown record version " + std::to_string(version);
    case Kind::truncated:
        return "truncated record";
    case Kind::trailing_bytes:
        return "trailing bytes in record";
    case Kind::bad_field:
        return "bad field in record";
    }
    return "bad record";
}

Result<DestinationRecord, RecordError> decode_record(std::string_view key, std::string_view value) {
    using Kind = RecordError::Kind;
    DestinationRecord r;
    size_t nul = key.find('\0');
    if (nul == std::string_view::npos || nul == 0) {
        return Failure{RecordError{Kind::bad_key}};
    }
    r.transport = std::string(key.substr(0, nul));
    r.destination = std::string(key.substr(nul + 1));
    Reader in(value);
    uint64_t version = in.u(1);
    if (in.ok() && (version < 1 || version > record_format)) {
        return Failure{RecordError{Kind::unknown_version, version}};
    }
    const uint64_t known_flags = version == 1 ? v1_flag_learned : 0;
    uint64_t flags = in.u(1);
    r.dead_until = in.i64();
    r.last_delivery = in.i64();
    r.updated_at = in.i64();
    if (version != 1) r.learned_at = in.i64();
    r.window = in.i32();
    r.learned_concurrency = in.i32();
    if (version != 1) r.learned_rate_delay = in.i32();
    r.nexthop = in.str();
    r.dead_status = in.str();
    r.dead_reason = in.str();
    r.last_dsn_status = in.str();
    r.last_dsn_text = in.str();
    if (version >= 3) {
        r.learned_class = in.str();
        r.learned_status = in.str();
        r.learned_reason = in.str();
    }
    if (version >= 4) {
        r.learned_quota = in.i32();
        r.learned_window = in.i32();
    }
    if (!in.ok()) {
        return Failure{RecordError{Kind::truncated}};
    }
    if (!in.at_end()) {
        return Failure{RecordError{Kind::trailing_bytes}};
    }
    if (version == 1) {
        // A learned concurrency of version 1 counts from the record's change.
        if (!(flags & v1_flag_learned)) r.learned_concurrency = 0;
        if (r.learned_concurrency > 0) r.learned_at = r.updated_at;
    }
    const bool learned =
        r.learned_concurrency > 0 || r.learned_rate_delay > 0 || r.learned_quota > 0;
    if ((flags & ~known_flags) != 0 || r.window < 0 || r.dead_until < 0 || r.last_delivery < 0 ||
        r.updated_at < 0 || r.learned_at < 0 || r.learned_concurrency < 0 ||
        r.learned_rate_delay < 0 || r.learned_quota < 0 || r.learned_window < 0 ||
        (r.learned_quota > 0) != (r.learned_window > 0) ||
        (r.dead_until > 0) != !r.dead_status.empty() || learned != (r.learned_at > 0) ||
        (!learned &&
         !(r.learned_class.empty() && r.learned_status.empty() && r.learned_reason.empty()))) {
        return Failure{RecordError{Kind::bad_field}};
    }
    return r;
}

} // namespace cqmgr::state
