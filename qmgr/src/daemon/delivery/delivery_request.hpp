// The delivery request for one entry, encoded straight from its message,
// its queue and its recipients: one buffer of wire bytes, without copying
// some 25 strings into a protocol::DeliveryRequest first (every delivery
// builds one).  The bytes are those DeliveryRequest::encode() writes for the
// same request.
#pragma once

#include "cqmgr/core/structures.hpp"
#include "message.hpp"

#include <string>
#include <string_view>

namespace cqmgr::qmgr {

// The request that hands entry `e` of message `m` to an agent, encoded for
// the wire.  With `smtputf8_enable`, a UTF-8 recipient asks for an
// SMTPUTF8-capable path.
std::string encode_delivery_request(const Message& m, const core::Entry& e, bool smtputf8_enable);
// The bytes of one message's request that do not depend on the entry (the
// queue file's attributes, and its origin: envelope id, client, SASL,
// arrival times), kept from its last request for its next one.
//
// Why: the scheduler hands out the entries of one job in a row, and a
// message to many destinations has one entry each; encoding those
// attributes again for each was about a tenth of the queue manager's
// user time on a fan-out.  Nothing it covers changes while the message is
// in core.  One message is kept, and forget() must be called for a message
// before it is destroyed (a later message may reuse its address; its
// queue id is compared too, as a second guard).
class RequestHeadCache {
  public:
    // The runs kept for `m`, or false.
    bool holds(const Message& m) const { return of_ == &m && id_ == m.id; }
    std::string_view file() const { return std::string_view(bytes_).substr(0, file_len_); }
    std::string_view origin() const { return std::string_view(bytes_).substr(file_len_); }
    // Keeps the runs `file` and `origin` of `m`'s request.
    void keep(const Message& m, std::string_view file, std::string_view origin);
    // `m` is going away.
    void forget(const Message& m) {
        if (of_ == &m) of_ = nullptr;
    }

  private:
    const Message* of_ = nullptr;
    std::string id_;
    std::string bytes_; // file, then origin
    size_t file_len_ = 0;
};

// The same, appended to `out` (whose capacity a caller may reuse), with the
// message's runs from `cache` when it holds them, and kept there otherwise.
// With `no_session_store`, the agent is not asked to keep its session for
// reuse (DeliveryEvent::no_session_store).
void encode_delivery_request(std::string& out, const Message& m, const core::Entry& e,
                             bool smtputf8_enable, RequestHeadCache* cache = nullptr,
                             bool no_session_store = false);

} // namespace cqmgr::qmgr
