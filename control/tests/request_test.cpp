#include "cqmgr/control/request.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::control;

namespace {
// The request `line` parses into (fails the test when it is refused).
Request ok(std::string_view line) {
    Parsed p = parse_request(line);
    EXPECT_TRUE(p.ok()) << line << ": " << p.error;
    return p.request.value_or(Request{});
}
// The error text `line` gets ("" when it parses).
std::string error(std::string_view line) {
    Parsed p = parse_request(line);
    return p.ok() ? std::string() : p.error;
}
} // namespace

TEST(Request, QueriesWithoutArguments) {
    EXPECT_EQ(ok("summary").verb, Verb::summary);
    EXPECT_EQ(ok("help").verb, Verb::help);
    EXPECT_EQ(ok("deliveries").verb, Verb::deliveries);
    EXPECT_EQ(ok("providers").verb, Verb::providers);
    EXPECT_TRUE(ok("deliveries").is_query());
    EXPECT_EQ(error("summary now"), "usage: summary");
}

TEST(Request, NamesAreCaseInsensitiveAndBlanksFree) {
    EXPECT_EQ(ok("SUMMARY").verb, Verb::summary);
    EXPECT_EQ(ok(" \tSuMmArY \t").verb, Verb::summary);
    EXPECT_EQ(ok("summary\r").verb, Verb::summary);
}

TEST(Request, EmptyAndUnknown) {
    EXPECT_EQ(error(""), "empty request (try help)");
    EXPECT_EQ(error(" \t "), "empty request (try help)");
    EXPECT_EQ(error("frob x"), "unknown request: frob (try help)");
    EXPECT_EQ(error(std::string(100, 'x')),
              "unknown request: " + std::string(64, 'x') + "... (try help)");
}

TEST(Request, NonPrintableAndTooLong) {
    EXPECT_EQ(error(std::string("summary\0", 8)), "request contains non-printable bytes");
    EXPECT_EQ(error("summ\x7f"), "request contains non-printable bytes");
    EXPECT_EQ(error("summary \xc3\xa9"), "request contains non-printable bytes");
    EXPECT_EQ(error("sum\rmary"), "request contains non-printable bytes");
    EXPECT_EQ(error(std::string(max_request_bytes, 'a')), "request too long");
    // 4095 bytes and the newline are within the limit.
    std::string longest = "suspend smtp reason " + std::string(4095 - 20, 'r');
    ASSERT_EQ(longest.size(), 4095u);
    EXPECT_EQ(ok(longest).reason.size(), 4095u - 20);
}

TEST(Request, QueuesAndJobsTakeATransport) {
    EXPECT_EQ(ok("queues").transport, "");
    EXPECT_EQ(ok("queues smtp").transport, "smtp");
    EXPECT_EQ(ok("jobs relay-out").transport, "relay-out");
    EXPECT_EQ(error("queues a b"), "usage: queues [TRANSPORT]");
    EXPECT_EQ(error("jobs sm[tp"), "bad transport name: sm[tp");
}

TEST(Request, Message) {
    EXPECT_EQ(ok("message 4F3A2B1C").queue_id, "4F3A2B1C");
    EXPECT_EQ(ok("message 4dYfR60nZkz9sk").queue_id, "4dYfR60nZkz9sk");
    EXPECT_EQ(error("message"), "usage: message QUEUE_ID");
    EXPECT_EQ(error("message ../etc"), "bad queue ID: ../etc");
}

TEST(Request, Durations) {
    EXPECT_EQ(parse_duration("1"), 1);
    EXPECT_EQ(parse_duration("90s"), 90);
    EXPECT_EQ(parse_duration("10m"), 600);
    EXPECT_EQ(parse_duration("2h"), 7200);
    EXPECT_EQ(parse_duration("3d"), 3 * 86400);
    EXPECT_EQ(parse_duration("1w"), 7 * 86400);
    EXPECT_EQ(parse_duration("365d"), 365 * 86400);
    EXPECT_EQ(parse_duration("31536000"), 31536000);
    EXPECT_EQ(parse_duration("10M"), 600);
    for (auto bad : {"", "0", "0s", "366d", "53w", "31536001", "s", "-5", "+5", "5x", "5 m", "1.5h",
                     "999999999999", "5mm"})
        EXPECT_FALSE(parse_duration(bad)) << bad;
}

