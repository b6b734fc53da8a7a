#include "cqmgr/conf/master_cf.hpp"

#include "cqmgr/conf/logical_lines.hpp"
#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/values.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace cqmgr::conf {

namespace {

constexpr std::string_view kBlanks = " \t\r\n"; // master's field separators

// Next blank-separated word at `pos`, or nullopt at the end.
std::optional<std::string> next_word(std::string_view s, size_t& pos) {
    pos = s.find_first_not_of(kBlanks, pos);
    if (pos == std::string_view::npos) {
        pos = s.size();
        return std::nullopt;
    }
    size_t end = s.find_first_of(kBlanks, pos);
    if (end == std::string_view::npos) end = s.size();
    std::string w(s.substr(pos, end - pos));
    pos = end;
    return w;
}

// Next argument word: like next_word, but blanks inside {...} (counted
// from any '{' in the word) do not end it.
std::optional<std::string> next_arg(std::string_view s, size_t& pos) {
    return next_braced_item(s, pos, kBlanks);
}

// Unwraps a "{ ... }" group, dropping the braces and the blanks inside
// them; returns an error text for an unbalanced group or text after '}'.
std::optional<std::string> unwrap_group(std::string& word) {
    int level = 0;
    size_t close = std::string::npos;
    for (size_t i = 0; i < word.size(); ++i) {
        if (word[i] == '{')
            ++level;
        else if (word[i] == '}' && --level == 0) {
            close = i;
            break;
        }
    }
    if (close == std::string::npos) return "missing '}' in \"" + word + "\"";
    if (close + 1 != word.size()) return "syntax error after '}' in \"" + word + "\"";
    std::string inner = word.substr(1, close - 1);
    size_t b = 0, e = inner.size();
    while (b < e && is_postfix_space(inner[b]))
        ++b;
    while (e > b && is_postfix_space(inner[e - 1]))
        --e;
    word = inner.substr(b, e - b);
    return std::nullopt;
}

// Splits "name=value" like main.cf lines (blanks around '=' allowed).
std::optional<std::pair<std::string, std::string>> name_value(std::string_view s) {
    size_t i = 0;
    while (i < s.size() && is_postfix_space(s[i]))
        ++i;
    size_t ns = i;
    while (i < s.size() && !is_postfix_space(s[i]) && s[i] != '=')
        ++i;
    size_t ne = i;
    while (i < s.size() && is_postfix_space(s[i]))
        ++i;
    if (ne == ns || i == s.size() || s[i] != '=') return std::nullopt;
    ++i;
    while (i < s.size() && is_postfix_space(s[i]))
        ++i;
    size_t end = s.size();
    while (end > i && is_postfix_space(s[end - 1]))
        --end;
    return std::pair(std::string(s.substr(ns, ne - ns)), std::string(s.substr(i, end - i)));
}

// A decimal digit.
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// The service types master accepts.
const std::vector<std::string_view>& valid_types() {
    static const std::vector<std::string_view> types = {"unix", "fifo", "inet", "pass",
                                                        "unix-dgram"};
    return types;
}

// Checks a y/n/- field.
bool good_bool(const std::string& v) {
    return v == "-" || v == "y" || v == "n";
}
// Checks a numeric field ("-" or starting with a digit, as master's atoi()).
bool good_int(const std::string& v) {
    return v == "-" || (!v.empty() && is_digit(v[0]));
}

// The basename of a path.
std::string basename_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

std::vector<std::pair<std::string, std::string>> MasterService::overrides() const {
    // Mail daemons' options: "cdDi:lm:n:o:s:St:uvVz", parsed with a leading
    // '+' (stop at the first non-option).
    constexpr std::string_view with_value = "imnost";
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--" || a.size() < 2 || a[0] != '-') break;
        for (size_t k = 1; k < a.size(); ++k) {
            char c = a[k];
            if (with_value.find(c) == std::string_view::npos) continue;
            std::string value;
            if (k + 1 < a.size()) {
                value = a.substr(k + 1);
            } else if (i + 1 < args.size()) {
                value = args[++i];
            } else {
                return out;
            }
            if (c == 'o')
                if (auto nv = name_value(value)) out.push_back(std::move(*nv));
            break;
        }
    }
    return out;
}

std::optional<std::string> MasterService::override_value(std::string_view name) const {
    std::optional<std::string> v;
    for (auto& [n, value] : overrides())
        if (n == name) v = value;
    return v;
}

MasterCf::MasterCf(Warn warn) : warn_(std::move(warn)) {}

bool MasterCf::load_dir(const std::string& dir) {
    std::string path = dir + "/master.cf";
    auto text = read_file(path);
    if (!text) {
        error_ = "open " + path + ": cannot read";
        return false;
    }
    return load_text(*text, path);
}

