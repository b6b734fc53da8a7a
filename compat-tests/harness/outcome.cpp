#include "outcome.hpp"

#include "error.hpp"
#include "fsutil.hpp"
#include "maillog.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <dirent.h>
#include <filesystem>
#include <iomanip>
#include <regex>
#include <set>
#include <sstream>
#include <sys/stat.h>

namespace compat {
namespace {

// True for lines logged by the queue manager (stock or cqmgr).
bool is_qmgr(const LogLine& l) {
    return l.service == "qmgr" || l.service == "cqmgr";
}

// Removes ", key=value" (or a leading "key=value, ") fields from a log text.
std::string strip_field(std::string s, const std::string& key) {
    for (;;) {
        std::string pat = key + "=";
        size_t p = s.find(pat);
        while (p != std::string::npos && p > 0 && s[p - 1] != ' ')
            p = s.find(pat, p + 1);
        if (p == std::string::npos) return s;
        size_t end = s.find(", ", p);
        size_t start = p;
        if (end != std::string::npos) {
            end += 2;
        } else {
            end = s.size();
            if (start >= 2 && s.compare(start - 2, 2, ", ") == 0) start -= 2;
        }
        s.erase(start, end - start);
    }
}

// Replaces "size=<digits>" with "size=N".
std::string mask_sizes(std::string s) {
    size_t p = 0;
    while ((p = s.find("size=", p)) != std::string::npos) {
        size_t q = p + 5;
        size_t e = q;
        while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e])))
            ++e;
        if (e > q) s.replace(q, e - q, "N");
        p = q;
    }
    return s;
}

// Replaces "at offset <digits>" with "at offset N" (record offsets depend on
// header sizes, e.g. the client port's digit count).
std::string mask_offsets(std::string s) {
    size_t p = 0;
    while ((p = s.find("at offset ", p)) != std::string::npos) {
        size_t q = p + 10, e = q;
        while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e])))
            ++e;
        if (e > q) s.replace(q, e - q, "N");
        p = q;
    }
    return s;
}

// Prints at most `limit` differences between two multisets.
void diff_multisets(const Multiset& a, const std::string& a_name, const Multiset& b,
                    const std::string& b_name, const std::string& what,
                    std::vector<std::string>& out, const std::string& unit = "x",
                    std::size_t limit = 15) {
    std::set<std::string> keys;
    for (const auto& [k, v] : a)
        keys.insert(k);
    for (const auto& [k, v] : b)
        keys.insert(k);
    std::vector<std::string> diffs;
    for (const auto& k : keys) {
        int na = a.count(k) ? a.at(k) : 0;
        int nb = b.count(k) ? b.at(k) : 0;
        if (na == nb) continue;
        diffs.push_back(what + " `" + k + "`: " + a_name + " " + std::to_string(na) + unit + ", " +
                        b_name + " " + std::to_string(nb) + unit);
    }
    for (std::size_t i = 0; i < diffs.size() && i < limit; ++i)
        out.push_back(diffs[i]);
    if (diffs.size() > limit)
        out.push_back(what + ": ... and " + std::to_string(diffs.size() - limit) +
                      " more differences");
}

// Sum of a multiset's multiplicities (the number of elements).
int total(const Multiset& m) {
    int n = 0;
    for (const auto& [k, v] : m)
        n += v;
    return n;
}

// Reduces a multiset to a set (every multiplicity 1).
Multiset as_set(const Multiset& m) {
    Multiset out;
    for (const auto& [k, v] : m)
        if (v > 0) out[k] = 1;
    return out;
}

// The pid in master's "process /path pid N killed by signal S" line, or -1.
pid_t killed_pid(const std::string& text) {
    if (text.find("killed by signal") == std::string::npos) return -1;
    size_t p = text.find(" pid ");
    if (p == std::string::npos) return -1;
    return static_cast<pid_t>(std::strtol(text.c_str() + p + 5, nullptr, 10));
}

// Replaces "SIZE=<digits>" with "SIZE=N" (ESMTP MAIL parameter).
std::string mask_esmtp_size(std::string s) {
    size_t p = 0;
    while ((p = s.find("SIZE=", p)) != std::string::npos) {
        size_t q = p + 5, e = q;
        while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e])))
            ++e;
        if (e > q) s.replace(q, e - q, "N");
        p = q;
    }
    return s;
}

// Compact text of a sorted list of backoffs: "300 x4, 301".
std::string backoff_text(const std::vector<long>& v) {
    if (v.empty()) return "none";
    std::ostringstream o;
    for (size_t i = 0; i < v.size();) {
        size_t j = i;
        while (j < v.size() && v[j] == v[i])
            ++j;
        o << (i ? ", " : "") << v[i];
        if (j - i > 1) o << " x" << (j - i);
        i = j;
    }
    return o.str();
}

// "2.01, 2.00 x3": gaps in seconds, for messages.
std::string gaps_text(const std::vector<double>& gaps) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(2);
    for (size_t i = 0; i < gaps.size(); ++i)
        o << (i ? ", " : "") << gaps[i];
    return o.str();
}

} // namespace

