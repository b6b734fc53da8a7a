// The delivery request for one entry, encoded straight from its message,
// its queue and its recipients: one buffer of wire bytes, without copying
// some 25 strings into a protocol::DeliveryRequest first (every delivery
// builds one).  The bytes are those DeliveryRequest::encode() writes for the
// same request.
#pragma once

#include "cqmgr/core/structures.hpp"
#include "message.hpp"

#include <string>

namespace cqmgr::qmgr {

// The request that hands entry `e` of message `m` to an agent, encoded for
// the wire.  With `smtputf8_enable`, a UTF-8 recipient asks for an
// SMTPUTF8-capable path.
std::string encode_delivery_request(const Message& m, const core::Entry& e, bool smtputf8_enable);
// The same, appended to `out` (whose capacity a caller may reuse).
void encode_delivery_request(std::string& out, const Message& m, const core::Entry& e,
                             bool smtputf8_enable);

} // namespace cqmgr::qmgr