TEST(Request, Suspend) {
    Request r = ok("suspend smtp:example.com for 10m reason maintenance  of\tthe MX ");
    EXPECT_EQ(r.verb, Verb::suspend);
    EXPECT_FALSE(r.is_query());
    ASSERT_TRUE(r.target);
    EXPECT_EQ(*r.target, (Target{"smtp:example.com", "smtp", "example.com"}));
    EXPECT_EQ(r.duration, 600);
    EXPECT_EQ(r.reason, "maintenance  of the MX");

    r = ok("suspend smtp");
    EXPECT_EQ(*r.target, (Target{"smtp", "smtp", ""}));
    EXPECT_FALSE(r.duration);
    EXPECT_EQ(r.reason, "");
    EXPECT_EQ(ok("SUSPEND relay:[10.0.0.1]:25 REASON for 10").reason, "for 10");
    EXPECT_EQ(ok("suspend relay:[10.0.0.1]:25").target->destination, "[10.0.0.1]:25");

    const char* use = "usage: suspend TRANSPORT[:DESTINATION] [for DURATION] [reason TEXT...]";
    EXPECT_EQ(error("suspend"), use);
    EXPECT_EQ(error("suspend smtp for"), use);
    EXPECT_EQ(error("suspend smtp reason"), use);
    EXPECT_EQ(error("suspend smtp for 1h for 2h"), use);
    EXPECT_EQ(error("suspend smtp because"), use);
    EXPECT_EQ(error("suspend smtp for 0"), "bad duration: 0 (a number with an optional unit s, m, "
                                           "h, d or w; 1s to 365d)");
    EXPECT_EQ(error("suspend smtp: for 1h"), "bad target: smtp:");
    EXPECT_EQ(error("suspend [x]:y"), "bad target: [x]:y");
}

TEST(Request, Resume) {
    EXPECT_EQ(*ok("resume smtp:example.com").target,
              (Target{"smtp:example.com", "smtp", "example.com"}));
    const std::string use = "usage: resume TRANSPORT[:DESTINATION] [sender GROUP]";
    EXPECT_EQ(error("resume smtp for 1h"), use);
    // Only one sender group's actions (the reply rules' sender scopes),
    // named in lower case as cqmgr_sender_limits names groups.
    Request r = ok("resume smtp:example.com sender Campaign.Example");
    EXPECT_EQ(r.sender, "campaign.example");
    EXPECT_EQ(r.target->destination, "example.com");
    EXPECT_EQ(ok("resume smtp SENDER a@b.example").sender, "a@b.example");
    EXPECT_EQ(error("resume smtp sender"), use);
    EXPECT_EQ(error("resume smtp group x"), use);
    EXPECT_EQ(error("resume smtp sender x y"), use);
    EXPECT_EQ(error("resume smtp sender " + std::string(256, 'x')),
              "bad sender group: " + std::string(64, 'x') + "...");
    // A transport may be named "sender".
    EXPECT_EQ(ok("resume sender").target->transport, "sender");
}

TEST(Request, FlushAndUnthrottleTakeABareDestination) {
    EXPECT_EQ(*ok("flush example.com").target, (Target{"example.com", "", "example.com"}));
    EXPECT_EQ(*ok("flush smtp:example.com").target,
              (Target{"smtp:example.com", "smtp", "example.com"}));
    EXPECT_EQ(*ok("flush [192.0.2.1]:25").target, (Target{"[192.0.2.1]:25", "", "[192.0.2.1]:25"}));
    EXPECT_EQ(*ok("unthrottle relay:[192.0.2.1]:25").target,
              (Target{"relay:[192.0.2.1]:25", "relay", "[192.0.2.1]:25"}));
    EXPECT_EQ(error("flush"), "usage: flush [TRANSPORT:]DESTINATION");
    EXPECT_EQ(error("flush a b"), "usage: flush [TRANSPORT:]DESTINATION");
}

