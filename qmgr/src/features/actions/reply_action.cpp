// The grammar of a reply rule's result (reply_action.hpp).
#include "reply_action.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <utility>
#include <vector>

namespace cqmgr::qmgr {

namespace {

constexpr std::array<std::pair<ReplyAction::Kind, const char*>, 5> kinds{{
    {ReplyAction::Kind::suspend, "suspend"},
    {ReplyAction::Kind::throttle, "throttle"},
    {ReplyAction::Kind::rate, "rate"},
    {ReplyAction::Kind::backoff, "backoff"},
    {ReplyAction::Kind::warn, "warn"},
}};

constexpr std::array<std::pair<ReplyAction::Scope, const char*>, 5> scopes{{
    {ReplyAction::Scope::destination, "destination"},
    {ReplyAction::Scope::provider, "provider"},
    {ReplyAction::Scope::transport, "transport"},
    {ReplyAction::Scope::sender_destination, "sender-destination"},
    {ReplyAction::Scope::sender_provider, "sender-provider"},
}};

Failure<ActionError> fail(std::string detail) {
    return Failure{ActionError{std::move(detail)}};
}

// The words of `text`, split at blanks, lowered.
std::vector<std::string> words(std::string_view text) {
    std::vector<std::string> out;
    std::string word;
    for (char ch : text) {
        if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') {
            if (!word.empty()) out.push_back(std::move(word));
            word.clear();
        } else {
            word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        }
    }
    if (!word.empty()) out.push_back(std::move(word));
    return out;
}

// Whether `s` holds a run of more than 9 digits: no count or period here
// needs one, and shorter runs keep the rate parser's arithmetic far from
// overflow.
bool long_number(std::string_view s) {
    size_t run = 0;
    for (char ch : s) {
        run = ch >= '0' && ch <= '9' ? run + 1 : 0;
        if (run > 9) return true;
    }
    return false;
}

// Whether `word` may name a profile: a table key that is safe in a log
// line and a key of the shared state.
bool profile_name(const std::string& word) {
    return !word.empty() && word.size() <= ReplyAction::max_profile_name &&
           std::all_of(word.begin(), word.end(), [](char ch) {
               return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                      ch == '_' || ch == '-';
           });
}

} // namespace

const char* action_kind_name(ReplyAction::Kind k) {
    for (const auto& [kind, name] : kinds)
        if (kind == k) return name;
    return "warn";
}

const char* action_scope_name(ReplyAction::Scope s) {
    for (const auto& [scope, name] : scopes)
        if (scope == s) return name;
    return "destination";
}

Result<cluster::RateSpec, ActionError> parse_action_rate(const std::string& word, int64_t max_n,
                                                         const char* what) {
    if (word.find(',') != std::string::npos || long_number(word))
        return fail(std::string(what) + " \"" + word + "\": expected N/PERIOD");
    auto r = cluster::parse_rate(word);
    if (!r) return fail(std::string(what) + " " + r.error().message());
    if (r->count > max_n)
        return fail(std::string(what) + " \"" + word + "\": more than " + std::to_string(max_n));
    if (r->period_ms > ReplyAction::max_period_ms)
        return fail(std::string(what) + " \"" + word + "\": a period longer than a week");
    return *r;
}

std::optional<int64_t> parse_action_count(const std::string& word, int64_t max) {
    if (long_number(word)) return std::nullopt;
    auto n = cluster::parse_concurrency(word);
    if (!n || *n > max) return std::nullopt;
    return *n;
}

int ReplyAction::pause_seconds() const {
    if (rate_count <= 0) return 0;
    int64_t spacing_ms = (rate_period_ms + rate_count - 1) / rate_count;
    return static_cast<int>(std::max<int64_t>((spacing_ms + 999) / 1000, 1));
}

std::string ReplyAction::text() const {
    std::string out = action_kind_name(kind);
    if (kind == Kind::throttle) out += " " + std::to_string(concurrency);
    if (kind == Kind::backoff) out += " " + profile;
    if (kind == Kind::rate)
        out += " " + std::to_string(rate_count) + "/" + std::to_string(rate_period_ms) + "ms";
    out += " ";
    out += action_scope_name(scope);
    if (after_period_ms > 0)
        out +=
            " after " + std::to_string(after_count) + "/" + std::to_string(after_period_ms) + "ms";
    if (duration_ms > 0) out += " for " + std::to_string(duration_ms) + "ms";
    if (until_delivered > 0) out += " until " + std::to_string(until_delivered) + " delivered";
    return out;
}

