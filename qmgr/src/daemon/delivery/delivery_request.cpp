#include "delivery_request.hpp"

#include "address.hpp"
#include "cqmgr/protocol/messages.hpp"
#include "cqmgr/protocol/null_list.hpp"

namespace cqmgr::qmgr {

namespace {
// True for a non-empty, non-ASCII, well-formed UTF-8 string.
bool needs_smtputf8(std::string_view s) {
    bool ascii = true;
    for (size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            ++i;
            continue;
        }
        ascii = false;
        size_t n = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (n == 0 || i + n > s.size() || (n == 2 && c < 0xc2)) return false;
        for (size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
        i += n;
    }
    return !s.empty() && !ascii;
}
} // namespace

std::string encode_delivery_request(const Message& m, const core::Entry& e, bool smtputf8_enable) {
    std::string out;
    encode_delivery_request(out, m, e, smtputf8_enable);
    return out;
}

void RequestHeadCache::keep(const Message& m, std::string_view file, std::string_view origin) {
    of_ = &m;
    id_ = m.id;
    bytes_.assign(file);
    bytes_.append(origin);
    file_len_ = file.size();
}

void encode_delivery_request(std::string& out, const Message& m, const core::Entry& e,
                             bool smtputf8_enable, RequestHeadCache* cache, bool no_session_store) {
    const auto& env = m.env;
    const core::Queue& q = *e.queue;
    int smtputf8 = env.smtputf8;
    // A UTF-8 recipient needs an SMTPUTF8-capable path (and so does the
    // VERP sender that embeds it).
    if (smtputf8_enable)
        for (const auto& r : e.rcpts)
            if (needs_smtputf8(r.address())) {
                smtputf8 |= 8;
                if (env.verp_delims()) smtputf8 |= 4;
            }
    // With VERP there is one recipient per request and the sender encodes it.
    std::string verp;
    std::string_view sender = *env.sender();
    if (env.verp_delims() && !e.rcpts.empty()) {
        verp = verp_sender(*env.sender(), *env.verp_delims(), e.rcpts[0].orig_rcpt(),
                           e.rcpts[0].address());
        sender = verp;
    }
    protocol::DeliveryRequestHead h;
    const int dflags = no_session_store ? q.dflags & ~protocol::del_flag::conn_store : q.dflags;
    h.flags = env.tflags | dflags |
              (env.inspect() ? protocol::del_flag::bounce : protocol::del_flag::deflt);
    h.nexthop = q.nexthop;
    h.encoding = env.encoding();
    h.smtputf8 = smtputf8;
    h.sender = sender;
    const bool kept = cache && cache->holds(m);
    if (!kept) {
        h.queue_id = m.id;
        h.data_offset = env.data_offset;
        h.data_size = env.cont_length;
        h.envelope_id = env.dsn_envid();
        h.ret_flags = env.dsn_ret;
        h.stats.incoming_arrival = {env.arrival_sec, env.arrival_usec};
        h.stats.active_arrival = m.active_arrival;
        h.log_client_name = env.client_name();
        h.log_client_address = env.client_addr();
        h.log_client_port = env.client_port();
        h.log_protocol_name = env.client_proto();
        h.log_helo_name = env.client_helo();
        h.sasl_method = env.sasl_method();
        h.sasl_username = env.sasl_username();
        h.sasl_sender = env.sasl_sender();
        h.log_ident = env.log_ident();
        h.rewrite_context = env.rewrite_context();
    }
    // The message's runs reused, or encoded and kept (by offset: the
    // buffer may move as it grows).
    protocol::NullList w(out);
    size_t at[2] = {0, 0}, end[2] = {0, 0};
    protocol::encode_request_head_runs(w, h, static_cast<int64_t>(e.rcpts.size()),
                                       [&](protocol::MessageRun r, auto encode) {
                                           const size_t i = r == protocol::MessageRun::file ? 0 : 1;
                                           at[i] = w.offset();
                                           if (kept)
                                               w.raw(i == 0 ? cache->file() : cache->origin());
                                           else
                                               encode();
                                           end[i] = w.offset();
                                       });
    for (const auto& r : e.rcpts)
        protocol::encode_request_recipient(w, r.orig_rcpt(), r.address(), r.offset(), r.dsn_orcpt(),
                                           r.notify_flags());
    if (cache && !kept) {
        std::string_view all(out.data(), w.offset());
        cache->keep(m, all.substr(at[0], end[0] - at[0]), all.substr(at[1], end[1] - at[1]));
    }
    w.finish();
}

} // namespace cqmgr::qmgr
