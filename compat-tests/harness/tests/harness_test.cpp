// Unit tests for the compat harness's parsing and normalization.
#include "actions.hpp"
#include "cqmgr/test/temp_dir.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "maillog.hpp"
#include "net.hpp"
#include "outcome.hpp"
#include "sanitizer.hpp"
#include "scenario.hpp"
#include "session_counter.hpp"

#include <arpa/inet.h>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace compat;

TEST(Maillog, ParsesDeliveryLine) {
    auto l = parse_log_line(
        "Nov 22 02:42:50 test postfix/smtp[4064]: 63904A7250F: to=<bob@dest.example>, "
        "relay=127.0.0.1[127.0.0.1]:20025, delay=0.04, delays=0.02/0.02/0/0, dsn=2.0.0, "
        "status=sent (250 2.0.0 Ok)");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->program, "postfix/smtp");
    EXPECT_EQ(l->service, "smtp");
    EXPECT_EQ(l->pid, 4064);
    EXPECT_EQ(l->queue_id, "63904A7250F");
    auto d = parse_delivery(l->text);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->to, "bob@dest.example");
    EXPECT_EQ(d->orig_to, "");
    EXPECT_EQ(d->relay, "127.0.0.1[127.0.0.1]:20025");
    EXPECT_EQ(d->dsn, "2.0.0");
    EXPECT_EQ(d->status, "sent");
}

TEST(Maillog, ParsesOrigToAndDeferral) {
    auto d = parse_delivery(
        "to=<nobody@test.example>, orig_to=<alias@test.example>, relay=none, delay=0.01, "
        "delays=0.01/0/0/0, dsn=4.4.1, status=deferred (connect to 127.0.0.1[127.0.0.1]:1: "
        "Connection refused)");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->orig_to, "alias@test.example");
    EXPECT_EQ(d->relay, "none");
    EXPECT_EQ(d->status, "deferred");
}

TEST(Maillog, LineWithoutQueueId) {
    auto l = parse_log_line(
        "Nov 22 02:42:48 test postfix/master[4027]: daemon started -- version 3.7.11");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->queue_id, "");
    EXPECT_EQ(l->text, "daemon started -- version 3.7.11");
    EXPECT_FALSE(parse_log_line("garbage without a program"));
}

TEST(Maillog, QueueIdForms) {
    EXPECT_TRUE(looks_like_queue_id("63904A7250F"));
    EXPECT_TRUE(looks_like_queue_id("4Xyt5k0Hbhz9vKj"));
    EXPECT_FALSE(looks_like_queue_id("NOQUEUE"));
    EXPECT_FALSE(looks_like_queue_id("warning"));
    EXPECT_FALSE(looks_like_queue_id("ABC"));
}

TEST(Normalizer, MasksRunSpecificParts) {
    Vars v;
    v.set("dir", "/tmp/cqmgr-compat-abc123");
    v.set("smtpd", "40000");
    v.set("sink.a", "40001");
    Normalizer n(v);
    n.add_queue_id("63904A7250F");
    EXPECT_EQ(n.apply("from=<a@b>, size=367, nrcpt=1 (queue active)"),
              "from=<a@b>, size=N, nrcpt=1 (queue active)");
    EXPECT_EQ(n.apply("to=<x@y>, relay=none, delay=12, delays=1/2/3/4, dsn=4.4.1, status=deferred "
                      "(connect to "
                      "127.0.0.1[127.0.0.1]:40001: refused)"),
              "to=<x@y>, relay=none, dsn=4.4.1, status=deferred (connect to "
              "127.0.0.1[127.0.0.1]:${sink.a}: refused)");
    EXPECT_EQ(n.apply("sender notification: 63904A7250F"), "sender notification: ID");
    EXPECT_EQ(n.apply("open /tmp/cqmgr-compat-abc123/queue/x"), "open ${dir}/queue/x");
    EXPECT_EQ(n.apply("port :400011 stays"), "port :400011 stays");
}

