// The human form of each sample reply of docs/control-protocol.md.
#include "fields.hpp"
#include "format.hpp"
#include "samples.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::ctl;
using cqmgr::ctl::test::sample;

namespace {
// 10 minutes before the samples' "until" of 1764000600.
constexpr int64_t now = 1764000000;
} // namespace

TEST(Format, Summary) {
    EXPECT_EQ(format_reply("summary", sample("summary"), now),
              "cqmgr 0.1.0, pid 28691, up 4.6s\n"
              "active queue:       6 messages (limit 20000), 6 recipients (limit 20000), oldest "
              "3s\n"
              "feed:               idle, 111 in-flow tokens written\n"
              "resolver:           3 requests, 8 cache hits\n"
              "scheduler:          3 transports, 2 queues, 1 deliveries in flight\n"
              "mail queues:        incoming 0, active 6 (oldest 3s), deferred 2 (oldest 3s)\n"
              "delivery requests:  3 done, 2 deferred, 0 crashed, 0 unavailable\n"
              "messages:           3 removed, 2 deferred, 0 bounced, 0 expired\n"
              "destination failures (hop status): 1 4.x.x, 0 5.x.x\n");
}

// What a daemon says it delivered is in words that say so: no line reads
// "0" for a daemon that delivered everything it was given.
TEST(Format, SummaryAfterDeliveriesWithoutFailures) {
    auto s = sample("summary");
    s["counters"]["deliveries"] = {
        {"done", 918}, {"deferred", 0}, {"crashed", 0}, {"unavailable", 0}};
    s["counters"]["dsn_class"] = {{"2", 0}, {"4", 0}, {"5", 0}};
    s["counters"]["destination_failures"] = {{"4", 0}, {"5", 0}};
    s["counters"]["messages"] = {{"removed", 318}, {"deferred", 0}, {"bounced", 0}, {"expired", 0}};
    std::string text = format_summary(s);
    EXPECT_NE(text.find("delivery requests:  918 done, 0 deferred, 0 crashed, 0 unavailable\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("messages:           318 removed, 0 deferred"), std::string::npos) << text;
    EXPECT_NE(text.find("destination failures (hop status): 0 4.x.x, 0 5.x.x\n"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("dsn"), std::string::npos) << text;
}

// An older daemon's reply (no destination_failures, no mail_queues): the
// failures from dsn_class without its "2", the queues unknown.
TEST(Format, SummaryOfAnOlderDaemon) {
    auto s = sample("summary");
    s["counters"].erase("destination_failures");
    s.erase("mail_queues");
    s["counters"]["dsn_class"] = {{"2", 0}, {"4", 3}, {"5", 1}};
    std::string text = format_summary(s);
    EXPECT_NE(text.find("destination failures (hop status): 3 4.x.x, 1 5.x.x\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("mail queues:        incoming -, active -, deferred -\n"),
              std::string::npos)
        << text;
}

// Queue sizes: an empty queue has no oldest age shown, an unknown one "-".
TEST(Format, MailQueues) {
    EXPECT_EQ(mail_queues(json::parse(R"({"incoming":{"messages":0,"oldest_age":0},
        "active":{"messages":2,"oldest_age":75},
        "deferred":{"messages":null,"oldest_age":null}})")),
              "incoming 0, active 2 (oldest 1m15s), deferred -");
    EXPECT_EQ(mail_queues(json::parse(R"({"deferred":{"messages":4,"oldest_age":null}})")),
              "incoming -, active -, deferred 4");
}

TEST(Format, SummaryOfAPausedIdleFeed) {
    auto s = sample("summary");
    s["feed"]["paused"] = true;
    EXPECT_NE(format_summary(s).find("feed:               paused, 111 in-flow tokens written\n"),
              std::string::npos);
    s["feed"]["paused"] = false;
    s["feed"]["scanning"] = json::array({"incoming", "deferred"});
    EXPECT_NE(format_summary(s).find("feed:               scanning incoming, deferred, 111"),
              std::string::npos)
        << format_summary(s);
}

TEST(Format, Queues) {
    EXPECT_EQ(format_reply("queues", sample("queues"), now),
              "TRANSPORT  DESTINATION  WINDOW  BUSY  TODO  LAST   STATE\n"
              "smtp       *                 -     3     5  -\n"
              "smtp       example.com       5     3     5  4.4.1  dead, suspended, throttle 2\n"
              "\n"
              "TARGET            CONDITION   UNTIL                             REASON\n"
              "smtp:example.com  dead        2025-11-24T16:00:00Z (ending)     4.4.1 connect to "
              "...: Connection refused\n"
              "smtp:example.com  suspended   2025-11-24T16:10:00Z (in 10m00s)  maintenance (by "
              "uid 0)\n"
              "smtp:example.com  throttle 2  -\n");
}

// The sample queues reply with its destination neither dead, suspended nor
// throttled.
json queues_without_conditions() {
    auto q = sample("queues");
    auto& dest = q["transports"][0]["queues"][0];
    dest["dead"] = nullptr;
    dest["suspended"] = nullptr;
    dest["throttle"] = nullptr;
    return q;
}

TEST(Format, QueuesShowLearnedLimits) {
    auto q = queues_without_conditions();
    auto& dest = q["transports"][0]["queues"][0];
    dest["learned"] = json::parse(R"({"concurrency":5,"rate_delay":null,"class":"connection_limit",
        "status":"4.7.0","reason":"host mx refused to talk to me: 421 too many connections",
        "when":1764000000})");
    EXPECT_EQ(format_queues(q, now),
              "TRANSPORT  DESTINATION  WINDOW  BUSY  TODO  LAST   STATE\n"
              "smtp       *                 -     3     5  -\n"
              "smtp       example.com       5     3     5  4.4.1  learned 5\n"
              "\n"
              "TARGET            CONDITION  UNTIL  REASON\n"
              "smtp:example.com  learned 5  -      4.7.0 host mx refused to talk to me: 421 too "
              "many connections\n");
    dest["learned"] = json::parse(R"({"concurrency":null,"rate_delay":12})");
    EXPECT_NE(format_queues(q, now).find("4.4.1  learned delay 12s\n"), std::string::npos);
    // A slow start's cap: nothing learned yet.
    dest["learned"] = json::parse(R"({"concurrency":6,"rate_delay":null,"slow_start":true})");
    EXPECT_NE(format_queues(q, now).find("4.4.1  slow start 6\n"), std::string::npos);
    // A window's quota, held while it is spent, until the window ends.
    dest["learned"] = json::parse(R"({"concurrency":null,"rate_delay":null,"quota":60,
        "window":61,"held_until":null,"class":"rate_limit","status":"4.7.1",
        "reason":"host rx said: 450 4.7.1 Error: too much mail from 127.0.0.1"})");
    EXPECT_NE(format_queues(q, now).find("4.4.1  learned 60/61s\n"), std::string::npos);
    dest["learned"]["held_until"] = now + 30;
    std::string out = format_queues(q, now);
    EXPECT_NE(out.find("4.4.1  learned 60/61s held\n"), std::string::npos) << out;
    EXPECT_NE(out.find("smtp:example.com  learned 60/61s held  " + format_time(now + 30) +
                       " (in 30s)  4.7.1 host rx said"),
              std::string::npos)
        << out;
}

TEST(Format, QueuesShowAReplyRulesAction) {
    auto q = queues_without_conditions();
    auto& dest = q["transports"][0]["queues"][0];
    dest["rule"] = json::parse(R"({"target":"smtp:example.com",
        "action":"suspend destination after 3/10m for 1h",
        "rule":"pcre:/etc/postfix/reply_actions, line 2",
        "reason":"4.7.0 host mx said: 421 4.7.0 [TSS04] unexpected volume","hold":true,
        "concurrency":null,"pause":null,"since":1763999500,"until":null,"deliveries_left":null})");
    std::string out = format_queues(q, now);
    EXPECT_NE(out.find("4.4.1  rule suspend\n"), std::string::npos) << out;
    EXPECT_NE(out.find("smtp:example.com  rule suspend"), std::string::npos) << out;
    EXPECT_NE(out.find("4.7.0 host mx said: 421 4.7.0 [TSS04] unexpected volume "
                       "(pcre:/etc/postfix/reply_actions, line 2)\n"),
              std::string::npos)
        << out;
    dest["rule"]["hold"] = false;
    dest["rule"]["concurrency"] = 2;
    EXPECT_NE(format_queues(q, now).find("4.4.1  rule throttle 2\n"), std::string::npos);
    dest["rule"]["concurrency"] = nullptr;
    dest["rule"]["pause"] = 6;
    EXPECT_NE(format_queues(q, now).find("4.4.1  rule pause 6s\n"), std::string::npos);
}

// A reply rule's action on one sender group's mail (a sender scope):
// named with its group in the state and on a condition line of its own.
TEST(Format, QueuesShowASenderGroupsRuleAction) {
    auto q = queues_without_conditions();
    auto& dest = q["transports"][0]["queues"][0];
    dest["sender_rules"] = json::parse(R"([{"group":"news.example",
        "target":"smtp:example.com","action":"throttle 2 sender-destination for 1h",
        "rule":"pcre:/etc/postfix/reply_actions, line 4",
        "reason":"4.7.28 host mx said: 421 4.7.28 unusual rate","hold":false,
        "concurrency":2,"pause":null,"since":1763999500,"until":null,"deliveries_left":null}])");
    std::string out = format_queues(q, now);
    EXPECT_NE(out.find("4.4.1  sender news.example rule throttle 2\n"), std::string::npos) << out;
    EXPECT_NE(out.find("smtp:example.com  sender news.example rule throttle 2"), std::string::npos)
        << out;
    EXPECT_NE(out.find("4.7.28 host mx said: 421 4.7.28 unusual rate "
                       "(pcre:/etc/postfix/reply_actions, line 4)\n"),
              std::string::npos)
        << out;
}

