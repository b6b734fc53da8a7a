// regexp: patterns rewritten for PCRE2 (posix_regex.hpp): for each pattern
// and subject, the rewrite matches where regexec(3) matches, with and
// without REG_ICASE and REG_NEWLINE; and what is not rewritten.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "posix_regex.hpp"

#include <gtest/gtest.h>
#include <pcre2.h>
#include <regex.h>

using cqmgr::qmgr::posix_to_pcre2;

namespace {

// regexec's answer for `pattern` on `subject`, or nothing if regcomp refuses it.
std::optional<bool> posix_matches(const std::string& pattern, const std::string& subject,
                                  bool caseless, bool newline) {
    regex_t re;
    int flags = REG_EXTENDED | REG_NOSUB | (caseless ? REG_ICASE : 0) | (newline ? REG_NEWLINE : 0);
    if (regcomp(&re, pattern.c_str(), flags) != 0) return std::nullopt;
    bool m = regexec(&re, subject.c_str(), 0, nullptr, 0) == 0;
    regfree(&re);
    return m;
}

// PCRE2's answer for the rewrite of `pattern`, or nothing if there is none.
std::optional<bool> rewrite_matches(const std::string& pattern, const std::string& subject,
                                    bool caseless, bool newline) {
    auto t = posix_to_pcre2(pattern, caseless, newline);
    if (!t) return std::nullopt;
    int err;
    PCRE2_SIZE off;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(t->pattern.data()),
                                     t->pattern.size(), t->options, &err, &off, nullptr);
    if (!code) {
        ADD_FAILURE() << "/" << pattern << "/ rewritten as /" << t->pattern
                      << "/, which PCRE2 refuses";
        return std::nullopt;
    }
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
    int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0, 0,
                         md, nullptr);
    pcre2_match_data_free(md);
    pcre2_code_free(code);
    return rc >= 0;
}

const std::vector<std::string> patterns = {
    "abc",
    "^abc$",
    "a.c",
    "a|b",
    "a||b",
    "(|a)x",
    "(a|b)*c",
    "a+",
    "a?b",
    "a*+",
    "a+?",
    "a**",
    "a{2}",
    "a{2,}",
    "a{1,3}b",
    "a{,2}b",
    "a{,}",
    "x{0}y",
    "a{2}{3}",
    "(ab){2}",
    "[abc]",
    "[^abc]",
    "[]a]",
    "[^]a]",
    "[a-]",
    "[-a]",
    "[a-z]+",
    "[A-Z]",
    "[0-9]{3}",
    "[[:digit:]]+",
    "[[:upper:]]",
    "[[:lower:]]",
    "[[:alpha:][:digit:]]",
    "[[:space:]]",
    "[\\]",
    "[\\n]",
    "[[]",
    "[a[]",
    "[.]",
    "[*+?{}()|^$]",
    "\\.",
    "\\(",
    "\\{",
    "\\|",
    "\\x",
    "\\n",
    "\\d",
    "\\D",
    "\\Q",
    "a\\tb",
    "\\w+",
    "\\W",
    "\\s",
    "\\S",
    "\\bab",
    "ab\\b",
    "\\Bb",
    "\\<ab",
    "ab\\>",
    "\\`ab",
    "ab\\'",
    "(a)\\1",
    "(a|b)*\\1",
    "((a)\\2)",
    "(a)(b)\\2",
    "(a*)*\\1x",
    "^$",
    "^",
    "$",
    "a^b",
    "a$b",
    "(^a|b$)",
    ".",
    "^.$",
    "^[^x]$",
    "x\\>",
    "^(\\w+\\s?)*$",
    "a)",
    "a}",
    "a]",
    "\\)",
    "too (busy|tired)",
    "^X-Priority: *1\\b",
    "^Subject:.*urgent",
    "\\.example\\.org$",
    "4\\.[27]\\.[01]\\b.*(try|come back).* later",
    "(a|ab)(c|bcd)(d*)",
    "[[:alpha:]]-[[:digit:]]",
    "\x80",
    "caf\xc3\xa9",
    "[\xc3\xa9]",
    "\t",
    "^a|^b",
    "\\.com$|\\.net$",
    "(a|^b)",
    "(a$|b)",
    "(a$)|b",
    "(^a)b",
    "((^a))",
    "a$$",
    " +",
    "a#b",
};