TEST(Outcome, CollectsAndCompares) {
    Vars v;
    v.set("dir", "/tmp/d");
    v.set("smtpd", "40000");
    v.set("sink.a", "40001");
    std::vector<std::string> lines = {
        "Nov 22 02:42:50 test postfix/qmgr[1]: AAAAAA1: from=<s@x>, size=300, nrcpt=1 (queue "
        "active)",
        "Nov 22 02:42:50 test postfix/smtp[2]: AAAAAA1: to=<r@y>, "
        "relay=127.0.0.1[127.0.0.1]:40001, delay=0.1, "
        "delays=0/0/0/0, dsn=2.0.0, status=sent (250 Ok)",
        "Nov 22 02:42:50 test postfix/qmgr[1]: AAAAAA1: removed",
        "Nov 22 02:42:50 test postfix/bounce[3]: AAAAAA2: sender non-delivery notification: "
        "AAAAAA3",
        "Nov 22 02:42:50 test postfix/qmgr[1]: warning: something odd",
    };
    QueueCounts q{{"incoming", 0}, {"active", 0}, {"deferred", 1}};
    Outcome a = collect_outcome(lines, v, {"a"}, q);
    EXPECT_EQ(a.statuses["sent"], 1);
    EXPECT_EQ(a.per_sink["a"], 1);
    EXPECT_EQ(a.notifications["sender non-delivery notification"], 1);
    EXPECT_EQ(a.qmgr_lines["ID: from=<s@x>, size=N, nrcpt=1 (queue active)"], 1);
    EXPECT_EQ(a.qmgr_lines["ID: removed"], 1);
    EXPECT_EQ(a.qmgr_warnings["warning: something odd"], 1);
    EXPECT_EQ(a.recipients["to=<r@y> status=sent dsn=2.0.0 relay=127.0.0.1[127.0.0.1]:${sink.a}"],
              1);

    // The same run on other ports/IDs compares equal.
    Vars w;
    w.set("dir", "/tmp/e");
    w.set("smtpd", "50000");
    w.set("sink.a", "50001");
    std::vector<std::string> lines2 = lines;
    for (auto& l : lines2) {
        for (auto [from, to] :
             {std::pair<std::string, std::string>{"AAAAAA", "BBBBBB"}, {"40001", "50001"}}) {
            size_t p;
            while ((p = l.find(from)) != std::string::npos)
                l.replace(p, from.size(), to);
        }
    }
    Outcome b = collect_outcome(lines2, w, {"a"}, q);
    EXPECT_TRUE(compare_outcomes(a, "stock", b, "cqmgr", CompareOptions{}).empty());

    b.qmgr_lines["ID: removed"]++;
    b.queue["deferred"] = 0;
    auto diffs = compare_outcomes(a, "stock", b, "cqmgr", CompareOptions{});
    ASSERT_EQ(diffs.size(), 2u);
    EXPECT_NE(diffs[0].find("deferred"), std::string::npos);
    EXPECT_NE(diffs[1].find("stock 1x, cqmgr 2x"), std::string::npos);

    Expect e;
    e.sent = 2;
    e.queue_empty = true;
    auto f = check_expectations(e, a, v);
    ASSERT_EQ(f.size(), 2u);
    EXPECT_NE(f[0].find("expected sent=2"), std::string::npos);
    EXPECT_NE(f[1].find("deferred 1"), std::string::npos);
}

TEST(Scenario, ParsesFullExample) {
    Scenario s = parse_scenario(R"(
name = "x"
timeout = 30
[main_cf]
relayhost = "[127.0.0.1]:${sink.a}"
default_process_limit = 10
[[sink]]
name = "a"
args = ["-c"]
[[inject]]
method = "smtp-source"
messages = 5
to = "bob@dest.example"
[[inject]]
method = "smtp"
to = ["a@d1.example", "b@d2.example"]
count = 2
[expect]
sent = 9
queue_empty = true
per_sink = { a = 9 }
mailbox = [ { path = "${dir}/mail/nobody", contains = "Subject: hello" } ]
)",
                                "test.toml");
    EXPECT_EQ(s.name, "x");
    EXPECT_EQ(s.timeout, 30);
    ASSERT_EQ(s.main_cf.size(), 2u);
    ASSERT_EQ(s.injects.size(), 2u);
    EXPECT_EQ(s.injects[0].messages, 5);
    EXPECT_EQ(s.injects[1].to.size(), 2u);
    EXPECT_EQ(s.expect.per_sink.at("a"), 9);
    ASSERT_EQ(s.expect.mailbox.size(), 1u);
    EXPECT_EQ(s.expect.mailbox[0].contains.at(0), "Subject: hello");
}

