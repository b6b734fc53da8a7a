// Parsing cqmgr_sender_limits' values (see sender_limit.hpp).
#include "sender_limit.hpp"

#include "cqmgr/cluster/rate_spec.hpp"

#include <algorithm>
#include <cctype>

namespace cqmgr::qmgr {

namespace {

bool blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// `word` equals `keyword` (lower case) without regard to case.
bool is(std::string_view word, std::string_view keyword) {
    return word.size() == keyword.size() &&
           std::equal(word.begin(), word.end(), keyword.begin(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) == b;
           });
}

// `word` starts with `keyword=` (the keyword without regard to case): what
// follows, if so.
std::optional<std::string_view> setting(std::string_view word, std::string_view keyword) {
    if (word.size() <= keyword.size() || word[keyword.size()] != '=' ||
        !is(word.substr(0, keyword.size()), keyword))
        return std::nullopt;
    return word.substr(keyword.size() + 1);
}

Failure<SenderLimitError> fail(SenderLimitError::Kind kind, std::string_view word,
                               std::string detail = {}) {
    return Failure{SenderLimitError{kind, std::string(word), std::move(detail)}};
}

} // namespace

std::string SenderLimitError::message() const {
    switch (kind) {
    case Kind::nothing:
        return "no concurrency= or rate=";
    case Kind::word:
        return "unknown word \"" + word + "\"";
    case Kind::duplicate:
        return "\"" + word + "\" given twice";
    case Kind::concurrency:
        return "\"" + word + "\": expected a count of 1 to 1000000";
    case Kind::rate:
        return detail;
    case Kind::scope:
        return "\"per " + word + "\": expected per destination or per provider";
    }
    return word;
}

Result<core::SenderLimit, SenderLimitError> parse_sender_limit(std::string_view value) {
    using Kind = SenderLimitError::Kind;
    core::SenderLimit out;
    bool concurrency = false, rate = false, per = false;
    size_t i = 0;
    // The next word, or empty at the end.
    auto next = [&]() {
        while (i < value.size() && blank(value[i]))
            ++i;
        size_t start = i;
        while (i < value.size() && !blank(value[i]))
            ++i;
        return value.substr(start, i - start);
    };
    for (std::string_view w = next(); !w.empty(); w = next()) {
        if (auto v = setting(w, "concurrency")) {
            if (concurrency) return fail(Kind::duplicate, w);
            auto n = cluster::parse_concurrency(*v);
            if (!n) return fail(Kind::concurrency, w);
            out.concurrency = *n;
            concurrency = true;
        } else if (auto v = setting(w, "rate")) {
            if (rate) return fail(Kind::duplicate, w);
            auto r = cluster::parse_rate(*v);
            if (!r) return fail(Kind::rate, w, r.error().message());
            out.rate_count = r->count;
            out.rate_period_ms = r->period_ms;
            out.rate_burst = r->burst;
            rate = true;
        } else if (is(w, "per")) {
            if (per) return fail(Kind::duplicate, w);
            std::string_view scope = next();
            if (is(scope, "destination"))
                out.per = core::SenderPer::destination;
            else if (is(scope, "provider"))
                out.per = core::SenderPer::provider;
            else
                return fail(Kind::scope, scope);
            per = true;
        } else {
            return fail(Kind::word, w);
        }
    }
    if (!concurrency && !rate) return fail(Kind::nothing, {});
    return out;
}

std::string sender_limit_text(const core::SenderLimit& limit) {
    std::string out;
    if (limit.concurrency > 0) out = "concurrency=" + std::to_string(limit.concurrency) + " ";
    if (limit.rate_count > 0)
        out += "rate=" +
               cluster::RateSpec{limit.rate_count, limit.rate_period_ms, limit.rate_burst}.text() +
               " ";
    return out + "per " + (limit.per == core::SenderPer::provider ? "provider" : "destination");
}

} // namespace cqmgr::qmgr
