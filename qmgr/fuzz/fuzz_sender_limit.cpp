// libFuzzer target for the values of cqmgr_sender_limits
// (parse_sender_limit), which an admin's tables give, pcre: and regexp:
// results included.  Besides the sanitizers it checks:
//   * a limit limits something, within the bounds its words allow;
//   * a limit written back (sender_limit_text) reads as the same limit;
//   * an error's word is text of the input.
#include "sender_limit.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

using namespace cqmgr::qmgr;

namespace {
[[noreturn]] void finding(const char* what) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto r = parse_sender_limit(text);
    if (!r) {
        const auto& e = r.error();
        if (!e.word.empty() && text.find(e.word) == std::string_view::npos)
            finding("an error's word that is not in the input");
        if (e.message().empty()) finding("an error without words");
        return 0;
    }
    const cqmgr::core::SenderLimit& l = *r;
    if (!l.any()) finding("a limit that limits nothing");
    if (l.concurrency < 0 || l.concurrency > 1'000'000) finding("concurrency out of bounds");
    if (l.rate_count > 0 && (l.rate_period_ms < 1 || l.rate_burst < 1))
        finding("a rate without a period or a burst");
    if (l.rate_count == 0 && (l.rate_period_ms != 0 || l.rate_burst != 0))
        finding("a period without a rate");
    if (l.rate_count > 0 && !(l.interval() > 0)) finding("a rate without an interval");
    auto back = parse_sender_limit(sender_limit_text(l));
    if (!back || !(*back == l)) finding("the limit written back reads differently");
    return 0;
}
