// Malformed announcements and replies from a delivery agent: for each kind
// of bad bytes, the outcome stock qmgr acts on and the exact warnings it
// logs (the attribute scanner's line in `detail`, then qmgr's own line in
// `warning`).  The expected texts were taken from stock qmgr's log for the
// same bytes (compat scenario malformed-agent-replies).
#include "cqmgr/test/delivery_client.hpp"
#include "cqmgr/test/temp_dir.hpp"
#include "fake_server.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::protocol;
using namespace std::string_literals;
using cqmgr::awaitable;
using fake::Socket;
namespace asio = boost::asio;
using Kind = DeliveryOutcome::Kind;

namespace {

const std::string hello = "protocol\0delivery_request_protocol\0\0"s;
const std::string dsn_part =
    "status\0\0diag_type\0\0diag_text\0\0mta_type\0\0mta_mname\0\0action\0\0reason\0\0"s;
const std::string ok_reply = dsn_part + "status\0"s + "0\0\0"s;

DeliveryRequest sample_request() {
    DeliveryRequest r;
    r.queue_id = "ABC123";
    r.nexthop = "dest.example";
    r.sender = "s@x";
    r.recipients.push_back({"", "r@dest.example", 200, "", 0});
    return r;
}

DeliveryTimeouts quick() {
    using namespace std::chrono_literals;
    return {1s, 1s, 1s, 1s};
}

// What the fake agent does after its bytes.
enum class Then { wait_for_close, close };

// An agent that sends `announcement`; with a `reply`, reads the whole request
// and sends `reply`; then waits for the client to close, or closes itself.
fake::Server::Script agent(std::string announcement, std::optional<std::string> reply, Then then) {
    return [=](Socket& s, int) -> awaitable<void> {
        if (!co_await fake::send(s, announcement)) co_return;
        fake::ListReader r;
        AttrList list;
        if (reply) {
            if (!co_await r.read(s, list)) co_return; // the request
            if (!co_await r.read(s, list)) co_return; // its one recipient
            if (!co_await fake::send(s, *reply)) co_return;
        }
        if (then == Then::close) {
            s.close();
            co_return;
        }
        while (co_await r.read(s, list)) {
        }
    };
}

struct ReplyCase {
    const char* name;
    std::string reply;
    Then then;
    Kind kind;
    std::string detail; // <P> stands for the agent's stream name
    bool malformed;     // stock adds "<P>: malformed response"
    int status = -1;    // when replied
};

// Replaces "<P>" in a case's expected text by the stream name.
std::string with_path(std::string text, const std::string& stream) {
    if (auto at = text.find("<P>"); at != std::string::npos) text.replace(at, 3, stream);
    return text;
}

// Bytes from the agent and the warning they must give.
struct TextCase {
    const char* name;
    std::string bytes;
    std::string text; // <P> stands for the agent's stream name
};

// A fake agent on a fresh socket, and the stream name stock logs for it.
struct FakeAgent {
    explicit FakeAgent(fake::Server::Script script) : srv(io, path, std::move(script)) {}
    // The expected text of a case with the stream name in place.
    std::string expect(const std::string& text) const { return with_path(text, stream); }

    asio::io_context io;
    cqmgr::test::TempDir dir{"cqmgr-proto"};
    std::string path = dir.file("smtp");
    std::string stream = path + " socket";
    fake::Server srv;
};

} // namespace