TEST(Scenario, RejectsMistakes) {
    auto msg = [](const char* text) {
        try {
            parse_scenario(text, "t.toml");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(msg("name=\"x\"\n[[inject]]\nmethod=\"smtp\"\nto=\"a@b\"\n[expect]\nsentt=1\n")
                  .find("unknown key"),
              std::string::npos);
    EXPECT_NE(
        msg("name=\"x\"\n[[inject]]\nmethod=\"pigeon\"\nto=\"a@b\"\n").find("found \"pigeon\""),
        std::string::npos);
    EXPECT_NE(msg("name=\"x\"\ntimeout=\"5\"\n[[inject]]\nmethod=\"smtp\"\nto=\"a@b\"\n")
                  .find("found a string"),
              std::string::npos);
    EXPECT_NE(msg("name=\"x\"\n[[inject]]\nmethod=\"smtp\"\nto=\"a@b\"\n[expect]\nper_sink={z=1}\n")
                  .find("[[sink]]"),
              std::string::npos);
    EXPECT_NE(msg("name = [").find("invalid TOML"), std::string::npos);
}

TEST(Vars, ExpandsOwnVariablesOnly) {
    Vars v;
    v.set("dir", "/tmp/d");
    v.set("sink.a", "123");
    EXPECT_EQ(v.expand("${dir}/mail ${sink.a} ${recipient} $myhostname", "t"),
              "/tmp/d/mail 123 ${recipient} $myhostname");
    EXPECT_THROW(v.expand("${sink.b}", "t"), Error);
}

TEST(Scenario, ParsesActionsAndNewExpectations) {
    Scenario s = parse_scenario(R"(
name = "x"
compare_qmgr_warnings = "set"
slow = true
[[sink]]
name = "a"
start = false
dump = true
[[inject]]
method = "smtp"
to = "a@b"
rcpt_params = "NOTIFY=SUCCESS"
mail_params = "XVERP"
[[inject]]
method = "sendmail"
to = "c@d"
[[action]]
after_inject = 1
wait_for = { queue = "deferred", files = 2, timeout = 5 }
start_sink = "a"
[[action]]
command = ["postqueue", "-c", "${conf}", "-f"]
[[action]]
kill_process = { name = "smtp", signal = "TERM", connected_to = "a" }
[[action]]
corrupt_file = { how = "no_sender" }
[[action]]
trigger = "AD"
[[action]]
wait_for = { log = "status=sent", count = 3 }
[expect]
queue = { deferred = 1 }
backoff = { min = 290, max = 310 }
log = [ { match = "removed", min = 2 } ]
peak_connections = { a = 1 }
transactions = { a = 3 }
flush_log = { dest_example = 2 }
deferral_rate = { min = 10, max = 50 }
order = [ { lines = "small", before_last = "bulk" } ]
)",
                                "t.toml");
    EXPECT_TRUE(s.slow);
    EXPECT_EQ(s.compare_qmgr_warnings, CompareMode::Set);
    EXPECT_FALSE(s.sinks[0].start);
    EXPECT_TRUE(s.sinks[0].dump);
    EXPECT_EQ(s.injects[0].rcpt_params, "NOTIFY=SUCCESS");
    EXPECT_EQ(s.injects[0].mail_params, "XVERP");
    ASSERT_EQ(s.actions.size(), 6u);
    EXPECT_EQ(s.actions[0].after_inject, 1);
    EXPECT_EQ(s.actions[0].kind, "start_sink");
    ASSERT_TRUE(s.actions[0].wait_for);
    EXPECT_EQ(s.actions[0].wait_for->kind, WaitSpec::Kind::Queue);
    EXPECT_EQ(s.actions[0].wait_for->files, 2);
    EXPECT_EQ(s.actions[1].after_inject, 2); // default: after all injections
    EXPECT_EQ(s.actions[1].command.size(), 4u);
    EXPECT_EQ(s.actions[2].signal, "TERM");
    EXPECT_EQ(s.actions[2].connected_to, "a");
    EXPECT_EQ(s.actions[3].how, "no_sender");
    EXPECT_EQ(s.actions[3].from_queue, "hold");
    EXPECT_EQ(s.actions[4].trigger, "AD");
    EXPECT_EQ(s.actions[5].kind, "");
    EXPECT_EQ(s.actions[5].wait_for->count, 3);
    EXPECT_EQ(s.expect.queue.at("deferred"), 1);
    ASSERT_TRUE(s.expect.backoff);
    EXPECT_TRUE(s.expect.backoff->contains(300));
    EXPECT_FALSE(s.expect.backoff->contains(311));
    EXPECT_EQ(s.expect.log.at(0).min, 2);
    EXPECT_TRUE(s.expect.peak_connections.at("a").contains(1));
    EXPECT_FALSE(s.expect.peak_connections.at("a").contains(2));
    EXPECT_EQ(s.expect.transactions.at("a"), 3);
    EXPECT_EQ(s.expect.flush_log.at("dest_example"), 2);
    ASSERT_TRUE(s.expect.deferral_rate);
    EXPECT_TRUE(s.expect.deferral_rate->contains(35));
    ASSERT_EQ(s.expect.order.size(), 1u);
    EXPECT_EQ(s.expect.order[0].before_last, "bulk");
    EXPECT_FALSE(s.deferral_rate_tolerance);
}

namespace {
// The error parse_scenario reports for a document, or "no error".
std::string parse_error(const std::string& text) {
    try {
        parse_scenario(text, "t.toml");
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

// parse_error for a scenario with one sink "a" and one injection, then `tail`.
std::string parse_error_after_sink(const std::string& tail) {
    return parse_error("name=\"x\"\n[[sink]]\nname=\"a\"\n[[inject]]\nmethod=\"smtp\"\n"
                       "to=\"a@b\"\n" +
                       tail);
}
} // namespace

TEST(Scenario, RejectsBadActions) {
    auto msg = parse_error_after_sink;
    EXPECT_NE(msg("[[action]]\nsleep=1\ncommand=[\"x\"]\n").find("one action per"),
              std::string::npos);
    EXPECT_NE(msg("[[action]]\ndelay_before=1\n").find("expected one of"), std::string::npos);
    EXPECT_NE(msg("[[action]]\nkill_qmgr=\"BOOM\"\n").find("signal"), std::string::npos);
    EXPECT_NE(msg("[[action]]\nstart_sink=\"b\"\n").find("[[sink]]"), std::string::npos);
    EXPECT_NE(msg("[[action]]\nwait_for={queue=\"nope\", files=1}\n").find("queue directory"),
              std::string::npos);
    EXPECT_NE(msg("[[action]]\nafter_inject=2\nsleep=1\n").find("[0, 1]"), std::string::npos);
    EXPECT_NE(msg("[[action]]\nafter_inject=1\nsleep=1\n[[action]]\nafter_inject=0\nsleep=1\n")
                  .find("file order"),
              std::string::npos);
    EXPECT_NE(msg("[[action]]\ncorrupt_file={how=\"shred\"}\n").find("truncate"),
              std::string::npos);
    EXPECT_NE(msg("[expect]\ntransactions={a=1}\n").find("dump = true"), std::string::npos);
    EXPECT_EQ(msg("[[action]]\nwait_for={log=\"x\"}\n"), "no error");
}

TEST(Scenario, PortsAndActionsForOneQueueManager) {
    Scenario s = parse_scenario(R"(
name = "x"
ports = ["metrics", "other-1"]
[main_cf]
cqmgr_metrics_listen = "127.0.0.1:${port.metrics}"
[[inject]]
method = "smtp"
to = "a@b"
[[action]]
qmgr = "cqmgr"
command = ["curl", "http://127.0.0.1:${port.metrics}/metrics"]
[[action]]
sleep = 1
)",
                                "t.toml");
    EXPECT_EQ(s.ports, (std::vector<std::string>{"metrics", "other-1"}));
    EXPECT_EQ(s.actions[0].qmgr, "cqmgr");
    EXPECT_EQ(s.actions[1].qmgr, "");
    Vars v;
    v.set("port.metrics", "9154");
    EXPECT_EQ(v.expand("127.0.0.1:${port.metrics}", "t"), "127.0.0.1:9154");
    EXPECT_THROW(v.expand("${port.nope}", "t"), Error);

    auto msg = parse_error_after_sink;
    EXPECT_NE(msg("[[action]]\nqmgr=\"postfix\"\nsleep=1\n").find("\"stock\" or \"cqmgr\""),
              std::string::npos);
    EXPECT_NE(parse_error("name=\"x\"\nports=[\"a\", \"a\"]\n[[inject]]\nmethod=\"smtp\"\n"
                          "to=\"a@b\"\n")
                  .find("unique names"),
              std::string::npos);
    EXPECT_NE(parse_error("name=\"x\"\nports=[\"A B\"]\n[[inject]]\nmethod=\"smtp\"\n"
                          "to=\"a@b\"\n")
                  .find("unique names"),
              std::string::npos);
}

// A minimal queue file: C T S M N X R E (R after X, as cleanup writes
// extracted recipients), built with the one-byte length form.
static std::string rec(char type, const std::string& payload) {
    std::string r(1, type);
    r += static_cast<char>(payload.size()); // all payloads here are < 128 bytes
    return r + payload;
}

TEST(Corrupt, DamagesQueueFileBytes) {
    std::string head = rec('T', "1700000000 0") + rec('S', "a@b.example") + rec('R', "c@d.example");
    std::string msg = rec('M', "");
    std::string content = rec('N', "Subject: x") + rec('N', "") + rec('N', "body line");
    std::string tail = rec('X', "") + rec('E', "");
    // The SIZE record is 97 bytes; data_offset is just after M.
    long data_offset = 97 + static_cast<long>(head.size() + msg.size());
    long data_size = static_cast<long>(content.size());
    char size[128];
    std::snprintf(size, sizeof size, "%15ld %15ld %15d %15d %15ld %15d", data_size, data_offset, 1,
                  0, data_size, 0);
    std::string file = rec('C', size) + head + msg + content + tail;
    ASSERT_EQ(file.size(), static_cast<size_t>(data_offset + data_size) + tail.size());

    std::string t = corrupt_queue_bytes(file, "truncate");
    EXPECT_EQ(t.size(), static_cast<size_t>(data_offset + data_size / 2));
    std::string b = corrupt_queue_bytes(file, "bad_record");
    EXPECT_EQ(b.size(), file.size());
    EXPECT_EQ(b[97 + rec('T', "1700000000 0").size() + rec('S', "a@b.example").size()], 'Q');
    std::string n = corrupt_queue_bytes(file, "no_sender");
    EXPECT_EQ(n[97 + rec('T', "1700000000 0").size()], 'K');
    EXPECT_THROW(corrupt_queue_bytes("garbage", "truncate"), Error);
}

TEST(Outcome, KilledProcessesAreNotProblems) {
    Vars v;
    v.set("dir", "/tmp/d");
    std::vector<std::string> lines = {
        "Nov 22 02:42:50 test postfix/master[1]: warning: process /tmp/d/libexec/qmgr pid 42 "
        "killed by signal 9",
        "Nov 22 02:42:50 test postfix/master[1]: warning: process /tmp/d/libexec/smtp pid 43 "
        "killed by signal 9",
        "Nov 22 02:42:50 test postfix/qmgr[5]: warning: Unexpected record type 'Q' at offset 652",
    };
    ExpectedKills k;
    k.pids = {42};
    Outcome o = collect_outcome(lines, v, {}, {}, k);
    ASSERT_EQ(o.problems.size(), 1u);
    EXPECT_NE(o.problems[0].find("pid 43"), std::string::npos);
    EXPECT_EQ(o.qmgr_warnings.count("warning: Unexpected record type 'Q' at offset N"), 1u);
    std::string bad = "warning: /tmp/d/libexec/trivial-rewrite: bad command startup -- throttling";
    EXPECT_FALSE(is_expected_kill(bad, k));
    k.programs.insert("trivial-rewrite");
    EXPECT_TRUE(is_expected_kill(bad, k));
}

TEST(Outcome, ChecksOrderFlushLogsAndDeferralRates) {
    Outcome o;
    o.collected = true;
    o.maillog = {"bulk 1", "small 1", "bulk 2", "small 2"};
    Expect e;
    e.order.push_back({"small", "bulk"});
    Vars v;
    auto f = check_expectations(e, o, v);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_NE(f[0].find("line 4"), std::string::npos);
    o.maillog.push_back("bulk 3");
    EXPECT_TRUE(check_expectations(e, o, v).empty());
    e.order[0].lines = "tiny";
    EXPECT_EQ(check_expectations(e, o, v).size(), 1u); // must occur

    Expect rate;
    Range r;
    r.min = 20;
    r.max = 40;
    rate.deferral_rate = r;
    o.statuses["sent"] = 65;
    o.statuses["deferred"] = 35;
    EXPECT_EQ(deferral_rate(o), 35.0);
    EXPECT_TRUE(check_expectations(rate, o, v).empty());
    o.statuses["deferred"] = 100;
    EXPECT_EQ(check_expectations(rate, o, v).size(), 1u);

    Outcome a, b;
    a.collected = b.collected = true;
    a.statuses = {{"sent", 66}, {"deferred", 34}};
    b.statuses = {{"sent", 62}, {"deferred", 38}};
    a.recipients["to=<x> status=sent"] = 1;
    b.recipients["to=<y> status=sent"] = 1;
    a.flush_logs["dest_example"] = 3;
    b.flush_logs["dest_example"] = 3;
    CompareOptions co;
    EXPECT_EQ(compare_outcomes(a, "stock", b, "cqmgr", co).size(), 2u); // records differ
    co.deferral_rate_tolerance = 5;
    EXPECT_TRUE(compare_outcomes(a, "stock", b, "cqmgr", co).empty());
    co.deferral_rate_tolerance = 3;
    EXPECT_EQ(compare_outcomes(a, "stock", b, "cqmgr", co).size(), 1u);
    b.flush_logs["dest_example"] = 2;
    co.deferral_rate_tolerance = 5;
    EXPECT_EQ(compare_outcomes(a, "stock", b, "cqmgr", co).size(), 1u);
}

TEST(Outcome, ComparesBackoffsSetsAndTransactions) {
    Outcome a, b;
    a.collected = b.collected = true;
    a.backoffs = {300, 300};
    b.backoffs = {301, 302};
    a.qmgr_warnings["warning: x"] = 1;
    b.qmgr_warnings["warning: x"] = 4;
    a.transactions["s"]["MAIL <a> | RCPT <b>"] = 1;
    b.transactions["s"]["MAIL <a> | RCPT <b>"] = 1;
    CompareOptions co;
    co.qmgr_warnings = CompareMode::Set;
    EXPECT_TRUE(compare_outcomes(a, "stock", b, "cqmgr", co).empty());
    co.qmgr_warnings = CompareMode::Multiset;
    EXPECT_EQ(compare_outcomes(a, "stock", b, "cqmgr", co).size(), 1u);
    co.qmgr_warnings = CompareMode::Ignore;
    b.backoffs = {300, 303};
    auto d = compare_outcomes(a, "stock", b, "cqmgr", co);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_NE(d[0].find("300 x2"), std::string::npos);
    b.backoffs = a.backoffs;
    b.transactions["s"]["MAIL <a> | RCPT <c>"] = 1;
    EXPECT_EQ(compare_outcomes(a, "stock", b, "cqmgr", co).size(), 1u);

    Expect e;
    Range r;
    r.min = 299;
    r.max = 301;
    e.backoff = r;
    Vars v;
    EXPECT_TRUE(check_expectations(e, a, v).empty());
    a.backoffs.push_back(60);
    EXPECT_EQ(check_expectations(e, a, v).size(), 1u);
    a.backoffs.clear();
    EXPECT_EQ(check_expectations(e, a, v).size(), 1u); // nothing to check is a failure too
}

TEST(Scenario, ParsesInstanceOptionsAndTimingExpectations) {
    Scenario s = parse_scenario(R"(
name = "x"
qmgr_service_type = "fifo"
chroot = ["all", "qmgr"]
queue_fs = { size_mib = 16 }
allowed_problems = ["postfix/qmgr\\[\\d+\\]: fatal: .*No space left on device"]
compare_qmgr_lines = "ignore"
[[sink]]
name = "a"
dump = true
[[sink]]
name = "b"
dump = true
[[inject]]
method = "smtp"
to = "x@y"
[[action]]
fill_fs = true
[[action]]
free_fs = true
[expect]
spacing = [ { sinks = ["a", "b"], min = 1.0 }, { sinks = ["a"], min = 0.5, max = 9 } ]
flow_tokens = 0
hashed = { depth = 2, queues = ["deferred", "defer"] }
queue = { defer = 1, bounce = 0 }
)",
                                "t.toml");
    EXPECT_EQ(s.qmgr_service_type, "fifo");
    EXPECT_EQ(s.chroot.size(), chrootable_services().size() + 1);
    EXPECT_EQ(s.chroot.back(), "qmgr");
    EXPECT_EQ(s.queue_fs.size_mib, 16);
    ASSERT_EQ(s.allowed_problems.size(), 1u);
    EXPECT_EQ(s.compare_qmgr_lines, CompareMode::Ignore);
    EXPECT_EQ(s.actions[0].kind, "fill_fs");
    EXPECT_EQ(s.actions[1].kind, "free_fs");
    ASSERT_EQ(s.expect.spacing.size(), 2u);
    EXPECT_EQ(s.expect.spacing[0].sinks.size(), 2u);
    EXPECT_TRUE(s.expect.spacing[0].gap.contains(1.0));
    EXPECT_FALSE(s.expect.spacing[0].gap.contains(0.99));
    EXPECT_FALSE(s.expect.spacing[1].gap.contains(9.5));
    ASSERT_TRUE(s.expect.flow_tokens);
    EXPECT_TRUE(s.expect.flow_tokens->contains(0));
    EXPECT_FALSE(s.expect.flow_tokens->contains(1));
    ASSERT_TRUE(s.expect.hashed);
    EXPECT_EQ(s.expect.hashed->depth, 2);
    EXPECT_EQ(s.expect.queue.at("defer"), 1);
}

TEST(Scenario, RejectsBadInstanceOptions) {
    auto msg = parse_error_after_sink;
    // Top-level keys must come before the first table.
    auto top = [](const std::string& text) {
        return parse_error("name=\"x\"\n" + text + "\n[[inject]]\nmethod=\"smtp\"\nto=\"a@b\"\n");
    };
    EXPECT_NE(top("qmgr_service_type = \"inet\"").find("\"unix\" or \"fifo\""), std::string::npos);
    EXPECT_NE(top("chroot = [\"local\"]").find("chrootable"), std::string::npos);
    EXPECT_NE(top("queue_fs = { size_mib = 1 }").find("[4, 1024]"), std::string::npos);
    EXPECT_NE(top("allowed_problems = [\"(\"]").find("valid regexes"), std::string::npos);
    EXPECT_NE(msg("[[action]]\nfill_fs = true\n").find("queue_fs"), std::string::npos);
    EXPECT_NE(msg("[[action]]\nfill_fs = false\n").find("expected true"), std::string::npos);
    EXPECT_NE(msg("[expect]\nspacing = [ { sinks = [\"a\"], min = 1 } ]\n").find("dump = true"),
              std::string::npos);
    EXPECT_NE(msg("[expect]\nspacing = [ { sinks = [\"a\"] } ]\n").find("min and/or max"),
              std::string::npos);
    EXPECT_NE(msg("[expect]\nhashed = { depth = 2 }\n").find("queues"), std::string::npos);
    EXPECT_NE(msg("[expect]\nhashed = { queues = [\"maildrop\"] }\n").find("hashable"),
              std::string::npos);
}

TEST(Outcome, HashedQueueSubdirectories) {
    // Short IDs: the leading characters, one per level.
    EXPECT_EQ(hashed_queue_subdir("63904A7250F", 1), "6/");
    EXPECT_EQ(hashed_queue_subdir("63904A7250F", 2), "6/3/");
    EXPECT_EQ(hashed_queue_subdir("A", 3), "A/_/_/");
    // Long IDs: the four microsecond characters before the last 'z', base 52
    // ("0Hbh" = ((0*52 + 15)*52 + 31)*52 + 36 = 42208 = 0x0A4E0), in hex.
    EXPECT_EQ(hashed_queue_subdir("4Xyt5k0Hbhz9vKj", 2), "0/A/");
    EXPECT_EQ(hashed_queue_subdir("4Xyt5k0Hbhz9vKj", 5), "0/A/4/E/0/");
    // A 'z' too early to separate a long ID's time from its inode: hashed as is.
    EXPECT_EQ(hashed_queue_subdir("4Xyzt", 2), "4/X/");
}

TEST(Outcome, ChecksSpacingFlowTokensAndPlacement) {
    Outcome o;
    o.collected = true;
    o.transaction_times["a"] = {100.0, 102.5, 105.0};
    o.transaction_times["b"] = {101.0};
    o.flow_tokens = 0;
    o.queue_paths["deferred"] = {"6/3/63904A7250F", "7/7904A7250F"};
    auto gaps = transaction_gaps(o, {"a", "b"});
    ASSERT_EQ(gaps.size(), 3u);
    EXPECT_DOUBLE_EQ(gaps[0], 1.0);
    EXPECT_DOUBLE_EQ(gaps[1], 1.5);
    Expect e;
    SpacingExpect per_a;
    per_a.sinks = {"a"};
    per_a.gap.min = 2.0;
    e.spacing.push_back(per_a);
    Vars v;
    EXPECT_TRUE(check_expectations(e, o, v).empty());
    SpacingExpect pooled = per_a;
    pooled.sinks = {"a", "b"};
    e.spacing.push_back(pooled);
    auto f = check_expectations(e, o, v);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_NE(f[0].find("1.00, 1.50, 2.50"), std::string::npos);
    Expect tokens;
    tokens.flow_tokens = Range{1, std::nullopt};
    f = check_expectations(tokens, o, v);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_NE(f[0].find("in-flow tokens"), std::string::npos);
    Expect placed;
    placed.hashed = HashedExpect{2, {"deferred"}};
    f = check_expectations(placed, o, v);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_NE(f[0].find("deferred/7/9/7904A7250F"), std::string::npos);
}

TEST(Outcome, AllowedProblemsAreNotProblems) {
    Vars v;
    ExpectedKills expected;
    expected.allowed.emplace_back("qmgr\\[\\d+\\]: fatal: .*No space left on device");
    std::vector<std::string> log = {
        "Jan  1 00:00:00 test postfix/qmgr[10]: fatal: qmgr_active_defer: rename A from active "
        "to deferred: No space left on device",
        "Jan  1 00:00:01 test postfix/qmgr[11]: fatal: something else"};
    Outcome o = collect_outcome(log, v, {}, {}, expected);
    ASSERT_EQ(o.problems.size(), 1u);
    EXPECT_NE(o.problems[0].find("something else"), std::string::npos);
}

TEST(Outcome, EmptyQueueIgnoresLogDirectories) {
    Outcome o;
    o.collected = true;
    o.queue = {{"incoming", 0}, {"active", 0}, {"defer", 2}};
    Expect e;
    e.queue_empty = true;
    Vars v;
    EXPECT_TRUE(check_expectations(e, o, v).empty());
    e.queue["defer"] = 1;
    EXPECT_EQ(check_expectations(e, o, v).size(), 1u);
    Outcome other = o;
    other.queue["defer"] = 0;
    auto diffs = compare_outcomes(o, "stock", other, "cqmgr", CompareOptions{});
    ASSERT_EQ(diffs.size(), 1u);
    EXPECT_NE(diffs[0].find("defer"), std::string::npos);
}

TEST(Instance, MasterCfChrootAndQmgrType) {
    InstanceConfig cfg;
    cfg.qmgr = QmgrKind::Cqmgr;
    cfg.smtpd_port = 2525;
    cfg.qmgr_service_type = "fifo";
    cfg.chroot = {"qmgr", "smtpd"};
    std::string text = master_cf_text(cfg);
    EXPECT_NE(text.find("\nqmgr fifo n - y 300 1 cqmgr\n"), std::string::npos);
    EXPECT_NE(text.find("\n127.0.0.1:2525 inet n - y - - smtpd\n"), std::string::npos);
    EXPECT_NE(text.find("\ncleanup unix n - n - 0 cleanup\n"), std::string::npos);
    EXPECT_NE(text.find("\nrelay unix - - n - - smtp\n  -o syslog_name=postfix/$service_name\n"),
              std::string::npos);
    cfg.qmgr_enabled = false;
    cfg.qmgr = QmgrKind::Stock;
    cfg.qmgr_service_type = "unix";
    cfg.chroot.clear();
    EXPECT_NE(master_cf_text(cfg).find("\n#qmgr unix n - n 300 1 qmgr\n"), std::string::npos);
}

TEST(Outcome, StartupFailuresUnlessProvoked) {
    const std::string line = "Jan  1 00:00:00 test postfix/master[1]: warning: /x/libexec/cqmgr: "
                             "bad command startup -- throttling";
    ExpectedKills none;
    EXPECT_TRUE(is_startup_failure(line, none));
    EXPECT_FALSE(is_startup_failure("Jan  1 00:00:00 test postfix/qmgr[2]: removed", none));
    ExpectedKills killed;
    killed.programs.insert("cqmgr");
    EXPECT_FALSE(is_startup_failure(line, killed));
    ExpectedKills allowed;
    allowed.allowed.emplace_back("/cqmgr: bad command startup");
    EXPECT_FALSE(is_startup_failure(line, allowed));
}

TEST(Sanitizer, WrapperSendsStderrToAFilePerProcess) {
    std::string w = sanitizer_wrapper("/x/it's/cqmgr");
    EXPECT_EQ(w.rfind("#!/bin/bash\n", 0), 0u);
    EXPECT_NE(w.find(std::string("exec 2>>") + sanitizer_report_dir() + "/cqmgr.$$\n"),
              std::string::npos)
        << w;
    EXPECT_NE(w.find("export ASAN_OPTIONS="), std::string::npos) << w;
    EXPECT_NE(w.find("export UBSAN_OPTIONS="), std::string::npos) << w;
    EXPECT_NE(w.find("\nexec -a cqmgr '/x/it'\\''s/cqmgr' \"$@\"\n"), std::string::npos) << w;
    EXPECT_NE(w.find("detect_leaks=1"), std::string::npos) << w;
    // Chrooted, LeakSanitizer has no /proc: leaks are not checked.
    EXPECT_NE(sanitizer_wrapper("/x/cqmgr", false).find("detect_leaks=0"), std::string::npos);
}

TEST(Sanitizer, EachNonEmptyReportIsAFailure) {
    cqmgr::test::TempDir dir("compat-harness-test");
    EXPECT_TRUE(sanitizer_reports(dir.str()).empty());
    EXPECT_TRUE(sanitizer_reports(dir.str() + "/missing").empty());
    write_file(dir.str() + "/cqmgr.41", ""); // opened, nothing written: no finding
    // cqmgr's own log lines, on stderr once postlogd has gone: no finding.
    write_file(dir.str() + "/cqmgr.40",
               "postfix/qmgr[40]: master status channel readable: master has gone away\n"
               "postfix-out/qmgr: cannot connect to postlog socket /x\n");
    std::string report;
    for (int i = 0; i < 10; ++i) {
        report += "line ";
        report += std::to_string(i);
        report += '\n';
    }
    write_file(dir.str() + "/cqmgr.42", "==42==ERROR: AddressSanitizer: heap-use-after-free\n");
    write_file(dir.str() + "/cqmgr.43", report);
    auto f = sanitizer_reports(dir.str(), 4);
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].rfind("sanitizer report cqmgr.42 (cqmgr pid 42):\n==42==ERROR", 0), 0u) << f[0];
    EXPECT_NE(f[1].find("line 3\n... (6 more lines)"), std::string::npos) << f[1];
    EXPECT_EQ(f[1].find("line 4"), std::string::npos) << f[1];
    // Anything else next to log lines still is one.
    EXPECT_EQ(without_log_lines("postfix/qmgr[7]: x\n==7==ERROR: LeakSanitizer\nqmgr[7]: y"),
              "==7==ERROR: LeakSanitizer\nqmgr[7]: y");
}