namespace {
// Everything below a directory (recursively) that is not a directory;
// unreadable parts are skipped.
std::vector<std::filesystem::path> paths_below(const std::string& dir) {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    std::filesystem::recursive_directory_iterator it(dir, ec), end;
    if (ec) return out;
    for (; it != end; it.increment(ec)) {
        if (ec) {
            ec.clear();
            continue;
        }
        std::error_code sec;
        if (!it->is_directory(sec)) out.push_back(it->path());
    }
    return out;
}
} // namespace

// Names of the regular files below a directory, sorted.
std::vector<std::string> file_names_below(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& p : paths_below(dir)) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(p, ec)) out.push_back(p.filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Reads every fast flush log: one queue ID per line, repeats allowed.
Multiset flush_log_ids(const std::string& flush_dir) {
    Multiset out;
    for (const auto& p : paths_below(flush_dir)) {
        std::string text;
        try {
            if (!read_file_if_exists(p.string(), text)) continue;
        } catch (const Error&) {
            continue;
        }
        std::set<std::string> ids;
        for (const auto& line : split_lines(text))
            if (!line.empty()) ids.insert(line);
        out[p.filename().string()] = static_cast<int>(ids.size());
    }
    return out;
}

// Stats every file below deferred/.
std::vector<long> deferred_backoffs(const std::string& deferred_dir) {
    std::vector<long> out;
    for (const auto& p : paths_below(deferred_dir)) {
        struct stat st {};
        if (lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        out.push_back(static_cast<long>(st.st_mtim.tv_sec - st.st_ctim.tv_sec));
    }
    std::sort(out.begin(), out.end());
    return out;
}

// The mtime of each tx.* file: smtp-sink writes the last bytes of a
// transaction's dump when the client ends DATA, before it replies. A sink
// removes the file of a transaction the client aborts; only a sink that was
// stopped mid-transaction leaves one behind, empty (nothing was flushed).
std::vector<double> sink_transaction_times(const std::string& dump_dir) {
    std::vector<double> out;
    for (const auto& p : paths_below(dump_dir)) {
        if (p.filename().string().rfind("tx.", 0) != 0) continue;
        struct stat st {};
        if (lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) continue;
        out.push_back(static_cast<double>(st.st_mtim.tv_sec) +
                      static_cast<double>(st.st_mtim.tv_nsec) / 1e9);
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Pools the sinks' transaction times and returns successive differences.
std::vector<double> transaction_gaps(const Outcome& o, const std::vector<std::string>& sinks) {
    std::vector<double> times;
    for (const auto& name : sinks)
        if (o.transaction_times.count(name))
            times.insert(times.end(), o.transaction_times.at(name).begin(),
                         o.transaction_times.at(name).end());
    std::sort(times.begin(), times.end());
    std::vector<double> gaps;
    for (size_t i = 1; i < times.size(); ++i)
        gaps.push_back(times[i] - times[i - 1]);
    return gaps;
}

// Short IDs hash on their leading characters (the microseconds in hex). A
// long ID (time, microseconds, 'z', inode number) hashes on its four
// microsecond characters, decoded from Postfix's base-52 alphabet and
// written as five upper-case hex digits. An ID shorter than the depth is
// padded with '_'.
std::string hashed_queue_subdir(const std::string& id, int depth) {
    static const std::string alphabet = "0123456789BCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz";
    std::string key = id;
    size_t z = id.rfind('z');
    const size_t time_chars = 6 + 4; // at least six for seconds, exactly four for microseconds
    if (z != std::string::npos && z >= time_chars) {
        unsigned long usec = 0;
        bool ok = true;
        for (size_t i = z - 4; i < z; ++i) {
            size_t digit = alphabet.find(id[i]);
            if (digit == std::string::npos) {
                ok = false;
                break;
            }
            usec = usec * 52 + digit;
        }
        char hex[32];
        std::snprintf(hex, sizeof hex, "%05lX", ok ? usec : 0UL);
        key = hex;
    }
    std::string out;
    for (int i = 0; i < depth; ++i) {
        out += i < static_cast<int>(key.size()) ? key[static_cast<size_t>(i)] : '_';
        out += '/';
    }
    return out;
}

// Relative paths of the regular files below a queue directory, sorted.
std::vector<std::string> queue_file_paths(const std::string& queue_dir) {
    std::vector<std::string> out;
    for (const auto& p : paths_below(queue_dir)) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(p, ec))
            out.push_back(std::filesystem::relative(p, queue_dir, ec).string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Reads the smtp-sink generated X-Mail-Args/X-Rcpt-Args headers of each dump file.
Multiset sink_transactions(const std::string& dump_dir) {
    Multiset out;
    DIR* d = opendir(dump_dir.c_str());
    if (d == nullptr) return out;
    std::vector<std::string> names;
    while (struct dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n.rfind("tx.", 0) == 0) names.push_back(n);
    }
    closedir(d);
    for (const auto& n : names) {
        std::string text;
        try {
            if (!read_file_if_exists(dump_dir + "/" + n, text)) continue;
        } catch (const Error&) {
            continue;
        }
        std::string mail;
        std::vector<std::string> rcpts;
        for (const auto& line : split_lines(text)) {
            if (line.rfind("X-Mail-Args: ", 0) == 0) mail = mask_esmtp_size(line.substr(13));
            if (line.rfind("X-Rcpt-Args: ", 0) == 0) rcpts.push_back(line.substr(13));
            if (line.rfind("Received: ", 0) == 0) break; // end of smtp-sink's own headers
        }
        if (mail.empty()) continue; // a stopped sink's unwritten (aborted) transaction
        std::sort(rcpts.begin(), rcpts.end());
        std::string key = "MAIL " + mail + " | RCPT ";
        for (size_t i = 0; i < rcpts.size(); ++i)
            key += (i ? "; " : "") + rcpts[i];
        out[key]++;
    }
    return out;
}

// Collects the substitutions from the run's variables.
Normalizer::Normalizer(const Vars& vars) {
    for (const auto& [name, value] : vars.values()) {
        if (name == "dir")
            dir_ = value;
        else if (name == "smtpd" || name.rfind("sink.", 0) == 0)
            ports_[value] = "${" + name + "}";
    }
}

// Undoes ${dir} and port expansion: ":<port>" -> ":${sink.NAME}".
std::string Normalizer::unexpand(const std::string& text) const {
    std::string s = text;
    if (!dir_.empty()) {
        size_t p = 0;
        while ((p = s.find(dir_, p)) != std::string::npos) {
            s.replace(p, dir_.size(), "${dir}");
            p += 6;
        }
    }
    std::string out;
    size_t i = 0;
    while (i < s.size()) {
        if (s[i] == ':' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
            size_t e = i + 1;
            while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e])))
                ++e;
            auto it = ports_.find(s.substr(i + 1, e - i - 1));
            if (it != ports_.end()) {
                out += ':' + it->second;
                i = e;
                continue;
            }
        }
        out += s[i++];
    }
    return out;
}

