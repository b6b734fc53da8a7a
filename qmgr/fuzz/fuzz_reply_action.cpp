// libFuzzer target for the reply rules' grammar, their backoff profiles
// and windows (reply_action.hpp, backoff_profile.hpp,
// threshold_windows.hpp).  The input's first byte picks what the rest is:
//   even       a rule's result: parsed; an action must have its numbers in
//              range and parse back from its text() to the same action;
//   1 mod 4    a script of matches for a few windows (each three bytes: a
//              rule, a key, a time step): the windows kept stay within
//              their bound, and a count of 1 always acts;
//   3 mod 8    a backoff profile's value: parsed; a profile must have its
//              numbers in range, parse back from its text, and give a
//              backoff a pause within a week;
//   7 mod 8    a shared action's text as it comes back from Redis
//              (shared_action.hpp): decoded; an action must have one-line
//              fields within their bound, a group exactly when its scope is
//              a sender's, and encode to a text that decodes to it again.
#include "backoff_profile.hpp"
#include "reply_action.hpp"
#include "shared_action.hpp"
#include "threshold_windows.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace cqmgr::qmgr;

namespace {

// Aborts with a message: a finding.
[[noreturn]] void finding(const std::string& what) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
    std::abort();
}

void grammar(std::string_view text) {
    auto a = parse_reply_action(text);
    if (!a) {
        if (a.error().message().empty()) finding("a refusal without a reason");
        return;
    }
    if (a->after_count < 1 || a->after_count > ReplyAction::max_after || a->after_period_ms < 0 ||
        a->after_period_ms > ReplyAction::max_period_ms || a->duration_ms < 0 ||
        a->duration_ms > ReplyAction::max_period_ms || a->until_delivered < 0 ||
        a->until_delivered > ReplyAction::max_count)
        finding("out of range: " + a->text());
    if (a->kind == ReplyAction::Kind::rate &&
        (a->pause_seconds() < 1 || a->pause_seconds() > 604800))
        finding("pause out of range: " + a->text());
    if (a->kind == ReplyAction::Kind::backoff &&
        (a->profile.empty() || a->profile.size() > ReplyAction::max_profile_name))
        finding("profile name: " + a->text());
    auto again = parse_reply_action(a->text());
    if (!again || !(*again == *a)) finding("\"" + std::string(text) + "\" -> " + a->text());
}

void profile(std::string_view text) {
    auto p = parse_backoff_profile(text);
    if (!p) {
        if (p.error().message().empty()) finding("a refusal without a reason");
        return;
    }
    const std::string written = backoff_profile_text(*p);
    if ((p->concurrency == 0 && p->rate_count == 0) || p->concurrency < 0 ||
        p->concurrency > ReplyAction::max_count || p->rate_count < 0 ||
        p->rate_count > ReplyAction::max_count || p->rate_period_ms < 0 ||
        p->rate_period_ms > ReplyAction::max_period_ms ||
        (p->rate_count > 0) != (p->rate_period_ms > 0))
        finding("out of range: " + written);
    auto again = parse_backoff_profile(written);
    if (!again || !(*again == *p)) finding("\"" + std::string(text) + "\" -> " + written);
    ReplyAction b = *parse_reply_action("backoff p destination for 1h");
    b = with_profile(b, *p);
    if (p->rate_count > 0 && (b.pause_seconds() < 1 || b.pause_seconds() > 604800))
        finding("pause out of range: " + written);
}

void shared(std::string_view text) {
    auto a = decode_shared_action(text);
    if (!a) return;
    for (const std::string* s :
         {&a->transport, &a->name, &a->group, &a->host, &a->rule, &a->action, &a->reason}) {
        if (s->size() > max_shared_field) finding("a field beyond its bound");
        for (unsigned char c : *s)
            if (c < 0x20 || c == 0x7f) finding("a control character in a field");
    }
    if (a->transport.empty() || a->rule.empty() || a->since < 0 || a->until < 0)
        finding("an action without its parts");
    using S = ReplyAction::Scope;
    if ((a->scope == S::sender_destination || a->scope == S::sender_provider) == a->group.empty())
        finding("a sender scope without its group, or a group without one");
    auto again = decode_shared_action(encode_shared_action(*a));
    if (!again || !(*again == *a)) finding("a shared action that does not read back");
}

void windows(std::string_view script) {
    ThresholdWindows w(8);
    int64_t now = 0;
    for (size_t i = 0; i + 2 < script.size(); i += 3) {
        auto rule = static_cast<size_t>(static_cast<uint8_t>(script[i]) % 4);
        int count = static_cast<uint8_t>(script[i]) / 4 % 5 + 1;
        std::string key(1, static_cast<char>('a' + static_cast<uint8_t>(script[i + 1]) % 16));
        now += static_cast<uint8_t>(script[i + 2]);
        bool acted = w.hit(rule, key, count, 100, now);
        if (count == 1 && !acted) finding("a count of 1 did not act");
        if (w.size() > 8) finding("more windows than the bound");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (data[0] % 2 == 0)
        grammar(in);
    else if (data[0] % 4 == 1)
        windows(in);
    else if (data[0] % 8 == 3)
        profile(in);
    else
        shared(in);
    return 0;
}
