#include "format.hpp"

#include "cqmgr/control/request.hpp"
#include "fields.hpp"

#include <algorithm>
#include <utility>

namespace cqmgr::ctl {

namespace {

using Align = Table::Align;

// Label/value lines with the values aligned after the longest label.
std::string labelled(const std::vector<std::pair<std::string, std::string>>& lines) {
    size_t width = 0;
    for (const auto& [label, value] : lines)
        width = std::max(width, label.size());
    std::string out;
    for (const auto& [label, value] : lines)
        out += label + ":" + std::string(width - label.size() + 2, ' ') + value + '\n';
    return out;
}

// "N what" for a count field, "- what" when absent.
std::string counted(const json& obj, std::string_view key, std::string_view what) {
    return count_of(obj, key) + " " + std::string(what);
}

// What the adaptive limits learned ("learned 5", "learned delay 12s",
// both; "slow start 6" for a slow start's cap; a window's quota "learned
// 60/61s", "held" while it is spent), or "" when nothing.
std::string learned_text(const json& entry) {
    const json* l = field(entry, "learned");
    if (!l) return "";
    std::string out;
    if (bool_of(*l, "slow_start")) {
        out = "slow start " + count_of(*l, "concurrency");
    } else {
        if (field(*l, "concurrency")) out = "learned " + count_of(*l, "concurrency");
        if (field(*l, "rate_delay"))
            out += (out.empty() ? "learned" : ",") + std::string(" delay ") +
                   count_of(*l, "rate_delay") + "s";
    }
    if (field(*l, "quota"))
        out += (out.empty() ? "learned " : ", ") + count_of(*l, "quota") + "/" +
               count_of(*l, "window") + "s" + (field(*l, "held_until") ? " held" : "");
    return out;
}

// A reply rule's action `r` ("rule suspend", "rule throttle 2", "rule
// pause 60s").
std::string rule_words(const json& r) {
    if (bool_of(r, "hold")) return "rule suspend";
    if (field(r, "concurrency")) return "rule throttle " + count_of(r, "concurrency");
    if (field(r, "pause")) return "rule pause " + count_of(r, "pause") + "s";
    return "rule";
}

// The reply rule's action that bounds the queue, or "" when none.
std::string rule_text(const json& entry) {
    const json* r = field(entry, "rule");
    return r ? rule_words(*r) : "";
}

// The reply that made rule action `r` act, and the rule.
std::string rule_reason(const json& r) {
    std::string reason = string_of(r, "reason", "");
    const std::string rule = string_of(r, "rule", "");
    if (!rule.empty()) reason += (reason.empty() ? "(" : " (") + rule + ")";
    return reason;
}

// The reply rules' actions on one sender group's mail on the queue:
// "sender GROUP rule throttle 2", each with its action.
std::vector<std::pair<std::string, const json*>> sender_rule_texts(const json& entry) {
    std::vector<std::pair<std::string, const json*>> out;
    for (const json& r : array_of(entry, "sender_rules"))
        if (r.is_object())
            out.emplace_back("sender " + string_of(r, "group", "?") + " " + rule_words(r), &r);
    return out;
}

// The short state flags of a transport or queue: dead, suspended, throttled,
// a reply rule's action, learned limits, a lowered destination share, rate
// delay.
std::string state_flags(const json& entry) {
    std::vector<std::string> flags;
    if (field(entry, "dead")) flags.push_back("dead");
    if (field(entry, "suspended")) flags.push_back("suspended");
    if (const json* t = field(entry, "throttle"))
        flags.push_back("throttle " + count_of(*t, "concurrency"));
    if (std::string r = rule_text(entry); !r.empty()) flags.push_back(r);
    for (const auto& [text, r] : sender_rule_texts(entry))
        flags.push_back(text);
    if (std::string l = learned_text(entry); !l.empty()) flags.push_back(l);
    // A destination share the isolation lowered ("share 2/50", "probe
    // 1/50"); the full share is no news.
    if (const json* sh = field(entry, "share"); sh && bool_of(*sh, "lowered"))
        flags.push_back(std::string(bool_of(*sh, "probe") ? "probe " : "share ") +
                        count_of(*sh, "agents") + "/" + count_of(*sh, "full"));
    if (const json* r = field(entry, "rate_delay")) {
        if (r->is_object() && bool_of(*r, "waiting")) flags.push_back("rate delay");
    }
    if (bool_of(entry, "rate_locked")) flags.push_back("rate delay");
    std::string out;
    for (const auto& f : flags)
        out += (out.empty() ? "" : ", ") + f;
    return out;
}

} // namespace

std::string format_reply(std::string_view request, const json& reply, int64_t now) {
    const control::VerbSpec* spec =
        control::find_verb(request.substr(0, request.find_first_of(" \t")));
    if (!spec) return format_generic(reply);
    switch (spec->verb) {
    case control::Verb::help:
        return format_help(reply);
    case control::Verb::summary:
        return format_summary(reply);
    case control::Verb::queues:
        return format_queues(reply, now);
    case control::Verb::jobs:
        return format_jobs(reply);
    case control::Verb::message:
        return format_message(reply, now);
    case control::Verb::deliveries:
        return format_deliveries(reply);
    case control::Verb::providers:
        return format_providers(reply);
    case control::Verb::explain:
        return format_explain(reply, now);
    case control::Verb::suspend:
    case control::Verb::resume:
    case control::Verb::flush:
    case control::Verb::throttle:
    case control::Verb::unthrottle:
        return format_changed(reply, now);
    }
    return format_generic(reply);
}

std::string format_summary(const json& reply) {
    const json& active = object_of(reply, "active");
    const json& feed = object_of(reply, "feed");
    const json& resolver = object_of(reply, "resolver");
    const json& counters = object_of(reply, "counters");

    std::string head = string_of(reply, "version", "cqmgr") + ", pid " + count_of(reply, "pid");
    if (auto up = number_of(reply, "uptime")) head += ", up " + format_seconds(*up);

    std::string active_text = counted(active, "messages", "messages") + " (limit " +
                              count_of(active, "message_limit") + "), " +
                              counted(active, "recipients", "recipients") + " (limit " +
                              count_of(active, "recipient_limit") + ")";
    if (auto oldest = number_of(active, "oldest_age"))
        active_text += ", oldest " + format_seconds(*oldest);

    return head + '\n' +
           labelled({
               {"active queue", active_text},
               {"feed", feed_state(feed)},
               {"resolver", counted(resolver, "requests", "requests") + ", " +
                                counted(resolver, "cache_hits", "cache hits")},
               {"scheduler", counted(reply, "transports", "transports") + ", " +
                                 counted(reply, "queues", "queues") + ", " +
                                 counted(reply, "deliveries_in_flight", "deliveries in flight")},
               {"mail queues", mail_queues(object_of(reply, "mail_queues"))},
               {"delivery requests",
                counter_list(object_of(counters, "deliveries"), delivery_counters)},
               {"messages", counter_list(object_of(counters, "messages"), message_counters)},
           }) +
           // Its own line: its label is too long to align the others on.
           "destination failures (hop status): " + destination_failures(counters) + '\n';
}

std::string mail_queues(const json& queues) {
    std::string out;
    for (const char* name : {"incoming", "active", "deferred"}) {
        const json& q = object_of(queues, name);
        std::string text = std::string(name) + " " + count_of(q, "messages");
        auto messages = number_of(q, "messages");
        if (auto oldest = number_of(q, "oldest_age"); oldest && messages && *messages > 0)
            text += " (oldest " + format_seconds(*oldest) + ")";
        out += (out.empty() ? "" : ", ") + text;
    }
    return out;
}

std::string destination_failures(const json& counters) {
    // A daemon that predates the name sends only dsn_class, whose "2" is
    // always 0 (a hop status is set only on failure).
    const json* failures = field(counters, "destination_failures");
    json classes = failures ? *failures : object_of(counters, "dsn_class");
    if (classes.is_object()) classes.erase("2");
    std::string out = counter_list(classes, {}, ".x.x");
    return out == "-" ? "none" : out;
}

std::string counter_list(const json& counters, std::span<const std::string_view> order,
                         std::string_view suffix) {
    if (!counters.is_object()) return "-";
    std::vector<std::string> names;
    for (auto name : order)
        if (counters.contains(name)) names.emplace_back(name);
    for (const auto& [name, value] : counters.items())
        if (std::find(order.begin(), order.end(), name) == order.end()) names.push_back(name);
    std::string out;
    for (const auto& name : names) {
        const json& value = *counters.find(name);
        if (!out.empty()) out += ", ";
        out += (value.is_number() ? number_text(value.get<double>()) : value.dump()) + " " + name +
               std::string(suffix);
    }
    return out.empty() ? "-" : out;
}

std::string feed_state(const json& feed) {
    std::string text;
    if (bool_of(feed, "paused")) text = "paused";
    std::string scanning;
    for (const auto& q : array_of(feed, "scanning"))
        if (q.is_string()) scanning += (scanning.empty() ? "" : ", ") + q.get<std::string>();
    if (!scanning.empty()) text += (text.empty() ? "" : ", ") + std::string("scanning ") + scanning;
    if (text.empty()) text = "idle";
    return text + ", " + counted(feed, "in_flow_tokens_written", "in-flow tokens written");
}

std::vector<QueueRow> queue_rows(const json& queues_reply, bool with_transports) {
    std::vector<QueueRow> rows;
    for (const auto& t : array_of(queues_reply, "transports")) {
        const std::string transport = string_of(t, "name");
        auto load = [](const json& e) {
            return number_of(e, "busy").value_or(0) + number_of(e, "todo").value_or(0);
        };
        if (with_transports) rows.push_back({transport, "*", &t, load(t)});
        for (const auto& q : array_of(t, "queues"))
            rows.push_back({transport, string_of(q, "name"), &q, load(q)});
    }
    return rows;
}

Table queue_table(const std::vector<QueueRow>& rows) {
    Table table({{"TRANSPORT"},
                 {"DESTINATION"},
                 {"WINDOW", Align::Right},
                 {"BUSY", Align::Right},
                 {"TODO", Align::Right},
                 {"LAST"},
                 {"STATE"}});
    for (const auto& row : rows) {
        const json& e = *row.entry;
        table.add({row.transport, row.queue, count_of(e, "window"), count_of(e, "busy"),
                   count_of(e, "todo"), string_of(object_of(e, "last_dsn"), "status"),
                   state_flags(e)});
    }
    return table;
}

Table condition_table(const json& queues_reply, int64_t now, bool throttled) {
    Table table({{"TARGET"}, {"CONDITION"}, {"UNTIL"}, {"REASON"}});
    for (const auto& row : queue_rows(queues_reply, true)) {
        const json& e = *row.entry;
        const std::string target =
            row.queue == "*" ? row.transport : row.transport + ":" + row.queue;
        if (const json* dead = field(e, "dead")) {
            std::string reason = string_of(*dead, "reason", "");
            const std::string status = string_of(*dead, "status", "");
            if (!status.empty()) reason = status + " " + reason;
            table.add({target, "dead", format_until(*dead, "until", now), reason});
        }
        if (const json* s = field(e, "suspended")) {
            std::string reason = string_of(*s, "reason", "");
            if (auto by = number_of(*s, "by"))
                reason +=
                    (reason.empty() ? "" : " ") + std::string("(by uid ") + number_text(*by) + ")";
            table.add({target, "suspended", format_until(*s, "until", now), reason});
        }
        if (const json* t = field(e, "throttle"); t && throttled)
            table.add({target, "throttle " + count_of(*t, "concurrency"),
                       format_until(*t, "until", now), ""});
        if (const json* r = field(e, "rule"))
            table.add({target, rule_text(e), format_until(*r, "until", now), rule_reason(*r)});
        for (const auto& [text, r] : sender_rule_texts(e))
            table.add({target, text, format_until(*r, "until", now), rule_reason(*r)});
        if (std::string l = learned_text(e); !l.empty() && throttled) {
            const json& learned = *field(e, "learned");
            std::string reason = string_of(learned, "reason", "");
            const std::string status = string_of(learned, "status", "");
            if (!status.empty()) reason = status + " " + reason;
            // A window's quota spent: held until the window ends.
            table.add({target, l, format_until(learned, "held_until", now, "-"), reason});
        }
    }
    return table;
}

std::string format_queues(const json& reply, int64_t now) {
    const auto rows = queue_rows(reply, true);
    if (rows.empty()) return "no transports\n";
    std::string out = queue_table(rows).text();
    Table conditions = condition_table(reply, now, true);
    if (!conditions.empty()) out += '\n' + conditions.text();
    return out;
}

std::string format_jobs(const json& reply) {
    Table table({{"TRANSPORT"},
                 {"QUEUE_ID"},
                 {"LANE"},
                 {"LEVEL", Align::Right},
                 {"PARENT"},
                 {"SLOTS", Align::Right},
                 {"ENTRIES", Align::Right},
                 {"RCPTS", Align::Right},
                 {"LIMIT", Align::Right},
                 {"UNREAD", Align::Right},
                 {"PEERS", Align::Right},
                 {"BLOCKER"}});
    for (const auto& t : array_of(reply, "transports")) {
        for (const auto& j : array_of(t, "jobs")) {
            // Preempting jobs are indented under their parent's level.
            const auto level = static_cast<size_t>(number_of(j, "stack_level").value_or(0));
            table.add({string_of(t, "name"),
                       std::string(2 * std::min<size_t>(level, 8), ' ') + string_of(j, "queue_id"),
                       string_of(j, "lane"), count_of(j, "stack_level"), string_of(j, "parent"),
                       count_of(j, "slots_used") + "/" + count_of(j, "slots_available"),
                       count_of(j, "selected_entries") + "/" + count_of(j, "read_entries"),
                       count_of(j, "rcpt_count"), count_of(j, "rcpt_limit"),
                       count_of(j, "rcpt_unread"), count_of(j, "peers"),
                       bool_of(j, "blocker") ? "yes" : "no"});
        }
    }
    if (table.empty()) return "no jobs\n";
    return table.text();
}

std::string format_message(const json& reply, int64_t now) {
    std::string queued = "-";
    if (auto q = number_of(reply, "queued")) {
        queued = format_time(static_cast<int64_t>(*q));
        if (*q <= static_cast<double>(now))
            queued += " (" + format_seconds(static_cast<double>(now) - *q) + " ago)";
    }
    std::string out = string_of(reply, "queue_id") + '\n' +
                      labelled({
                          {"phase", string_of(reply, "phase")},
                          {"queued", queued},
                          {"recipients", count_of(reply, "recipients_in_core") + " in core, " +
                                             count_of(reply, "recipients_unread") + " unread"},
                      });
    Table table({{"TRANSPORT"}, {"QUEUE"}, {"STATE"}, {"RECIPIENT"}});
    for (const auto& e : array_of(reply, "entries")) {
        const std::string transport = string_of(e, "transport");
        const std::string queue = string_of(e, "queue");
        const std::string state = string_of(e, "state");
        const json& rcpts = array_of(e, "recipients");
        if (rcpts.empty()) table.add({transport, queue, state, "-"});
        for (const auto& r : rcpts)
            table.add({transport, queue, state, r.is_string() ? r.get<std::string>() : r.dump()});
    }
    if (!table.empty()) out += '\n' + table.text();
    return out;
}

std::string format_deliveries(const json& reply) {
    std::vector<const json*> list;
    for (const auto& d : array_of(reply, "deliveries"))
        list.push_back(&d);
    if (list.empty()) return "no deliveries in flight\n";
    // The oldest first: a delivery that takes long is what one looks for.
    std::stable_sort(list.begin(), list.end(), [](const json* a, const json* b) {
        return number_of(*a, "age").value_or(0) > number_of(*b, "age").value_or(0);
    });
    Table table(
        {{"TRANSPORT"}, {"QUEUE"}, {"QUEUE_ID"}, {"RCPTS", Align::Right}, {"AGE", Align::Right}});
    for (const json* d : list) {
        auto age = number_of(*d, "age");
        table.add({string_of(*d, "transport"), string_of(*d, "queue"), string_of(*d, "queue_id"),
                   count_of(*d, "recipients"), age ? format_seconds(*age) : "-"});
    }
    return table.text();
}

std::string format_providers(const json& reply) {
    const json& list = array_of(reply, "providers");
    if (list.empty()) return "no provider has members\n";
    std::string out;
    for (const auto& p : list) {
        // One line for the provider and its limits, then its members.
        std::string limits;
        for (const auto& l : array_of(p, "limits")) {
            std::string one = string_of(l, "scope") + ": ";
            if (number_of(l, "concurrency"))
                one += "concurrency " + count_of(l, "concurrency") + " (" +
                       count_of(l, "in_flight_here") + " in flight here, " +
                       count_of(l, "leases_held") + " leases)";
            else
                one += "rate " + string_of(l, "rate");
            limits += (limits.empty() ? "" : "; ") + one;
        }
        out += string_of(p, "provider") + ": " + count_of(p, "in_flight") + " in flight" +
               (limits.empty() ? "" : "; " + limits) + '\n';
        Table table({{"TRANSPORT"}, {"QUEUE"}, {"IN_FLIGHT", Align::Right}});
        for (const auto& m : array_of(p, "members"))
            table.add({string_of(m, "transport"), string_of(m, "queue"), count_of(m, "in_flight")});
        out += table.text();
    }
    return out;
}

namespace {

// "4.4.1 reason (12s ago)" of an explain reply's last deferral.
std::string last_deferral_text(const json& q, int64_t now) {
    const json* d = field(q, "last_deferral");
    if (!d) return "none since cqmgr started";
    std::string text = string_of(*d, "status", "");
    const std::string reason = string_of(*d, "reason", "");
    if (!reason.empty()) text += (text.empty() ? "" : " ") + reason;
    if (auto when = number_of(*d, "when"))
        text += " (" + format_time(static_cast<int64_t>(*when)) +
                (*when <= static_cast<double>(now)
                     ? ", " + format_seconds(static_cast<double>(now) - *when) + " ago"
                     : std::string()) +
                ")";
    return text;
}

// What the marks of limit_table() mean.
constexpr const char* limit_legend = "(* binds now, - not in force now)\n";

// The limits of one queue (or the settings kept for a destination) as a
// table: the binding line marked "*", lines not in force "-".
Table limit_table(const json& lines) {
    Table table({{""}, {"BOUND"}, {"VALUE", Align::Right}, {"SOURCE"}, {"DETAIL"}});
    for (const auto& l : lines) {
        const json* v = field(l, "value");
        std::string value = !v               ? "-"
                            : v->is_string() ? v->get<std::string>()
                            : v->is_number() ? number_text(v->get<double>())
                                             : v->dump();
        std::string mark = bool_of(l, "binds") ? "*" : bool_of(l, "in_force") ? "" : "-";
        table.add({mark, string_of(l, "bound"), value, string_of(l, "source"),
                   string_of(l, "detail", "")});
    }
    return table;
}

} // namespace

std::string format_explain(const json& reply, int64_t now) {
    std::string out;
    if (const json* p = field(reply, "provider"); p && p->is_string())
        out += "provider " + p->get<std::string>() + '\n';
    for (const auto& q : array_of(reply, "queues")) {
        if (!out.empty()) out += '\n';
        const json& eff = object_of(q, "effective");
        const json& w = object_of(q, "waiting");
        const json& next = object_of(q, "next_retry");
        const json& deferred = object_of(q, "deferred");
        std::string rate = field(eff, "rate") ? string_of(eff, "rate") : "no limit";
        std::string deferred_text = string_of(deferred, "note", "");
        if (field(deferred, "messages"))
            deferred_text = count_of(deferred, "messages") + " messages; " + deferred_text;
        out +=
            string_of(q, "transport") + ":" + string_of(q, "destination") + '\n' +
            labelled({
                {"effective", "concurrency " + count_of(eff, "concurrency") + ", rate " + rate},
                {"waiting", counted(w, "messages", "messages") + ", " +
                                counted(w, "recipients", "recipients") + " in the active queue, " +
                                count_of(w, "in_flight") + " in flight"},
                {"last deferral", last_deferral_text(q, now)},
                {"next retry", string_of(next, "what")},
                {"deferred mail", deferred_text},
            }) +
            '\n' + limit_table(array_of(q, "limits")).text() + limit_legend;
    }
    if (array_of(reply, "queues").empty()) {
        out += string_of(reply, "note", "no such destination") + '\n';
        const json& kept = array_of(reply, "kept");
        if (!kept.empty()) out += "kept for its next mail:\n" + limit_table(kept).text();
    }
    return out;
}

std::string format_changed(const json& reply, int64_t now) {
    // What the reply says besides the changes: a flush's word on the
    // deferred mail, a warning that a change is not kept.
    std::string notes;
    for (const char* key : {"deferred", "warning"})
        if (const json* v = field(reply, key); v && v->is_string())
            notes += std::string(key) + ": " + v->get<std::string>() + '\n';
    const json& changed = array_of(reply, "changed");
    if (changed.empty()) return "nothing changed\n" + notes;
    Table table({{"TARGET"}, {"CHANGE"}});
    for (const auto& c : changed) {
        std::vector<std::string> parts;
        std::string reason;
        if (c.is_object()) {
            for (const auto& [key, value] : c.items()) {
                if (key == "target" || value.is_null()) continue;
                if (key == "until")
                    parts.push_back("until " + format_until(c, "until", now));
                else if (key == "reason")
                    reason = value.is_string() ? value.get<std::string>() : value.dump();
                else if (value.is_boolean())
                    parts.push_back(value.get<bool>() ? key : "not " + key);
                else if (value.is_number())
                    parts.push_back(key + " " + number_text(value.get<double>()));
                else if (value.is_string())
                    parts.push_back(key + " " + value.get<std::string>());
                else
                    parts.push_back(key + " " + value.dump());
            }
        }
        std::string text;
        for (const auto& p : parts)
            text += (text.empty() ? "" : ", ") + p;
        if (!reason.empty()) text += (text.empty() ? "" : ": ") + reason;
        table.add({string_of(c, "target"), text});
    }
    return table.text() + notes;
}

std::string format_help(const json& reply) {
    const json* requests = field(reply, "requests");
    if (!requests) requests = field(reply, "help");
    if (requests && requests->is_string()) {
        std::string text = requests->get<std::string>();
        return text.empty() || text.back() == '\n' ? text : text + '\n';
    }
    if (requests && requests->is_array()) {
        std::string out;
        for (const auto& r : *requests) {
            if (r.is_string())
                out += r.get<std::string>() + '\n';
            else if (r.is_object())
                out += string_of(r, "usage", string_of(r, "name")) +
                       (field(r, "description") ? "  " + string_of(r, "description") : "") + '\n';
        }
        return out;
    }
    return format_generic(reply);
}

std::string format_generic(const json& reply) {
    return reply.dump(2) + '\n';
}

} // namespace cqmgr::ctl
