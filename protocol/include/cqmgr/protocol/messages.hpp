// The requests and replies qmgr exchanges with Postfix's daemons, as plain
// structs with encode/decode functions.  No I/O here: the clients
// (agent_call.hpp, rewrite_client.hpp, status_client.hpp, flush_client.hpp,
// and the tests' delivery and verify clients) send and receive them.
#pragma once

#include "cqmgr/common/result.hpp"
#include "cqmgr/protocol/attr.hpp"
#include "cqmgr/protocol/protocol_error.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::protocol {

// Protocol names the servers announce right after accept().
inline constexpr std::string_view delivery_protocol = "delivery_request_protocol";
inline constexpr std::string_view rewrite_protocol = "trivial_rewrite_protocol";
inline constexpr std::string_view status_protocol = "delivery_status_protocol";
// Spelled as Postfix spells it (sic, double r).
inline constexpr std::string_view verify_protocol = "address_verification_prrotocol";
inline constexpr std::string_view flush_protocol = "queue_flush_protocol";

// Checks a server announcement list: exactly `protocol=<name>`.
bool is_announcement(const AttrList& list, std::string_view name);

// Delivery request flag bits (the `flags` attribute).
namespace del_flag {
inline constexpr int success = 0x0001;
inline constexpr int bounce = 0x0002;
inline constexpr int deflt = success | bounce;
inline constexpr int mta_vrfy = 0x0100;
inline constexpr int usr_vrfy = 0x0200;
inline constexpr int record = 0x0400;
inline constexpr int conn_load = 0x0800;
inline constexpr int conn_store = 0x1000;
inline constexpr int rec_dly_sent = 0x2000;
inline constexpr int trace_mask = 0x2700;
} // namespace del_flag

// A struct timeval as Postfix's MSG_STATS stores it.
struct TimeVal {
    int64_t sec = 0;
    int64_t usec = 0;
};

// The 88-byte MSG_STATS block (x86_64 layout) sent as the `time` attribute.
struct MsgStats {
    TimeVal incoming_arrival;
    TimeVal active_arrival;
    TimeVal agent_handoff;
    TimeVal conn_setup_done;
    TimeVal deliver_done;
    int32_t reuse_count = 0;

    // Returns the raw native-order bytes, exactly 88 long.
    std::array<char, 88> to_bytes() const;
};

// The first list of a delivery request (all but the recipients), in wire
// order, with its strings as `Str`: std::string in a DeliveryRequest, or
// std::string_view where the queue manager encodes its requests straight
// from the message and the entry, without copying them first (the caller
// keeps the strings alive while it encodes).
template <class Str> struct BasicRequestHead {
    int flags = del_flag::deflt;
    Str queue_name = "active";
    Str queue_id;
    int64_t data_offset = 0;
    int64_t data_size = 0;
    Str nexthop;
    Str encoding;
    int smtputf8 = 0;
    Str sender;
    Str envelope_id;
    int ret_flags = 0;
    MsgStats stats;
    Str log_client_name, log_client_address, log_client_port, log_protocol_name, log_helo_name;
    Str sasl_method, sasl_username, sasl_sender;
    Str log_ident;
    Str rewrite_context = "local";
};
using DeliveryRequestHead = BasicRequestHead<std::string_view>;

// Writes the first list of a delivery request (its 22 attributes and
// `recipient_count`, ended) with an AttrWriter.
template <class Writer, class Str>
void encode_request_head(Writer& w, const BasicRequestHead<Str>& h, int64_t recipient_count);

// The three runs of that list between `flags` and `recipient_count`: the
// queue file (queue_name to size), the route (nexthop to sender, which
// depend on the entry too), and the origin (envelope_id to
// rewrite_context).
template <class Writer, class Str>
void encode_request_file(Writer& w, const BasicRequestHead<Str>& h);
template <class Writer, class Str>
void encode_request_route(Writer& w, const BasicRequestHead<Str>& h);
template <class Writer, class Str>
void encode_request_origin(Writer& w, const BasicRequestHead<Str>& h);

// The runs of the first list that depend on the message alone, as
// encode_request_head_runs() names them.
enum class MessageRun { file, origin };

// Writes the first list as encode_request_head() does (which is this with
// each run simply encoded), but hands each run that depends on the message
// alone to `run(MessageRun, encode)`, which writes it by calling encode()
// or puts the bytes of an earlier request's run in its place.  The queue
// manager encodes its requests this way, into a NullList.
template <class Writer, class Str, class Run>
void encode_request_head_runs(Writer& w, const BasicRequestHead<Str>& h, int64_t recipient_count,
                              Run&& run) {
    w.num("flags", h.flags);
    run(MessageRun::file, [&] { encode_request_file(w, h); });
    encode_request_route(w, h);
    run(MessageRun::origin, [&] { encode_request_origin(w, h); });
    w.num("recipient_count", recipient_count).end();
}