// Full normalization for log templates.
std::string Normalizer::apply(const std::string& text) const {
    std::string s = unexpand(text);
    // Queue IDs anywhere in the text, as whole alphanumeric tokens.
    std::string out;
    size_t i = 0;
    while (i < s.size()) {
        if (std::isalnum(static_cast<unsigned char>(s[i]))) {
            size_t e = i;
            while (e < s.size() && std::isalnum(static_cast<unsigned char>(s[e])))
                ++e;
            std::string tok = s.substr(i, e - i);
            out += ids_.count(tok) ? "ID" : tok;
            i = e;
        } else {
            out += s[i++];
        }
    }
    out = mask_sizes(out);
    out = mask_offsets(out);
    out = strip_field(out, "delays");
    out = strip_field(out, "delay");
    return out;
}

// Fatal errors, panics and crashed daemons are always worth reporting.
bool is_problem_line(const std::string& program, const std::string& text) {
    if (text.rfind("fatal:", 0) == 0 || text.rfind("panic:", 0) == 0) return true;
    bool master = program.size() >= 6 && program.compare(program.size() - 6, 6, "master") == 0;
    if (master && (text.find("bad command startup") != std::string::npos ||
                   text.find("killed by signal") != std::string::npos))
        return true;
    return false;
}

// "process PATH pid N killed by signal S" with N killed on purpose, or
// "PATH: bad command startup -- throttling" for a program killed on purpose.
bool is_expected_kill(const std::string& text, const ExpectedKills& killed) {
    if (killed.pids.count(killed_pid(text))) return true;
    size_t bad = text.find(": bad command startup");
    if (bad == std::string::npos) return false;
    std::string path = text.substr(0, bad);
    if (path.rfind("warning: ", 0) == 0) path = path.substr(9);
    size_t slash = path.rfind('/');
    return killed.programs.count(slash == std::string::npos ? path : path.substr(slash + 1)) > 0;
}

// A kill the scenario made, or a line it provokes on purpose.
bool is_expected_problem(const LogLine& l, const ExpectedKills& expected) {
    if (is_expected_kill(l.text, expected)) return true;
    return std::any_of(expected.allowed.begin(), expected.allowed.end(),
                       [&](const std::regex& re) { return std::regex_search(l.raw, re); });
}

// A problem line about "bad command startup" that the scenario did not provoke.
bool is_startup_failure(const std::string& raw, const ExpectedKills& expected) {
    if (raw.find("bad command startup") == std::string::npos) return false;
    auto l = parse_log_line(raw);
    return l && is_problem_line(l->program, l->text) && !is_expected_problem(*l, expected);
}

