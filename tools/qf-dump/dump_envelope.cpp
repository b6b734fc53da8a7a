#include "dump_envelope.hpp"

#include "json.hpp"

#include "cqmgr/queuefile/envelope.hpp"

#include <vector>

namespace qfdump {

using namespace cqmgr::queuefile;

namespace {

// One recipient as text or JSON.
std::string recipient_text(const Recipient& r, bool json) {
    if (json)
        return "{\"offset\":" + std::to_string(r.offset) + ",\"address\":" + json_string(r.address) +
               ",\"orig_rcpt\":" + json_string(r.orig_rcpt) + ",\"dsn_orcpt\":" +
               json_string(r.dsn_orcpt) + ",\"notify_flags\":" + std::to_string(r.notify_flags) + "}";
    return std::to_string(r.offset) + " <" + escape_bytes(r.address) + "> orig=<" +
           escape_bytes(r.orig_rcpt) + "> dsn_orcpt=<" + escape_bytes(r.dsn_orcpt) +
           "> notify=" + std::to_string(r.notify_flags);
}

// An optional string field.
std::string opt(const std::optional<std::string>& v, bool json) {
    if (!v) return json ? "null" : "(none)";
    return json ? json_string(*v) : "<" + escape_bytes(*v) + ">";
}

// A plain string field.
std::string str(const std::string& v, bool json) {
    return json ? json_string(v) : "<" + escape_bytes(v) + ">";
}

} // namespace

int dump_envelope(int fd, const std::string& path, int batch, bool json, std::ostream& out) {
    Envelope env;
    std::vector<std::string> rcpts;
    std::vector<std::string> batches;
    auto r = read_envelope(fd, env, batch, path);
    auto opened = r;
    while (r.ok) {
        batches.push_back(std::to_string(env.recipients.size()) + " recipients, resume at " +
                          std::to_string(env.rcpt_offset));
        for (auto& x : env.recipients) rcpts.push_back(recipient_text(x, json));
        if (!env.rcpt_offset) break;
        r = read_envelope(fd, env, batch, path);
    }
    std::vector<std::pair<std::string, std::string>> f = {
        {"data_size", std::to_string(env.data_size)},
        {"data_offset", std::to_string(env.data_offset)},
        {"size_fields", std::to_string(env.size_fields)},
        {"qmgr_flags", std::to_string(env.rflags)},
        {"cont_length", std::to_string(env.cont_length)},
        {"smtputf8", std::to_string(env.smtputf8)},
        {"arrival_sec", std::to_string(env.arrival_sec)},
        {"arrival_usec", std::to_string(env.arrival_usec)},
        {"create_time", std::to_string(env.create_time)},
        {"sender", opt(env.sender, json)},
        {"content_filter", opt(env.filter, json)},
        {"inspector", opt(env.inspect, json)},
        {"redirect", opt(env.redirect, json)},
        {"verp_delims", opt(env.verp_delims, json)},
        {"dsn_envid", str(env.dsn_envid, json)},
        {"dsn_ret", std::to_string(env.dsn_ret)},
        {"encoding", str(env.encoding, json)},
        {"client_name", str(env.client_name, json)},
        {"client_address", str(env.client_addr, json)},
        {"client_port", str(env.client_port, json)},
        {"protocol_name", str(env.client_proto, json)},
        {"helo_name", str(env.client_helo, json)},
        {"sasl_method", str(env.sasl_method, json)},
        {"sasl_username", str(env.sasl_username, json)},
        {"sasl_sender", str(env.sasl_sender, json)},
        {"log_ident", str(env.log_ident, json)},
        {"rewrite_context", str(env.rewrite_context, json)},
        {"trace_flags", std::to_string(env.tflags)},
        {"trace_flags_offset", std::to_string(env.tflags_offset)},
        {"warn_time", std::to_string(env.warn_time)},
        {"warn_offset", std::to_string(env.warn_offset)},
        {"opened_size", std::to_string(opened.opened_size)},
        {"opened_nrcpt", std::to_string(opened.opened_nrcpt)},
    };
    if (json) {
        out << "{\"file\":" << json_string(path) << ",\"ok\":" << (r.ok ? "true" : "false");
        for (auto& [k, v] : f) out << ",\"" << k << "\":" << v;
        out << ",\"batches\":[";
        for (size_t i = 0; i < batches.size(); ++i) out << (i ? "," : "") << json_string(batches[i]);
        out << "],\"recipients\":[";
        for (size_t i = 0; i < rcpts.size(); ++i) out << (i ? ",\n" : "\n") << rcpts[i];
        out << "],\"warnings\":[";
        for (size_t i = 0; i < env.warnings.size(); ++i)
            out << (i ? "," : "") << json_string(env.warnings[i]);
        out << "],\"error\":";
        if (r.ok) {
            out << "null";
        } else {
            out << "{\"stock_text\":" << json_string(r.error) << ",\"record_warning\":"
                << json_string(r.record_warning);
            if (r.failure)
                out << ",\"kind\":" << json_string(error_kind_name(r.failure->kind))
                    << ",\"offset\":" << r.failure->offset
                    << ",\"message\":" << json_string(r.failure->message());
            out << "}";
        }
        out << "}\n";
    } else {
        out << "# " << path << " as the queue manager reads it (batches of " << batch << ")\n";
        for (auto& [k, v] : f) out << k << ": " << v << "\n";
        for (auto& b : batches) out << "batch: " << b << "\n";
        for (auto& x : rcpts) out << "recipient: " << x << "\n";
        for (auto& w : env.warnings) out << "warning: " << w << "\n";
        if (!r.ok) {
            if (!r.record_warning.empty()) out << "stock warning: " << r.record_warning << "\n";
            out << "stock warning: " << r.error << "\n";
            if (r.failure) out << "# error: " << r.failure->message() << "\n";
        }
    }
    return r.ok ? 0 : 1;
}

} // namespace qfdump
