// Parsing a backoff profile's value (see backoff_profile.hpp).
#include "backoff_profile.hpp"

#include <cctype>

namespace cqmgr::qmgr {

namespace {

Failure<ActionError> fail(std::string detail) {
    return Failure{ActionError{std::move(detail)}};
}

} // namespace

Result<BackoffProfile, ActionError> parse_backoff_profile(std::string_view value) {
    if (value.size() > max_profile_text)
        return fail("longer than " + std::to_string(max_profile_text) + " bytes");
    BackoffProfile p;
    bool concurrency = false, rate = false;
    size_t i = 0;
    while (i < value.size()) {
        if (std::isspace(static_cast<unsigned char>(value[i]))) {
            ++i;
            continue;
        }
        std::string word;
        for (; i < value.size() && !std::isspace(static_cast<unsigned char>(value[i])); ++i)
            word += static_cast<char>(std::tolower(static_cast<unsigned char>(value[i])));
        if (word.starts_with("concurrency=") && !concurrency) {
            auto n = parse_action_count(word.substr(12), ReplyAction::max_count);
            if (!n) return fail("\"" + word + "\": expected a count of 1 to 1000000");
            p.concurrency = static_cast<int>(*n);
            concurrency = true;
        } else if (word.starts_with("rate=") && !rate) {
            auto r = parse_action_rate(word.substr(5), ReplyAction::max_count, "rate");
            if (!r) return Failure{r.error()};
            p.rate_count = r->count;
            p.rate_period_ms = r->period_ms;
            rate = true;
        } else {
            return fail("unexpected \"" + word + "\"");
        }
    }
    if (!concurrency && !rate) return fail("no concurrency= or rate=");
    return p;
}

ReplyAction with_profile(ReplyAction a, const BackoffProfile& p) {
    a.concurrency = p.concurrency;
    a.rate_count = p.rate_count;
    a.rate_period_ms = p.rate_period_ms;
    return a;
}

std::string backoff_profile_text(const BackoffProfile& p) {
    std::string out;
    if (p.concurrency > 0) out = "concurrency=" + std::to_string(p.concurrency);
    if (p.rate_count > 0)
        out += (out.empty() ? "rate=" : " rate=") + std::to_string(p.rate_count) + "/" +
               std::to_string(p.rate_period_ms) + "ms";
    return out;
}

} // namespace cqmgr::qmgr
