#include "workload.hpp"

#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/values.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <toml++/toml.h>

namespace cqmgr::sim {

namespace {

// A [[message]] table before `repeat` makes copies of it.
struct MessageSpec {
    core::SimMessage message;
    int repeat = 1;
    double every = 0;
};

// What a key's reader fills in, and how it reports an error.
struct Context {
    const std::string& origin;
    Workload& workload;
    core::SimDestination* destination = nullptr;
    MessageSpec* message = nullptr;
    core::SimProvider* provider = nullptr;

    // Throws WorkloadError for `node`'s line.
    [[noreturn]] void fail(const toml::node& node, const std::string& text) const {
        std::ostringstream os;
        os << origin << ":" << node.source().begin.line << ": " << text;
        throw WorkloadError(os.str());
    }
    // A time: a TOML number of seconds, or Postfix's "N" / "Ns" / "Nm" /
    // "Nh" / "Nd" / "Nw".
    double seconds(const toml::node& v, std::string_view key) const {
        std::optional<double> s;
        if (auto n = v.value<double>(); n && (v.is_integer() || v.is_floating_point()))
            s = *n;
        else if (auto text = v.value<std::string>())
            if (auto t = conf::parse_time(*text, 's')) s = static_cast<double>(*t);
        if (!s || *s < 0 || !std::isfinite(*s))
            fail(v, std::string(key) +
                        ": expected a time (seconds, or Postfix's form such as 5s, 1m, 2h)");
        return *s;
    }
    // A whole number at least `min`.
    int count(const toml::node& v, std::string_view key, int min = 0) const {
        auto n = v.value_exact<int64_t>();
        if (!n || *n < min || *n > INT32_MAX)
            fail(v,
                 std::string(key) + ": expected a whole number of at least " + std::to_string(min));
        return static_cast<int>(*n);
    }
    // A string.
    std::string text(const toml::node& v, std::string_view key) const {
        auto s = v.value_exact<std::string>();
        if (!s) fail(v, std::string(key) + ": expected a string");
        return *s;
    }
    // true or false.
    bool flag(const toml::node& v, std::string_view key) const {
        auto b = v.value_exact<bool>();
        if (!b) fail(v, std::string(key) + ": expected true or false");
        return *b;
    }
    // A fraction in [0, 1].
    double fraction(const toml::node& v, std::string_view key) const {
        auto n = v.value<double>();
        if (!n || !(v.is_integer() || v.is_floating_point()) || *n < 0 || *n > 1)
            fail(v, std::string(key) + ": expected a number from 0 to 1");
        return *n;
    }
};

enum class Section { top, destination, message, provider };

const char* section_name(Section s) {
    return s == Section::top           ? "the top level"
           : s == Section::destination ? "[[destination]]"
           : s == Section::provider    ? "[[provider]]"
                                       : "[[message]]";
}

// Reads the value of one key into the context.
using Read = void (*)(Context&, const toml::node&, std::string_view key);

// One key of the workload file: where it may appear, what it means, how
// it is read.  Every key the file may have is in `keys` below.
struct Key {
    Section section;
    std::string_view name;
    Read read;
};

void read_main_cf(Context& c, const toml::node& v, std::string_view key);
void read_recipients(Context& c, const toml::node& v, std::string_view key);
void read_lane(Context& c, const toml::node& v, std::string_view key);
void read_reply(Context& c, const toml::node& v, std::string_view key);

const Key keys[] = {
    // The run.
    {Section::top, "end_time",
     [](Context& c, const toml::node& v, auto k) { c.workload.sim.end_time = c.seconds(v, k); }},
    {Section::top, "sample_every",
     [](Context& c, const toml::node& v, auto k) {
         c.workload.sim.sample_every = c.seconds(v, k);
         if (c.workload.sim.sample_every <= 0) c.fail(v, std::string(k) + ": must be above 0");
     }},
    // Seconds to read and resolve a batch of recipients (0: at once).
    {Section::top, "refill_latency",
     [](Context& c, const toml::node& v, auto k) {
         c.workload.sim.refill_latency = c.seconds(v, k);
     }},
    {Section::top, "seed",
     [](Context& c, const toml::node& v, auto k) {
         c.workload.sim.seed = static_cast<unsigned>(c.count(v, k));
     }},
    {Section::top, "readme_arithmetic",
     [](Context& c, const toml::node& v, auto k) { c.workload.readme_arithmetic = c.flag(v, k); }},
    {Section::top, "main_cf", read_main_cf},
    {Section::top, "master_cf",
     [](Context& c, const toml::node& v, auto k) { c.workload.master_cf = c.text(v, k); }},
    // The text of a pcre: table of reply rules that act, in place of
    // main.cf's cqmgr_reply_actions.
    {Section::top, "reply_actions",
     [](Context& c, const toml::node& v, auto k) { c.workload.reply_actions = c.text(v, k); }},
    // A simulated destination (the nexthop of its transport).
    {Section::destination, "name",
     [](Context& c, const toml::node& v, auto k) { c.destination->name = c.text(v, k); }},
    {Section::destination, "transport",
     [](Context& c, const toml::node& v, auto k) { c.destination->transport = c.text(v, k); }},
    // Sessions the server accepts at once; a further one gets 421.
    {Section::destination, "server_limit",
     [](Context& c, const toml::node& v, auto k) { c.destination->server_limit = c.count(v, k); }},
    // Delivery time per recipient.
    {Section::destination, "latency",
     [](Context& c, const toml::node& v, auto k) {
         c.destination->latency_per_rcpt = c.seconds(v, k);
     }},
    {Section::destination, "session_setup",
     [](Context& c, const toml::node& v, auto k) {
         c.destination->session_setup = c.seconds(v, k);
     }},
    // Every connection is refused (until down_until, if set).
    {Section::destination, "down",
     [](Context& c, const toml::node& v, auto k) { c.destination->down = c.flag(v, k); }},
    {Section::destination, "down_until",
     [](Context& c, const toml::node& v, auto k) {
         c.destination->down_until = c.seconds(v, k);
         c.destination->down = c.destination->down_until > 0 || c.destination->down;
     }},
    // The fraction of sessions that end in a 4.x.x failure.
    {Section::destination, "fail_ratio",
     [](Context& c, const toml::node& v, auto k) { c.destination->fail_ratio = c.fraction(v, k); }},
    // The shared receiver ([[provider]]) that serves it; cqmgr makes it
    // that provider's member too unless cqmgr_provider_maps is set.
    {Section::destination, "provider",
     [](Context& c, const toml::node& v, auto k) { c.destination->provider = c.text(v, k); }},
    // A receiver that serves several destinations ([[provider]]).
    {Section::provider, "name",
     [](Context& c, const toml::node& v, auto k) { c.provider->name = c.text(v, k); }},
    // Sessions at once across its destinations; beyond, session_reply.
    {Section::provider, "session_limit",
     [](Context& c, const toml::node& v, auto k) { c.provider->session_limit = c.count(v, k); }},
    {Section::provider, "session_reply", read_reply},
    // Sessions accepted per message_period; beyond, rate_reply.
    {Section::provider, "message_limit",
     [](Context& c, const toml::node& v, auto k) { c.provider->message_limit = c.count(v, k); }},
    {Section::provider, "message_period",
     [](Context& c, const toml::node& v, auto k) {
         c.provider->message_period = c.seconds(v, k);
         if (c.provider->message_period <= 0) c.fail(v, std::string(k) + ": must be above 0");
     }},
    {Section::provider, "rate_reply", read_reply},
    // After a rate_reply, refuse every session this long with it.
    {Section::provider, "block_for",
     [](Context& c, const toml::node& v, auto k) { c.provider->block_for = c.seconds(v, k); }},
    // A message, or `repeat` of them `every` seconds apart (id#1, id#2, ...).
    {Section::message, "id",
     [](Context& c, const toml::node& v, auto k) { c.message->message.id = c.text(v, k); }},
    {Section::message, "arrival",
     [](Context& c, const toml::node& v, auto k) { c.message->message.arrival = c.seconds(v, k); }},
    {Section::message, "repeat",
     [](Context& c, const toml::node& v, auto k) { c.message->repeat = c.count(v, k, 1); }},
    {Section::message, "every",
     [](Context& c, const toml::node& v, auto k) { c.message->every = c.seconds(v, k); }},
    {Section::message, "lane", read_lane},
    // Its envelope sender (cqmgr_sender_limits finds its group by it).
    {Section::message, "sender",
     [](Context& c, const toml::node& v, auto k) { c.message->message.sender = c.text(v, k); }},
    {Section::message, "recipients", read_recipients},
};

// main_cf = { name = value }: values as main.cf would have them.
void read_main_cf(Context& c, const toml::node& v, std::string_view key) {
    auto t = v.as_table();
    if (!t) c.fail(v, std::string(key) + ": expected a table of main.cf parameters");
    std::map<int, std::string> lines; // by line of the workload file
    for (auto& [name, value] : *t) {
        std::string n(name.str());
        if (!known_parameter(n)) c.fail(value, "main_cf: unknown parameter " + n);
        std::string text;
        if (auto s = value.value_exact<std::string>())
            text = *s;
        else if (auto i = value.value_exact<int64_t>())
            text = std::to_string(*i);
        else if (auto b = value.value_exact<bool>())
            text = *b ? "yes" : "no";
        else
            c.fail(value, "main_cf: " + n + ": expected a string, a whole number or true/false");
        if (text.find_first_of("\r\n") != std::string::npos)
            c.fail(value, "main_cf: " + n + ": a value is one line");
        auto& line = lines[static_cast<int>(name.source().begin.line)];
        line += (line.empty() ? "" : "\n") + n + " = " + text;
    }
    std::string& out = c.workload.main_cf;
    int at = 1;
    for (const auto& [line, text] : lines) {
        for (; at < line; ++at)
            out += '\n';
        out += text + '\n';
        at += 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    }
}

// recipients = { destination = count, ... }
void read_recipients(Context& c, const toml::node& v, std::string_view key) {
    auto t = v.as_table();
    if (!t) c.fail(v, std::string(key) + ": expected { destination = count, ... }");
    for (auto& [dest, n] : *t)
        c.message->message.recipients.emplace_back(std::string(dest.str()),
                                                   c.count(n, "recipient count", 1));
}

// lane = "urgent" | "normal" | "bulk": the class cqmgr_priority_maps gives it.
void read_lane(Context& c, const toml::node& v, std::string_view key) {
    std::string lane = c.text(v, key);
    if (lane == "urgent")
        c.message->message.lane = core::Lane::urgent;
    else if (lane == "bulk")
        c.message->message.lane = core::Lane::bulk;
    else if (lane == "normal")
        c.message->message.lane = core::Lane::normal;
    else
        c.fail(v, "lane: expected \"urgent\", \"normal\" or \"bulk\"");
}

// session_reply, rate_reply: an SMTP reply line, "4NN 4.X.Y text".
void read_reply(Context& c, const toml::node& v, std::string_view key) {
    std::string reply = c.text(v, key);
    bool ok = reply.size() >= 4 && reply[0] == '4' && std::isdigit(reply[1]) &&
              std::isdigit(reply[2]) && reply[3] == ' ' &&
              reply.find_first_of("\r\n") == std::string::npos;
    if (!ok) c.fail(v, std::string(key) + ": expected one SMTP reply line \"4NN 4.X.Y text\"");
    (key == "session_reply" ? c.provider->session_reply : c.provider->rate_reply) = reply;
}

// Reads every key of `table` in `section` through the key table.
void read_keys(Context& c, const toml::table& table, Section section) {
    for (auto& [name, value] : table) {
        if (section == Section::top &&
            (name == "destination" || name == "message" || name == "provider"))
            continue;
        const Key* key = nullptr;
        for (const auto& k : keys)
            if (k.section == section && k.name == name.str()) key = &k;
        if (!key) {
            std::ostringstream os;
            os << c.origin << ":" << name.source().begin.line << ": unknown key \"" << name.str()
               << "\" in " << section_name(section);
            throw WorkloadError(os.str());
        }
        key->read(c, value, name.str());
    }
}

// The array of tables `name` ([[name]]), empty when absent.
const toml::array* tables(const Context& c, const toml::table& doc, const char* name) {
    const toml::node* node = doc.get(name);
    if (!node) return nullptr;
    auto a = node->as_array();
    if (!a || !a->is_array_of_tables())
        c.fail(*node, std::string(name) + ": expected tables ([[" + name + "]])");
    return a;
}

// Reads each [[name]] table into a T in `out` (`slot` points the keys'
// readers at it while they run); each must have a name of its own.  The
// names read.
template <class T>
std::set<std::string> read_named(Context& c, const toml::table& doc, const char* name,
                                 Section section, T* Context::*slot, std::vector<T>& out) {
    std::set<std::string> names;
    if (auto ts = tables(c, doc, name))
        for (auto& node : *ts) {
            T item;
            c.*slot = &item;
            read_keys(c, *node.as_table(), section);
            if (item.name.empty()) c.fail(node, "[[" + std::string(name) + "]]: name is required");
            if (!names.insert(item.name).second)
                c.fail(node, std::string(name) + " " + item.name + " twice");
            out.push_back(item);
        }
    c.*slot = nullptr;
    return names;
}

} // namespace

bool known_parameter(std::string_view name) {
    // cqmgr's parameters that change the simulation.
    // (cqmgr_destination_agent_share: the static cap only; the isolation
    // that lowers it runs in the daemon, from real delivery times.)
    static const std::set<std::string_view> cqmgr_params = {
        "cqmgr_urgent_agent_share", "cqmgr_bulk_agent_share", "cqmgr_destination_agent_share",
        "cqmgr_scheduler_policy"};
    if (cqmgr_params.count(name) || conf::find_param(name)) return true;
    auto ends_with = [&](std::string_view suffix) {
        return name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
    };
    for (const auto& s : conf::transport_suffixes())
        if (ends_with(s.suffix)) return true;
    return ends_with("_cqmgr_urgent_agent_share") || ends_with("_cqmgr_destination_agent_share") ||
           ends_with("_cqmgr_scheduler_policy");
}

Workload parse_workload(std::string_view text, const std::string& origin) {
    toml::table doc;
    try {
        doc = toml::parse(text, origin);
    } catch (const toml::parse_error& e) {
        std::ostringstream os;
        os << origin << ":" << e.source().begin.line << ": " << e.description();
        throw WorkloadError(os.str());
    }
    Workload w;
    w.origin = origin;
    Context c{origin, w};
    read_keys(c, doc, Section::top);
    read_named(c, doc, "provider", Section::provider, &Context::provider, w.sim.providers);
    const std::set<std::string> names = read_named(c, doc, "destination", Section::destination,
                                                   &Context::destination, w.sim.destinations);
    std::set<std::string> ids;
    if (auto ms = tables(c, doc, "message"))
        for (auto& node : *ms) {
            MessageSpec m;
            m.message.id = "M";
            c.message = &m;
            read_keys(c, *node.as_table(), Section::message);
            if (m.message.recipients.empty())
                c.fail(node, "[[message]]: recipients = { destination = count, ... } is required");
            for (const auto& [dest, n] : m.message.recipients)
                if (!names.count(dest))
                    c.fail(node, "message " + m.message.id + ": unknown destination " + dest);
            for (int i = 0; i < m.repeat; ++i) {
                core::SimMessage sm = m.message;
                if (m.repeat > 1) sm.id += "#" + std::to_string(i + 1);
                if (!ids.insert(sm.id).second) c.fail(node, "message id " + sm.id + " twice");
                sm.arrival += i * m.every;
                w.sim.messages.push_back(std::move(sm));
            }
        }
    return w;
}

Workload read_workload(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw WorkloadError(path + ": cannot read it");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_workload(text.str(), path);
}

} // namespace cqmgr::sim
