// What cqmgr remembers about one destination (a queue of a transport)
// between runs, and how a record is written as bytes.  The daemon keeps
// these in the state store (store.hpp); the scheduler core never sees them.
#pragma once

#include "cqmgr/common/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cqmgr::state {

struct DestinationRecord {
    std::string transport;
    std::string destination; // the queue's name
    std::string nexthop;     // the queue's nexthop (clog warnings name it)
    // Dead until this time (Unix seconds) for the reason below; 0 = alive.
    int64_t dead_until = 0;
    std::string dead_status; // RFC 3463 status of the reason
    std::string dead_reason; // as the retry agent defers with it
    // The concurrency window after the last feedback while alive; 0 =
    // unknown (never measured, or the destination died since).
    int window = 0;
    // What the adaptive limits learned for this destination: a cap on its
    // deliveries at once and a pause after each (seconds), 0 = none; and
    // when that limit was last set (a strike or a probe, Unix seconds;
    // forgetting counts from there), 0 = nothing learned.
    int learned_concurrency = 0;
    int learned_rate_delay = 0;
    // A fixed window's quota: at most this many deliveries start per
    // window of learned_window seconds; both 0 = none (a record of version
    // 3 or older).
    int learned_quota = 0;
    int learned_window = 0;
    int64_t learned_at = 0;
    // The receiver's reply that taught that limit: its class (as the
    // adaptive limits name it, e.g. "connection_limit"), its enhanced status
    // and text; all empty when nothing is learned, or not known (a record
    // of version 1 or 2).
    std::string learned_class;
    std::string learned_status;
    std::string learned_reason;
    // When the last delivery to it ended (the destination rate delay counts
    // from there); 0 = none.
    int64_t last_delivery = 0;
    // The hop status of the last delivery an agent reported.
    std::string last_dsn_status;
    std::string last_dsn_text;
    // When any of the above last changed.
    int64_t updated_at = 0;

    bool operator==(const DestinationRecord&) const = default;
};

// The current version of the record's byte format (its first byte).
// decode_record() reads versions 1 to 3 too.
inline constexpr uint8_t record_format = 4;

// The store key of a record: transport and destination, separated by a NUL
// (a transport name never holds one).
std::string record_key(std::string_view transport, std::string_view destination);
// The same into `key`, whose capacity is reused (a caller that looks a
// record up on every delivery allocates nothing).
void record_key(std::string& key, std::string_view transport, std::string_view destination);

// The value bytes of `r` (everything but transport and destination, which
// are the key).  Strings longer than 65535 bytes are cut there.
std::string encode_record(const DestinationRecord& r);

// Why a key and value are not a record that encode_record() wrote.
struct RecordError {
    enum class Kind {
        bad_key,         // no NUL between transport and destination, or no transport
        unknown_version, // a first byte that is no version this code reads
        truncated,       // the value ends inside a field
        trailing_bytes,  // bytes follow the last field
        bad_field,       // a field out of range, or fields that contradict each other
    };
    Kind kind = Kind::bad_field;
    uint64_t version = 0; // unknown_version: the byte found

    // "unknown record version 4", for the store's warning.
    std::string message() const;
};

// The record stored under `key` with value `value`, or why it is none.
Result<DestinationRecord, RecordError> decode_record(std::string_view key, std::string_view value);

} // namespace cqmgr::state
