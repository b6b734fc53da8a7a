#include "postcat_compare.hpp"

#include "cqmgr/queuefile/attribute.hpp"
#include "cqmgr/queuefile/c_parse.hpp"
#include "cqmgr/queuefile/envelope.hpp"
#include "cqmgr/queuefile/record_walker.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace cqmgr::queuefile::golden {

namespace {

const char* const marker_names[] = {"ENVELOPE RECORDS", "MESSAGE CONTENTS", "HEADER EXTRACTED",
                                    "MESSAGE FILE END"};

// asctime(localtime(t)) without the newline, as postcat prints times.
std::string ctime_text(int64_t t) {
    time_t tt = static_cast<time_t>(t);
    struct tm tmv;
    if (!localtime_r(&tt, &tmv)) return "(time out of range)";
    char buf[64];
    if (!asctime_r(&tmv, buf)) return "(time out of range)";
    std::string s = buf;
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}

// A marker line.
PostcatLine marker(int64_t offset, const char* text) {
    return {offset, true, text, ""};
}

// A "name: value" line.
PostcatLine line(int64_t offset, std::string name, std::string value) {
    return {offset, false, std::move(name), std::move(value)};
}

// RAII file descriptor.
struct Fd {
    int fd;
    explicit Fd(const std::string& path) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

} // namespace

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<PostcatLine> parse_postcat(const std::string& text) {
    std::vector<PostcatLine> out;
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) {
        PostcatLine p;
        std::string rest = l;
        size_t i = 0;
        while (i < l.size() && l[i] == ' ')
            ++i;
        size_t j = i;
        while (j < l.size() && l[j] >= '0' && l[j] <= '9')
            ++j;
        if (j > i && j < l.size() && l[j] == ' ') {
            p.offset = std::stoll(l.substr(i, j - i));
            rest = l.substr(j + 1);
        }
        if (rest.rfind("*** ", 0) == 0) {
            p.marker = true;
            p.name = "?";
            for (const char* m : marker_names)
                if (rest.rfind(std::string("*** ") + m + " ", 0) == 0) p.name = m;
            if (p.name == "?") p.value = rest;
        } else if (auto colon = rest.find(": "); colon != std::string::npos) {
            p.name = rest.substr(0, colon);
            p.value = rest.substr(colon + 2);
        } else {
            p.name = "?";
            p.value = rest;
        }
        out.push_back(std::move(p));
    }
    return out;
}

Rendered render_like_postcat(const std::string& path, bool verbose) {
    Rendered rendered;
    std::vector<PostcatLine>& out = rendered.lines;
    Fd f(path);
    if (f.fd < 0) {
        rendered.failure =
            FileError{ErrorKind::io, path, -1, "a file that opens", std::strerror(errno), errno};
        return rendered;
    }
    out.push_back(marker(-1, "ENVELOPE RECORDS"));
    RecordWalker walker(f.fd, path, WalkOptions{true, true});
    WalkedRecord r;
    // Without -v, pointers and padding are passed over inside the record
    // reader, and postcat shows the offset where that read began.
    std::optional<int64_t> hidden_from;
    while (walker.next(r)) {
        int64_t at = r.offset;
        if (!verbose) {
            if (r.type == 'p' || r.type == 'w') {
                if (!hidden_from) hidden_from = r.offset;
                continue;
            }
            if (hidden_from) at = *hidden_from;
            hidden_from.reset();
        }
        std::string_view cstr = c_string(r.payload);
        switch (r.type) {
        case 'M':
            out.push_back(marker(at, "MESSAGE CONTENTS"));
            break;
        case 'X':
            out.push_back(marker(at, "HEADER EXTRACTED"));
            break;
        case 'E':
            out.push_back(marker(at, "MESSAGE FILE END"));
            break;
        case 'T':
            out.push_back(line(at, record_type_name('T'), ctime_text(c_atol(cstr))));
            break;
        case 'W':
            out.push_back(line(at, record_type_name('W'), ctime_text(c_atol(cstr))));
            break;
        case 'L':
        case 'w':
        case 'N':
            out.push_back(line(at, record_type_name(r.type), r.payload));
            break;
        case 'A': {
            std::string_view name, value;
            if (split_attribute(cstr, name, value)) break; // postcat only warns
            if (name == "create_time")
                out.push_back(line(at, "create_time", ctime_text(c_atol(value))));
            else
                out.push_back(
                    line(at, "named_attribute", std::string(name) + "=" + std::string(value)));
            break;
        }
        default:
            out.push_back(line(at, record_type_name(r.type), std::string(cstr)));
        }
    }
    rendered.failure = walker.failure();
    return rendered;
}