// Writes the list of one recipient of a delivery request (rcpt_print's
// five attributes, ended).
template <class Writer>
void encode_request_recipient(Writer& w, std::string_view original_recipient,
                              std::string_view recipient, int64_t offset,
                              std::string_view dsn_orig_rcpt, int notify_flags);

// One recipient of a delivery request (rcpt_print's five attributes).
struct RequestRecipient {
    std::string original_recipient;
    std::string recipient;
    int64_t offset = 0;
    std::string dsn_orig_rcpt;
    int notify_flags = 0;
};

// Everything in a delivery request, in wire order.
struct DeliveryRequest : BasicRequestHead<std::string> {
    std::vector<RequestRecipient> recipients;

    // Encodes the 23-attribute list followed by one list per recipient.
    std::string encode() const;
};

// A hop status as dsn_print sends it.
struct HopStatus {
    std::string status, diag_type, diag_text, mta_type, mta_mname, action, reason;
    bool operator==(const HopStatus&) const = default;
};

// True when `status` is an RFC 3463 code as Postfix's dsn_valid() accepts it:
// [245].d{1,3}.d{1,3}, then the end or white space.
bool dsn_status_valid(std::string_view status);

// The agent's final reply.
struct DeliveryReply {
    HopStatus hop;
    int status = 0; // 0 = all recipients finished, nonzero = try again
};

// Decodes a delivery reply list strictly: the seven DSN fields then `status`.
Result<DeliveryReply, ProtocolError> decode_delivery_reply(const AttrList& list);

// trivial-rewrite resolve request (`request=resolve|verify`).
std::string encode_resolve_request(std::string_view request_class, std::string_view sender,
                                   std::string_view address);

namespace resolve_flag {
inline constexpr int final_ = 0x0001;
inline constexpr int routed = 0x0002;
inline constexpr int error = 0x0004;
inline constexpr int fail = 0x0008;
inline constexpr int class_local = 0x0100;
inline constexpr int class_alias = 0x0200;
inline constexpr int class_virtual = 0x0400;
inline constexpr int class_relay = 0x0800;
inline constexpr int class_default = 0x1000;
// All the class bits.
inline constexpr int class_mask =
    class_local | class_alias | class_virtual | class_relay | class_default;
} // namespace resolve_flag

// The resolver's answer.  The reply carries two attributes named `flags`:
// the first is the server's connection flags (nonzero: disconnect after
// this reply), the second the RESOLVE_FLAG_* / RESOLVE_CLASS_* bits.
struct ResolveReply {
    int server_flags = 0;
    std::string transport;
    std::string nexthop;
    std::string recipient;
    int flags = 0;

    bool is_final() const { return flags & resolve_flag::final_; }
    bool is_routed() const { return flags & resolve_flag::routed; }
    // Bad address syntax: qmgr delivers with error:5.1.3.
    bool is_error() const { return flags & resolve_flag::error; }
    // Table lookup failure: qmgr delivers with retry:4.3.0.
    bool is_fail() const { return flags & resolve_flag::fail; }
    // The address class bits (exactly one is set on success).
    int address_class() const { return flags & resolve_flag::class_mask; }
    bool operator==(const ResolveReply&) const = default;
};

// Decodes a resolve reply strictly: flags, transport, nexthop, recipient, flags.
Result<ResolveReply, ProtocolError> decode_resolve_reply(const AttrList& list);

// trivial-rewrite rewrite request: `request=rewrite`, `rule` (`local` or
// `remote`), `address` (external, quoted form).
std::string encode_rewrite_request(std::string_view rule, std::string_view address);

struct RewriteReply {
    int server_flags = 0;
    std::string address;
};

// Decodes a rewrite reply strictly: flags, address.
Result<RewriteReply, ProtocolError> decode_rewrite_reply(const AttrList& list);

// bounce/defer/trace requests (nrequest values).
namespace bounce_cmd {
inline constexpr int append = 0;
inline constexpr int flush = 1;
inline constexpr int warn = 2;
inline constexpr int verp = 3;
inline constexpr int one = 4;
inline constexpr int trace = 5;
} // namespace bounce_cmd

namespace bounce_flag {
inline constexpr int none = 0;
inline constexpr int clean = 1;
inline constexpr int delrcpt = 2;
} // namespace bounce_flag

// The asynchronous flush/warn/trace request qmgr sends at the end of a message.
struct NoticeRequest {
    int nrequest = bounce_cmd::flush;
    int flags = 0;
    std::string queue_name = "active";
    std::string queue_id;
    std::string encoding;
    int smtputf8 = 0;
    std::string sender;
    std::string envelope_id;
    int ret_flags = 0;
    std::optional<std::string> verp_delimiters; // only for the _verp variants

    std::string encode() const;
};

// Decodes the bounce server's one-attribute reply (`status`).
Result<int, ProtocolError> decode_status_reply(const AttrList& list);

// master(8) status channel: 12 bytes, {int pid; unsigned gen; int avail}.
inline constexpr int master_stat_taken = 0;
inline constexpr int master_stat_avail = 1;
std::string encode_master_status(int pid, unsigned generation, int avail);

} // namespace cqmgr::protocol
