#include "cqmgr/control/request.hpp"

#include <array>
#include <charconv>
#include <cstdint>

namespace cqmgr::control {

namespace {

constexpr std::array<VerbSpec, 13> kVerbs{{
    {Verb::help, "help", "help", 0, 0},
    {Verb::summary, "summary", "summary", 0, 0},
    {Verb::queues, "queues", "queues [TRANSPORT]", 0, 1},
    {Verb::jobs, "jobs", "jobs [TRANSPORT]", 0, 1},
    {Verb::message, "message", "message QUEUE_ID", 1, 1},
    {Verb::deliveries, "deliveries", "deliveries", 0, 0},
    {Verb::providers, "providers", "providers", 0, 0},
    {Verb::explain, "explain", "explain [TRANSPORT:]DESTINATION|PROVIDER", 1, 1},
    {Verb::suspend, "suspend", "suspend TRANSPORT[:DESTINATION] [for DURATION] [reason TEXT...]", 1,
     SIZE_MAX},
    {Verb::resume, "resume", "resume TRANSPORT[:DESTINATION] [sender GROUP]", 1, 3},
    {Verb::flush, "flush", "flush [TRANSPORT:]DESTINATION", 1, 1},
    {Verb::throttle, "throttle", "throttle [TRANSPORT:]DESTINATION CONCURRENCY [for DURATION]", 2,
     4},
    {Verb::unthrottle, "unthrottle", "unthrottle [TRANSPORT:]DESTINATION", 1, 1},
}};

// The longest queue ID, transport name or echoed word we accept.
constexpr size_t max_name = 64;
// The longest sender group (a sender address or domain).
constexpr size_t max_group = 255;
// The largest throttle concurrency: far above any window, small enough for
// an int everywhere.
constexpr int max_concurrency = 1000000;

const VerbSpec& info(Verb v) {
    return kVerbs[static_cast<size_t>(v)];
}

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equals_nocase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

bool blank(char c) {
    return c == ' ' || c == '\t';
}

// A word of the line and where it starts.
struct Word {
    std::string_view text;
    size_t pos;
};

std::vector<Word> split_words(std::string_view line) {
    std::vector<Word> words;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && blank(line[i]))
            ++i;
        size_t start = i;
        while (i < line.size() && !blank(line[i]))
            ++i;
        if (i > start) words.push_back({line.substr(start, i - start), start});
    }
    return words;
}

// A master.cf service name as a transport: letters, digits and . _ - +.
bool valid_transport(std::string_view s) {
    if (s.empty() || s.size() > max_name) return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-' || c == '+'))
            return false;
    return true;
}

// A queue ID, short (hex) or long form: letters and digits.
bool valid_queue_id(std::string_view s) {
    if (s.empty() || s.size() > max_name) return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return false;
    return true;
}

// A word for an error text: cut, so that a reply stays short.
std::string echo(std::string_view w) {
    if (w.size() <= max_name) return std::string(w);
    return std::string(w.substr(0, max_name)) + "...";
}

Parsed fail(std::string text) {
    return Parsed{std::nullopt, std::move(text)};
}

Parsed usage(Verb v) {
    return fail("usage: " + std::string(info(v).usage));
}

// TRANSPORT or TRANSPORT:DESTINATION (suspend, resume).
std::optional<Target> transport_target(std::string_view w) {
    Target t{std::string(w), {}, {}};
    auto colon = w.find(':');
    t.transport = std::string(w.substr(0, colon));
    if (colon != std::string_view::npos) {
        t.destination = std::string(w.substr(colon + 1));
        if (t.destination.empty()) return std::nullopt;
    }
    if (!valid_transport(t.transport)) return std::nullopt;
    return t;
}

// [TRANSPORT:]DESTINATION (explain, flush, throttle, unthrottle).  A colon splits
// only when what precedes it can be a transport name, so that a bare
// "[192.0.2.1]:25" stays one destination.
Target destination_target(std::string_view w) {
    Target t{std::string(w), {}, std::string(w)};
    auto colon = w.find(':');
    if (colon != std::string_view::npos && colon + 1 < w.size() &&
        valid_transport(w.substr(0, colon))) {
        t.transport = std::string(w.substr(0, colon));
        t.destination = std::string(w.substr(colon + 1));
    }
    return t;
}

std::optional<int> parse_concurrency(std::string_view s) {
    int n = 0;
    if (s.empty() || s.size() > 7 || s[0] == '+' || s[0] == '-') return std::nullopt;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || end != s.data() + s.size() || n < 1 || n > max_concurrency)
        return std::nullopt;
    return n;
}

Parsed bad_duration(std::string_view w) {
    return fail("bad duration: " + echo(w) +
                " (a number with an optional unit s, m, h, d or w; 1s to 365d)");
}

// resume's [sender GROUP] after its target: only that sender group's
// actions end (the group as cqmgr_sender_limits names it, in lower case).
Parsed sender_option(Request r, const std::vector<Word>& w) {
    if (w.size() == 2) return Parsed{std::move(r), {}};
    if (w.size() != 4 || !equals_nocase(w[2].text, "sender")) return usage(r.verb);
    if (w[3].text.size() > max_group) return fail("bad sender group: " + echo(w[3].text));
    for (char c : w[3].text)
        r.sender += lower(c);
    return Parsed{std::move(r), {}};
}