Result<ReplyAction, ActionError> parse_reply_action(std::string_view text) {
    if (text.size() > max_action_text)
        return fail("longer than " + std::to_string(max_action_text) + " bytes");
    const std::vector<std::string> w = words(text);
    ReplyAction a;
    size_t i = 0;
    auto next = [&]() -> std::optional<std::string> {
        if (i >= w.size()) return std::nullopt;
        return w[i++];
    };
    // ACTION
    auto action = next();
    if (!action) return fail("no action");
    auto k = std::find_if(kinds.begin(), kinds.end(), [&](auto& p) { return *action == p.second; });
    if (k == kinds.end()) return fail("unknown action \"" + *action + "\"");
    a.kind = k->first;
    if (a.kind == ReplyAction::Kind::throttle) {
        auto n = next();
        auto c = n ? parse_action_count(*n, ReplyAction::max_count) : std::nullopt;
        if (!c) return fail("throttle needs a concurrency of 1 or more");
        a.concurrency = static_cast<int>(*c);
    } else if (a.kind == ReplyAction::Kind::rate) {
        auto n = next();
        if (!n) return fail("rate needs N/PERIOD");
        auto r = parse_action_rate(*n, ReplyAction::max_count, "rate");
        if (!r) return Failure{r.error()};
        a.rate_count = r->count;
        a.rate_period_ms = r->period_ms;
    } else if (a.kind == ReplyAction::Kind::backoff) {
        auto n = next();
        if (!n || !profile_name(*n))
            return fail("backoff needs a profile name (letters, digits, '.', '_', '-')");
        a.profile = *n;
    }
    // SCOPE
    auto scope = next();
    if (!scope) return fail("no scope");
    auto s =
        std::find_if(scopes.begin(), scopes.end(), [&](auto& p) { return *scope == p.second; });
    if (s == scopes.end()) return fail("unknown scope \"" + *scope + "\"");
    a.scope = s->first;
    // The clauses.
    bool after = false;
    while (auto word = next()) {
        if (*word == "after" && !after) {
            auto n = next();
            if (!n) return fail("after needs N/PERIOD");
            auto r = parse_action_rate(*n, ReplyAction::max_after, "after");
            if (!r) return Failure{r.error()};
            a.after_count = static_cast<int>(r->count);
            a.after_period_ms = r->period_ms;
            after = true;
        } else if (*word == "for" && a.duration_ms == 0) {
            auto n = next();
            // A duration is a period: "1/" + it, as a rate reads it.
            if (!n || n->find_first_of("/,") != std::string::npos)
                return fail("for needs a duration");
            auto r = parse_action_rate("1/" + *n, 1, "for");
            if (!r) return fail("for \"" + *n + "\": bad duration");
            a.duration_ms = r->period_ms;
        } else if (*word == "until" && a.until_delivered == 0) {
            auto n = next();
            auto c = n ? parse_action_count(*n, ReplyAction::max_count) : std::nullopt;
            if (!c || next() != "delivered") return fail("until needs N delivered");
            a.until_delivered = *c;
        } else {
            return fail("unexpected \"" + *word + "\"");
        }
    }
    switch (a.kind) {
    case ReplyAction::Kind::suspend:
        if (a.duration_ms == 0) return fail("suspend needs for DURATION");
        if (a.until_delivered > 0) return fail("nothing is delivered to end a suspension");
        break;
    case ReplyAction::Kind::throttle:
    case ReplyAction::Kind::rate:
    case ReplyAction::Kind::backoff:
        if (a.duration_ms == 0 && a.until_delivered == 0)
            return fail(std::string(action_kind_name(a.kind)) +
                        " needs for DURATION or until N delivered");
        break;
    case ReplyAction::Kind::warn:
        if (a.duration_ms > 0 || a.until_delivered > 0) return fail("warn lasts no time");
        break;
    }
    return a;
}

} // namespace cqmgr::qmgr