TEST(Format, QueuesShowALoweredDestinationShare) {
    auto q = queues_without_conditions();
    auto& dest = q["transports"][0]["queues"][0];
    // The full share is no news.
    dest["share"] = json::parse(R"({"agents":50,"full":50,"lowered":false,"probe":false})");
    EXPECT_NE(format_queues(q, now).find("4.4.1\n"), std::string::npos);
    dest["share"] = json::parse(R"({"agents":2,"full":50,"lowered":true,"probe":false})");
    EXPECT_NE(format_queues(q, now).find("4.4.1  share 2/50\n"), std::string::npos);
    dest["share"] = json::parse(R"({"agents":1,"full":50,"lowered":true,"probe":true})");
    EXPECT_NE(format_queues(q, now).find("4.4.1  probe 1/50\n"), std::string::npos);
}

TEST(Format, QueuesWithoutConditionsHasNoSecondTable) {
    auto q = queues_without_conditions();
    EXPECT_EQ(format_queues(q, now), "TRANSPORT  DESTINATION  WINDOW  BUSY  TODO  LAST   STATE\n"
                                     "smtp       *                 -     3     5  -\n"
                                     "smtp       example.com       5     3     5  4.4.1\n");
    EXPECT_EQ(format_queues(json::parse(R"({"ok":true,"transports":[]})"), now), "no transports\n");
}