// The reason text: the rest of the line after `reason`, tabs as spaces,
// without trailing blanks.
std::string reason_text(std::string_view rest) {
    while (!rest.empty() && blank(rest.back()))
        rest.remove_suffix(1);
    std::string r(rest);
    for (char& c : r)
        if (c == '\t') c = ' ';
    return r;
}

// The arguments of suspend after its target, and of throttle after its
// concurrency: [for DURATION] and, with `reason_ok`, [reason TEXT...].
Parsed options(Request r, std::string_view line, const std::vector<Word>& w, size_t i,
               bool reason_ok) {
    if (i < w.size() && equals_nocase(w[i].text, "for")) {
        if (i + 1 >= w.size()) return usage(r.verb);
        r.duration = parse_duration(w[i + 1].text);
        if (!r.duration) return bad_duration(w[i + 1].text);
        i += 2;
    }
    if (reason_ok && i < w.size() && equals_nocase(w[i].text, "reason")) {
        if (i + 1 >= w.size()) return usage(r.verb);
        r.reason = reason_text(line.substr(w[i + 1].pos));
        i = w.size();
    }
    if (i != w.size()) return usage(r.verb);
    return Parsed{std::move(r), {}};
}

} // namespace

std::span<const VerbSpec> verbs() {
    return kVerbs;
}

const VerbSpec* find_verb(std::string_view name) {
    for (const VerbSpec& v : kVerbs)
        if (equals_nocase(name, v.name)) return &v;
    return nullptr;
}

std::string_view verb_name(Verb v) {
    return info(v).name;
}

const std::vector<std::string>& usage_lines() {
    static const std::vector<std::string> lines = [] {
        std::vector<std::string> v;
        for (const VerbSpec& i : kVerbs)
            v.emplace_back(i.usage);
        return v;
    }();
    return lines;
}

std::optional<int64_t> parse_duration(std::string_view s) {
    int64_t unit = 1;
    if (!s.empty() && !(s.back() >= '0' && s.back() <= '9')) {
        switch (lower(s.back())) {
        case 's':
            unit = 1;
            break;
        case 'm':
            unit = 60;
            break;
        case 'h':
            unit = 3600;
            break;
        case 'd':
            unit = 86400;
            break;
        case 'w':
            unit = 7 * 86400;
            break;
        default:
            return std::nullopt;
        }
        s.remove_suffix(1);
    }
    // Nine digits are more than 365 days in seconds: no overflow below.
    if (s.empty() || s.size() > 9) return std::nullopt;
    int64_t n = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + (c - '0');
    }
    n *= unit;
    if (n < 1 || n > max_duration_seconds) return std::nullopt;
    return n;
}

Parsed parse_request(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() >= max_request_bytes) return fail("request too long");
    for (char c : line) {
        auto u = static_cast<unsigned char>(c);
        if (c != '\t' && (u < 0x20 || u > 0x7e))
            return fail("request contains non-printable bytes");
    }
    std::vector<Word> w = split_words(line);
    if (w.empty()) return fail("empty request (try help)");
    const VerbSpec* found = find_verb(w[0].text);
    if (!found) return fail("unknown request: " + echo(w[0].text) + " (try help)");

    Request r;
    r.verb = found->verb;
    size_t n = w.size() - 1; // arguments
    // The word counts of the table.  Throttle's optional words come after
    // its concurrency, which is checked first; options() refuses a word too
    // many there.
    if (n < found->min_args || (n > found->max_args && r.verb != Verb::throttle))
        return usage(r.verb);
    switch (r.verb) {
    case Verb::help:
    case Verb::summary:
    case Verb::deliveries:
    case Verb::providers:
        break;
    case Verb::queues:
    case Verb::jobs:
        if (n == 1) {
            if (!valid_transport(w[1].text)) return fail("bad transport name: " + echo(w[1].text));
            r.transport = std::string(w[1].text);
        }
        break;
    case Verb::message:
        if (!valid_queue_id(w[1].text)) return fail("bad queue ID: " + echo(w[1].text));
        r.queue_id = std::string(w[1].text);
        break;
    case Verb::suspend:
    case Verb::resume:
        r.target = transport_target(w[1].text);
        if (!r.target) return fail("bad target: " + echo(w[1].text));
        if (r.verb == Verb::resume) return sender_option(std::move(r), w);
        return options(std::move(r), line, w, 2, true);
    case Verb::explain:
    case Verb::flush:
    case Verb::unthrottle:
        r.target = destination_target(w[1].text);
        break;
    case Verb::throttle: {
        r.target = destination_target(w[1].text);
        auto c = parse_concurrency(w[2].text);
        if (!c) return fail("bad concurrency: " + echo(w[2].text) + " (a number of at least 1)");
        r.concurrency = *c;
        return options(std::move(r), line, w, 3, false);
    }
    }
    return Parsed{std::move(r), {}};
}

std::string format_request(const Request& r) {
    std::string s(verb_name(r.verb));
    auto add = [&s](std::string_view word) {
        s += ' ';
        s += word;
    };
    if (!r.transport.empty()) add(r.transport);
    if (!r.queue_id.empty()) add(r.queue_id);
    if (r.target) add(r.target->text);
    if (!r.sender.empty()) add("sender " + r.sender);
    if (r.verb == Verb::throttle) add(std::to_string(r.concurrency));
    if (r.duration) add("for " + std::to_string(*r.duration));
    if (!r.reason.empty()) add("reason " + r.reason);
    return s;
}

} // namespace cqmgr::control
