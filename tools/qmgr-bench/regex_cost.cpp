// `tools/bench --regex-cost` (see regex_cost.hpp): each case builds its
// rules once, then looks its subject up `rounds` times, each time with a
// fresh classifier or budget where the daemon would have one (a reply's
// class is kept for texts seen lately: the first lookup is the one that
// matches), and prints the median and the slowest lookup (in this
// thread's CPU time) and the limit hits per lookup.
#include "regex_cost.hpp"

#include "priority_class.hpp"
#include "reply_class.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

namespace bench {
namespace {

using cqmgr::qmgr::MatchBudget;
using cqmgr::qmgr::PriorityTables;
using cqmgr::qmgr::RegexTable;
using cqmgr::qmgr::ReplyClassifier;

constexpr int rounds = 200;

// "4.2.0 try" over and over after an SMTP client's prefix, `n` bytes: the
// default greylist rule's `.*(try|...).* later` never finds "later".
std::string crafted_reply(size_t n) {
    std::string text = "host mx[192.0.2.1] said: 450 4.2.0 ";
    while (text.size() < n)
        text += "4.2.0 try ";
    text.resize(n);
    return text;
}

// Words with no blank between them, then a character that is neither:
// /(\w+\s?)*$/ backtracks exponentially on it; `n` bytes, the '!' before the
// cut, and filler after it up to `total` bytes.
std::string words_then_bang(const std::string& prefix, size_t n, size_t total = 0) {
    std::string s = prefix + std::string(n - prefix.size() - 1, 'a') + "!";
    if (total > s.size()) s += std::string(total - s.size(), 'b');
    return s;
}

// A table from text (the daemon reads the same text from a file).
RegexTable table(const char* type, const std::string& text) {
    return RegexTable::parse(type, "bench", text, [](const std::string& w) {
        std::fprintf(stderr, "regex-cost: %s\n", w.c_str());
    });
}

struct Case {
    std::string name;
    std::string subject;
    // One lookup; returns the limit hits it caused.
    std::function<uint64_t()> lookup;
};

// This thread's CPU time in microseconds (what a lookup costs the event
// loop; another process's time slice in between does not count).
double cpu_us() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Prints a table row: the case, its subject's size, the median and the
// slowest of `rounds` lookups in CPU time, and the limit hits per lookup.
void measure(const Case& c) {
    std::vector<double> us;
    uint64_t hits = 0;
    for (int i = 0; i < rounds; ++i) {
        double start = cpu_us();
        hits += c.lookup();
        us.push_back(cpu_us() - start);
    }
    std::sort(us.begin(), us.end());
    std::printf("| %s | %zu | %.1f | %.1f | %.1f |\n", c.name.c_str(), c.subject.size(),
                us[us.size() / 2], us.back(), static_cast<double>(hits) / rounds);
}

} // namespace

int run_regex_cost() {
    std::vector<Case> cases;
    auto reply = [&](const std::string& name, const std::string& admin, std::string text) {
        // A fresh classifier for each lookup (nothing seen lately), made
        // before the clock starts.
        auto made = std::make_shared<std::vector<ReplyClassifier>>();
        for (int i = 0; i < rounds; ++i)
            made->emplace_back(admin.empty() ? std::nullopt
                                             : std::optional<RegexTable>(table("pcre", admin)));
        auto next = std::make_shared<size_t>(0);
        cases.push_back({name, text, [made, next, text] {
                             ReplyClassifier& cls = (*made)[(*next)++ % made->size()];
                             uint64_t before = cls.limit_hits();
                             cls.classify("4.2.0", text);
                             return cls.limit_hits() - before;
                         }});
    };
    reply("default reply rules, a real greylisting reply", "",
          "host mx[192.0.2.1] said: 451 4.7.1 Please try again later (in reply to RCPT TO "
          "command)");
    reply("default reply rules, 2 KB crafted reply", "", crafted_reply(2048));
    reply("default reply rules, 64 KB crafted reply", "", crafted_reply(64 * 1024));
    reply("admin rule /(\\S+\\s?)*[!~]$/, 2 KB crafted reply", "/(\\S+\\s?)*[!~]$/ rate_limit\n",
          crafted_reply(2048));
    std::string many;
    for (int i = 0; i < 8; ++i)
        many += "/(\\S+\\s?)*[!~]" + std::to_string(i) + "$/ rate_limit\n";
    reply("8 such admin rules, 2 KB crafted reply (the budget stops at 4 hits)", many,
          crafted_reply(2048));
    {
        // A recipient's reply seen lately: the delivery's next recipients.
        auto cls = std::make_shared<ReplyClassifier>(table("pcre", "/(\\S+\\s?)*[!~]$/ x\n"));
        std::string text = crafted_reply(2048);
        cls->classify("4.2.0", text);
        cases.push_back({"the same reply again (kept from the first)", text, [cls, text] {
                             uint64_t before = cls->limit_hits();
                             cls->classify("4.2.0", text);
                             return cls->limit_hits() - before;
                         }});
    }
    for (const char* type : {"pcre", "regexp"}) {
        auto t = std::make_shared<RegexTable>(table(type, "/(\\w+\\s?)*$/ x\n"));
        std::string s = words_then_bang("", 500, 4096);
        cases.push_back(
            {std::string(type) + ": /(\\w+\\s?)*$/, one word then '!' within the cut, 4 KB", s,
             [t, s] {
                 uint64_t before = t->limit_hits();
                 t->find(s);
                 return t->limit_hits() - before;
             }});
    }
    {
        auto t = std::make_shared<RegexTable>(table("regexp", "/^(.+)(.+)\\1\\2x$/ x\n"));
        std::string s;
        while (s.size() < 500)
            s += "ab";
        s += "cx";
        s += std::string(2048 - s.size(), 'b');
        cases.push_back({"regexp: /^(.+)(.+)\\1\\2x$/ (back-references), 2 KB", s, [t, s] {
                             uint64_t before = t->limit_hits();
                             t->find(s);
                             return t->limit_hits() - before;
                         }});
    }
    {
        // Kept for regexec(3): only the subject is cut.
        auto t = std::make_shared<RegexTable>(table("regexp", "/(a|b).*(c|d).*[[.e.]]/ x\n"));
        std::string s(64 * 1024, 'a');
        for (size_t i = 1; i < s.size(); i += 2)
            s[i] = 'c';
        cases.push_back({"regexp: /(a|b).*(c|d).*[[.e.]]/ (left to regexec), 64 KB", s, [t, s] {
                             t->find(s);
                             return uint64_t{0};
                         }});
    }
    {
        // A message's header block: 64 KiB of lines made to defeat a rule.
        std::string line = words_then_bang("Subject: ", 400);
        std::vector<std::string> lines(64 * 1024 / line.size(), line);
        lines.push_back("Precedence: bulk");
        std::string text = "/^Subject: (\\w+\\s?)*$/ urgent\n/^Precedence: *bulk/ bulk\n";
        auto dir = std::string("/tmp/regex-cost-XXXXXX");
        if (!::mkdtemp(dir.data())) return 1;
        std::string path = dir + "/headers";
        if (FILE* f = std::fopen(path.c_str(), "w")) {
            std::fputs(text.c_str(), f);
            std::fclose(f);
        }
        auto tables = std::make_shared<PriorityTables>(
            PriorityTables::open({}, {"pcre:" + path}, [](const std::string&) {}));
        std::remove(path.c_str());
        ::rmdir(dir.c_str());
        cases.push_back({"cqmgr_priority_header_maps: 64 KiB header block, " +
                             std::to_string(lines.size()) + " crafted lines",
                         std::string(64 * 1024, 'x'), [tables, lines] {
                             uint64_t before = tables->limit_hits();
                             tables->classify_headers(lines);
                             return tables->limit_hits() - before;
                         }});
    }
    std::printf("Bounded matching: one lookup on a subject made to defeat a backtracking pattern "
                "(%d lookups each; subjects are cut at %zu bytes, PCRE2 match limit %u)\n\n",
                rounds, cqmgr::qmgr::max_subject, cqmgr::qmgr::regex_match_limit);
    std::printf("| case | subject (bytes) | median (CPU µs) | slowest (CPU µs) | limit hits per "
                "lookup |\n"
                "|---|---|---|---|---|\n");
    for (const Case& c : cases)
        measure(c);
    return 0;
}

} // namespace bench