TEST(Format, Jobs) {
    EXPECT_EQ(format_reply("JOBS smtp", sample("jobs"), now),
              "TRANSPORT  QUEUE_ID  LANE    LEVEL  PARENT  SLOTS  ENTRIES  RCPTS  LIMIT  UNREAD  "
              "PEERS  BLOCKER\n"
              "smtp       4F3A2B1C  normal      0  -         3/6     3/10     40     50       0  "
              "    4  no\n");
}

TEST(Format, JobsIndentsPreemptingJobs) {
    auto j = sample("jobs");
    auto child = j["transports"][0]["jobs"][0];
    child["queue_id"] = "5A5A5A5A";
    child["stack_level"] = 1;
    child["parent"] = "4F3A2B1C";
    j["transports"][0]["jobs"].push_back(child);
    const std::string text = format_jobs(j);
    EXPECT_NE(text.find("\nsmtp       4F3A2B1C  "), std::string::npos) << text;
    EXPECT_NE(text.find("\nsmtp         5A5A5A5A  normal      1  4F3A2B1C"), std::string::npos)
        << text;
}

TEST(Format, Message) {
    EXPECT_EQ(format_reply("message 4F3A2B1C", sample("message"), now + 90),
              "4F3A2B1C\n"
              "phase:       waiting\n"
              "queued:      2025-11-24T16:00:00Z (1m30s ago)\n"
              "recipients:  3 in core, 0 unread\n"
              "\n"
              "TRANSPORT  QUEUE        STATE  RECIPIENT\n"
              "smtp       example.com  busy   a@example.com\n"
              "smtp       example.com  busy   b@example.com\n");
}