bool MasterCf::load_text(std::string_view text, const std::string& origin) {
    services_.clear();
    for (auto& ll : read_logical_lines(text, origin, warn_)) {
        MasterService s;
        s.where = origin + ": line " + std::to_string(ll.line);
        auto fail = [&](const std::string& why) {
            error_ = s.where + ": " + why;
            return false;
        };
        size_t pos = 0;
        auto word = next_word(ll.text, pos);
        if (!word) continue;
        s.service = *word;
        // The fields in master's order, each checked as it is read.
        auto field = [&](std::string& dest, const char* name) {
            auto w = next_word(ll.text, pos);
            if (!w) return fail(std::string("missing \"") + name + "\" field");
            dest = *w;
            return true;
        };
        auto bad = [&](const char* name, const std::string& value) {
            return fail(std::string("field \"") + name + "\": bad value: \"" + value + "\"");
        };
        if (!field(s.type, "transport type")) return false;
        if (std::find(valid_types().begin(), valid_types().end(), s.type) == valid_types().end())
            return fail("bad transport type: " + s.type);
        if (!field(s.private_field, "private")) return false;
        if (!good_bool(s.private_field)) return bad("private", s.private_field);
        if (s.type == "inet" && s.private_field != "n")
            return fail("inet service cannot be private");
        if (!field(s.unprivileged_field, "unprivileged")) return false;
        if (!good_bool(s.unprivileged_field)) return bad("unprivileged", s.unprivileged_field);
        if (!field(s.chroot_field, "chroot")) return false;
        if (!good_bool(s.chroot_field)) return bad("chroot", s.chroot_field);
        if (!field(s.wakeup_field, "wakeup_time")) return false;
        if (!good_int(s.wakeup_field)) return bad("wakeup_time", s.wakeup_field);
        if (!field(s.maxproc_field, "max_proc")) return false;
        if (!good_int(s.maxproc_field)) return bad("max_proc", s.maxproc_field);
        if (!field(s.command, "command")) return false;
        if (s.command == "-") return fail("field \"command\" has no default value");
        while (auto a = next_arg(ll.text, pos)) {
            if (!a->empty() && a->front() == '{')
                if (auto err = unwrap_group(*a)) return fail(*err);
            s.args.push_back(std::move(*a));
        }
        services_.push_back(std::move(s));
    }
    return true;
}

const MasterService* MasterCf::find(std::string_view service, std::string_view type) const {
    for (auto& s : services_)
        if (s.service == service && s.type == type) return &s;
    return nullptr;
}

std::vector<std::string> MasterCf::transport_names() const {
    std::vector<std::string> out;
    for (auto& s : services_)
        if (s.type == "unix" && s.private_field != "n") out.push_back(s.service);
    return out;
}

std::vector<std::pair<std::string, std::string>>
MasterCf::qmgr_settings_on_other_services(std::string_view qmgr_service) const {
    // qmgr parameters that some other daemon also reads are left out.
    static const std::vector<std::string_view> shared = {"minimal_backoff_time", "queue_run_delay",
                                                         "maximal_queue_lifetime",
                                                         "disable_verp_bounces"};
    auto transports = transport_names();
    auto qmgr_only = [&](const std::string& name) {
        if (std::find(shared.begin(), shared.end(), name) != shared.end()) return false;
        if (auto* p = find_param(name); p && p->reader == ParamReader::Qmgr) return true;
        for (auto& t : transports)
            for (auto& sfx : transport_suffixes())
                if (name == t + std::string(sfx.suffix)) return true;
        return false;
    };
    std::vector<std::pair<std::string, std::string>> out;
    for (auto& s : services_) {
        if (s.service == qmgr_service) continue;
        for (auto& [name, value] : s.overrides())
            if (qmgr_only(name)) out.emplace_back(s.service, name);
    }
    return out;
}

MasterSpawn master_spawn(const MasterService& s, const MasterContext& ctx) {
    auto bad = [&](const char* field, const std::string& value) -> ConfigError {
        return ConfigError(s.where,
                           std::string("field \"") + field + "\": bad value: \"" + value + "\"");
    };
    auto flag = [&](const std::string& v, const char* field, bool def) {
        if (v == "-") return def;
        if (v == "y") return true;
        if (v == "n") return false;
        throw bad(field, v);
    };
    auto number = [&](const std::string& v, const char* field, int64_t def) -> int64_t {
        if (v == "-") return def;
        if (v.empty() || !is_digit(v[0])) throw bad(field, v);
        return std::atoi(v.c_str());
    };
    MasterSpawn m;
    m.private_socket = flag(s.private_field, "private", true);
    if (s.type == "inet" && m.private_socket)
        throw ConfigError(s.where, "inet service cannot be private");
    m.unprivileged = flag(s.unprivileged_field, "unprivileged", true);
    m.chroot = flag(s.chroot_field, "chroot", ctx.compat_level < (1L << 20));
    m.wakeup = number(s.wakeup_field, "wakeup_time", 0);
    m.conditional_wakeup = m.wakeup > 0 && s.wakeup_field.back() == '?';
    m.max_proc = number(s.maxproc_field, "max_proc", ctx.default_process_limit);
    m.path = ctx.daemon_directory + "/" + s.command;

    auto& a = m.argv;
    a.push_back(s.command);
    if (m.max_proc == 1) a.push_back("-l");
    if (m.max_proc == 0) a.push_back("-z");
    if (basename_of(s.command) != s.service) {
        a.push_back("-n");
        a.push_back(s.service);
    }
    a.push_back("-t");
    a.push_back(s.type);
    if (ctx.master_debug) a.push_back("-d");
    if (ctx.master_verbose) a.push_back("-v");
    if (m.unprivileged) a.push_back("-u");
    if (m.chroot) a.push_back("-c");
    // Only services that may see remote clients get the stress flag; we
    // take every inet and pass service as such (master also exempts inet
    // services bound to loopback addresses only).
    if ((s.type == "inet" || s.type == "pass") && m.max_proc > 1) {
        a.push_back("-o");
        a.push_back("stress=");
    }
    a.insert(a.end(), s.args.begin(), s.args.end());
    return m;
}

std::map<std::string, int64_t> process_limits(const MasterCf& master,
                                              const MasterContext& context) {
    std::map<std::string, int64_t> out;
    for (const auto& service : master.services()) {
        if (service.type != "unix") continue;
        try {
            int64_t limit = master_spawn(service, context).max_proc;
            if (limit > 0) out[service.service] = limit;
        } catch (const ConfigError&) {
            // master(8) refuses this line; it starts no agents either.
        }
    }
    return out;
}

} // namespace cqmgr::conf
