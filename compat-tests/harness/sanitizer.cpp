#include "sanitizer.hpp"

#include "fsutil.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>

namespace fs = std::filesystem;

namespace compat {
namespace {

// `s` as one single-quoted shell word.
std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    out += '\'';
    return out;
}

// The first `max_lines` lines of `text`, and how many were left out.
std::string head(const std::string& text, std::size_t max_lines) {
    std::size_t pos = 0;
    for (std::size_t n = 0; n < max_lines; ++n) {
        pos = text.find('\n', pos);
        if (pos == std::string::npos) return text;
        ++pos;
    }
    if (pos >= text.size()) return text;
    auto rest = static_cast<std::size_t>(std::count(text.begin() + pos, text.end(), '\n'));
    return text.substr(0, pos) + "... (" + std::to_string(rest) + " more lines)\n";
}

} // namespace

// Relative to the queue directory, see the header.
const char* sanitizer_report_dir() {
    return "sanitizer";
}

// master(8) gives its children /dev/null as stderr and only the variables
// that import_environment names, so the script does both itself. The
// sanitizers' own log_path does not serve: with GCC's separate ASan and UBSan
// libraries, UBSan keeps writing to stderr. The first error stops the daemon
// (ASan by SIGABRT, which master logs as a crash); leaks are checked at exit.
std::string sanitizer_wrapper(const std::string& cqmgr_path, bool leak_check) {
    std::string dir = sanitizer_report_dir();
    std::string script =
        "#!/bin/bash\n"
        "# written by compat-run --sanitized: cqmgr's stderr to a file per process\n"
        "exec 2>>" +
        dir + "/cqmgr.$$\n";
    script += std::string("export ASAN_OPTIONS=detect_leaks=") + (leak_check ? "1" : "0") +
              ":abort_on_error=1\n"
              "export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1\n"
              "exec -a cqmgr ";
    script += shell_quote(cqmgr_path);
    script += " \"$@\"\n";
    return script;
}

// Drops each line whose first word is a syslog name ending in "/qmgr", with
// or without a pid, followed by ": ".
std::string without_log_lines(const std::string& text) {
    static const std::regex log_line(R"(^[^\s:\[\]]+/qmgr(\[[0-9]+\])?: .*)");
    std::string out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        std::size_t end = nl == std::string::npos ? text.size() : nl + 1;
        std::string line = text.substr(pos, end - pos);
        std::string bare = line.back() == '\n' ? line.substr(0, line.size() - 1) : line;
        if (!std::regex_match(bare, log_line)) out += line;
        pos = end;
    }
    return out;
}

// Sorted by name, so that the reports of one run come out in a stable order.
std::vector<std::string> sanitizer_reports(const std::string& dir, std::size_t max_lines) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    std::vector<std::string> out;
    for (const auto& name : names) {
        std::string text;
        if (!read_file_if_exists(dir + "/" + name, text) || without_log_lines(text).empty())
            continue;
        out.push_back("sanitizer report " + name + " (cqmgr pid " +
                      name.substr(name.rfind('.') + 1) + "):\n" + head(text, max_lines));
    }
    return out;
}

} // namespace compat
