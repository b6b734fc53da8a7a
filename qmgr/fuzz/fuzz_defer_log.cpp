// libFuzzer target for the defer log reader (parse_defer_records), which
// reads what the defer service wrote from a remote server's replies.
// Besides the sanitizers it checks:
//   * no record without an attribute line, and no more records than blank
//     lines after one;
//   * an offset is never negative;
//   * status and reason are text of the input, on one line.
#include "defer_log.hpp"

#include <algorithm>
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

bool within(std::string_view input, const std::string& part) {
    return part.empty() || input.find(part) != std::string_view::npos;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto records = parse_defer_records(text);
    if (records.size() > static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) / 2)
        finding("more records than attribute and blank lines");
    for (const auto& r : records) {
        if (r.offset < 0) finding("negative offset");
        for (const std::string* s : {&r.status, &r.reason}) {
            if (s->find('\n') != std::string::npos) finding("a value spans lines");
            if (!within(text, *s)) finding("a value that is not in the input");
        }
    }
    return 0;
}
