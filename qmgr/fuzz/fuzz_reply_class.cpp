// libFuzzer target for bounded matching (regex_table.hpp): what a receiver's
// reply, an admin's reply rules and a regexp: pattern can cost and do.  The
// input's first byte picks what the rest is:
//   0  a reply: a status (up to the first newline) and its text, classified
//      by the default rules;
//   1  an admin's pcre: table (up to the first NUL, at most 8 rules), then a
//      reply as in 0, classified by that table and the default rules;
//   2  a regexp: pattern (up to the first NUL) and a subject: when the
//      pattern is rewritten for PCRE2 (posix_regex.hpp), the rewrite must
//      match where regexec(3) matches (short patterns and subjects without
//      back-references, big intervals or many quantifiers, on which
//      regcomp and regexec take long).
// A classification that takes more than 100 ms of the thread's CPU time is
// a finding: with the subject cut and PCRE2's limits one costs about a
// millisecond at worst, and before them a 2 KB reply took about a second.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "posix_regex.hpp"
#include "reply_class.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <pcre2.h>
#include <regex.h>

using namespace cqmgr::qmgr;

namespace {

// Aborts with a message: a finding.
[[noreturn]] void finding(const std::string& what) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
    std::abort();
}

// The calling thread's CPU time in milliseconds.
double cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Classifies the reply in `in` (status up to a newline, then the text)
// with `c`, within the time bound.
void classify(const ReplyClassifier& c, std::string_view in) {
    size_t nl = in.find('\n');
    std::string_view status = nl == std::string_view::npos ? std::string_view() : in.substr(0, nl);
    std::string_view text = nl == std::string_view::npos ? in : in.substr(nl + 1);
    double start = cpu_ms();
    c.classify(status, text);
    double spent = cpu_ms() - start;
    if (spent > 100) finding("a classification took " + std::to_string(spent) + " ms of CPU");
}

// Whether the PCRE2 rewrite of `pattern` agrees with regexec on `subject`.
void differential(const std::string& pattern, const std::string& subject) {
    if (pattern.size() > 32 || subject.size() > 32) return;
    for (size_t i = 0; i + 1 < pattern.size(); ++i)
        if (pattern[i] == '\\' && pattern[i + 1] >= '0' && pattern[i + 1] <= '9') return;
    for (size_t i = 0; i + 2 < pattern.size(); ++i)
        if (std::isdigit(static_cast<unsigned char>(pattern[i])) &&
            std::isdigit(static_cast<unsigned char>(pattern[i + 1])))
            return; // an interval of 10 or more
    // regcomp's own work grows exponentially with stacked quantifiers.
    if (std::count_if(pattern.begin(), pattern.end(),
                      [](char c) { return c == '*' || c == '+' || c == '?' || c == '{'; }) > 4)
        return;
    for (bool caseless : {true, false})
        for (bool newline : {false, true}) {
            regex_t re;
            int flags =
                REG_EXTENDED | REG_NOSUB | (caseless ? REG_ICASE : 0) | (newline ? REG_NEWLINE : 0);
            if (regcomp(&re, pattern.c_str(), flags) != 0) continue;
            bool want = regexec(&re, subject.c_str(), 0, nullptr, 0) == 0;
            regfree(&re);
            auto t = posix_to_pcre2(pattern, caseless, newline);
            if (!t) continue;
            int err;
            PCRE2_SIZE off;
            pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(t->pattern.data()),
                                             t->pattern.size(), t->options, &err, &off, nullptr);
            if (!code) continue; // the table keeps regexec for it
            pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
            int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(subject.c_str()),
                                 subject.find('\0') == std::string::npos ? subject.size()
                                                                         : subject.find('\0'),
                                 0, 0, md, nullptr);
            pcre2_match_data_free(md);
            pcre2_code_free(code);
            if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) continue;
            if ((rc >= 0) != want)
                finding("/" + pattern + "/ rewritten as /" + t->pattern + "/" +
                        (caseless ? " icase" : "") + (newline ? " newline" : "") +
                        (want ? ": regexec matches, the rewrite does not"
                              : ": the rewrite matches, regexec does not"));
        }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    static const ReplyClassifier defaults;
    std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
    size_t nul = in.find('\0');
    switch (data[0] % 3) {
    case 0:
        classify(defaults, in);
        break;
    case 1: {
        if (nul == std::string_view::npos) return 0;
        std::string_view rules = in.substr(0, nul);
        int lines = 0;
        for (char ch : rules)
            lines += ch == '\n';
        if (lines >= 8) return 0;
        ReplyClassifier admin(RegexTable::parse("pcre", "fuzz", rules, [](const std::string&) {}),
                              [](const std::string&) {});
        classify(admin, in.substr(nul + 1));
        break;
    }
    default:
        if (nul == std::string_view::npos) return 0;
        differential(std::string(in.substr(0, nul)), std::string(in.substr(nul + 1)));
        break;
    }
    return 0;
}
