// What cqmgr makes of Redis's replies.  Each reply is checked against the
// shape and the range its command gives; anything else counts as no answer
// (failed), so that a damaged, hostile or newer server can never make the
// daemon wait forever, spin, or use a number it cannot hold.
#pragma once

#include "cqmgr/cluster/redis_address.hpp"
#include "cqmgr/cluster/redis_reply.hpp"
#include "cqmgr/cluster/shared_state.hpp"

#include <optional>
#include <string>
#include <utility>

namespace cqmgr::cluster {

// The longest wait (ms) a reply may ask for: about four months, more than
// the slowest rate that can be written.  Longer, negative, infinite or
// not-a-number waits are nonsense.
constexpr double max_reply_wait_ms = 1e10;

// The lease acquire script's {granted, live, wait}.
LeaseAnswer read_lease_answer(const RedisReply& r);
// The lease renew script's {live, "1101..."} for `ids` leases.
RenewAnswer read_renew_answer(const RedisReply& r, size_t ids);
// The GCRA script's {allowed, "ms"}.
RateAnswer read_rate_answer(const RedisReply& r);
// The dead mark script's nil or {"status\treason", ms left}: {failed, mark}.
// A mark is a 4.x.y status and a reason without control characters.
std::pair<bool, std::optional<DeadMark>> read_dead_mark(const RedisReply& r);
// SENTINEL get-master-addr-by-name's {host, port}; nullopt when the
// sentinel knows no such master or the reply is not an address.
std::optional<RedisAddress> read_master_address(const RedisReply& r);
// ROLE's first element ("master", "slave", "sentinel"), or "" when the
// reply is not a role.
std::string read_role(const RedisReply& r);
// A board's most records read, and its longest field or record text.
constexpr size_t max_board_records = 10'000;
constexpr size_t max_board_text = 16'384;
// The board read script's {version, 0} or {version, 1, field, record,
// ...}: a record that is not "SINCE ENDED EXPIRES\nID\nVALUE" (numbers,
// 0 or 1, one printable line of id, a value of one line) is left out.
BoardAnswer read_board_answer(const RedisReply& r);
// INFO server's run_id (40 hex digits), or nullopt.
std::optional<std::string> read_run_id(const RedisReply& r);

} // namespace cqmgr::cluster
