#include "dump_envelope.hpp"

#include "cqmgr/queuefile/envelope.hpp"
#include "json.hpp"

#include <vector>

namespace qfdump {

using namespace cqmgr::queuefile;

namespace {

// One field as the text mode shows it and as the JSON mode writes it.
struct Field {
    std::string name;
    std::string text;
    Json json;
};

// A number field.
template <typename N> Field num(std::string name, N v) {
    return {std::move(name), std::to_string(v), v};
}

// An optional string field.
Field opt(std::string name, std::optional<std::string_view> v) {
    if (!v) return {std::move(name), "(none)", nullptr};
    return {std::move(name), "<" + escape_bytes(*v) + ">", json_bytes(*v)};
}

// A plain string field.
Field str(std::string name, std::string_view v) {
    return {std::move(name), "<" + escape_bytes(v) + ">", json_bytes(v)};
}

// One recipient as text.
std::string recipient_text(const Recipient& r) {
    return std::to_string(r.offset()) + " <" + escape_bytes(r.address()) + "> orig=<" +
           escape_bytes(r.orig_rcpt()) + "> dsn_orcpt=<" + escape_bytes(r.dsn_orcpt()) +
           "> notify=" + std::to_string(r.notify_flags());
}

// One recipient as JSON.
Json recipient_json(const Recipient& r) {
    return {{"offset", r.offset()},
            {"address", json_bytes(r.address())},
            {"orig_rcpt", json_bytes(r.orig_rcpt())},
            {"dsn_orcpt", json_bytes(r.dsn_orcpt())},
            {"notify_flags", r.notify_flags()}};
}

} // namespace

int dump_envelope(int fd, const std::string& path, int batch, bool json, std::ostream& out) {
    Envelope env;
    std::vector<std::string> rcpts;
    Json rcpts_json = Json::array();
    std::vector<std::string> batches;
    std::vector<std::string> read_warnings; // of every batch
    auto r = read_envelope(fd, env, batch, path);
    auto opened = r;
    for (;;) {
        read_warnings.insert(read_warnings.end(), r.warnings.begin(), r.warnings.end());
        if (!r.ok) break;
        batches.push_back(std::to_string(env.recipients.size()) + " recipients, resume at " +
                          std::to_string(env.rcpt_offset));
        for (auto& x : env.recipients) {
            if (json)
                rcpts_json.push_back(recipient_json(x));
            else
                rcpts.push_back(recipient_text(x));
        }
        if (!env.rcpt_offset) break;
        r = read_envelope(fd, env, batch, path);
    }
    const std::vector<Field> f = {
        num("data_size", env.data_size),
        num("data_offset", env.data_offset),
        num("size_fields", env.size_fields),
        num("qmgr_flags", env.rflags),
        num("cont_length", env.cont_length),
        num("smtputf8", env.smtputf8),
        num("arrival_sec", env.arrival_sec),
        num("arrival_usec", env.arrival_usec),
        num("create_time", env.create_time),
        opt("sender", env.sender()),
        opt("content_filter", env.filter()),
        opt("inspector", env.inspect()),
        opt("redirect", env.redirect()),
        opt("verp_delims", env.verp_delims()),
        str("dsn_envid", env.dsn_envid()),
        num("dsn_ret", env.dsn_ret),
        str("encoding", env.encoding()),
        str("client_name", env.client_name()),
        str("client_address", env.client_addr()),
        str("client_port", env.client_port()),
        str("protocol_name", env.client_proto()),
        str("helo_name", env.client_helo()),
        str("sasl_method", env.sasl_method()),
        str("sasl_username", env.sasl_username()),
        str("sasl_sender", env.sasl_sender()),
        str("log_ident", env.log_ident()),
        str("rewrite_context", env.rewrite_context()),
        num("trace_flags", env.tflags),
        num("trace_flags_offset", env.tflags_offset),
        num("warn_time", env.warn_time),
        num("warn_offset", env.warn_offset),
        num("opened_size", opened.opened_size),
        num("opened_nrcpt", opened.opened_nrcpt),
    };
    if (json) {
        Json doc = {{"file", json_bytes(path)}, {"ok", r.ok}};
        for (auto& x : f)
            doc[x.name] = x.json;
        doc["batches"] = batches;
        doc["recipients"] = std::move(rcpts_json);
        Json warnings = Json::array();
        for (const auto& w : read_warnings)
            warnings.push_back(json_bytes(w));
        doc["warnings"] = std::move(warnings);
        Json error = nullptr;
        if (!r.ok) {
            error = {{"stock_text", json_bytes(r.error)},
                     {"record_warning", json_bytes(r.record_warning)}};
            if (r.failure) {
                error["kind"] = error_kind_name(r.failure->kind);
                error["offset"] = r.failure->offset;
                error["message"] = json_bytes(r.failure->message());
            }
        }
        doc["error"] = std::move(error);
        print_json(out, doc);
    } else {
        out << "# " << path << " as the queue manager reads it (batches of " << batch << ")\n";
        for (auto& x : f)
            out << x.name << ": " << x.text << "\n";
        for (auto& b : batches)
            out << "batch: " << b << "\n";
        for (auto& x : rcpts)
            out << "recipient: " << x << "\n";
        for (auto& w : read_warnings)
            out << "warning: " << w << "\n";
        if (!r.ok) {
            if (!r.record_warning.empty()) out << "stock warning: " << r.record_warning << "\n";
            out << "stock warning: " << r.error << "\n";
            if (r.failure) out << "# error: " << r.failure->message() << "\n";
        }
    }
    return r.ok ? 0 : 1;
}

} // namespace qfdump
