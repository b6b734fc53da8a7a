// main.cf as Postfix reads it: `name = value` lines, continuation lines that
// start with white space, comments, last definition wins, and lazy `$name`
// expansion at lookup time.  Typed getters apply Postfix's value syntax
// (time units, booleans, bounds) and fall back to the documented default,
// with a warning, when a value is bad.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::conf {

class MainCf {
  public:
    using Warn = std::function<void(const std::string&)>;

    // Creates an empty configuration; `warn` receives configuration warnings.
    explicit MainCf(Warn warn = {});

    // Reads `dir`/main.cf.  Returns false (with error()) when it cannot be read.
    bool load_dir(const std::string& dir);
    // Parses main.cf text (for tests); `origin` names it in warnings.
    void load_text(std::string_view text, const std::string& origin = "main.cf");

    // Sets a value as `-o name=value` would (overrides main.cf).
    void set(const std::string& name, std::string value);
    // Registers a built-in default (may contain $references).
    void set_default(const std::string& name, std::string value);

    // True when main.cf or -o set `name` explicitly.
    bool is_set(const std::string& name) const;
    // The unexpanded value: explicit setting, else default, else nullopt.
    std::optional<std::string> raw(const std::string& name) const;

    // The expanded value ("" for an unknown name).
    std::string str(const std::string& name) const;
    // Expands $references in arbitrary text.
    std::string expand(std::string_view text) const;

    // An integer parameter; a bad or out-of-range value warns and gives `def`.
    int64_t integer(const std::string& name, int64_t def, int64_t min = 0,
                    int64_t max = INT32_MAX) const;
    // A time parameter in seconds; a bare number has `unit` (s, m, h, d, w).
    int64_t time(const std::string& name, std::string_view def, char unit = 's', int64_t min = 0,
                 int64_t max = 0) const;
    // A boolean parameter (yes/no, case-insensitive).
    bool boolean(const std::string& name, bool def) const;
    // A list parameter split on commas and white space.
    std::vector<std::string> list(const std::string& name) const;

    const std::string& error() const { return error_; }
    const std::string& config_dir() const { return dir_; }

  private:
    std::string expand_depth(std::string_view text, int depth) const;
    std::string str_depth_lookup(const std::string& name, int depth) const;
    void warn(const std::string& text) const;

    Warn warn_;
    std::map<std::string, std::string> values_;
    std::map<std::string, std::string> defaults_;
    std::map<std::string, std::string> origin_; // name -> "file, line N"
    std::string dir_;
    std::string error_;
};

// Parses a Postfix time value ("300", "5m", "1d") in seconds; nullopt if bad.
std::optional<int64_t> parse_time(std::string_view value, char default_unit);

// Splits on commas and white space, dropping empty items.
std::vector<std::string> split_list(std::string_view text);

} // namespace cqmgr::conf