TEST(AgentReplies, StockWordingForEachKindOfBadReply) {
    // <P> stands for the stream name ("/tmp/.../smtp socket").
    const std::string long_number = "1234567890123456789012345678901234567890123456789012345678901"
                                    "234567890123456789012345678901234567890123456789012345678901"
                                    "234567890x";
    const ReplyCase cases[] = {
        {"bad number", dsn_part + "status\0abc\0\0"s, Then::wait_for_close, Kind::crashed,
         "malformed numerical data from <P> while reading input attribute value: abc", true},
        {"long bad number", dsn_part + "status\0"s + long_number + "\0\0"s, Then::wait_for_close,
         Kind::crashed,
         "malformed numerical data from <P> while reading input attribute value: " +
             long_number.substr(0, 100),
         true},
        {"unexpected first attribute", "foo\0bar\0\0"s, Then::wait_for_close, Kind::crashed,
         "unexpected attribute foo from <P> (expecting: status)", true},
        {"missing attribute", "status\0\0\0"s, Then::wait_for_close, Kind::crashed,
         "missing attribute diag_type in input from <P>", true},
        {"empty list", "\0"s, Then::wait_for_close, Kind::crashed,
         "missing attribute status in input from <P>", true},
        {"table delimiter", "{\0}\0\0"s, Then::wait_for_close, Kind::crashed,
         "unexpected attribute { from <P> (expecting: status)", true},
        {"closing table delimiter", "}\0\0"s, Then::wait_for_close, Kind::crashed,
         "unexpected attribute } from <P> (expecting: status)", true},
        {"EOF inside a name", "status\0\0diag"s, Then::close, Kind::crashed,
         "unexpected end-of-input from <P> while reading input attribute name", true},
        {"EOF before a value", "status\0"s, Then::close, Kind::crashed,
         "premature end-of-input on <P> while reading input attribute value", true},
        {"EOF inside a value",
         "status\0"
         "4.0"s,
         Then::close, Kind::crashed,
         "unexpected end-of-input from <P> while reading input attribute value", true},
        {"EOF before the terminator",
         dsn_part + "status\0"
                    "0\0"s,
         Then::close, Kind::crashed,
         "premature end-of-input on <P> while reading input attribute name", true},
        {"text without NUL", "HTTP/1.1 400 Bad Request\r\n\r\n", Then::close, Kind::crashed,
         "unexpected end-of-input from <P> while reading input attribute name", true},
        {"nothing at all", "", Then::close, Kind::crashed, "", true},
        // Stock reads a string of any length; we stop at 256 KiB, in our words.
        {"over-long value", "status\0"s + std::string(300 * 1024, 'x') + "\0"s, Then::close,
         Kind::crashed,
         "string longer than 262144 bytes from <P> while reading input attribute value", true},
        {"control character", "st\x01tus\0\0\0"s, Then::wait_for_close, Kind::crashed,
         "unexpected attribute st?tus from <P> (expecting: status)", true},
        {"UTF-8 name", "st\xc3\xa4tus\0\0\0"s, Then::wait_for_close, Kind::crashed,
         "unexpected attribute st\xc3\xa4tus from <P> (expecting: status)", true},
        // Accepted by stock: a warning, and the reply stands.
        {"attribute after the status",
         dsn_part + "status\0"
                    "0\0extra\0x\0\0"s,
         Then::wait_for_close, Kind::replied,
         "unexpected attribute extra from <P> (expecting: (list terminator))", false, 0},
        // sscanf("%u%c") accepts what parse_int does not.
        {"blank before the number", dsn_part + "status\0 5\0\0"s, Then::wait_for_close,
         Kind::replied, "", false, 5},
        {"number that wraps to 0",
         dsn_part + "status\0"
                    "4294967296\0\0"s,
         Then::wait_for_close, Kind::replied, "", false, 0},
        {"negative number", dsn_part + "status\0-1\0\0"s, Then::wait_for_close, Kind::replied, "",
         false, -1},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        FakeAgent a(agent(hello, c.reply, c.then));
        auto o = fake::run(a.io, deliver_once(a.path, sample_request(), quick()));
        EXPECT_EQ(o.kind, c.kind) << o.warning;
        EXPECT_EQ(o.detail, a.expect(c.detail));
        EXPECT_EQ(o.warning, c.malformed ? a.stream + ": malformed response" : "");
        if (c.kind == Kind::replied)
            EXPECT_EQ(o.reply.status, c.status);
        else
            EXPECT_EQ(o.reply.hop.reason, "unknown mail transport error");
    }
}