TEST(Format, Deliveries) {
    EXPECT_EQ(format_reply("deliveries", sample("deliveries"), now),
              "TRANSPORT  QUEUE        QUEUE_ID  RCPTS    AGE\n"
              "smtp       example.com  4F3A2B1C      2  0.42s\n");
    EXPECT_EQ(format_deliveries(json::parse(R"({"ok":true,"deliveries":[]})")),
              "no deliveries in flight\n");
}

TEST(Format, Providers) {
    EXPECT_EQ(format_reply("providers", sample("providers"), now),
              "google: 3 in flight; provider:google: concurrency 10 (3 in flight here, 4 "
              "leases); provider:smtp:google: rate 300/60000ms,300\n"
              "TRANSPORT  QUEUE        IN_FLIGHT\n"
              "smtp       example.com          2\n"
              "smtp       example.net          1\n");
    EXPECT_EQ(format_providers(json::parse(R"({"ok":true,"providers":[]})")),
              "no provider has members\n");
}

TEST(Format, DeliveriesOldestFirst) {
    auto d = sample("deliveries");
    auto young = d["deliveries"][0];
    young["queue_id"] = "YOUNG";
    young["age"] = 0.1;
    auto old = d["deliveries"][0];
    old["queue_id"] = "OLD";
    old["age"] = 75.0;
    d["deliveries"] = json::array({young, old});
    const std::string text = format_deliveries(d);
    EXPECT_LT(text.find("OLD"), text.find("YOUNG"));
    EXPECT_NE(text.find("1m15s"), std::string::npos);
}

TEST(Format, Changed) {
    EXPECT_EQ(format_reply("suspend smtp:example.com for 10m reason maintenance", sample("suspend"),
                           now - 600),
              "TARGET            CHANGE\n"
              "smtp:example.com  suspended, until 2025-11-24T16:00:00Z (in 10m00s): maintenance\n");
    EXPECT_EQ(format_reply("resume smtp", json::parse(R"({"ok":true,"changed":[]})"), now),
              "nothing changed\n");
    EXPECT_EQ(format_changed(json::parse(R"({"ok":true,"changed":[
                  {"target":"smtp:example.com","suspended":false},
                  {"target":"relay:example.com","throttle":2,"until":null}]})"),
                             now),
              "TARGET             CHANGE\n"
              "smtp:example.com   not suspended\n"
              "relay:example.com  throttle 2\n");
    // A flush says what became of the deferred mail, revived or not.
    const char* not_eligible = "not eligible for fast flush (fast_flush_domains); deferred mail "
                               "waits for its retry time, see postqueue -f";
    json flush{{"ok", true}, {"changed", json::array()}, {"deferred", not_eligible}};
    EXPECT_EQ(format_reply("flush example.com", flush, now),
              std::string("nothing changed\ndeferred: ") + not_eligible + "\n");
    flush["changed"] = json::parse(R"([{"target":"smtp:example.com","revived":true}])");
    flush["warning"] = "the change is not kept across restarts (see the log)";
    EXPECT_EQ(format_reply("flush example.com", flush, now),
              std::string("TARGET            CHANGE\n"
                          "smtp:example.com  revived\n"
                          "deferred: ") +
                  not_eligible +
                  "\nwarning: the change is not kept across restarts (see the log)\n");
}

TEST(Format, Help) {
    EXPECT_EQ(format_help(json::parse(R"({"ok":true,"requests":["help","summary"]})")),
              "help\nsummary\n");
    EXPECT_EQ(format_help(json::parse(R"({"ok":true,"help":"help\nsummary"})")), "help\nsummary\n");
    EXPECT_EQ(format_help(json::parse(
                  R"({"ok":true,"requests":[{"name":"queues","usage":"queues [TRANSPORT]"}]})")),
              "queues [TRANSPORT]\n");
}

TEST(Format, UnknownRequestsPrintTheirJson) {
    EXPECT_EQ(format_reply("frobnicate", json::parse(R"({"ok":true,"x":1})"), now),
              "{\n  \"ok\": true,\n  \"x\": 1\n}\n");
}

