// Differential test of conf/ against the installed Postfix 3.7, over every
// case in tests/corpus/NN-name/ (main.cf, optionally master.cf):
//
//  1. `postconf -c DIR -x NAME...` for every parameter qmgr reads
//     (docs/postfix-facts.md §9: the whole param_table) and every
//     per-transport override of every delivery transport in master.cf: the
//     expanded strings must match MainCf::str() (postconf prints values
//     with white space runs squeezed to one blank, so both sides are
//     compared that way), and a postconf fatal error must be a ConfigError
//     here.
//  2. The typed values QmgrParams / read_transport_params() produce must
//     equal the typed reading of postconf's strings.
//  3. `postconf -c DIR -P -x` (master.cf -o values, expanded in each
//     service's scope) and `postconf -c DIR -F` (the fields) must match
//     MasterCf.
//  4. The stock qmgr binary, run once in stdin mode (-S -V) against the
//     case's configuration, must accept exactly what QmgrParams::load()
//     accepts, and refuse the rest with the same fatal text.
//  5. The cqmgr daemon, run the same way, must do what stock qmgr does:
//     start or stop, with the same fatal text and the same warnings.
//
// Needs Postfix installed (postconf in /usr/sbin); skips otherwise.
#include "cqmgr/conf/macro_expand.hpp"
#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/conf/master_cf.hpp"
#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/conf/transport_params.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <poll.h>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

using namespace cqmgr::conf;
namespace fs = std::filesystem;

namespace {

const char* const kPostconf = "/usr/sbin/postconf";

struct RunResult {
    int status = -1; // exit status, or -1 when killed / not run
    std::string out;
    std::string err;
    bool fatal = false; // it printed a fatal error (and was stopped)
};

// Runs `argv` with exactly `env`, feeding `input` on stdin; collects output.
RunResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
              const std::string& input = {}) {
    int in[2], out[2], err[2];
    if (::pipe(in) < 0 || ::pipe(out) < 0 || ::pipe(err) < 0) return {};
    pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]})
            ::close(fd);
        std::vector<char*> a, e;
        for (auto& s : argv)
            a.push_back(const_cast<char*>(s.c_str()));
        for (auto& s : env)
            e.push_back(const_cast<char*>(s.c_str()));
        a.push_back(nullptr);
        e.push_back(nullptr);
        ::execve(a[0], a.data(), e.data());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    ::signal(SIGPIPE, SIG_IGN);
    if (!input.empty()) (void)!::write(in[1], input.data(), input.size());
    ::close(in[1]);
    RunResult r;
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (::poll(fds, 2, 20000) <= 0) break; // a stuck child is a failure
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
            char buf[4096];
            ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n <= 0) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            } else {
                (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
            }
        }
        // Postfix sleeps a second after a fatal error; do not wait for it.
        if (auto f = r.err.find(": fatal: ");
            f != std::string::npos && r.err.find('\n', f) != std::string::npos) {
            ::kill(pid, SIGKILL);
            r.fatal = true;
            break;
        }
    }
    for (auto& f : fds)
        if (f.fd >= 0) {
            ::kill(pid, SIGKILL);
            ::close(f.fd);
        }
    int st = 0;
    ::waitpid(pid, &st, 0);
    r.status = r.fatal ? 1 : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

const std::vector<std::string> kEnv = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"};

// Squeezes white space runs to one blank and trims, as postconf prints.
std::string squeeze(std::string_view s) {
    std::string out;
    size_t i = 0;
    while (i < s.size()) {
        size_t b = s.find_first_not_of(" \t\r\n", i);
        if (b == std::string_view::npos) break;
        size_t e = s.find_first_of(" \t\r\n", b);
        if (e == std::string_view::npos) e = s.size();
        if (!out.empty()) out += ' ';
        out.append(s.substr(b, e - b));
        i = e;
    }
    return out;
}