std::vector<std::string> diff_lines(const std::vector<PostcatLine>& pc,
                                    const std::vector<PostcatLine>& ours) {
    std::vector<std::string> d;
    auto show = [](const PostcatLine& l) {
        return std::to_string(l.offset) + (l.marker ? " *** " : " ") + l.name +
               (l.marker ? " ***" : ": " + l.value);
    };
    size_t n = std::max(pc.size(), ours.size());
    for (size_t i = 0; i < n && d.size() < 20; ++i) {
        if (i >= pc.size()) {
            d.push_back("line " + std::to_string(i + 1) + ": postcat has nothing, we have " +
                        show(ours[i]));
        } else if (i >= ours.size()) {
            d.push_back("line " + std::to_string(i + 1) + ": postcat has " + show(pc[i]) +
                        ", we have nothing");
        } else if (pc[i].offset != ours[i].offset || pc[i].marker != ours[i].marker ||
                   pc[i].name != ours[i].name || pc[i].value != ours[i].value) {
            d.push_back("line " + std::to_string(i + 1) + ": postcat has " + show(pc[i]) +
                        ", we have " + show(ours[i]));
        }
    }
    return d;
}

std::vector<std::string> compare_envelope(const std::string& path,
                                          const std::vector<PostcatLine>& pc, int batch) {
    std::vector<std::string> d;
    // What postcat shows, folded with qmgr's rules.
    struct Expect {
        std::optional<std::string> size, arrival, create, sender, envid, encoding, rewrite, verp,
            filter, redirect, inspect, warn_time;
        int ret = 0, tflags = 0;
        int64_t tflags_offset = 0, warn_offset = 0;
        int counted = 0;
        std::vector<Recipient> rcpts;
        std::map<std::string, std::string> first_attr, last_attr;
    } e;
    std::optional<std::string> orcpt, dsn;
    int notify = 0;
    for (const auto& l : pc) {
        if (l.marker) continue;
        std::string name = l.name, value = l.value;
        if (name == "named_attribute") {
            auto eq = value.find('=');
            std::string an = value.substr(0, eq), av = value.substr(eq + 1);
            if (an == "dsn_orig_rcpt")
                name = "dsn_original_recipient", value = av;
            else if (an == "notify_flags")
                name = "dsn_notify_flags", value = av;
            else if (an == "envelope_id")
                name = "dsn_envelope_id", value = av;
            else if (an == "ret_flags")
                name = "dsn_return_flags", value = av;
            else {
                if (!e.first_attr.count(an)) e.first_attr[an] = av;
                e.last_attr[an] = av;
                if (an == "trace_flags" && e.tflags == 0) {
                    e.tflags = c_atoi(av) & trace_flag::mask;
                    e.tflags_offset = e.tflags == trace_flag::record ? l.offset : 0;
                }
                continue;
            }
        }
        if (name == "recipient") {
            e.counted++;
            e.rcpts.push_back(
                Recipient{l.offset, value, orcpt.value_or(""), dsn.value_or(""), notify});
            orcpt.reset(), dsn.reset(), notify = 0;
        } else if (name == "done_recipient" || name == "canceled_recipient") {
            e.counted++;
            orcpt.reset(), dsn.reset(), notify = 0;
        } else if (name == "original_recipient")
            orcpt = value;
        else if (name == "dsn_original_recipient")
            dsn = value;
        else if (name == "dsn_notify_flags") {
            int n = all_digits(value) ? c_atoi(value) : 0;
            notify = (n == 1 || (n != 0 && (n & ~14) == 0)) ? n : 0;
        } else if (name == "message_size" && !e.size)
            e.size = value;
        else if (name == "message_arrival_time" && !e.arrival)
            e.arrival = value;
        else if (name == "create_time" && !e.create)
            e.create = value;
        else if (name == "sender" && !e.sender)
            e.sender = value;
        else if (name == "dsn_envelope_id")
            e.envid = value;
        else if (name == "dsn_return_flags" && (value == "1" || value == "2"))
            e.ret = value[0] - '0';
        else if (name == "verp_delimiters" && !e.verp)
            e.verp = value;
        else if (name == "content_filter")
            e.filter = value;
        else if (name == "redirect_to")
            e.redirect = value;
        else if (name == "content_inspector")
            e.inspect = value;
        else if (name == "warning_message_time" && !e.warn_time) {
            e.warn_time = value;
            e.warn_offset = l.offset;
        }
    }

    Fd f(path);
    Envelope env;
    std::vector<Recipient> got;
    std::vector<std::string> warnings; // of every batch
    auto r = read_envelope(f.fd, env, batch, path);
    size_t batches = 1;
    while (r.ok) {
        warnings.insert(warnings.end(), r.warnings.begin(), r.warnings.end());
        for (auto& x : env.recipients)
            got.push_back(std::move(x));
        if (env.rcpt_offset == 0) break;
        r = read_envelope(f.fd, env, batch, path);
        ++batches;
    }
    if (!r.ok) {
        d.push_back("read_envelope failed: " + r.error +
                    (r.failure ? " (" + r.failure->message() + ")" : ""));
        return d;
    }
    auto check = [&](const std::string& what, const std::string& want, std::string_view have) {
        if (want != have)
            d.push_back(what + ": postcat shows \"" + want + "\", we read \"" + std::string(have) +
                        "\"");
    };
    if (e.size) {
        long f1 = 0, f2 = 0, f3 = 0, f4 = 1, f5 = 0, f6 = 0;
        std::sscanf(e.size->c_str(), "%ld %ld %ld %ld %ld %ld", &f1, &f2, &f3, &f4, &f5, &f6);
        check("SIZE data_size", std::to_string(f1), std::to_string(env.data_size));
        check("SIZE data_offset", std::to_string(f2), std::to_string(env.data_offset));
        check("SIZE qmgr flags", std::to_string(f4), std::to_string(env.rflags));
        check("SIZE content length", std::to_string(f5 ? f5 : f1), std::to_string(env.cont_length));
        check("SIZE smtputf8", std::to_string(f6), std::to_string(env.smtputf8));
        bool mismatch = false;
        for (auto& w : warnings)
            mismatch |= w.rfind("rcpt count mismatch", 0) == 0;
        check("SIZE recipient count agrees", f3 == e.counted ? "yes" : "no",
              mismatch ? "no" : "yes");
    } else {
        d.push_back("postcat shows no message_size record");
    }
    check("arrival time", e.arrival.value_or("?"), ctime_text(env.arrival_sec));
    check("create time", e.create.value_or(e.arrival.value_or("?")), ctime_text(env.create_time));
    check("sender", e.sender.value_or("(none)"), env.sender().value_or("(none)"));
    check("DSN envelope id", e.envid.value_or(""), env.dsn_envid());
    check("DSN ret", std::to_string(e.ret), std::to_string(env.dsn_ret));
    check("VERP delimiters", e.verp && !e.sender.value_or("").empty() ? *e.verp : "(none)",
          env.verp_delims().value_or("(none)"));
    check("content filter", e.filter.value_or("(none)"), env.filter().value_or("(none)"));
    check("redirect", e.redirect.value_or("(none)"), env.redirect().value_or("(none)"));
    check("content inspector", e.inspect.value_or("(none)"), env.inspect().value_or("(none)"));
    check("warning time", e.warn_time.value_or("(none)"),
          env.warn_offset ? ctime_text(env.warn_time) : "(none)");
    check("warning record offset", std::to_string(e.warn_offset), std::to_string(env.warn_offset));
    check("trace flags", std::to_string(e.tflags), std::to_string(env.tflags));
    check("trace flags offset", std::to_string(e.tflags_offset), std::to_string(env.tflags_offset));
    auto last = [&](const char* n) { return e.last_attr.count(n) ? e.last_attr[n] : ""; };
    auto first = [&](const char* n) { return e.first_attr.count(n) ? e.first_attr[n] : ""; };
    check("encoding", last("encoding"), env.encoding());
    check("rewrite context",
          e.first_attr.count("rewrite_context") ? first("rewrite_context") : "local",
          env.rewrite_context());
    check("sasl_method", first("sasl_method"), env.sasl_method());
    check("sasl_username", first("sasl_username"), env.sasl_username());
    check("sasl_sender", first("sasl_sender"), env.sasl_sender());
    check("log_ident", first("log_ident"), env.log_ident());
    auto client = [&](const char* modern, const char* legacy) {
        return e.last_attr.count(modern) ? last(modern) : first(legacy);
    };
    bool any_log = e.last_attr.count("log_client_name") ||
                   e.last_attr.count("log_client_address") ||
                   e.last_attr.count("log_client_port") || e.last_attr.count("log_protocol_name") ||
                   e.last_attr.count("log_helo_name");
    if (!any_log) {
        check("client name", first("client_name"), env.client_name());
        check("client address", first("client_address"), env.client_addr());
        check("helo name", first("helo_name"), env.client_helo());
        check("protocol name", first("protocol_name"), env.client_proto());
    } else {
        check("client name", client("log_client_name", "client_name"), env.client_name());
        check("client address", client("log_client_address", "client_address"), env.client_addr());
        check("helo name", client("log_helo_name", "helo_name"), env.client_helo());
        check("protocol name", client("log_protocol_name", "protocol_name"), env.client_proto());
    }
    check("recipient count", std::to_string(e.rcpts.size()), std::to_string(got.size()));
    for (size_t i = 0; i < std::min(e.rcpts.size(), got.size()) && d.size() < 40; ++i) {
        const auto &a = e.rcpts[i], &b = got[i];
        std::string n = "recipient " + std::to_string(i + 1);
        check(n + " offset", std::to_string(a.offset()), std::to_string(b.offset()));
        check(n + " address", std::string(a.address()), std::string(b.address()));
        check(n + " original recipient", std::string(a.orig_rcpt()), std::string(b.orig_rcpt()));
        check(n + " DSN original recipient", std::string(a.dsn_orcpt()),
              std::string(b.dsn_orcpt()));
        check(n + " NOTIFY", std::to_string(a.notify_flags()), std::to_string(b.notify_flags()));
    }
    size_t want_batches = e.rcpts.empty() ? 1 : (e.rcpts.size() + batch - 1) / batch;
    if (batches < want_batches)
        d.push_back("read in " + std::to_string(batches) + " batches, expected at least " +
                    std::to_string(want_batches));
    return d;
}

std::vector<std::string> compare_all(const std::string& qf, const std::string& postcat_verbose,
                                     const std::string& postcat_plain, int batch) {
    std::vector<std::string> out;
    auto pv = parse_postcat(slurp(postcat_verbose));
    auto pp = parse_postcat(slurp(postcat_plain));
    for (bool verbose : {true, false}) {
        auto ours = render_like_postcat(qf, verbose);
        if (ours.failure)
            out.push_back(std::string(verbose ? "-v" : "-e") +
                          " records: " + ours.failure->message());
        for (auto& x : diff_lines(verbose ? pv : pp, ours.lines))
            out.push_back(std::string(verbose ? "postcat -o -v -e: " : "postcat -o -e: ") + x);
    }
    for (auto& x : compare_envelope(qf, pv, batch))
        out.push_back("envelope: " + x);
    return out;
}

} // namespace cqmgr::queuefile::golden
