#include "cqmgr/protocol/messages.hpp"

#include "cqmgr/protocol/null_list.hpp"

#include <cstring>

namespace cqmgr::protocol {

namespace {
// The failure of a reply whose attribute names are not the `expected` ones.
Failure<ProtocolError> unexpected_names(std::string_view expected, const AttrList& list) {
    return Failure{ProtocolError{ProtocolError::Kind::names, "expected " + std::string(expected) +
                                                                 "; got " + list.describe_names()}};
}
// The failure of a reply with a number field that holds none: "expected "
// and `what`.
Failure<ProtocolError> not_a_number(const std::string& what) {
    return Failure{ProtocolError{ProtocolError::Kind::number, "expected " + what}};
}
} // namespace

bool is_announcement(const AttrList& list, std::string_view name) {
    return list.names_are({"protocol"}) && list.attrs[0].value == name;
}

std::array<char, 88> MsgStats::to_bytes() const {
    // Layout of struct MSG_STATS on LP64: five struct timeval (two 8-byte
    // fields each), one int, and 4 bytes of tail padding.
    std::array<char, 88> out{};
    char* p = out.data();
    auto put_tv = [&p](const TimeVal& tv) {
        std::memcpy(p, &tv.sec, 8);
        std::memcpy(p + 8, &tv.usec, 8);
        p += 16;
    };
    put_tv(incoming_arrival);
    put_tv(active_arrival);
    put_tv(agent_handoff);
    put_tv(conn_setup_done);
    put_tv(deliver_done);
    std::memcpy(p, &reuse_count, 4);
    return out;
}

template <class Writer, class Str>
void encode_request_file(Writer& w, const BasicRequestHead<Str>& h) {
    w.str("queue_name", h.queue_name)
        .str("queue_id", h.queue_id)
        .lnum("offset", h.data_offset)
        .lnum("size", h.data_size);
}

template <class Writer, class Str>
void encode_request_route(Writer& w, const BasicRequestHead<Str>& h) {
    w.str("nexthop", h.nexthop)
        .str("encoding", h.encoding)
        .num("smtputf8", h.smtputf8)
        .str("sender", h.sender);
}

template <class Writer, class Str>
void encode_request_origin(Writer& w, const BasicRequestHead<Str>& h) {
    const std::array<char, 88> time = h.stats.to_bytes();
    w.str("envelope_id", h.envelope_id)
        .num("ret_flags", h.ret_flags)
        .data("time", std::string_view(time.data(), time.size()))
        .str("log_client_name", h.log_client_name)
        .str("log_client_address", h.log_client_address)
        .str("log_client_port", h.log_client_port)
        .str("log_protocol_name", h.log_protocol_name)
        .str("log_helo_name", h.log_helo_name)
        .str("sasl_method", h.sasl_method)
        .str("sasl_username", h.sasl_username)
        .str("sasl_sender", h.sasl_sender)
        .str("log_ident", h.log_ident)
        .str("rewrite_context", h.rewrite_context);
}

template <class Writer, class Str>
void encode_request_head(Writer& w, const BasicRequestHead<Str>& h, int64_t recipient_count) {
    encode_request_head_runs(w, h, recipient_count, [](MessageRun, auto encode) { encode(); });
}

template void encode_request_head(AttrWriter&, const BasicRequestHead<std::string>&, int64_t);
template void encode_request_head(AttrWriter&, const BasicRequestHead<std::string_view>&, int64_t);
template void encode_request_file(NullList&, const BasicRequestHead<std::string_view>&);
template void encode_request_route(NullList&, const BasicRequestHead<std::string_view>&);
template void encode_request_origin(NullList&, const BasicRequestHead<std::string_view>&);

template <class Writer>
void encode_request_recipient(Writer& w, std::string_view original_recipient,
                              std::string_view recipient, int64_t offset,
                              std::string_view dsn_orig_rcpt, int notify_flags) {
    w.str("original_recipient", original_recipient)
        .str("recipient", recipient)
        .lnum("offset", offset)
        .str("dsn_orig_rcpt", dsn_orig_rcpt)
        .num("notify_flags", notify_flags)
        .end();
}

template void encode_request_recipient(AttrWriter&, std::string_view, std::string_view, int64_t,
                                       std::string_view, int);
template void encode_request_recipient(NullList&, std::string_view, std::string_view, int64_t,
                                       std::string_view, int);

std::string DeliveryRequest::encode() const {
    AttrWriter w;
    // The attribute names alone are some 350 bytes, a one-recipient request
    // usually under 1 kB: one allocation, small enough for the allocator's
    // fast path, instead of five or six as the buffer doubles.
    w.reserve(1000);
    encode_request_head(w, *this, static_cast<int64_t>(recipients.size()));
    for (const auto& r : recipients)
        encode_request_recipient(w, r.original_recipient, r.recipient, r.offset, r.dsn_orig_rcpt,
                                 r.notify_flags);
    return w.take();
}

Result<DeliveryReply, ProtocolError> decode_delivery_reply(const AttrList& list) {
    if (!list.names_are({"status", "diag_type", "diag_text", "mta_type", "mta_mname", "action",
                         "reason", "status"}))
        return unexpected_names(
            "status, diag_type, diag_text, mta_type, mta_mname, action, reason, status", list);
    DeliveryReply r;
    const auto& a = list.attrs;
    r.hop = HopStatus{a[0].value, a[1].value, a[2].value, a[3].value,
                      a[4].value, a[5].value, a[6].value};
    auto st = parse_int(a[7].value);
    if (!st) return not_a_number("a number for the second status, got \"" + a[7].value + "\"");
    r.status = *st;
    return r;
}

bool dsn_status_valid(std::string_view s) {
    // One of 2/4/5, a dot, 1-3 digits, a dot, 1-3 digits, then end or space.
    auto digits = [&s](size_t from) {
        size_t n = 0;
        while (from + n < s.size() && s[from + n] >= '0' && s[from + n] <= '9')
            ++n;
        return n;
    };
    if (s.size() < 2 || (s[0] != '2' && s[0] != '4' && s[0] != '5') || s[1] != '.') return false;
    size_t n = digits(2);
    if (n < 1 || n > 3 || 2 + n >= s.size() || s[2 + n] != '.') return false;
    size_t at = 3 + n;
    n = digits(at);
    if (n < 1 || n > 3) return false;
    at += n;
    return at == s.size() || s[at] == ' ' || s[at] == '\t' || s[at] == '\n' || s[at] == '\r' ||
           s[at] == '\f' || s[at] == '\v';
}

std::string encode_resolve_request(std::string_view request_class, std::string_view sender,
                                   std::string_view address) {
    AttrWriter w;
    w.str("request", request_class).str("sender", sender).str("address", address).end();
    return w.take();
}

Result<ResolveReply, ProtocolError> decode_resolve_reply(const AttrList& list) {
    if (!list.names_are({"flags", "transport", "nexthop", "recipient", "flags"}))
        return unexpected_names("flags, transport, nexthop, recipient, flags", list);
    const auto& a = list.attrs;
    auto f1 = parse_int(a[0].value);
    auto f2 = parse_int(a[4].value);
    if (!f1 || !f2)
        return not_a_number("numbers for both flags, got \"" + a[0].value + "\" and \"" +
                            a[4].value + "\"");
    return ResolveReply{*f1, a[1].value, a[2].value, a[3].value, *f2};
}

std::string encode_rewrite_request(std::string_view rule, std::string_view address) {
    AttrWriter w;
    w.str("request", "rewrite").str("rule", rule).str("address", address).end();
    return w.take();
}

Result<RewriteReply, ProtocolError> decode_rewrite_reply(const AttrList& list) {
    if (!list.names_are({"flags", "address"})) return unexpected_names("flags, address", list);
    auto f = parse_int(list.attrs[0].value);
    if (!f) return not_a_number("a number for flags, got \"" + list.attrs[0].value + "\"");
    return RewriteReply{*f, list.attrs[1].value};
}

std::string NoticeRequest::encode() const {
    AttrWriter w;
    w.num("nrequest", nrequest)
        .num("flags", flags)
        .str("queue_name", queue_name)
        .str("queue_id", queue_id)
        .str("encoding", encoding)
        .num("smtputf8", smtputf8)
        .str("sender", sender)
        .str("envelope_id", envelope_id)
        .num("ret_flags", ret_flags);
    if (verp_delimiters) w.str("verp_delimiters", *verp_delimiters);
    w.end();
    return w.take();
}

Result<int, ProtocolError> decode_status_reply(const AttrList& list) {
    if (!list.names_are({"status"})) return unexpected_names("status", list);
    auto st = parse_int(list.attrs[0].value);
    if (!st) return not_a_number("a number for status, got \"" + list.attrs[0].value + "\"");
    return *st;
}

std::string encode_master_status(int pid, unsigned generation, int avail) {
    std::string out(12, '\0');
    std::memcpy(out.data(), &pid, 4);
    std::memcpy(out.data() + 4, &generation, 4);
    std::memcpy(out.data() + 8, &avail, 4);
    return out;
}

} // namespace cqmgr::protocol
