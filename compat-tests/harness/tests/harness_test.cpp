// Unit tests for the compat harness's parsing and normalization.
#include "error.hpp"
#include "maillog.hpp"
#include "outcome.hpp"
#include "scenario.hpp"

#include <gtest/gtest.h>

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
    EXPECT_TRUE(compare_outcomes(a, "stock", b, "cqmgr", false).empty());

    b.qmgr_lines["ID: removed"]++;
    b.queue["deferred"] = 0;
    auto diffs = compare_outcomes(a, "stock", b, "cqmgr", false);
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