// Walks all lines twice: first to learn the queue IDs, then to classify.
Outcome collect_outcome(const std::vector<std::string>& maillog_lines, const Vars& vars,
                        const std::vector<std::string>& sink_names, QueueCounts queue,
                        const ExpectedKills& killed) {
    Outcome o;
    o.maillog = maillog_lines;
    o.collected = true;
    o.queue = std::move(queue);
    o.log_lines = maillog_lines.size();
    Normalizer norm(vars);
    std::vector<LogLine> parsed;
    parsed.reserve(maillog_lines.size());
    for (const auto& raw : maillog_lines) {
        auto l = parse_log_line(raw);
        if (!l) continue;
        if (!l->queue_id.empty()) norm.add_queue_id(l->queue_id);
        parsed.push_back(std::move(*l));
    }
    std::map<std::string, std::string> sink_suffix; // ":${sink.a}" -> "a"
    for (const auto& n : sink_names)
        sink_suffix[":${sink." + n + "}"] = n;

    for (const auto& l : parsed) {
        if (is_problem_line(l.program, l.text) && !is_expected_problem(l, killed))
            o.problems.push_back(l.raw);
        if (!l.queue_id.empty()) {
            if (auto d = parse_delivery(l.text)) {
                o.statuses[d->status]++;
                std::string relay = norm.unexpand(d->relay);
                std::string key = "to=<" + d->to + ">";
                if (!d->orig_to.empty()) key += " orig_to=<" + d->orig_to + ">";
                key += " status=" + d->status + " dsn=" + d->dsn + " relay=" + relay;
                o.recipients[key]++;
                if (d->status == "sent") {
                    for (const auto& [suffix, name] : sink_suffix)
                        if (relay.size() >= suffix.size() &&
                            relay.compare(relay.size() - suffix.size(), suffix.size(), suffix) == 0)
                            o.per_sink[name]++;
                }
            }
            if (l.service == "bounce") {
                size_t p = l.text.find(" notification: ");
                if (p != std::string::npos) o.notifications[l.text.substr(0, p + 13)]++;
            }
        }
        if (is_qmgr(l)) {
            if (l.text.find("status=expired") != std::string::npos &&
                l.text.rfind("from=<", 0) == 0)
                o.statuses["expired"]++;
            std::string tmpl = (l.queue_id.empty() ? "" : "ID: ") + norm.apply(l.text);
            if (l.text.rfind("warning:", 0) == 0)
                o.qmgr_warnings[tmpl]++;
            else
                o.qmgr_lines[tmpl]++;
        }
    }
    return o;
}

double deferral_rate(const Outcome& o) {
    int sent = o.statuses.count("sent") ? o.statuses.at("sent") : 0;
    int deferred = o.statuses.count("deferred") ? o.statuses.at("deferred") : 0;
    return sent + deferred == 0 ? -1 : 100.0 * deferred / (sent + deferred);
}