const std::vector<std::string> subjects = {
    "",
    "a",
    "A",
    "abc",
    "ABC",
    "xabcx",
    "ac",
    "aac",
    "aaaaaa",
    "aaaa",
    "b",
    "bab",
    "abab",
    "abb",
    "aa",
    "aA",
    "ab",
    "ba",
    "x",
    "xy",
    "y",
    "]",
    "-",
    "\\",
    "n",
    "[",
    ".",
    "*",
    "(",
    "{",
    "|",
    "a)",
    "a}",
    "a]",
    ")",
    "d",
    "123",
    "12",
    "a b",
    "a\nb",
    "a\nx",
    "x\nb",
    "b\na",
    "mx.com\nx",
    "\n",
    "x\n",
    "a\n",
    "\na",
    "ab cd",
    "ab_c",
    "ab-c",
    "xy ab",
    "too busy",
    "TOO Tired",
    "X-Priority: 1 (Highest)",
    "Subject: very URGENT",
    "mx.example.org",
    "mx.example.org.",
    "4.2.0 please try again later",
    "4.2.0 try",
    "abcd",
    "a-1",
    "A-b",
    "\x80",
    "caf\xc3\xa9",
    "\xc3",
    "\t",
    "  ",
    "a#b",
    "w w!",
    "\xa9",
};

} // namespace

TEST(PosixRegex, RewritesMatchWhereRegexecMatches) {
    int compared = 0, rewritten_patterns = 0;
    for (const auto& p : patterns)
        for (bool caseless : {true, false})
            for (bool newline : {false, true}) {
                bool any = false;
                for (const auto& s : subjects) {
                    auto want = posix_matches(p, s, caseless, newline);
                    auto got = rewrite_matches(p, s, caseless, newline);
                    if (!want) {
                        // regcomp refuses it: the table skips the rule,
                        // whatever the rewrite (the caller asks regcomp first).
                        break;
                    }
                    if (!got) break;
                    any = true;
                    ++compared;
                    EXPECT_EQ(*got, *want)
                        << "/" << p << "/ on \"" << s << "\"" << (caseless ? " icase" : "")
                        << (newline ? " newline" : "") << ": rewritten as /"
                        << posix_to_pcre2(p, caseless, newline)->pattern << "/";
                }
                rewritten_patterns += any;
            }
    // Nearly every pattern above is rewritten.
    EXPECT_GE(rewritten_patterns, static_cast<int>(patterns.size()) * 4 - 20);
    EXPECT_GT(compared, 10000);
}

TEST(PosixRegex, WhatIsNotRewritten) {
    for (const char* p :
         {"[[.a.]]", "[[=a=]]",  "[%--]", "[a-c-e]", "[z-a]",  "[[:word:]]", "*a",
          "a|*b",    "(*a)",     "^*",    "\\b*",    "a{",     "a{x}",       "a{}",
          "a{2,1}",  "a{32768}", "(a",    "a\\",     "\\1(a)", "(a)|\\1",    "(a\\1)"})
        EXPECT_FALSE(posix_to_pcre2(p, true, false)) << p;
    EXPECT_FALSE(posix_to_pcre2(std::string("a\0b", 3), true, false));
    // An anchor where regexec lets it see a newline the match consumed.
    for (const char* p :
         {"a^b", "a$b", "a$.", ".^x", "(^a|b)*", "(a$|b)x", "a$(|b)", "(a$)*", "x(^b)", "(a|b)^c"})
        EXPECT_FALSE(posix_to_pcre2(p, true, false)) << p;
    // regexec with REG_ICASE never matches an escaped lower-case letter.
    EXPECT_FALSE(posix_to_pcre2("\\d", true, false));
    EXPECT_TRUE(posix_to_pcre2("\\d", false, false));
}
