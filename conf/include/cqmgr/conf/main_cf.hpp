// main.cf as Postfix reads it (dict_load_fp + readllines + split_nameval):
// logical lines (see logical_lines.hpp), `name = value` with white space
// trimmed around both, last definition wins (a warning names the line when
// a different value is overridden), and lazy $name expansion at lookup time
// (see macro_expand.hpp).  A line without '=' is fatal in Postfix, so
// load_dir()/load_text() return false with error() set.
//
// Hand-written on purpose: no configuration library (INI, TOML, Boost's
// property trees) reads Postfix's grammar (continuation lines, comments
// inside them, lazy $name expansion with Postfix's own operators), and
// cqmgr must read main.cf exactly as Postfix does.
//
// Values come from, in order: set() (`-o name=value`), main.cf, then the
// registered built-in defaults (set_default / set_default_fn).  Unknown
// names expand to "".
//
// The typed getters apply the syntax and bounds of Postfix daemons
// (values.hpp).  Where a Postfix daemon stops with a fatal error they throw
// ConfigError, naming the file and line of the parameter; a bound of 0
// means "no bound", as in Postfix (so negative values pass a 0 minimum).
#pragma once

#include "cqmgr/conf/config_error.hpp"
#include "cqmgr/conf/values.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::conf {

class MainCf {
  public:
    using Warn = std::function<void(const std::string&)>;
    using DefaultFn = std::function<std::optional<std::string>(const MainCf&)>;

    // Creates an empty configuration; `warn` receives configuration warnings.
    explicit MainCf(Warn warn = {});

    // Reads `dir`/main.cf the way `postconf -c dir` and a daemon started
    // with MAIL_CONFIG=dir do: config_directory is set to `dir` first (so
    // main.cf may override it, with a warning).  Returns false with error()
    // when the file cannot be read or has a fatal syntax error.
    bool load_dir(const std::string& dir);
    // Parses main.cf text; `origin` names it in warnings and errors.
    // Returns false (error() set) on a line Postfix rejects.
    bool load_text(std::string_view text, const std::string& origin = "main.cf");

    // Sets a value as `-o name=value` would (overrides main.cf).
    void set(const std::string& name, std::string value);
    // Registers a built-in default (may contain $references).
    void set_default(const std::string& name, std::string value);
    // Registers a default computed on demand (myhostname, mydomain); the
    // function may return nullopt for "no value".
    void set_default_fn(const std::string& name, DefaultFn fn);

    // True when main.cf or -o set `name` explicitly.
    bool is_set(const std::string& name) const;
    // True when `name` has an explicit value or a registered default.
    bool is_known(const std::string& name) const;
    // The unexpanded value: explicit setting, else default, else nullopt.
    std::optional<std::string> raw(const std::string& name) const;
    // Where an explicit value came from: "FILE, line N", "command line", or
    // "" for defaults and unknown names.
    std::string where(const std::string& name) const;
    // Names set explicitly (main.cf and -o), sorted.
    std::vector<std::string> explicit_names() const;

    // The expanded value ("" for an unknown name).  Throws ConfigError on a
    // macro processing error (fatal in Postfix).
    std::string str(const std::string& name) const;
    // Expands $references in arbitrary text (throws like str()).
    std::string expand(std::string_view text) const;

    // A string parameter whose length must be within [min_len, max_len]
    // (0 = no bound); `def` is used when the name is unknown.
    std::string str(const std::string& name, std::string_view def, int min_len,
                    int max_len = 0) const;
    // An int parameter; `def` is used when the name is unknown.
    int64_t integer(const std::string& name, int64_t def, int64_t min = 0,
                    int64_t max = INT32_MAX) const;
    // A long parameter (sizes); `def` is used when the name is unknown.
    int64_t long_integer(const std::string& name, int64_t def, int64_t min = 0,
                         int64_t max = 0) const;
    // A time parameter in seconds.  The default unit of a bare number is the
    // first letter of the default value (Postfix's rule: "5d" gives 'd'),
    // or `unit` when that has no letter.  `def` is used when the name is
    // unknown.
    int64_t time(const std::string& name, std::string_view def, char unit = 's', int64_t min = 0,
                 int64_t max = 0) const;
    // A percentage parameter, "N" or "N%", 0 to 100 (fatal otherwise);
    // `def` is used when the name is unknown.
    int64_t percent(const std::string& name, int64_t def) const;
    // A boolean parameter (yes/no, any case).
    bool boolean(const std::string& name, bool def) const;
    // A list parameter split on commas and white space.
    std::vector<std::string> list(const std::string& name) const;

    const std::string& error() const { return error_; }
    const std::string& config_dir() const { return dir_; }

  private:
    // Bounds-checks a parsed number (fatal when malformed or out of range).
    int64_t checked_number(const std::string& name, const std::string& v,
                           std::optional<int64_t> n, int64_t min, int64_t max) const;
    struct Setting {
        std::string value;
        std::string where; // "FILE, line N" or "command line"
    };
    // The raw value of `name` (explicit, default, or computed default).
    std::optional<std::string> lookup(const std::string& name) const;
    // Throws ConfigError for `name` with Postfix's fatal `text`.
    [[noreturn]] void fatal(const std::string& name, std::string text) const;
    // Passes a warning to the callback, if any.
    void warn(const std::string& text) const;

    Warn warn_;
    std::map<std::string, Setting> values_;
    std::map<std::string, std::string> defaults_;
    std::map<std::string, DefaultFn> default_fns_;
    mutable std::set<std::string> computing_; // default functions being evaluated
    std::string dir_;
    std::string error_;
};

} // namespace cqmgr::conf
