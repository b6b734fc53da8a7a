#include "scenario.hpp"

#include "error.hpp"
#include "fsutil.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <regex>
#include <set>
#include <sstream>
#include <toml++/toml.h>

namespace compat {
namespace {

// Names a TOML node type in words for "expected X, found Y" messages.
std::string type_name(const toml::node& n) {
    switch (n.type()) {
    case toml::node_type::string:
        return "a string";
    case toml::node_type::integer:
        return "an integer";
    case toml::node_type::floating_point:
        return "a float";
    case toml::node_type::boolean:
        return "a boolean";
    case toml::node_type::array:
        return "an array";
    case toml::node_type::table:
        return "a table";
    case toml::node_type::date:
        return "a date";
    case toml::node_type::time:
        return "a time";
    case toml::node_type::date_time:
        return "a date-time";
    default:
        return "nothing";
    }
}

// Reads one TOML table with typed getters, remembering the keys it was asked
// about so that unknown (misspelt) keys can be reported.
class TableReader {
  public:
    TableReader(const toml::table& t, std::string where, std::string source)
        : t_(t), where_(std::move(where)), source_(std::move(source)) {}

    // Location prefix for a node: "file:line: [where] key".
    std::string at(const std::string& key, const toml::node* n) const {
        std::ostringstream o;
        o << source_;
        if (n != nullptr && n->source().begin.line != 0) o << ':' << n->source().begin.line;
        o << ": " << where_ << (where_.empty() ? "" : ".") << key;
        return o.str();
    }

    // Throws "expected <what>, found <type>" for a key.
    [[noreturn]] void fail(const std::string& key, const toml::node* n,
                           const std::string& expected) const {
        throw Error(at(key, n) + ": expected " + expected + ", found " +
                    (n ? type_name(*n) : "nothing"));
    }

    // Looks up a key and marks it as known.
    const toml::node* get(const std::string& key) {
        seen_.insert(key);
        return t_.get(key);
    }

    // A string value, if present.
    std::optional<std::string> str(const std::string& key) {
        const toml::node* n = get(key);
        if (n == nullptr) return std::nullopt;
        if (!n->is_string()) fail(key, n, "a string");
        return n->as_string()->get();
    }

    // An integer value within [min, max], if present.
    std::optional<long long> integer(const std::string& key, long long min, long long max) {
        const toml::node* n = get(key);
        if (n == nullptr) return std::nullopt;
        if (!n->is_integer()) fail(key, n, "an integer");
        long long v = n->as_integer()->get();
        if (v < min || v > max)
            throw Error(at(key, n) + ": expected an integer in [" + std::to_string(min) + ", " +
                        std::to_string(max) + "], found " + std::to_string(v));
        return v;
    }

    // An integer or float value within [min, max], if present.
    std::optional<double> number(const std::string& key, double min, double max) {
        const toml::node* n = get(key);
        if (n == nullptr) return std::nullopt;
        double v = 0;
        if (n->is_integer())
            v = static_cast<double>(n->as_integer()->get());
        else if (n->is_floating_point())
            v = n->as_floating_point()->get();
        else
            fail(key, n, "a number");
        if (!(v >= min && v <= max))
            throw Error(at(key, n) + ": expected a number in [" + std::to_string(min) + ", " +
                        std::to_string(max) + "], found " + std::to_string(v));
        return v;
    }

    // A boolean value, if present.
    std::optional<bool> boolean(const std::string& key) {
        const toml::node* n = get(key);
        if (n == nullptr) return std::nullopt;
        if (!n->is_boolean()) fail(key, n, "a boolean");
        return n->as_boolean()->get();
    }

    // A string or an array of strings.
    std::optional<std::vector<std::string>> strings(const std::string& key) {
        const toml::node* n = get(key);
        if (n == nullptr) return std::nullopt;
        std::vector<std::string> out;
        if (n->is_string()) {
            out.push_back(n->as_string()->get());
            return out;
        }
        if (!n->is_array()) fail(key, n, "a string or an array of strings");
        for (const auto& e : *n->as_array()) {
            if (!e.is_string()) fail(key, &e, "an array of strings only");
            out.push_back(e.as_string()->get());
        }
        return out;
    }

    // A sub-table, if present.
    const toml::table* table(const std::string& key) {
        const toml::node* n = get(key);
        if (n == nullptr) return nullptr;
        if (!n->is_table()) fail(key, n, "a table");
        return n->as_table();
    }

    // An array (including arrays of tables), if present.
    const toml::array* array(const std::string& key) {
        const toml::node* n = get(key);
        if (n == nullptr) return nullptr;
        if (!n->is_array()) fail(key, n, "an array");
        return n->as_array();
    }

    // Throws for the first key that no getter asked about.
    void reject_unknown() const {
        for (const auto& [k, v] : t_) {
            std::string key(k.str());
            if (seen_.count(key)) continue;
            std::string known;
            for (const auto& s : seen_)
                known += (known.empty() ? "" : ", ") + s;
            throw Error(at(key, &v) + ": unknown key (expected one of: " + known + ")");
        }
    }

