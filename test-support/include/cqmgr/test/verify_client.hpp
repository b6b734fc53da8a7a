// Requests to verify(8) (socket private/verify, announcement
// "address_verification_prrotocol").  qmgr reaches it only for address
// probes (DEL_REQ_FLAG_MTA_VRFY), through verify_append's update.
#pragma once

#include "cqmgr/protocol/command_client.hpp"

#include <string>

namespace cqmgr::protocol {

// recipient_status values.
namespace verify_rcpt {
inline constexpr int ok = 0;
inline constexpr int defer = 1;
inline constexpr int bounce = 2;
} // namespace verify_rcpt

// Reply status values.
namespace verify_stat {
inline constexpr int ok = 0;
inline constexpr int fail = -1;
inline constexpr int bad = -2;
} // namespace verify_stat

// request=update, address, recipient_status, reason.
std::string encode_verify_update(std::string_view address, int recipient_status,
                                 std::string_view reason);
// request=query, address.  (Not used by qmgr; handy for checking an update.)
std::string encode_verify_query(std::string_view address);

// Records the probe outcome for `address`.  result.status is a verify_stat
// value.  Postfix's verify_append() calls this once for the original
// recipient (when non-empty) and once more for the final recipient when it
// differs; that policy stays with the caller.
awaitable<CommandResult> verify_update(std::string path, std::string address, int recipient_status,
                                       std::string reason, CommandTimeouts timeouts);

// What a query reports: the request status, then the address's
// recipient_status and reason (valid when result.ok()).
struct VerifyQueryResult {
    CommandResult result;
    int recipient_status = -1;
    std::string reason;
};
awaitable<VerifyQueryResult> verify_query(std::string path, std::string address,
                                          CommandTimeouts timeouts);

} // namespace cqmgr::protocol