namespace {

// A client connection to 127.0.0.1:port (blocking), or -1.
int connect_to(std::uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// Waits up to 5 s for `done`.
bool eventually(const std::function<bool()>& done) {
    for (int i = 0; i < 500 && !done(); i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return done();
}

// A session counter's backend on loopback `port`: a listener whose kernel
// completes the connections (nobody accepts them); -1 if it cannot listen.
int listen_backend(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 64) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

} // namespace

TEST(SessionCounter, CountsEverySessionFromAcceptToClose) {
    auto ports = allocate_ports(2);
    int backend = listen_backend(ports[1]);
    ASSERT_GE(backend, 0);
    cqmgr::test::TempDir dir("compat-sessions");
    SessionCounter c(ports[0], ports[1], dir.str() + "/sessions.log");
    c.start();
    std::vector<int> fds;
    for (int i = 0; i < 3; i++)
        fds.push_back(connect_to(ports[0]));
    ASSERT_TRUE(eventually([&] { return c.open() == 3; }));
    for (int fd : fds)
        ::close(fd);
    ASSERT_TRUE(eventually([&] { return c.open() == 0; }));
    // One after the other, however short: never two at once.
    for (int i = 0; i < 20; i++) {
        int fd = connect_to(ports[0]);
        ASSERT_TRUE(eventually([&] { return c.open() == 1; }));
        ::close(fd);
        ASSERT_TRUE(eventually([&] { return c.open() == 0; }));
    }
    EXPECT_EQ(c.peak(), 3);
    EXPECT_EQ(c.sessions(), 23);
    c.stop();
    EXPECT_LT(connect_to(ports[0]), 0); // stopped: nobody listens
    std::string log;
    read_file_if_exists(dir.str() + "/sessions.log", log);
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 46);
    ::close(backend);
}

TEST(SessionCounter, PutsEachSessionDownToItsSenderDomain) {
    auto ports = allocate_ports(2);
    int backend = listen_backend(ports[1]);
    ASSERT_GE(backend, 0);
    cqmgr::test::TempDir dir("compat-sessions");
    SessionCounter c(ports[0], ports[1], dir.str() + "/sessions.log");
    c.start();
    auto say = [](int fd, const std::string& text) {
        ASSERT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL),
                  static_cast<ssize_t>(text.size()));
    };
    // Two of news.example at once (the second's MAIL FROM in two pieces,
    // after a pipelined EHLO), one of other.example beside them, then a
    // third of news.example after both ended.
    int n1 = connect_to(ports[0]), n2 = connect_to(ports[0]), o = connect_to(ports[0]);
    say(n1, "EHLO x\r\nMAIL FROM:<a@News.Example> SIZE=10\r\n");
    say(n2, "EHLO x\r\nMAIL FR");
    say(n2, "OM:<b@news.example>\r\nRCPT TO:<c@d>\r\n");
    say(o, "MAIL FROM:<z@other.example>\r\n");
    ASSERT_TRUE(eventually([&] { return c.sender_peaks().size() == 2; }));
    ::close(n1);
    ::close(n2);
    ASSERT_TRUE(eventually([&] { return c.open() == 1; }));
    int n3 = connect_to(ports[0]);
    say(n3, "MAIL FROM:<>\r\n");
    ::close(n3);
    ::close(o);
    ASSERT_TRUE(eventually([&] { return c.open() == 0; }));
    c.stop();
    std::map<std::string, int> want{{"news.example", 2}, {"other.example", 1}, {"", 1}};
    EXPECT_EQ(c.sender_peaks(), want);
    // Several senders counted together.
    EXPECT_EQ(c.peak_of({"news.example", "other.example"}), 3);
    EXPECT_EQ(c.peak_of({"other.example", ""}), 2);
    EXPECT_EQ(c.peak_of({"none.example"}), 0);
    ::close(backend);
}