// explain takes one destination, split as flush splits it, or a word that
// may name a provider; it only reads.
TEST(Request, ExplainTakesADestinationOrAProvider) {
    Request r = ok("explain smtp:example.com");
    EXPECT_EQ(r.verb, Verb::explain);
    EXPECT_TRUE(r.is_query());
    EXPECT_EQ(*r.target, (Target{"smtp:example.com", "smtp", "example.com"}));
    EXPECT_EQ(*ok("EXPLAIN google").target, (Target{"google", "", "google"}));
    EXPECT_EQ(*ok("explain [192.0.2.1]:25").target,
              (Target{"[192.0.2.1]:25", "", "[192.0.2.1]:25"}));
    EXPECT_EQ(error("explain"), "usage: explain [TRANSPORT:]DESTINATION|PROVIDER");
    EXPECT_EQ(error("explain a b"), "usage: explain [TRANSPORT:]DESTINATION|PROVIDER");
}

TEST(Request, Throttle) {
    Request r = ok("throttle example.com 2 for 1h");
    EXPECT_EQ(r.target->destination, "example.com");
    EXPECT_EQ(r.concurrency, 2);
    EXPECT_EQ(r.duration, 3600);
    EXPECT_FALSE(ok("throttle smtp:example.com 1").duration);
    const char* use = "usage: throttle [TRANSPORT:]DESTINATION CONCURRENCY [for DURATION]";
    EXPECT_EQ(error("throttle example.com"), use);
    EXPECT_EQ(error("throttle example.com 2 reason x"), use);
    for (auto bad : {"0", "-1", "+1", "x", "1000001", "99999999999"})
        EXPECT_EQ(error(std::string("throttle d ") + bad),
                  std::string("bad concurrency: ") + bad + " (a number of at least 1)");
}

TEST(Request, FormatParsesBack) {
    for (auto line : {"help",
                      "summary",
                      "queues",
                      "queues smtp",
                      "jobs local",
                      "message ABC123",
                      "deliveries",
                      "explain example.com",
                      "explain smtp:example.com",
                      "suspend smtp",
                      "suspend smtp:example.com for 600",
                      "suspend smtp:x for 60 reason a  b",
                      "suspend smtp reason why not",
                      "resume smtp:x",
                      "resume smtp:x sender a@b.example",
                      "flush x",
                      "flush smtp:x",
                      "throttle x 3",
                      "throttle smtp:x 3 for 86400",
                      "unthrottle smtp:x"}) {
        Request r = ok(line);
        EXPECT_EQ(format_request(r), line);
        EXPECT_EQ(ok(format_request(r)), r);
    }
}

TEST(Request, UsageListsEveryRequest) {
    EXPECT_EQ(usage_lines().size(), 13u);
    EXPECT_EQ(usage_lines()[0], "help");
    EXPECT_EQ(verb_name(Verb::unthrottle), "unthrottle");
}

// cqmgrctl checks its command line against the table's word counts: a
// request with those counts and valid words parses, one word fewer or more
// is refused with the usage line.
TEST(Request, TheTableCountsEachRequestsWords) {
    ASSERT_EQ(verbs().size(), 13u);
    for (const VerbSpec& v : verbs()) {
        EXPECT_EQ(find_verb(v.name), &v);
        EXPECT_EQ(verb_name(v.verb), v.name);
        std::string line(v.name);
        const char* words[] = {"smtp:x", "2", "for", "60"};
        const char* resume_words[] = {"smtp:x", "sender", "g.example"};
        for (size_t i = 0; i < std::min<size_t>(v.max_args, 4); ++i)
            line += std::string(" ") + (v.verb == Verb::message                          ? "ABC123"
                                        : v.verb == Verb::queues || v.verb == Verb::jobs ? "smtp"
                                        : v.verb == Verb::resume ? resume_words[i]
                                                                 : words[i]);
        if (v.max_args != SIZE_MAX) {
            EXPECT_TRUE(parse_request(line).ok()) << line;
            EXPECT_EQ(error(line + " x"), "usage: " + std::string(v.usage)) << line;
        }
        if (v.min_args > 0) {
            std::string fewer(v.name);
            for (size_t i = 0; i + 1 < v.min_args; ++i)
                fewer += std::string(" ") + words[i];
            EXPECT_EQ(error(fewer), "usage: " + std::string(v.usage)) << fewer;
        }
    }
    EXPECT_EQ(find_verb("SUSPEND")->verb, Verb::suspend);
    EXPECT_EQ(find_verb("frob"), nullptr);
}
