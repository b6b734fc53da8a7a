// Logical lines of main.cf and master.cf as Postfix reads them: a line that
// starts with white space continues the previous one (its text is appended
// as-is, without the newline), comment lines (first non-blank is '#') and
// blank lines are dropped wherever they appear, even in the middle of a
// continued line, and a logical line that itself starts with white space is
// skipped with a warning.
#pragma once

#include <optional>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::conf {

struct LogicalLine {
    std::string text; // physical lines joined, newlines removed, nothing trimmed
    int line = 0;     // number of the first physical line
};

// Splits `text`; `origin` (a file name) prefixes the warnings given to `warn`.
std::vector<LogicalLine> read_logical_lines(std::string_view text, const std::string& origin,
                                            const std::function<void(const std::string&)>& warn);

// True for the characters Postfix's ISSPACE accepts (ASCII isspace).
bool is_postfix_space(char c);

// Reads a whole configuration file; nullopt when it cannot be read.
std::optional<std::string> read_file(const std::string& path);

} // namespace cqmgr::conf