// Checks every expectation the scenario states and reports each miss.
std::vector<std::string> check_expectations(const Expect& e, const Outcome& o, const Vars& vars) {
    std::vector<std::string> f;
    auto count_of = [&o](const std::string& s) {
        return o.statuses.count(s) ? o.statuses.at(s) : 0;
    };
    auto check = [&](const char* what, const std::optional<int>& want) {
        if (want && count_of(what) != *want)
            f.push_back(std::string("expected ") + what + "=" + std::to_string(*want) +
                        " (maillog status=" + what + "), found " + std::to_string(count_of(what)));
    };
    check("sent", e.sent);
    check("deferred", e.deferred);
    check("bounced", e.bounced);
    check("expired", e.expired);
    if (e.queue_empty) {
        std::string left;
        for (const auto& q : message_queues()) {
            std::uint64_t n = o.queue.count(q) ? o.queue.at(q) : 0;
            if (n != 0) left += (left.empty() ? "" : ", ") + q + " " + std::to_string(n);
        }
        if (*e.queue_empty && !left.empty()) f.push_back("expected an empty queue, found " + left);
        if (!*e.queue_empty && left.empty())
            f.push_back("expected a non-empty queue, found it empty");
    }
    for (const auto& [name, want] : e.per_sink) {
        int got = o.per_sink.count(name) ? o.per_sink.at(name) : 0;
        if (got != want)
            f.push_back("expected sink '" + name + "' to receive " + std::to_string(want) +
                        " recipients (status=sent via its port), found " + std::to_string(got));
    }
    for (const auto& [kind, want] : e.notifications) {
        int got = o.notifications.count(kind) ? o.notifications.at(kind) : 0;
        if (got != want)
            f.push_back("expected " + std::to_string(want) + " \"" + kind +
                        "\" bounce log lines, found " + std::to_string(got));
    }
    for (const auto& m : e.mailbox) {
        std::string path = vars.expand(m.path, "expect.mailbox.path");
        std::string text;
        bool exists = false;
        try {
            exists = read_file_if_exists(path, text);
        } catch (const Error& err) {
            f.push_back("expected to read mailbox " + path + ", found error: " + err.what());
            continue;
        }
        if (!exists) {
            f.push_back("expected mailbox " + path + " to exist, found none");
            continue;
        }
        for (const auto& c : m.contains) {
            std::string want = vars.expand(c, "expect.mailbox.contains");
            if (text.find(want) == std::string::npos)
                f.push_back("expected mailbox " + path + " to contain \"" + want +
                            "\", found it absent (" + std::to_string(text.size()) + " bytes)");
        }
        if (m.messages) {
            int n = 0;
            for (const auto& line : split_lines(text))
                if (line.rfind("From ", 0) == 0) ++n;
            if (n != *m.messages)
                f.push_back("expected " + std::to_string(*m.messages) + " messages in mailbox " +
                            path + ", found " + std::to_string(n));
        }
    }
    // Whatever ends up in corrupt/ must have been announced by qmgr.
    for (const auto& id : o.corrupt_files) {
        std::string pat = "saving corrupt file \"" + id + "\"";
        bool named = std::any_of(o.maillog.begin(), o.maillog.end(), [&](const std::string& l) {
            return l.find(pat) != std::string::npos;
        });
        if (!named)
            f.push_back("expected a qmgr warning naming corrupt/" + id + " (" + pat +
                        " ...), found none");
    }
    for (const auto& [q, want] : e.queue) {
        auto got = o.queue.count(q) ? o.queue.at(q) : 0;
        if (got != static_cast<std::uint64_t>(want))
            f.push_back("expected " + std::to_string(want) + " files in " + q + "/, found " +
                        std::to_string(got));
    }
    if (e.backoff) {
        if (o.backoffs.empty())
            f.push_back("expected deferred files with a backoff in " + e.backoff->describe() +
                        " s, found no deferred files");
        for (long b : o.backoffs)
            if (!e.backoff->contains(static_cast<double>(b))) {
                f.push_back("expected every deferred file's backoff (mtime - ctime) in " +
                            e.backoff->describe() + " s, found " + backoff_text(o.backoffs));
                break;
            }
    }
    if (e.deferral_rate && !e.deferral_rate->contains(deferral_rate(o))) {
        std::ostringstream m;
        m << std::fixed << std::setprecision(1) << "expected a deferral rate in "
          << e.deferral_rate->describe() << " %, found " << deferral_rate(o) << " %";
        f.push_back(m.str());
    }
    for (const auto& le : e.log) {
        std::string pat = vars.expand(le.match, "expect.log.match");
        std::regex re;
        try {
            re = std::regex(pat);
        } catch (const std::regex_error& err) {
            f.push_back("expected a valid regex in expect.log, found /" + pat + "/: " + err.what());
            continue;
        }
        int n = 0;
        for (const auto& line : o.maillog)
            if (std::regex_search(line, re)) ++n;
        bool ok =
            (!le.count || n == *le.count) && (!le.min || n >= *le.min) && (!le.max || n <= *le.max);
        if (!ok) {
            std::string want = le.count ? std::to_string(*le.count) : std::string();
            if (le.min)
                want +=
                    (want.empty() ? "" : ", ") + std::string("at least ") + std::to_string(*le.min);
            if (le.max)
                want +=
                    (want.empty() ? "" : ", ") + std::string("at most ") + std::to_string(*le.max);
            f.push_back("expected " + want + " maillog lines matching /" + pat + "/, found " +
                        std::to_string(n));
        }
    }
    for (const auto& oe : e.order) {
        std::string a = vars.expand(oe.lines, "expect.order.lines");
        std::string b = vars.expand(oe.before_last, "expect.order.before_last");
        std::regex ra, rb;
        try {
            ra = std::regex(a);
            rb = std::regex(b);
        } catch (const std::regex_error& err) {
            f.push_back("expected valid regexes in expect.order, found /" + a + "/, /" + b +
                        "/: " + err.what());
            continue;
        }
        long last_a = -1, last_b = -1, n = 0;
        for (const auto& line : o.maillog) {
            if (std::regex_search(line, ra)) last_a = n;
            if (std::regex_search(line, rb)) last_b = n;
            ++n;
        }
        if (last_a < 0 || last_b < 0)
            f.push_back("expected maillog lines matching /" + a + "/ and /" + b + "/, found " +
                        (last_a < 0 ? "none of the first" : "none of the second"));
        else if (last_a > last_b)
            f.push_back("expected every maillog line matching /" + a +
                        "/ before the last one matching /" + b + "/ (line " +
                        std::to_string(last_b + 1) + "), found one at line " +
                        std::to_string(last_a + 1));
    }
    for (const auto& [name, rg] : e.peak_connections) {
        int got = o.peak_connections.count(name) ? o.peak_connections.at(name) : 0;
        if (!rg.contains(got))
            f.push_back("expected " + rg.describe() + " simultaneous connections to sink '" + name +
                        "' (peak), found " + std::to_string(got));
    }
    for (const auto& [name, rg] : e.session_peak) {
        int got = o.sessions.count(name) ? o.sessions.at(name).peak : 0;
        if (!rg.contains(got))
            f.push_back("expected " + rg.describe() + " sessions at once at sink '" + name +
                        "' (exact peak), found " + std::to_string(got) + " (sessions-" + name +
                        ".log has each open and close)");
    }
    for (const auto& [key, rg] : e.sender_session_peak) {
        std::string sink = key.substr(0, key.find(':')), sender = key.substr(key.find(':') + 1);
        int got = 0;
        if (auto it = o.sessions.find(sink); it != o.sessions.end())
            if (auto s = it->second.senders.find(sender); s != it->second.senders.end())
                got = s->second;
        if (!rg.contains(got))
            f.push_back("expected " + rg.describe() + " sessions of sender domain " + sender +
                        " at once at sink '" + sink + "' (exact peak), found " +
                        std::to_string(got));
    }
    for (const auto& [name, want] : e.transactions) {
        int got = 0;
        if (o.transactions.count(name)) got = total(o.transactions.at(name));
        if (got != want)
            f.push_back("expected sink '" + name + "' to capture " + std::to_string(want) +
                        " mail transactions, found " + std::to_string(got));
    }
    for (const auto& [name, want] : e.flush_log) {
        int got = o.flush_logs.count(name) ? o.flush_logs.at(name) : 0;
        if (got != want)
            f.push_back("expected the fast flush log flush/" + name + " to list " +
                        std::to_string(want) + " queue IDs, found " + std::to_string(got));
    }
    for (const auto& sp : e.spacing) {
        std::vector<double> gaps = transaction_gaps(o, sp.sinks);
        std::string names;
        for (const auto& n : sp.sinks)
            names += (names.empty() ? "" : ", ") + n;
        if (gaps.empty()) {
            f.push_back("expected gaps between transactions at sinks " + names +
                        ", found fewer than two transactions");
            continue;
        }
        for (double g : gaps)
            if (!sp.gap.contains(g)) {
                f.push_back("expected every gap between successive transactions at sinks " + names +
                            " in " + sp.gap.describe() + " s, found " + gaps_text(gaps));
                break;
            }
    }
    if (e.flow_tokens && !e.flow_tokens->contains(static_cast<double>(o.flow_tokens)))
        f.push_back("expected " + e.flow_tokens->describe() +
                    " in-flow tokens in master's flow pipe at the end, found " +
                    (o.flow_tokens < 0 ? std::string("no flow pipe to look at")
                                       : std::to_string(o.flow_tokens)));
    if (e.hashed) {
        for (const auto& q : e.hashed->queues) {
            if (!o.queue_paths.count(q)) continue;
            for (const auto& rel : o.queue_paths.at(q)) {
                size_t slash = rel.rfind('/');
                std::string id = slash == std::string::npos ? rel : rel.substr(slash + 1);
                std::string want = hashed_queue_subdir(id, e.hashed->depth) + id;
                if (rel != want)
                    f.push_back("expected " + q + "/" + id + " at " + q + "/" + want +
                                " (hash_queue_depth " + std::to_string(e.hashed->depth) +
                                "), found it at " + q + "/" + rel);
            }
        }
    }
    if (!o.problems.empty())
        f.push_back("expected no fatal/panic/crash lines in the maillog, found " +
                    std::to_string(o.problems.size()) + ", first: " + o.problems.front());
    return f;
}