  private:
    const toml::table& t_;
    std::string where_;
    std::string source_;
    std::set<std::string> seen_;
};

// Converts a main_cf value (string, integer, boolean) to main.cf text.
std::string main_cf_value(const toml::node& n, const std::string& where) {
    if (n.is_string()) return n.as_string()->get();
    if (n.is_integer()) return std::to_string(n.as_integer()->get());
    if (n.is_boolean()) return n.as_boolean()->get() ? "yes" : "no";
    throw Error(where + ": expected a string, integer or boolean, found " + type_name(n));
}

// The `name` of a [[sink]] or [[report]]: non-empty, of [a-z0-9_-] (it
// names files and variables).
std::string required_name(TableReader& r, const toml::table& t) {
    std::string name = r.str("name").value_or("");
    if (name.empty() ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
        throw Error(r.at("name", t.get("name")) +
                    ": expected a non-empty name of [a-z0-9_-], found '" + name + "'");
    return name;
}

// Reads one [[sink]] entry.
SinkSpec parse_sink(const toml::table& t, const std::string& where, const std::string& source) {
    TableReader r(t, where, source);
    SinkSpec s;
    s.name = required_name(r, t);
    s.args = r.strings("args").value_or(std::vector<std::string>{});
    s.backlog = static_cast<int>(r.integer("backlog", 1, 65535).value_or(100));
    s.start = r.boolean("start").value_or(true);
    s.dump = r.boolean("dump").value_or(false);
    s.count_sessions = r.boolean("count_sessions").value_or(false);
    r.reject_unknown();
    return s;
}

// Reads one [[inject]] entry and checks the method-specific fields.
InjectSpec parse_inject(const toml::table& t, const std::string& where, const std::string& source) {
    TableReader r(t, where, source);
    InjectSpec in;
    in.method = r.str("method").value_or("");
    if (in.method != "smtp-source" && in.method != "smtp" && in.method != "sendmail")
        throw Error(r.at("method", t.get("method")) +
                    ": expected \"smtp-source\", \"smtp\" or \"sendmail\", found \"" + in.method +
                    "\"");
    if (auto v = r.str("from")) in.from = *v;
    in.to = r.strings("to").value_or(std::vector<std::string>{});
    if (in.to.empty())
        throw Error(r.at("to", t.get("to")) + ": expected at least one recipient, found none");
    in.args = r.strings("args").value_or(std::vector<std::string>{});
    in.delay_before = r.number("delay_before", 0, 3600).value_or(0);
    in.peer = static_cast<int>(r.integer("peer", 0, 16).value_or(0));
    if (in.method == "smtp-source") {
        if (in.to.size() != 1)
            throw Error(r.at("to", t.get("to")) +
                        ": smtp-source takes exactly one recipient, found " +
                        std::to_string(in.to.size()));
        in.messages = static_cast<int>(r.integer("messages", 1, 1000000).value_or(1));
        in.sessions = static_cast<int>(r.integer("sessions", 1, 1000).value_or(1));
        in.recipients = static_cast<int>(r.integer("recipients", 1, 100000).value_or(1));
        if (auto v = r.integer("size", 0, 100000000)) in.size = static_cast<int>(*v);
        in.subject = r.str("subject");
    } else {
        in.subject = r.str("subject");
        if (auto v = r.str("body")) in.body = *v;
        in.count = static_cast<int>(r.integer("count", 1, 1000000).value_or(1));
        in.headers = r.strings("headers").value_or(std::vector<std::string>{});
        if (in.method == "smtp") {
            in.mail_params = r.str("mail_params").value_or("");
            in.rcpt_params = r.str("rcpt_params").value_or("");
        }
    }
    r.reject_unknown();
    return in;
}

// Reads one mailbox expectation.
MailboxExpect parse_mailbox(const toml::table& t, const std::string& where,
                            const std::string& source) {
    TableReader r(t, where, source);
    MailboxExpect m;
    m.path = r.str("path").value_or("");
    if (m.path.empty())
        throw Error(r.at("path", nullptr) + ": expected a mailbox path, found none");
    m.contains = r.strings("contains").value_or(std::vector<std::string>{});
    if (auto v = r.integer("messages", 0, 10000000)) m.messages = static_cast<int>(*v);
    r.reject_unknown();
    return m;
}

// Reads a table of name -> non-negative integer.
std::map<std::string, int> parse_counts(const toml::table& t, const std::string& where,
                                        const std::string& source) {
    TableReader r(t, where, source);
    std::map<std::string, int> out;
    for (const auto& [k, v] : t) {
        std::string key(k.str());
        out[key] = static_cast<int>(r.integer(key, 0, 100000000).value());
    }
    return out;
}

// Reads the min/max keys of a table being read into a Range; at least one
// is required, each within [lo, hi].
Range read_bounds(TableReader& r, const std::string& where, const std::string& source, double lo,
                  double hi) {
    Range rg;
    rg.min = r.number("min", lo, hi);
    rg.max = r.number("max", lo, hi);
    if (!rg.min && !rg.max)
        throw Error(source + ": " + where + ": expected min and/or max, found neither");
    if (rg.min && rg.max && *rg.min > *rg.max)
        throw Error(source + ": " + where + ": expected min <= max");
    return rg;
}

// Reads {min = X, max = Y}.
Range parse_range(const toml::table& t, const std::string& where, const std::string& source) {
    TableReader r(t, where, source);
    Range rg = read_bounds(r, where, source, -1e12, 1e12);
    r.reject_unknown();
    return rg;
}

// Calls fn(table, where) for each element of an array of tables; `name`
// gives the place in messages ("expect.log" -> "expect.log[N]").
template <class Fn>
void for_each_table(const toml::array* arr, const std::string& name, const std::string& source,
                    Fn fn) {
    if (arr == nullptr) return;
    int i = 0;
    for (const auto& n : *arr) {
        std::string where = name + "[" + std::to_string(i++) + "]";
        if (!n.is_table())
            throw Error(source + ": " + where + ": expected a table, found " + type_name(n));
        fn(*n.as_table(), where);
    }
}

// Reads one expect.order entry.
OrderExpect parse_order_expect(const toml::table& t, const std::string& where,
                               const std::string& source) {
    TableReader r(t, where, source);
    OrderExpect o;
    o.lines = r.str("lines").value_or("");
    o.before_last = r.str("before_last").value_or("");
    if (o.lines.empty() || o.before_last.empty())
        throw Error(source + ": " + where +
                    ": expected lines = \"regex\" and before_last = \"regex\", found " +
                    (o.lines.empty() ? "no lines" : "no before_last"));
    r.reject_unknown();
    return o;
}

// Reads one expect.log entry.
LogExpect parse_log_expect(const toml::table& t, const std::string& where,
                           const std::string& source) {
    TableReader r(t, where, source);
    LogExpect l;
    l.match = r.str("match").value_or("");
    if (l.match.empty())
        throw Error(source + ": " + where + ": expected match = \"regex\", found none");
    auto opt = [&r](const char* k) -> std::optional<int> {
        if (auto v = r.integer(k, 0, 100000000)) return static_cast<int>(*v);
        return std::nullopt;
    };
    l.count = opt("count");
    l.min = opt("min");
    l.max = opt("max");
    if (!l.count && !l.min && !l.max)
        throw Error(source + ": " + where + ": expected count, min or max, found none");
    r.reject_unknown();
    return l;
}

// The queue directories expectations and waits may name: the message
// queues and the per-message log directories.
bool is_queue_name(const std::string& q) {
    for (const char* n : {"maildrop", "incoming", "active", "deferred", "hold", "corrupt", "defer",
                          "bounce", "trace"})
        if (q == n) return true;
    return false;
}

std::string queue_names_text() {
    return "maildrop, incoming, active, deferred, hold, corrupt, defer, bounce, trace";
}

// Reads one expect.spacing entry: { sinks = [...], min = S, max = S }.
SpacingExpect parse_spacing(const toml::table& t, const std::string& where,
                            const std::string& source) {
    TableReader r(t, where, source);
    SpacingExpect sp;
    sp.sinks = r.strings("sinks").value_or(std::vector<std::string>{});
    if (sp.sinks.empty())
        throw Error(source + ": " + where + ": expected sinks = [\"name\", ...], found none");
    sp.gap = read_bounds(r, where, source, 0, 3600); // seconds
    r.reject_unknown();
    return sp;
}

// Reads expect.hashed: { depth = N, queues = [...] }.
HashedExpect parse_hashed(const toml::table& t, const std::string& source) {
    TableReader r(t, "expect.hashed", source);
    HashedExpect h;
    h.depth = static_cast<int>(r.integer("depth", 1, 10).value_or(1));
    h.queues = r.strings("queues").value_or(std::vector<std::string>{});
    if (h.queues.empty())
        throw Error(source + ": expect.hashed: expected queues = [\"deferred\", ...], found none");
    for (const auto& q : h.queues)
        if (!is_queue_name(q) || q == "maildrop")
            throw Error(source + ": expect.hashed.queues: expected hashable queue directories (" +
                        queue_names_text() + " but maildrop), found '" + q + "'");
    r.reject_unknown();
    return h;
}

// Reads queue_fs: { size_mib = N }.
QueueFsSpec parse_queue_fs(const toml::table& t, const std::string& source) {
    TableReader r(t, "queue_fs", source);
    QueueFsSpec q;
    q.size_mib = static_cast<int>(r.integer("size_mib", 4, 1024).value_or(0));
    if (q.size_mib == 0)
        throw Error(source + ": queue_fs: expected size_mib = N (4..1024), found none");
    r.reject_unknown();
    return q;
}

// Reads [expect].
Expect parse_expect(const toml::table& t, const std::string& source) {
    TableReader r(t, "expect", source);
    Expect e;
    auto count = [&r](const char* key) -> std::optional<int> {
        if (auto v = r.integer(key, 0, 100000000)) return static_cast<int>(*v);
        return std::nullopt;
    };
    e.sent = count("sent");
    e.deferred = count("deferred");
    e.bounced = count("bounced");
    e.expired = count("expired");
    e.queue_empty = r.boolean("queue_empty");
    if (const auto* ps = r.table("per_sink"))
        e.per_sink = parse_counts(*ps, "expect.per_sink", source);
    if (const auto* nt = r.table("notifications"))
        e.notifications = parse_counts(*nt, "expect.notifications", source);
    for_each_table(r.array("mailbox"), "expect.mailbox", source, [&](const auto& t, const auto& w) {
        e.mailbox.push_back(parse_mailbox(t, w, source));
    });
    if (const auto* q = r.table("queue")) {
        e.queue = parse_counts(*q, "expect.queue", source);
        for (const auto& [name, n] : e.queue) {
            (void)n;
            if (!is_queue_name(name))
                throw Error(source + ": expect.queue." + name + ": expected a queue directory (" +
                            queue_names_text() + "), found '" + name + "'");
        }
    }
    if (const auto* b = r.table("backoff")) e.backoff = parse_range(*b, "expect.backoff", source);
    if (const auto* dr = r.table("deferral_rate"))
        e.deferral_rate = parse_range(*dr, "expect.deferral_rate", source);
    for_each_table(r.array("log"), "expect.log", source, [&](const auto& t, const auto& w) {
        e.log.push_back(parse_log_expect(t, w, source));
    });
    for_each_table(r.array("order"), "expect.order", source, [&](const auto& t, const auto& w) {
        e.order.push_back(parse_order_expect(t, w, source));
    });
    // sink -> an exact count (an integer) or {min, max}
    auto sink_ranges = [&](const char* key, std::map<std::string, Range>& out) {
        const auto* pc = r.table(key);
        if (!pc) return;
        for (const auto& [k, v] : *pc) {
            std::string name(k.str()), where = std::string("expect.") + key + "." + name;
            if (v.is_integer()) {
                Range rg;
                rg.min = rg.max = static_cast<double>(v.as_integer()->get());
                out[name] = rg;
            } else if (v.is_table()) {
                out[name] = parse_range(*v.as_table(), where, source);
            } else {
                throw Error(source + ": " + where + ": expected an integer or {min, max}, found " +
                            type_name(v));
            }
        }
    };
    sink_ranges("peak_connections", e.peak_connections);
    sink_ranges("session_peak", e.session_peak);
    sink_ranges("sender_session_peak", e.sender_session_peak);
    if (const auto* tx = r.table("transactions"))
        e.transactions = parse_counts(*tx, "expect.transactions", source);
    if (const auto* fl = r.table("flush_log"))
        e.flush_log = parse_counts(*fl, "expect.flush_log", source);
    for_each_table(r.array("spacing"), "expect.spacing", source, [&](const auto& t, const auto& w) {
        e.spacing.push_back(parse_spacing(t, w, source));
    });
    if (const toml::node* ft = r.get("flow_tokens")) {
        if (ft->is_integer()) {
            Range rg;
            rg.min = rg.max = static_cast<double>(ft->as_integer()->get());
            e.flow_tokens = rg;
        } else if (ft->is_table()) {
            e.flow_tokens = parse_range(*ft->as_table(), "expect.flow_tokens", source);
        } else {
            throw Error(source + ": expect.flow_tokens: expected an integer or {min, max}, found " +
                        type_name(*ft));
        }
    }
    if (const auto* h = r.table("hashed")) e.hashed = parse_hashed(*h, source);
    r.reject_unknown();
    return e;
}

// Reads a wait_for table.
WaitSpec parse_wait(const toml::table& t, const std::string& where, const std::string& source) {
    TableReader r(t, where, source);
    WaitSpec w;
    auto log = r.str("log");
    auto queue = r.str("queue");
    auto sink = r.str("sink");
    auto unlocked = r.str("unlocked");
    int kinds = (log ? 1 : 0) + (queue ? 1 : 0) + (sink ? 1 : 0) + (unlocked ? 1 : 0);
    if (kinds != 1)
        throw Error(source + ": " + where +
                    ": expected exactly one of log = \"regex\", queue = \"name\", sink = "
                    "\"name\" or unlocked = \"queue\", found " +
                    std::to_string(kinds));
    if (log) {
        w.kind = WaitSpec::Kind::Log;
        w.log = *log;
        w.count = static_cast<int>(r.integer("count", 1, 100000000).value_or(1));
    } else if (queue) {
        w.kind = WaitSpec::Kind::Queue;
        w.queue = *queue;
        if (!is_queue_name(w.queue))
            throw Error(r.at("queue", t.get("queue")) + ": expected a queue directory (" +
                        queue_names_text() + "), found '" + w.queue + "'");
        auto f = r.integer("files", 0, 100000000);
        if (!f) throw Error(source + ": " + where + ": expected files = N with queue, found none");
        w.files = static_cast<int>(*f);
    } else if (unlocked) {
        w.kind = WaitSpec::Kind::Unlocked;
        w.queue = *unlocked;
        if (!is_queue_name(w.queue))
            throw Error(r.at("unlocked", t.get("unlocked")) + ": expected a queue directory (" +
                        queue_names_text() + "), found '" + w.queue + "'");
    } else {
        w.kind = WaitSpec::Kind::Connections;
        w.sink = *sink;
        w.connections = static_cast<int>(r.integer("connections", 1, 100000).value_or(1));
    }
    w.timeout = r.number("timeout", 0, 3600);
    r.reject_unknown();
    return w;
}

// Reads one [[action]] entry: exactly one thing to do, or only a wait_for.
ActionSpec parse_action(const toml::table& t, const std::string& where, const std::string& source,
                        int injections) {
    TableReader r(t, where, source);
    ActionSpec a;
    a.where = where;
    a.after_inject =
        static_cast<int>(r.integer("after_inject", 0, injections).value_or(injections));
    a.delay_before = r.number("delay_before", 0, 3600).value_or(0);
    if (const auto* w = r.table("wait_for"))
        a.wait_for = parse_wait(*w, where + ".wait_for", source);
    static const char* const kinds[] = {
        "command",      "sleep",         "trigger",    "kill_qmgr", "kill_process", "corrupt_file",
        "stop_service", "start_service", "start_sink", "stop_sink", "fill_fs",      "free_fs"};
    for (const char* k : kinds) {
        if (t.get(k) == nullptr) continue;
        if (!a.kind.empty())
            throw Error(source + ": " + where + ": expected one action per [[action]], found " +
                        a.kind + " and " + k);
        a.kind = k;
    }
    a.qmgr = r.str("qmgr").value_or("");
    if (!a.qmgr.empty() && a.qmgr != "stock" && a.qmgr != "cqmgr")
        throw Error(r.at("qmgr", t.get("qmgr")) + ": expected \"stock\" or \"cqmgr\", found \"" +
                    a.qmgr + "\"");
    if (a.kind.empty() && !a.wait_for)
        throw Error(source + ": " + where +
                    ": expected one of wait_for, command, sleep, "
                    "trigger, kill_qmgr, kill_process, corrupt_file, stop_service, start_service, "
                    "start_sink, stop_sink, fill_fs, free_fs; found none");
    if (a.kind == "command") {
        a.command = r.strings("command").value();
        if (a.command.empty())
            throw Error(r.at("command", t.get("command")) + ": expected a non-empty command");
        a.allow_failure = r.boolean("allow_failure").value_or(false);
    } else if (a.kind == "sleep") {
        a.sleep = r.number("sleep", 0, 3600).value();
    } else if (a.kind == "trigger") {
        a.trigger = r.str("trigger").value();
        if (a.trigger.empty() || a.trigger.size() > 1000)
            throw Error(r.at("trigger", t.get("trigger")) +
                        ": expected 1..1000 trigger bytes (e.g. \"D\", \"AD\", \"FADI\")");
    } else if (a.kind == "kill_qmgr") {
        a.signal = r.str("kill_qmgr").value();
        signal_number(a.signal, r.at("kill_qmgr", t.get("kill_qmgr")));
    } else if (a.kind == "kill_process") {
        const toml::table* kp = r.table("kill_process");
        TableReader k(*kp, where + ".kill_process", source);
        a.process = k.str("name").value_or("");
        if (a.process.empty())
            throw Error(source + ": " + where + ".kill_process: expected name = \"argv0\"");
        a.signal = k.str("signal").value_or("KILL");
        signal_number(a.signal, source + ": " + where + ".kill_process.signal");
        a.connected_to = k.str("connected_to").value_or("");
        k.reject_unknown();
    } else if (a.kind == "corrupt_file") {
        const toml::table* cf = r.table("corrupt_file");
        TableReader k(*cf, where + ".corrupt_file", source);
        a.from_queue = k.str("from").value_or("hold");
        a.to_queue = k.str("to").value_or("incoming");
        a.how = k.str("how").value_or("truncate");
        for (const auto& q : {a.from_queue, a.to_queue})
            if (q != "hold" && q != "incoming" && q != "maildrop")
                throw Error(source + ": " + where +
                            ".corrupt_file: expected from/to of hold, incoming (unhashed queues), "
                            "found '" +
                            q + "'");
        if (a.how != "truncate" && a.how != "bad_record" && a.how != "no_sender")
            throw Error(source + ": " + where +
                        ".corrupt_file.how: expected truncate, bad_record or no_sender, found '" +
                        a.how + "'");
        k.reject_unknown();
    } else if (a.kind == "stop_service" || a.kind == "start_service") {
        a.service = r.str(a.kind).value();
    } else if (a.kind == "start_sink" || a.kind == "stop_sink") {
        a.sink = r.str(a.kind).value();
    } else if (a.kind == "fill_fs" || a.kind == "free_fs") {
        if (!r.boolean(a.kind).value())
            throw Error(r.at(a.kind, t.get(a.kind)) + ": expected true, found false");
    }
    r.reject_unknown();
    return a;
}

// Reads "multiset" / "set" / "ignore".
CompareMode parse_compare_mode(TableReader& r, const std::string& key, CompareMode dflt,
                               bool allow_ignore) {
    auto v = r.str(key);
    if (!v) return dflt;
    if (*v == "multiset") return CompareMode::Multiset;
    if (*v == "set") return CompareMode::Set;
    if (*v == "ignore" && allow_ignore) return CompareMode::Ignore;
    throw Error(r.at(key, nullptr) + ": expected \"multiset\", \"set\"" +
                (allow_ignore ? std::string(" or \"ignore\"") : std::string()) + ", found \"" + *v +
                "\"");
}

// Reads one [[report]] entry.
ReportSpec parse_report(const toml::table& t, const std::string& where, const std::string& source) {
    TableReader r(t, where, source);
    ReportSpec rep;
    rep.where = where;
    rep.name = required_name(r, t);
    rep.command = r.strings("command").value_or(std::vector<std::string>{});
    if (rep.command.empty())
        throw Error(source + ": " + where + ": expected a non-empty command = [...]");
    rep.qmgr = r.str("qmgr").value_or("");
    if (!rep.qmgr.empty() && rep.qmgr != "stock" && rep.qmgr != "cqmgr")
        throw Error(r.at("qmgr", t.get("qmgr")) + ": expected \"stock\" or \"cqmgr\", found \"" +
                    rep.qmgr + "\"");
    rep.show = r.boolean("show").value_or(false);
    rep.compare = r.boolean("compare").value_or(true);
    r.reject_unknown();
    return rep;
}

// Reads one [[milestone]] entry.
MilestoneSpec parse_milestone(const toml::table& t, const std::string& where,
                              const std::string& source) {
    TableReader r(t, where, source);
    MilestoneSpec m;
    m.name = r.str("name").value_or("");
    if (m.name.empty()) throw Error(source + ": " + where + ": expected a name = \"...\"");
    m.match = r.str("match").value_or("");
    if (m.match.empty()) throw Error(source + ": " + where + ": expected a match = \"regex\"");
    m.count = static_cast<int>(r.integer("count", 1, 1000000).value_or(1));
    r.reject_unknown();
    return m;
}

} // namespace

// Parses the whole scenario and cross-checks sink references.
Scenario parse_scenario(std::string_view text, const std::string& source) {
    toml::table root;
    try {
        root = toml::parse(text, source);
    } catch (const toml::parse_error& e) {
        std::ostringstream o;
        o << source << ':' << e.source().begin.line << ':' << e.source().begin.column
          << ": invalid TOML: " << e.description();
        throw Error(o.str());
    }
    TableReader r(root, "", source);
    Scenario s;
    s.file = source;
    s.name = r.str("name").value_or("");
    if (s.name.empty()) throw Error(source + ": expected a top-level name = \"...\", found none");
    s.description = r.str("description").value_or("");
    s.timeout = static_cast<int>(r.integer("timeout", 1, 3600).value_or(60));
    s.settle = r.number("settle", 0, 60).value_or(1.0);
    s.slow = r.boolean("slow").value_or(false);
    s.cqmgr_only = r.boolean("cqmgr_only").value_or(false);
    s.compare_qmgr_lines = parse_compare_mode(r, "compare_qmgr_lines", CompareMode::Multiset, true);
    s.compare_qmgr_warnings =
        parse_compare_mode(r, "compare_qmgr_warnings", CompareMode::Multiset, true);
    if (r.boolean("ignore_qmgr_warnings").value_or(false))
        s.compare_qmgr_warnings = CompareMode::Ignore;
    s.backoff_tolerance = r.number("backoff_tolerance", 0, 1e6).value_or(2);
    s.deferral_rate_tolerance = r.number("deferral_rate_tolerance", 0, 100);
    if (const auto* mc = r.table("main_cf")) {
        for (const auto& [k, v] : *mc)
            s.main_cf.emplace_back(std::string(k.str()),
                                   main_cf_value(v, source + ": main_cf." + std::string(k.str())));
    }
    s.master_cf = r.strings("master_cf").value_or(std::vector<std::string>{});
    if (auto t = r.str("qmgr_service_type")) {
        if (*t != "unix" && *t != "fifo")
            throw Error(r.at("qmgr_service_type", root.get("qmgr_service_type")) +
                        ": expected \"unix\" or \"fifo\", found \"" + *t + "\"");
        s.qmgr_service_type = *t;
    }
    s.qmgr_args = r.strings("qmgr_args").value_or(std::vector<std::string>{});
    for (const auto& a : s.qmgr_args)
        if (a.empty() || a.find_first_of(" \t\n") != std::string::npos)
            throw Error(r.at("qmgr_args", root.get("qmgr_args")) +
                        ": expected arguments without white space, found \"" + a + "\"");
    for (const auto& svc : r.strings("chroot").value_or(std::vector<std::string>{})) {
        const auto& known = chrootable_services();
        if (svc != "all" && svc != "qmgr" &&
            std::find(known.begin(), known.end(), svc) == known.end())
            throw Error(r.at("chroot", root.get("chroot")) +
                        ": expected \"all\", \"qmgr\" or a chrootable service, found \"" + svc +
                        "\"");
        if (svc == "all")
            s.chroot.insert(s.chroot.end(), known.begin(), known.end());
        else
            s.chroot.push_back(svc);
    }
    if (const auto* qf = r.table("queue_fs")) s.queue_fs = parse_queue_fs(*qf, source);
    s.cleanup = r.strings("cleanup").value_or(std::vector<std::string>{});
    s.allowed_problems = r.strings("allowed_problems").value_or(std::vector<std::string>{});
    for (const auto& re : s.allowed_problems) {
        try {
            std::regex check(re);
        } catch (const std::regex_error& err) {
            throw Error(r.at("allowed_problems", root.get("allowed_problems")) +
                        ": expected valid regexes, found /" + re + "/: " + err.what());
        }
    }
    for_each_table(r.array("sink"), "sink", source, [&](const auto& t, const auto& where) {
        SinkSpec sink = parse_sink(t, where, source);
        for (const auto& other : s.sinks)
            if (other.name == sink.name)
                throw Error(source + ": " + where + ": expected unique sink names, found '" +
                            sink.name + "' twice");
        s.sinks.push_back(std::move(sink));
    });
    if (const auto* pt = r.table("peers")) {
        TableReader p(*pt, "peers", source);
        s.peers.count = static_cast<int>(p.integer("count", 1, 16).value_or(1));
        if (auto v = p.integer("sent", 0, 10000000)) s.peers.sent = static_cast<int>(*v);
        s.peers.queue_empty = p.boolean("queue_empty").value_or(false);
        p.reject_unknown();
    }
    s.ports = r.strings("ports").value_or(std::vector<std::string>{});
    for (size_t i = 0; i < s.ports.size(); ++i)
        if (s.ports[i].empty() ||
            s.ports[i].find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") !=
                std::string::npos ||
            std::find(s.ports.begin(), s.ports.begin() + static_cast<long>(i), s.ports[i]) !=
                s.ports.begin() + static_cast<long>(i))
            throw Error(r.at("ports", root.get("ports")) +
                        ": expected unique names of [a-z0-9_-], found \"" + s.ports[i] + "\"");
    for_each_table(r.array("inject"), "inject", source, [&](const auto& t, const auto& w) {
        s.injects.push_back(parse_inject(t, w, source));
    });
    int last_after = 0;
    for_each_table(r.array("action"), "action", source, [&](const auto& t, const auto& where) {
        ActionSpec a = parse_action(t, where, source, static_cast<int>(s.injects.size()));
        if (a.after_inject < last_after)
            throw Error(source + ": " + where +
                        ": expected after_inject >= " + std::to_string(last_after) +
                        " (actions run in file order), found " + std::to_string(a.after_inject));
        last_after = a.after_inject;
        s.actions.push_back(std::move(a));
    });
    if (s.injects.empty() && s.actions.empty())
        throw Error(source + ": expected at least one [[inject]] or [[action]] step, found none");
    for_each_table(r.array("report"), "report", source, [&](const auto& t, const auto& where) {
        ReportSpec rep = parse_report(t, where, source);
        for (const auto& other : s.reports)
            if (other.name == rep.name)
                throw Error(source + ": " + where + ": expected unique report names, found '" +
                            rep.name + "' twice");
        s.reports.push_back(std::move(rep));
    });
    for_each_table(r.array("milestone"), "milestone", source, [&](const auto& t, const auto& w) {
        s.milestones.push_back(parse_milestone(t, w, source));
    });
    if (const auto* ex = r.table("expect")) s.expect = parse_expect(*ex, source);
    auto sink_named = [&s](const std::string& name) {
        return std::find_if(s.sinks.begin(), s.sinks.end(),
                            [&](const SinkSpec& k) { return k.name == name; });
    };
    for (size_t i = 0; i < s.injects.size(); ++i)
        if (s.injects[i].peer > s.peers.count)
            throw Error(source + ": inject[" + std::to_string(i) + "].peer: expected 0 or a " +
                        "peer of [peers] (count = " + std::to_string(s.peers.count) + "), found " +
                        std::to_string(s.injects[i].peer));
    for (const auto& a : s.actions) {
        std::vector<std::string> refs = {a.sink, a.connected_to};
        if (a.wait_for && a.wait_for->kind == WaitSpec::Kind::Connections)
            refs.push_back(a.wait_for->sink);
        for (const auto& ref : refs)
            if (!ref.empty() && sink_named(ref) == s.sinks.end())
                throw Error(source + ": " + a.where + ": expected the name of a [[sink]], found '" +
                            ref + "'");
    }
    for (const auto& [name, rg] : s.expect.peak_connections) {
        (void)rg;
        if (sink_named(name) == s.sinks.end())
            throw Error(source + ": expect.peak_connections." + name +
                        ": expected the name of a [[sink]], found none");
    }
    for (const auto& [name, rg] : s.expect.session_peak) {
        (void)rg;
        auto it = sink_named(name);
        if (it == s.sinks.end() || !it->count_sessions)
            throw Error(source + ": expect.session_peak." + name +
                        ": expected the name of a [[sink]] with count_sessions = true");
    }
    for (const auto& [key, rg] : s.expect.sender_session_peak) {
        (void)rg;
        size_t colon = key.find(':');
        auto it = sink_named(key.substr(0, colon));
        if (colon == std::string::npos || it == s.sinks.end() || !it->count_sessions)
            throw Error(source + ": expect.sender_session_peak.\"" + key +
                        "\": expected SINK:DOMAIN, SINK a [[sink]] with count_sessions = true");
    }
    for (const auto& [name, n] : s.expect.transactions) {
        (void)n;
        auto it = sink_named(name);
        if (it == s.sinks.end() || !it->dump)
            throw Error(source + ": expect.transactions." + name +
                        ": expected the name of a [[sink]] with dump = true");
    }
    for (const auto& sp : s.expect.spacing)
        for (const auto& name : sp.sinks) {
            auto it = sink_named(name);
            if (it == s.sinks.end() || !it->dump)
                throw Error(source +
                            ": expect.spacing.sinks: expected the name of a [[sink]] with "
                            "dump = true, found '" +
                            name + "'");
        }
    bool fs_actions = std::any_of(s.actions.begin(), s.actions.end(), [](const ActionSpec& a) {
        return a.kind == "fill_fs" || a.kind == "free_fs";
    });
    if (fs_actions && s.queue_fs.size_mib == 0)
        throw Error(source + ": fill_fs/free_fs actions: expected a queue_fs = { size_mib = N } "
                             "(they fill the queue's own file system), found none");
    for (const auto& [name, n] : s.expect.per_sink) {
        (void)n;
        bool known = std::any_of(s.sinks.begin(), s.sinks.end(),
                                 [&](const SinkSpec& k) { return k.name == name; });
        if (!known)
            throw Error(source + ": expect.per_sink." + name +
                        ": expected the name of a [[sink]], found none");
    }
    r.reject_unknown();
    return s;
}

// Debian's master.cf runs these with chroot = y (qmgr is not among them).
const std::vector<std::string>& chrootable_services() {
    static const std::vector<std::string> s = {
        "smtpd", "pickup", "cleanup", "rewrite", "bounce", "defer",   "trace", "verify", "flush",
        "smtp",  "relay",  "showq",   "error",   "retry",  "discard", "lmtp",  "anvil",  "scache"};
    return s;
}

// Loads a scenario from disk.
Scenario load_scenario(const std::string& path) {
    return parse_scenario(read_file(path), path);
}

// "KILL", "SIGKILL", "9" -> 9; throws naming `context` otherwise.
int signal_number(const std::string& name, const std::string& context) {
    static const std::map<std::string, int> names = {
        {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},
        {"KILL", SIGKILL}, {"USR1", SIGUSR1}, {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},
        {"TERM", SIGTERM}, {"STOP", SIGSTOP}, {"CONT", SIGCONT}};
    std::string n = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
    if (auto it = names.find(n); it != names.end()) return it->second;
    if (!n.empty() && n.find_first_not_of("0123456789") == std::string::npos) {
        int v = std::stoi(n);
        if (v >= 1 && v < 65) return v;
    }
    throw Error(context +
                ": expected a signal name (KILL, TERM, HUP, STOP, CONT, ...) or "
                "number, found '" +
                name + "'");
}

// "5", "[290, 310]", "[2, inf]".
std::string Range::describe() const {
    std::ostringstream o;
    if (min && max && *min == *max) {
        o << *min;
        return o.str();
    }
    o << "[";
    if (min)
        o << *min;
    else
        o << "-inf";
    o << ", ";
    if (max)
        o << *max;
    else
        o << "inf";
    o << "]";
    return o.str();
}

// Expands the harness's own ${...} variables and leaves Postfix's alone.
std::string Vars::expand(const std::string& text, const std::string& context) const {
    std::string out;
    size_t i = 0;
    while (i < text.size()) {
        size_t start = text.find("${", i);
        if (start == std::string::npos) {
            out.append(text, i, std::string::npos);
            break;
        }
        size_t end = text.find('}', start + 2);
        if (end == std::string::npos) {
            out.append(text, i, std::string::npos);
            break;
        }
        out.append(text, i, start - i);
        std::string name = text.substr(start + 2, end - start - 2);
        auto it = values_.find(name);
        if (it != values_.end()) {
            out += it->second;
        } else if (name.rfind("sink.", 0) == 0 || name.rfind("sinkdir.", 0) == 0 ||
                   name.rfind("port.", 0) == 0 || name == "dir" || name == "smtpd" ||
                   name == "conf" || name == "queue") {
            std::string known;
            for (const auto& [k, v] : values_)
                known += (known.empty() ? "" : ", ") + std::string("${") + k + "}";
            throw Error(context + ": unknown variable ${" + name + "} (expected one of: " + known +
                        ")");
        } else {
            out.append(text, start, end - start + 1); // Postfix's ${name}: keep
        }
        i = end + 1;
    }
    return out;
}

} // namespace compat
