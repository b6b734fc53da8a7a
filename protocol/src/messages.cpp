#include "cqmgr/protocol/messages.hpp"

#include <cstring>

namespace cqmgr::protocol {

bool is_announcement(const AttrList& list, std::string_view name) {
    return list.names_are({"protocol"}) && list.attrs[0].value == name;
}

std::string MsgStats::to_bytes() const {
    // Layout of struct MSG_STATS on LP64: five struct timeval (two 8-byte
    // fields each), one int, and 4 bytes of tail padding.
    std::string out(88, '\0');
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

std::string DeliveryRequest::encode() const {
    AttrWriter w;
    w.num("flags", flags)
        .str("queue_name", queue_name)
        .str("queue_id", queue_id)
        .lnum("offset", data_offset)
        .lnum("size", data_size)
        .str("nexthop", nexthop)
        .str("encoding", encoding)
        .num("smtputf8", smtputf8)
        .str("sender", sender)
        .str("envelope_id", envelope_id)
        .num("ret_flags", ret_flags)
        .data("time", stats.to_bytes())
        .str("log_client_name", log_client_name)
        .str("log_client_address", log_client_address)
        .str("log_client_port", log_client_port)
        .str("log_protocol_name", log_protocol_name)
        .str("log_helo_name", log_helo_name)
        .str("sasl_method", sasl_method)
        .str("sasl_username", sasl_username)
        .str("sasl_sender", sasl_sender)
        .str("log_ident", log_ident)
        .str("rewrite_context", rewrite_context)
        .num("recipient_count", static_cast<int64_t>(recipients.size()))
        .end();
    for (const auto& r : recipients) {
        w.str("original_recipient", r.original_recipient)
            .str("recipient", r.recipient)
            .lnum("offset", r.offset)
            .str("dsn_orig_rcpt", r.dsn_orig_rcpt)
            .num("notify_flags", r.notify_flags)
            .end();
    }
    return w.take();
}

std::optional<DeliveryReply> decode_delivery_reply(const AttrList& list, std::string* error) {
    if (!list.names_are({"status", "diag_type", "diag_text", "mta_type", "mta_mname", "action",
                         "reason", "status"})) {
        if (error)
            *error = "expected status, diag_type, diag_text, mta_type, mta_mname, action, reason, "
                     "status; got " + list.describe_names();
        return std::nullopt;
    }
    DeliveryReply r;
    const auto& a = list.attrs;
    r.hop = HopStatus{a[0].value, a[1].value, a[2].value, a[3].value,
                      a[4].value, a[5].value, a[6].value};
    auto st = parse_int(a[7].value);
    if (!st) {
        if (error) *error = "bad status number \"" + a[7].value + "\"";
        return std::nullopt;
    }
    r.status = *st;
    return r;
}

std::string encode_resolve_request(std::string_view request_class, std::string_view sender,
                                   std::string_view address) {
    AttrWriter w;
    w.str("request", request_class).str("sender", sender).str("address", address).end();
    return w.take();
}

std::optional<ResolveReply> decode_resolve_reply(const AttrList& list, std::string* error) {
    if (!list.names_are({"flags", "transport", "nexthop", "recipient", "flags"})) {
        if (error)
            *error = "expected flags, transport, nexthop, recipient, flags; got " +
                     list.describe_names();
        return std::nullopt;
    }
    const auto& a = list.attrs;
    auto f1 = parse_int(a[0].value);
    auto f2 = parse_int(a[4].value);
    if (!f1 || !f2) {
        if (error) *error = "bad flags number in resolve reply";
        return std::nullopt;
    }
    return ResolveReply{*f1, a[1].value, a[2].value, a[3].value, *f2};
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

std::optional<int> decode_status_reply(const AttrList& list, std::string* error) {
    if (!list.names_are({"status"})) {
        if (error) *error = "expected status; got " + list.describe_names();
        return std::nullopt;
    }
    auto st = parse_int(list.attrs[0].value);
    if (!st) {
        if (error) *error = "bad status number \"" + list.attrs[0].value + "\"";
        return std::nullopt;
    }
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