// Splits postconf output "name = value" lines into a map.
std::map<std::string, std::string> parse_name_values(const std::string& text) {
    std::map<std::string, std::string> m;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        pos = nl == std::string::npos ? text.size() : nl + 1;
        auto eq = line.find(" =");
        if (eq == std::string::npos) continue;
        std::string value = line.size() > eq + 3 ? line.substr(eq + 3) : std::string();
        m[line.substr(0, eq)] = value;
    }
    return m;
}

// The commands postconf generates per-transport parameter names for.
bool delivery_command(const std::string& command) {
    for (const char* c : {"local", "error", "virtual", "smtp", "lmtp", "pipe"})
        if (command == c) return true;
    return false;
}

// Reads a typed value from a string the way `spec` says, as qmgr would;
// the error text when it would stop.
struct Typed {
    QmgrParams::Value value;
    std::string error;
};

Typed typed(const std::string& name, ParamType type, std::string_view def, int64_t min, int64_t max,
            const std::string& v) {
    Typed t;
    auto range = [&](int64_t n, bool time) {
        auto s = std::to_string(n);
        if (min && n < min)
            t.error =
                time ? "invalid " + name + ": " + s + " (min " + std::to_string(min) + ")"
                     : "invalid " + name + " parameter value " + s + " < " + std::to_string(min);
        else if (max && n > max)
            t.error =
                time ? "invalid " + name + ": " + s + " (max " + std::to_string(max) + ")"
                     : "invalid " + name + " parameter value " + s + " > " + std::to_string(max);
        else
            t.value = n;
    };
    switch (type) {
    case ParamType::String: {
        auto len = static_cast<int64_t>(v.size());
        if (min && len < min)
            t.error = "bad string length " + std::to_string(len) + " < " + std::to_string(min) +
                      ": " + name + " = " + v;
        else if (max && len > max)
            t.error = "bad string length " + std::to_string(len) + " > " + std::to_string(max) +
                      ": " + name + " = " + v;
        else
            t.value = v;
        break;
    }
    case ParamType::Int:
    case ParamType::Long: {
        auto n = type == ParamType::Int ? parse_int(v) : parse_long(v);
        if (!n)
            t.error = "bad numerical configuration: " + name + " = " + v;
        else
            range(*n, false);
        break;
    }
    case ParamType::Bool: {
        auto b = parse_bool(v);
        if (!b)
            t.error = "bad boolean configuration: " + name + " = " + v;
        else
            t.value = *b;
        break;
    }
    case ParamType::Time: {
        char unit = 's';
        for (char c : def)
            if (std::isalpha(static_cast<unsigned char>(c))) {
                unit = c;
                break;
            }
        auto n = parse_time(v, unit);
        if (!n)
            t.error = "parameter " + name + ": bad time value or unit: " + v;
        else
            range(*n, true);
        break;
    }
    case ParamType::Percent: // cqmgr's own: postconf does not know it
        t.error = "not a Postfix type: " + name;
        break;
    }
    return t;
}

// One corpus case.
class Differential : public ::testing::TestWithParam<std::string> {
  protected:
    void SetUp() override {
        if (::access(kPostconf, X_OK) != 0) GTEST_SKIP() << "Postfix is not installed";
        dir_ = std::string(CQMGR_CONF_CORPUS) + "/" + GetParam();
    }

    // `postconf -c DIR ARGS...`
    RunResult postconf(std::vector<std::string> args) const {
        std::vector<std::string> argv = {kPostconf, "-c", dir_};
        argv.insert(argv.end(), args.begin(), args.end());
        return run(argv, kEnv);
    }

    std::string dir_;
};

// The stock qmgr binary, or "" when not installed.
std::string stock_qmgr() {
    static const std::string path = [] {
        auto tmp = fs::temp_directory_path() / ("cqmgr-pc-" + std::to_string(::getpid()));
        fs::create_directories(tmp);
        { std::ofstream(tmp / "main.cf"); }
        auto r = run({kPostconf, "-c", tmp.string(), "-d", "-h", "daemon_directory"}, kEnv);
        fs::remove_all(tmp);
        std::string p = squeeze(r.out) + "/qmgr";
        return r.status == 0 && ::access(p.c_str(), X_OK) == 0 ? p : std::string();
    }();
    return path;
}