// Lists every difference that matters between two runs.
std::vector<std::string> compare_outcomes(const Outcome& a, const std::string& an, const Outcome& b,
                                          const std::string& bn, const CompareOptions& opts) {
    std::vector<std::string> out;
    if (!a.collected || !b.collected) {
        out.push_back("cannot compare: " + std::string(!a.collected ? an : bn) +
                      " produced no outcome");
        return out;
    }
    if (opts.deferral_rate_tolerance) {
        double ra = deferral_rate(a), rb = deferral_rate(b);
        if (std::fabs(ra - rb) > *opts.deferral_rate_tolerance) {
            std::ostringstream m;
            m << std::fixed << std::setprecision(1) << "deferral rate (tolerance "
              << *opts.deferral_rate_tolerance << " points): " << an << " " << ra << " %, " << bn
              << " " << rb << " %";
            out.push_back(m.str());
        }
    } else {
        diff_multisets(a.recipients, an, b.recipients, bn, "recipient", out);
    }
    diff_multisets(a.notifications, an, b.notifications, bn, "notification", out);
    Multiset qa, qb;
    for (const auto& [k, v] : a.queue)
        qa[k] = static_cast<int>(v);
    for (const auto& [k, v] : b.queue)
        qb[k] = static_cast<int>(v);
    diff_multisets(qa, an, qb, bn, "queue files in", out, " files");
    diff_multisets(a.flush_logs, an, b.flush_logs, bn, "fast flush log", out, " queue IDs");
    if (opts.qmgr_lines == CompareMode::Set)
        diff_multisets(as_set(a.qmgr_lines), an, as_set(b.qmgr_lines), bn, "qmgr line (as a set)",
                       out);
    else if (opts.qmgr_lines == CompareMode::Multiset)
        diff_multisets(a.qmgr_lines, an, b.qmgr_lines, bn, "qmgr line", out);
    if (opts.qmgr_warnings == CompareMode::Set)
        diff_multisets(as_set(a.qmgr_warnings), an, as_set(b.qmgr_warnings), bn,
                       "qmgr warning (as a set)", out);
    else if (opts.qmgr_warnings == CompareMode::Multiset)
        diff_multisets(a.qmgr_warnings, an, b.qmgr_warnings, bn, "qmgr warning", out);
    // Backoffs: same number of deferred files (checked above), each within the tolerance.
    bool backoff_differs = a.backoffs.size() != b.backoffs.size();
    for (size_t i = 0; !backoff_differs && i < a.backoffs.size(); ++i)
        if (std::fabs(static_cast<double>(a.backoffs[i] - b.backoffs[i])) > opts.backoff_tolerance)
            backoff_differs = true;
    if (backoff_differs) {
        std::ostringstream o;
        o << "deferred backoffs (mtime - ctime, s, tolerance " << opts.backoff_tolerance
          << "): " << an << " " << backoff_text(a.backoffs) << "; " << bn << " "
          << backoff_text(b.backoffs);
        out.push_back(o.str());
    }
    for (const auto& [name, lines] : a.reports)
        if (b.reports.count(name))
            diff_multisets(lines, an, b.reports.at(name), bn, "report " + name + " line", out);
    std::set<std::string> sinks;
    for (const auto& [k, v] : a.transactions)
        sinks.insert(k);
    for (const auto& [k, v] : b.transactions)
        sinks.insert(k);
    for (const auto& s : sinks) {
        Multiset none;
        diff_multisets(a.transactions.count(s) ? a.transactions.at(s) : none, an,
                       b.transactions.count(s) ? b.transactions.at(s) : none, bn,
                       "sink '" + s + "' transaction", out);
    }
    return out;
}