TEST(AgentReplies, StockWordingForEachKindOfBadAnnouncement) {
    const TextCase cases[] = {
        {"wrong protocol", "protocol\0smtp\0\0"s,
         "unexpected protocol smtp from <P> (expected: delivery_request_protocol)"},
        {"EOF inside the value", "protocol\0deliv"s,
         "unexpected end-of-input from <P> while reading input attribute value"},
        {"EOF before the terminator", "protocol\0delivery_request_protocol\0"s,
         "premature end-of-input on <P> while reading input attribute name"},
        {"text without NUL", "220-smtp\r\n",
         "unexpected end-of-input from <P> while reading input attribute name"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        FakeAgent a(agent(c.bytes, std::nullopt, Then::close));
        auto o = fake::run(a.io, deliver_once(a.path, sample_request(), quick()));
        EXPECT_EQ(o.kind, Kind::unavailable) << o.warning;
        EXPECT_EQ(o.detail, a.expect(c.text));
        EXPECT_EQ(o.warning, a.stream + ": malformed response");
        EXPECT_EQ(o.reply.hop.reason, "mail transport unavailable");
    }
}

TEST(AgentReplies, AnnouncementsStockAcceptsWithAWarning) {
    // Stock's scan returns "no failure" for these: it logs the warning and
    // goes on.  What the agent sent after the point where the scan stopped
    // was read with the announcement, and the request write drops it.
    const TextCase cases[] = {
        {"no attribute", "\0"s, "missing attribute protocol in input from <P>"},
        {"another attribute", "proto\0delivery_request_protocol\0\0"s,
         "unexpected attribute proto from <P> (expecting: protocol)"},
        {"one attribute too many", "protocol\0delivery_request_protocol\0x\0y\0\0"s,
         "unexpected attribute x from <P> (expecting: (list terminator))"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        FakeAgent a(agent(c.bytes, ok_reply, Then::wait_for_close));
        AgentSession session(a.io.get_executor());
        EXPECT_TRUE(fake::run(a.io, session.open(a.path, quick())));
        EXPECT_EQ(session.announcement_warning(), a.expect(c.text));
        auto o = fake::run(a.io, session.deliver(sample_request()));
        EXPECT_EQ(o.kind, Kind::replied) << o.warning << o.detail;
        EXPECT_EQ(o.reply.status, 0);
        EXPECT_EQ(o.detail, "");
    }
}

TEST(AgentReplies, FailedAnnouncementIsAlsoTheSessionsWarning) {
    FakeAgent a(agent("protocol\0smtp\0\0"s, std::nullopt, Then::close));
    AgentSession session(a.io.get_executor());
    EXPECT_FALSE(fake::run(a.io, session.open(a.path, quick())));
    EXPECT_EQ(session.announcement_warning(),
              a.expect("unexpected protocol smtp from <P> (expected: delivery_request_protocol)"));
    EXPECT_EQ(session.failure().detail, session.announcement_warning());
    EXPECT_EQ(session.failure().warning, a.stream + ": malformed response");
}

TEST(AgentReplies, ReplySentWithTheAnnouncementIsDropped) {
    // Stock reads the announcement and what came with it into one buffer,
    // and writing the request empties that buffer: the early reply is lost
    // and the wait for one runs out.
    using namespace std::chrono_literals;
    FakeAgent a(agent(hello + ok_reply, std::nullopt, Then::wait_for_close));
    DeliveryTimeouts t = quick();
    t.reply = 200ms;
    auto o = fake::run(a.io, deliver_once(a.path, sample_request(), t));
    EXPECT_EQ(o.kind, Kind::crashed);
    EXPECT_EQ(o.warning, a.stream + ": timeout");
    EXPECT_EQ(o.detail, "");
}

TEST(AgentReplies, AgentThatStallsMidReply) {
    // Once a reply has begun, each read may take qmgr_ipc_timeout (stock's
    // stream timeout), and running out of it is stock's "timeout on ..." or,
    // inside a string, "unexpected end-of-input".
    using namespace std::chrono_literals;
    const TextCase cases[] = {
        {"between attributes", "status\0\0"s, "timeout on <P> while reading input attribute name"},
        {"before a value", "status\0"s, "timeout on <P> while reading input attribute value"},
        {"inside a value",
         "status\0"
         "4.0"s,
         "unexpected end-of-input from <P> while reading input attribute value"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        FakeAgent a(agent(hello, c.bytes, Then::wait_for_close));
        DeliveryTimeouts t = quick();
        t.read = 200ms;
        auto o = fake::run(a.io, deliver_once(a.path, sample_request(), t));
        EXPECT_EQ(o.kind, Kind::crashed);
        EXPECT_EQ(o.detail, a.expect(c.text));
        EXPECT_EQ(o.warning, a.stream + ": malformed response");
    }
}

TEST(AgentReplies, AgentThatStallsMidAnnouncement) {
    using namespace std::chrono_literals;
    FakeAgent a(agent("protocol\0"s, std::nullopt, Then::wait_for_close));
    DeliveryTimeouts t = quick();
    t.read = 200ms;
    auto o = fake::run(a.io, deliver_once(a.path, sample_request(), t));
    EXPECT_EQ(o.kind, Kind::unavailable);
    EXPECT_EQ(o.detail, a.expect("timeout on <P> while reading input attribute value"));
    EXPECT_EQ(o.warning, a.stream + ": malformed response");
}
