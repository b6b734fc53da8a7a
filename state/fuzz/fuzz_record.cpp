// libFuzzer target for the state store's record decoder: what a store read
// back from disk hands decode_record(), a key and a value of any bytes.  The
// input's first byte is the key's length (cut to what follows), the key's
// bytes follow, the rest is the value.  Besides the sanitizers it checks:
//   * a refused record has an error text;
//   * a decoded record keeps the format's rules (no negative time or
//     count; dead with a status or alive without one; a learned limit with
//     its time or neither);
//   * its key is the one it came from;
//   * encoding it and decoding that gives the same record, and a value of
//     the current version encodes back to the very same bytes.
#include "cqmgr/state/record.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace cqmgr::state;

namespace {

// Aborts with a message: a finding.
[[noreturn]] void finding(const char* what) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
}

void check_record(const DestinationRecord& r, std::string_view key, std::string_view value) {
    if (r.dead_until < 0 || r.last_delivery < 0 || r.updated_at < 0 || r.learned_at < 0 ||
        r.window < 0 || r.learned_concurrency < 0 || r.learned_rate_delay < 0 ||
        r.learned_quota < 0 || r.learned_window < 0)
        finding("negative field");
    if ((r.dead_until > 0) != !r.dead_status.empty()) finding("dead without status, or alive with");
    if ((r.learned_concurrency > 0 || r.learned_rate_delay > 0 || r.learned_quota > 0) !=
        (r.learned_at > 0))
        finding("learned limit without its time, or a time without one");
    if (r.transport.empty()) finding("empty transport");
    if (record_key(r.transport, r.destination) != key) finding("key does not round-trip");
    std::string again = encode_record(r);
    auto back = decode_record(key, again);
    if (!back) finding("encoded record does not decode");
    if (!(*back == r)) finding("encoded record decodes differently");
    if (static_cast<uint8_t>(value[0]) == record_format && again != value)
        finding("current-version value does not encode back to its bytes");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
    size_t key_len = std::min<size_t>(data[0], in.size());
    std::string_view key = in.substr(0, key_len);
    std::string_view value = in.substr(key_len);
    auto r = decode_record(key, value);
    if (!r) {
        if (r.error().message().empty()) finding("refused without an error text");
        return 0;
    }
    check_record(*r, key, value);
    return 0;
}