// A reply of another shape (an older or newer daemon) prints, with "-" for
// what is missing, and never throws.
TEST(Format, OddRepliesDoNotThrow) {
    const std::vector<json> odd = {
        json::object(),
        json::parse(R"({"ok":true,"transports":"x","deliveries":{},"entries":[1,null]})"),
        json::parse(R"({"ok":true,"transports":[null,1,{"queues":[null,{"dead":"x"}]}]})"),
        json::parse(R"({"ok":true,"transports":[{"jobs":[{}]}],"changed":[1,"x",{}]})"),
        json::parse(R"({"ok":true,"counters":[],"active":7,"feed":{"scanning":[1]}})"),
    };
    for (const auto& j : odd) {
        for (const char* r : {"summary", "queues", "jobs", "message x", "deliveries", "help",
                              "suspend x", "flush x"}) {
            EXPECT_NO_THROW(format_reply(r, j, now)) << r << " " << j.dump();
        }
    }
}

TEST(Format, Explain) {
    EXPECT_EQ(format_reply("explain example.com", sample("explain"), now),
              "smtp:example.com\n"
              "effective:      concurrency 1, rate no limit\n"
              "waiting:        4 messages, 5 recipients in the active queue, 1 in flight\n"
              "last deferral:  4.4.2 lost connection with example.com[192.0.2.1] while receiving "
              "the initial server greeting (2025-11-24T15:58:20Z, 1m40s ago)\n"
              "next retry:     when a delivery in flight ends (1 in flight, 1 at once allowed)\n"
              "deferred mail:  not known: like stock, cqmgr keeps no index of deferred mail by "
              "destination unless cqmgr_recovery_rate or cqmgr_dead_backlog is set\n"
              "\n"
              "   BOUND        VALUE  SOURCE   DETAIL\n"
              "*  concurrency      1  admin    throttle smtp:example.com by uid 0 at "
              "2025-11-24T15:50:00Z (600s ago) until 2025-11-24T16:10:00Z (in 600s)\n"
              "   concurrency      3  share    cqmgr_destination_agent_share = 30% of the process "
              "limit 10: 3 agents; binds while another destination of smtp waits for an agent, as "
              "one does now\n"
              "   concurrency     20  main.cf  smtp_destination_concurrency_limit\n"
              "   concurrency      5  main.cf  the concurrency window now (from "
              "smtp_initial_destination_concurrency 5, moved by the concurrency feedback)\n"
              "(* binds now, - not in force now)\n");
}

TEST(Format, ExplainMarksLinesNotInForceAndRates) {
    auto r = sample("explain");
    auto& q = r["queues"][0];
    q["limits"][1]["in_force"] = false;
    q["limits"].push_back({{"bound", "rate"},
                           {"value", "1/5s"},
                           {"source", "learned"},
                           {"detail", "a pause"},
                           {"in_force", true},
                           {"binds", true}});
    q["effective"]["rate"] = "1/5s";
    q["deferred"] = {{"messages", 12}, {"note", "each is tried at its own time"}};
    q["last_deferral"] = nullptr;
    const std::string text = format_explain(r, now);
    EXPECT_NE(text.find("effective:      concurrency 1, rate 1/5s\n"), std::string::npos) << text;
    EXPECT_NE(text.find("-  concurrency      3  share"), std::string::npos) << text;
    EXPECT_NE(text.find("*  rate          1/5s  learned  a pause\n"), std::string::npos) << text;
    EXPECT_NE(text.find("deferred mail:  12 messages; each is tried at its own time\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("last deferral:  none since cqmgr started\n"), std::string::npos) << text;
}

TEST(Format, ExplainOfADestinationWithoutAQueue) {
    json r = {{"ok", true},
              {"target", "x.example"},
              {"provider", nullptr},
              {"queues", json::array()},
              {"note", "no queue of x.example is in the active queue now"},
              {"kept", json::array({{{"bound", "stop"},
                                     {"value", 0},
                                     {"source", "admin"},
                                     {"detail", "suspend x.example by uid 0"},
                                     {"in_force", false},
                                     {"binds", false}}})}};
    EXPECT_EQ(format_reply("explain x.example", r, now),
              "no queue of x.example is in the active queue now\n"
              "kept for its next mail:\n"
              "   BOUND  VALUE  SOURCE  DETAIL\n"
              "-  stop       0  admin   suspend x.example by uid 0\n");
}