// A scratch queue directory with the subdirectories qmgr scans.
struct ScratchQueue {
    fs::path path;
    ScratchQueue() {
        static int n = 0;
        path = fs::temp_directory_path() /
               ("cqmgr-q-" + std::to_string(::getpid()) + "-" + std::to_string(++n));
        for (const char* d :
             {"active", "incoming", "deferred", "defer", "bounce", "trace", "corrupt", "hold",
              "flush", "saved", "maildrop", "private", "public", "pid"})
            fs::create_directories(path / d);
    }
    ~ScratchQueue() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

TEST_P(Differential, MainCfMatchesPostconf) {
    std::vector<std::string> warnings;
    MainCf cf([&](const std::string& w) { warnings.push_back(w); });
    register_defaults(cf);
    bool loaded = cf.load_dir(dir_);

    MasterCf master;
    bool has_master = fs::exists(dir_ + "/master.cf");
    bool master_ok = has_master && master.load_dir(dir_);

    // The names to ask for.
    std::vector<std::string> names;
    for (auto table : {global_params(), qmgr_params()})
        for (auto& p : table)
            if (p.name != "mynetworks" || cf.is_set("mynetworks")) names.emplace_back(p.name);
    std::vector<std::string> transports;
    if (master_ok)
        for (auto& s : master.services())
            if (delivery_command(s.command) &&
                std::find(transports.begin(), transports.end(), s.service) == transports.end())
                transports.push_back(s.service);
    for (auto& t : transports) {
        register_transport_defaults(cf, t);
        for (auto& s : transport_suffixes())
            names.push_back(t + std::string(s.suffix));
    }

    std::vector<std::string> args = {"-x"};
    args.insert(args.end(), names.begin(), names.end());
    auto batch = postconf(args);
    if (!loaded) {
        // A main.cf postfix refuses: postconf must refuse it the same way.
        EXPECT_NE(batch.status, 0) << "we refused main.cf (" << cf.error() << "), postconf did not";
        auto reason = cf.error().substr(cf.error().find(": ") + 2);
        EXPECT_NE(batch.err.find(reason), std::string::npos)
            << "ours: " << cf.error() << "\npostconf: " << batch.err;
        return;
    }
    auto theirs = parse_name_values(batch.out);
    // postconf expands every parameter it knows while it checks for unused
    // ones, so a value that fails to expand makes every postconf run fail.
    // Then we must fail on at least one name, for the same reason.
    bool postconf_refuses_all = batch.status != 0 && postconf({"-x", "mail_version"}).status != 0;
    size_t compared = 0;
    std::vector<std::string> our_failures;
    for (auto& name : names) {
        std::string mine;
        bool mine_fatal = false;
        try {
            mine = squeeze(cf.str(name));
        } catch (const ConfigError& e) {
            mine_fatal = true;
            mine = e.what();
            our_failures.push_back(e.detail());
        }
        ++compared;
        if (postconf_refuses_all) continue;
        std::string their;
        bool their_fatal = false;
        if (batch.status == 0) {
            auto it = theirs.find(name);
            ASSERT_NE(it, theirs.end()) << "postconf does not know " << name << "\n" << batch.err;
            their = it->second;
        } else {
            auto one = postconf({"-x", name});
            their_fatal = one.status != 0;
            auto m = parse_name_values(one.out);
            their = their_fatal ? one.err : m[name];
        }
        EXPECT_EQ(mine_fatal, their_fatal) << name << ": ours " << mine << " | postconf " << their;
        if (!mine_fatal && !their_fatal) {
            EXPECT_EQ(mine, their) << name;
        }
    }
    if (postconf_refuses_all) {
        ASSERT_FALSE(our_failures.empty()) << "postconf refused every parameter:\n" << batch.err;
        // The reason postconf gives ("warning: <reason>") is one of ours.
        auto w = batch.err.rfind("warning: ");
        std::string reason = batch.err.substr(w + 9, batch.err.find('\n', w) - w - 9);
        EXPECT_TRUE(std::any_of(our_failures.begin(), our_failures.end(),
                                [&](auto& d) { return d.find(reason) != std::string::npos; }))
            << "postconf: " << reason << "\nours: " << our_failures.front();
    }
    EXPECT_EQ(compared, names.size());
    RecordProperty("compared", static_cast<int>(compared));

    // Typed globals: our QmgrParams must be the typed reading of postconf's
    // strings (when both accept the configuration; the stock qmgr decides
    // the refusals below).
    QmgrParams q;
    bool q_ok = true;
    try {
        q = QmgrParams::load(cf, {}, QmgrParams::Options{false});
    } catch (const ConfigError&) {
        q_ok = false;
    }
    if (q_ok && batch.status == 0) {
        for (auto table : {global_params(), qmgr_params()})
            for (auto& p : table) {
                if (p.reader == ParamReader::Master || !q.values.count(p.name)) continue;
                std::string name(p.name);
                // A myorigin of "/file" is the file's first line to the
                // daemon (Debian's build); postconf shows the path.
                if (name == "myorigin" && theirs[name].starts_with('/')) continue;
                // postconf squeezes blanks, so compare strings squeezed too.
                auto t = typed(name, p.type, p.def, p.min, p.max, theirs[name]);
                ASSERT_TRUE(t.error.empty()) << name << ": " << t.error;
                auto mine = q.values.at(name);
                if (auto* s = std::get_if<std::string>(&mine)) mine = squeeze(*s);
                EXPECT_EQ(mine, t.value) << name;
            }
    }

    // Typed per-transport values from postconf's strings.
    if (q_ok && batch.status == 0)
        for (auto& tname : transports) {
            TransportParams expect;
            std::string expect_error;
            std::vector<std::string> expect_warnings;
            auto num = [&](const char* sfx, int64_t& field) {
                if (!expect_error.empty()) return;
                for (auto& s : transport_suffixes())
                    if (s.suffix == sfx) {
                        std::string n = tname + sfx;
                        auto t = typed(n, s.type, "0s", s.min, s.max, theirs[n]);
                        if (!t.error.empty())
                            expect_error = t.error;
                        else
                            field = std::get<int64_t>(t.value);
                    }
            };
            auto fb = [&](const char* sfx, Feedback& field) {
                if (!expect_error.empty()) return;
                std::string n = tname + sfx;
                if (theirs[n].empty()) {
                    expect_error = "bad string length 0 < 1: " + n + " = ";
                    return;
                }
                auto f = parse_feedback(theirs[n]);
                field = f ? *f : Feedback{};
                if (!f) expect_warnings.push_back(theirs[n]);
            };
            num("_destination_concurrency_limit", expect.destination_concurrency_limit);
            num("_destination_recipient_limit", expect.destination_recipient_limit);
            num("_initial_destination_concurrency", expect.initial_destination_concurrency);
            num("_transport_rate_delay", expect.transport_rate_delay);
            num("_destination_rate_delay", expect.destination_rate_delay);
            if (expect.destination_rate_delay > 0) expect.destination_concurrency_limit = 1;
            if (expect.destination_concurrency_limit != 0 &&
                expect.destination_concurrency_limit < expect.initial_destination_concurrency)
                expect.initial_destination_concurrency = expect.destination_concurrency_limit;
            num("_delivery_slot_cost", expect.delivery_slot_cost);
            num("_delivery_slot_loan", expect.delivery_slot_loan);
            num("_delivery_slot_discount", expect.delivery_slot_discount);
            num("_minimum_delivery_slots", expect.minimum_delivery_slots);
            num("_recipient_limit", expect.recipient_limit);
            num("_extra_recipient_limit", expect.extra_recipient_limit);
            num("_recipient_refill_limit", expect.recipient_refill_limit);
            num("_recipient_refill_delay", expect.recipient_refill_delay);
            fb("_destination_concurrency_positive_feedback", expect.positive_feedback);
            fb("_destination_concurrency_negative_feedback", expect.negative_feedback);
            num("_destination_concurrency_failed_cohort_limit",
                expect.destination_concurrency_failed_cohort_limit);

            std::vector<std::string> got_warnings;
            try {
                auto p = read_transport_params(
                    cf, q, tname, [&](const std::string& w) { got_warnings.push_back(w); });
                ASSERT_EQ(expect_error, "") << tname << ": we accepted it";
                EXPECT_EQ(p.destination_concurrency_limit, expect.destination_concurrency_limit)
                    << tname;
                EXPECT_EQ(p.destination_recipient_limit, expect.destination_recipient_limit)
                    << tname;
                EXPECT_EQ(p.initial_destination_concurrency, expect.initial_destination_concurrency)
                    << tname;
                EXPECT_EQ(p.transport_rate_delay, expect.transport_rate_delay) << tname;
                EXPECT_EQ(p.destination_rate_delay, expect.destination_rate_delay) << tname;
                EXPECT_EQ(p.delivery_slot_cost, expect.delivery_slot_cost) << tname;
                EXPECT_EQ(p.delivery_slot_loan, expect.delivery_slot_loan) << tname;
                EXPECT_EQ(p.delivery_slot_discount, expect.delivery_slot_discount) << tname;
                EXPECT_EQ(p.minimum_delivery_slots, expect.minimum_delivery_slots) << tname;
                EXPECT_EQ(p.recipient_limit, expect.recipient_limit) << tname;
                EXPECT_EQ(p.extra_recipient_limit, expect.extra_recipient_limit) << tname;
                EXPECT_EQ(p.recipient_refill_limit, expect.recipient_refill_limit) << tname;
                EXPECT_EQ(p.recipient_refill_delay, expect.recipient_refill_delay) << tname;
                EXPECT_EQ(p.destination_concurrency_failed_cohort_limit,
                          expect.destination_concurrency_failed_cohort_limit)
                    << tname;
                for (auto [a, b] : {std::pair{p.positive_feedback, expect.positive_feedback},
                                    std::pair{p.negative_feedback, expect.negative_feedback}}) {
                    EXPECT_DOUBLE_EQ(a.base, b.base) << tname;
                    EXPECT_EQ(a.per_concurrency, b.per_concurrency) << tname;
                }
                EXPECT_EQ(got_warnings.size(), expect_warnings.size()) << tname;
            } catch (const ConfigError& e) {
                EXPECT_EQ(e.postfix_text(), expect_error) << tname;
            }
        }
}

TEST_P(Differential, MasterCfMatchesPostconf) {
    if (!fs::exists(dir_ + "/master.cf")) {
        // Without master.cf postconf knows no services either.
        auto r = postconf({"-F"});
        EXPECT_EQ(r.out, "") << r.err;
        return;
    }
    MainCf cf;
    register_defaults(cf);
    ASSERT_TRUE(cf.load_dir(dir_)) << cf.error();
    MasterCf master;
    bool ok = master.load_dir(dir_);
    auto fields = postconf({"-F"});
    if (!ok) {
        EXPECT_NE(fields.status, 0)
            << "we refused master.cf (" << master.error() << "), postconf did not";
        return;
    }
    ASSERT_EQ(fields.status, 0) << fields.err;

    // Fields.
    std::map<std::string, std::string> mine;
    for (auto& s : master.services()) {
        std::string p = s.service + "/" + s.type + "/";
        mine[p + "service"] = s.service;
        mine[p + "type"] = s.type;
        mine[p + "private"] = s.private_field;
        mine[p + "unprivileged"] = s.unprivileged_field;
        mine[p + "chroot"] = s.chroot_field;
        mine[p + "wakeup"] = s.wakeup_field;
        mine[p + "process_limit"] = s.maxproc_field;
        mine[p + "command"] = s.command;
    }
    auto theirs = parse_name_values(fields.out);
    for (auto& [k, v] : theirs)
        if (k.size() > 8 && k.compare(k.size() - 8, 8, "/command") == 0)
            v = v.substr(0, v.find(' '));
    EXPECT_EQ(mine, theirs);

    // -o values, expanded in each service's scope: process_name and
    // service_name, then the line's own -o values, then main.cf.
    std::map<std::string, std::string> mine_p;
    for (auto& s : master.services()) {
        std::map<std::string, std::string> local;
        for (auto& [n, v] : s.overrides())
            local[n] = v;
        auto slash = s.command.rfind('/');
        std::string process = slash == std::string::npos ? s.command : s.command.substr(slash + 1);
        auto lookup = [&](const std::string& n) -> std::optional<std::string> {
            if (n == "process_name") return process;
            if (n == "service_name") return s.service;
            if (auto it = local.find(n); it != local.end()) return it->second;
            return cf.raw(n);
        };
        for (auto& [n, v] : local) {
            std::string value;
            try {
                value = squeeze(expand_macros(v, lookup));
            } catch (const ConfigError& e) {
                value = std::string("<fatal> ") + e.what();
            }
            mine_p[s.service + "/" + s.type + "/" + n] = value;
        }
    }
    auto params = postconf({"-P", "-x"});
    if (params.status != 0) {
        bool any_fatal = std::any_of(mine_p.begin(), mine_p.end(),
                                     [](auto& kv) { return kv.second.rfind("<fatal>", 0) == 0; });
        EXPECT_TRUE(any_fatal) << params.err;
        return;
    }
    EXPECT_EQ(mine_p, parse_name_values(params.out));
}

// What a queue manager printed when started once in stand-alone mode.
struct StartUp {
    RunResult run;
    std::string fatal;                 // the text after "fatal: ", if any
    std::vector<std::string> warnings; // the texts after "warning: "
};

// Runs queue manager `binary` once in stdin mode (-S -V) against case
// directory `dir` with a scratch queue directory.
StartUp start_once(const std::string& binary, const std::string& dir, const ScratchQueue& queue) {
    auto env = kEnv;
    env.push_back("MAIL_CONFIG=" + dir);
    StartUp s;
    s.run = run(
        {binary, "-S", "-V", "-l", "-t", "unix", "-o", "queue_directory=" + queue.path.string()},
        env, "x");
    for (size_t pos = 0; pos < s.run.err.size();) {
        size_t nl = s.run.err.find('\n', pos);
        std::string line =
            s.run.err.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        pos = nl == std::string::npos ? s.run.err.size() : nl + 1;
        if (auto f = line.find(": fatal: "); f != std::string::npos) s.fatal = line.substr(f + 9);
        if (auto w = line.find(": warning: "); w != std::string::npos)
            s.warnings.push_back(line.substr(w + 11));
    }
    return s;
}

TEST_P(Differential, StockQmgrAgreesAtStartUp) {
    std::string qmgr = stock_qmgr();
    if (qmgr.empty()) GTEST_SKIP() << "stock qmgr not installed";
    ScratchQueue queue;
    std::vector<std::string> warnings;
    MainCf cf([&](const std::string& w) { warnings.push_back(w); });
    register_defaults(cf);
    bool loaded = cf.load_dir(dir_);
    StartUp theirs = start_once(qmgr, dir_, queue);
    if (!loaded) {
        EXPECT_NE(theirs.run.status, 0)
            << "we refused main.cf (" << cf.error() << "), stock qmgr did not";
        return;
    }
    cf.set("queue_directory", queue.path.string());
    std::vector<std::string> ours_w;
    try {
        QmgrParams::load(cf, [&](const std::string& w) { ours_w.push_back(w); });
        EXPECT_EQ(theirs.run.status, 0) << "stock qmgr refused: " << theirs.fatal << "\n"
                                        << theirs.run.err;
        for (auto& w : ours_w)
            EXPECT_NE(std::find(theirs.warnings.begin(), theirs.warnings.end(), w),
                      theirs.warnings.end())
                << "stock qmgr did not warn: " << w << "\n"
                << theirs.run.err;
    } catch (const ConfigError& e) {
        EXPECT_NE(theirs.run.status, 0) << "we refused (" << e.what() << "), stock qmgr did not";
        EXPECT_EQ(e.postfix_text(), theirs.fatal) << theirs.run.err;
    }
}

// The daemon itself, started the same way as stock: it must accept what
// stock accepts and stop with stock's fatal text otherwise, and print the
// same start-up warnings.  This is the daemon's own configuration path
// (main.cf, -o, QmgrParams, the start-up checks), not the library's.
TEST_P(Differential, DaemonAgreesWithStockAtStartUp) {
    std::string qmgr = stock_qmgr();
    if (qmgr.empty()) GTEST_SKIP() << "stock qmgr not installed";
    ScratchQueue queue;
    StartUp theirs = start_once(qmgr, dir_, queue);
    StartUp ours = start_once(CQMGR_DAEMON, dir_, queue);
    EXPECT_EQ(ours.run.status == 0, theirs.run.status == 0) << "stock:\n"
                                                            << theirs.run.err << "cqmgr:\n"
                                                            << ours.run.err;
    EXPECT_EQ(ours.fatal, theirs.fatal);
    auto sorted = [](std::vector<std::string> v) {
        std::sort(v.begin(), v.end());
        return v;
    };
    EXPECT_EQ(sorted(ours.warnings), sorted(theirs.warnings)) << "stock:\n"
                                                              << theirs.run.err << "cqmgr:\n"
                                                              << ours.run.err;
}

// Every case directory, in name order.
std::vector<std::string> corpus_cases() {
    std::vector<std::string> out;
    for (auto& e : fs::directory_iterator(CQMGR_CONF_CORPUS))
        if (e.is_directory()) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

INSTANTIATE_TEST_SUITE_P(Corpus, Differential, ::testing::ValuesIn(corpus_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             std::string n = info.param;
                             for (auto& c : n)
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             return n;
                         });

TEST(Corpus, HasAtLeastThirtyCases) {
    EXPECT_GE(corpus_cases().size(), 30u);
}

// Every built-in default in param_table.hpp is what `postconf -d` prints.
TEST(Defaults, MatchPostconfDashD) {
    if (::access(kPostconf, X_OK) != 0) GTEST_SKIP() << "Postfix is not installed";
    auto tmp = fs::temp_directory_path() / ("cqmgr-defaults-" + std::to_string(::getpid()));
    fs::create_directories(tmp);
    { std::ofstream(tmp / "main.cf"); }
    std::vector<std::string> argv = {kPostconf, "-c", tmp.string(), "-d"};
    std::vector<const ParamSpec*> specs;
    for (auto table : {global_params(), qmgr_params()})
        for (auto& p : table)
            if (p.name != "mynetworks") {
                argv.emplace_back(p.name);
                specs.push_back(&p);
            }
    auto r = run(argv, kEnv);
    ASSERT_EQ(r.status, 0) << r.err;
    auto theirs = parse_name_values(r.out);
    MainCf cf;
    register_defaults(cf);
    for (auto* p : specs) {
        std::string name(p->name);
        ASSERT_TRUE(theirs.count(name)) << name;
        if (p->computed) {
            EXPECT_EQ(cf.str(name), theirs[name]) << name;
        } else {
            EXPECT_EQ(squeeze(p->def), theirs[name]) << name;
        }
    }
    fs::remove_all(tmp);
}

} // namespace