// Human-readable summary of one run.
void print_outcome(std::ostream& out, const Outcome& o, bool verbose) {
    auto count_of = [&o](const char* s) { return o.statuses.count(s) ? o.statuses.at(s) : 0; };
    out << "  delivered " << count_of("sent") << ", deferred " << count_of("deferred")
        << ", bounced " << count_of("bounced") << ", expired " << count_of("expired");
    for (const auto& [k, v] : o.statuses)
        if (k != "sent" && k != "deferred" && k != "bounced" && k != "expired")
            out << ", " << k << " " << v;
    out << "\n";
    out << std::fixed << std::setprecision(2);
    if (o.outcome_seconds >= 0)
        out << "  outcome reached " << o.outcome_seconds
            << " s after the first injection (injection took " << o.injection_seconds << " s)\n";
    else
        out << "  outcome NOT reached (injection took " << o.injection_seconds << " s)\n";
    if (!o.per_sink.empty()) {
        out << "  per sink:";
        for (const auto& [k, v] : o.per_sink)
            out << ' ' << k << '=' << v;
        out << "\n";
    }
    out << "  notifications:";
    if (o.notifications.empty()) out << " none";
    for (const auto& [k, v] : o.notifications)
        out << " \"" << k << "\" " << v << ';';
    out << "\n  queue left:";
    bool first = true;
    for (const auto& q : reported_queues()) {
        out << (first ? " " : ", ") << q << ' ' << (o.queue.count(q) ? o.queue.at(q) : 0);
        first = false;
    }
    out << "\n";
    if (count_of("deferred") > 0)
        out << "  deferral rate " << deferral_rate(o) << " % of sent + deferred\n";
    if (!o.backoffs.empty()) out << "  deferred backoffs (s): " << backoff_text(o.backoffs) << "\n";
    for (const auto& [k, v] : o.flush_logs)
        out << "  fast flush log " << k << ": " << v << " queue IDs\n";
    for (const auto& [k, v] : o.transactions)
        out << "  sink " << k << ": " << total(v) << " transactions captured\n";
    for (const auto& [k, v] : o.transaction_times) {
        std::vector<double> gaps = transaction_gaps(o, {k});
        if (!gaps.empty())
            out << "  sink " << k << ": gaps between transactions (s): " << gaps_text(gaps) << "\n";
    }
    if (o.flow_tokens >= 0) out << "  in-flow tokens at the end: " << o.flow_tokens << "\n";
    if (!o.peak_connections.empty()) {
        out << "  peak connections:";
        for (const auto& [k, v] : o.peak_connections)
            out << ' ' << k << '=' << v;
        out << "\n";
    }
    for (const auto& line : o.peer_summary)
        out << "  " << line << "\n";
    for (const auto& [k, v] : o.sessions) {
        out << "  sink " << k << ": exact peak " << v.peak << " sessions at once (" << v.total
            << " sessions; " << v.mixed_wakeups << " wakeups saw an end and a new one)\n";
        if (v.senders.size() > 1) {
            out << "  sink " << k << ": exact peak by sender domain:";
            for (const auto& [sender, peak] : v.senders)
                out << ' ' << (sender.empty() ? "<>" : sender) << '=' << peak;
            out << "\n";
        }
    }
    for (const auto& [name, seconds] : o.milestones) {
        if (seconds >= 0)
            out << "  " << name << ": " << seconds << " s after the first injection\n";
        else
            out << "  " << name << ": not reached\n";
    }
    out << "  maillog: " << o.log_lines << " lines, qmgr " << total(o.qmgr_lines) << " lines ("
        << o.qmgr_lines.size() << " distinct), qmgr warnings " << total(o.qmgr_warnings) << "\n";
    if (verbose) {
        for (const auto& [k, v] : o.qmgr_lines)
            out << "    " << std::setw(5) << v << "x " << k << "\n";
        for (const auto& [k, v] : o.qmgr_warnings)
            out << "    " << std::setw(5) << v << "x " << k << "\n";
        for (const auto& [k, v] : o.recipients)
            out << "    " << std::setw(5) << v << "x " << k << "\n";
        for (const auto& [sink, m] : o.transactions)
            for (const auto& [k, v] : m)
                out << "    " << std::setw(5) << v << "x sink " << sink << ": " << k << "\n";
    }
    for (const auto& p : o.problems)
        out << "  problem: " << p << "\n";
}

