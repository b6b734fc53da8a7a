#include "cqmgr/conf/logical_lines.hpp"

#include <sstream>

#include <fstream>

namespace cqmgr::conf {

bool is_postfix_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

namespace {
// True when a physical line holds only white space or is a comment.
bool ignorable(std::string_view line) {
    size_t i = 0;
    while (i < line.size() && is_postfix_space(line[i]))
        ++i;
    return i == line.size() || line[i] == '#';
}
} // namespace

std::vector<LogicalLine> read_logical_lines(std::string_view text, const std::string& origin,
                                            const std::function<void(const std::string&)>& warn) {
    std::vector<LogicalLine> out;
    LogicalLine cur;
    size_t pos = 0;
    int lineno = 0;
    // Ends the logical line being built: keep it, or skip it when it starts
    // with white space (continuation text without a line to continue).
    auto finish = [&] {
        if (cur.text.empty()) return;
        if (is_postfix_space(cur.text.front())) {
            if (warn) {
                std::string shown = cur.text.substr(0, 30);
                warn(origin + ", line " + std::to_string(cur.line) +
                     ": logical line must not start with whitespace: \"" + shown +
                     (cur.text.size() > 30 ? "...\"" : "\""));
            }
        } else {
            out.push_back(std::move(cur));
        }
        cur = LogicalLine{};
    };
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        bool has_nl = nl != std::string_view::npos;
        std::string_view line = text.substr(pos, has_nl ? nl - pos : std::string_view::npos);
        pos = has_nl ? nl + 1 : text.size();
        ++lineno;
        if (ignorable(line)) continue; // comments and blank lines never end a logical line
        // A line that starts with white space continues the current one;
        // anything else starts a new logical line.
        if (!cur.text.empty() && is_postfix_space(line.front())) {
            cur.text.append(line);
            continue;
        }
        finish();
        cur.text.assign(line);
        cur.line = lineno;
    }
    finish();
    return out;
}

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace cqmgr::conf