Normalizer maillog_normalizer(const std::vector<std::string>& maillog_lines, const Vars& vars) {
    Normalizer norm(vars);
    for (const auto& raw : maillog_lines)
        if (auto l = parse_log_line(raw); l && !l->queue_id.empty()) norm.add_queue_id(l->queue_id);
    return norm;
}

Multiset normalized_lines(const std::string& text, const Normalizer& norm) {
    Multiset out;
    for (const auto& line : split_lines(text))
        out[norm.apply(line)]++;
    return out;
}

std::optional<double> log_line_time(const std::string& raw) {
    std::tm tm{};
    const char* rest = ::strptime(raw.c_str(), "%b %d %H:%M:%S", &tm);
    if (rest == nullptr) return std::nullopt;
    std::time_t now = std::time(nullptr);
    std::tm local{};
    ::localtime_r(&now, &local);
    tm.tm_year = local.tm_year;
    tm.tm_isdst = -1;
    double t = static_cast<double>(std::mktime(&tm));
    if (t > static_cast<double>(now) + 86400) { // a December line read in January
        tm.tm_year -= 1;
        tm.tm_isdst = -1;
        t = static_cast<double>(std::mktime(&tm));
    }
    if (*rest == '.') {
        double scale = 0.1;
        for (++rest; std::isdigit(static_cast<unsigned char>(*rest)); ++rest, scale /= 10)
            t += (*rest - '0') * scale;
    }
    return t;
}

std::vector<std::pair<std::string, double>>
milestone_times(const std::vector<MilestoneSpec>& milestones,
                const std::vector<std::string>& maillog_lines, const Vars& vars, double t0) {
    std::vector<std::pair<std::string, double>> out;
    for (const auto& m : milestones) {
        std::regex re(vars.expand(m.match, "milestone " + m.name));
        int seen = 0;
        double at = -1;
        for (const auto& raw : maillog_lines) {
            if (!std::regex_search(raw, re) || ++seen < m.count) continue;
            if (auto t = log_line_time(raw)) at = std::max(0.0, *t - t0);
            break;
        }
        out.emplace_back(m.name, at);
    }
    return out;
}

void print_side_by_side(std::ostream& out, const Outcome& a, const std::string& an,
                        const Outcome& b, const std::string& bn) {
    auto count_of = [](const Outcome& o, const char* s) {
        return std::to_string(o.statuses.count(s) ? o.statuses.at(s) : 0);
    };
    auto seconds = [](double s) {
        if (s < 0) return std::string("-");
        std::ostringstream o;
        o << std::fixed << std::setprecision(1) << s << " s";
        return o.str();
    };
    std::vector<std::array<std::string, 3>> rows = {
        {"", an, bn},
        {"delivered", count_of(a, "sent"), count_of(b, "sent")},
        {"deferred", count_of(a, "deferred"), count_of(b, "deferred")},
        {"bounced", count_of(a, "bounced"), count_of(b, "bounced")},
        {"time to drain", seconds(a.outcome_seconds), seconds(b.outcome_seconds)}};
    for (std::size_t i = 0; i < a.milestones.size() && i < b.milestones.size(); ++i)
        rows.push_back({a.milestones[i].first, seconds(a.milestones[i].second),
                        seconds(b.milestones[i].second)});
    std::size_t w0 = 0, w1 = 0;
    for (const auto& r : rows) {
        w0 = std::max(w0, r[0].size());
        w1 = std::max({w1, r[1].size(), r[2].size()});
    }
    const auto flags = out.flags();
    for (const auto& r : rows)
        out << "  " << std::left << std::setw(static_cast<int>(w0)) << r[0] << "  " << std::right
            << std::setw(static_cast<int>(w1)) << r[1] << "  " << std::setw(static_cast<int>(w1))
            << r[2] << "\n";
    out.flags(flags);
}

} // namespace compat
