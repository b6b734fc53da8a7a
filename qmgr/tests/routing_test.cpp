#include "resolve_reply.hpp"
#include "routing.hpp"
#include "test_params.hpp"

#include <gtest/gtest.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;
using cqmgr::qmgr::testing::params;

namespace {

using cqmgr::qmgr::testing::resolve_reply;
protocol::ResolveReply reply(std::string transport, std::string nexthop, std::string rcpt,
                             int flags = 0) {
    return resolve_reply(std::move(transport), std::move(nexthop), std::move(rcpt), flags);
}
constexpr int local = protocol::resolve_flag::class_local;
} // namespace

TEST(Routing, FilterNexthopFallsBackToDefaultThenDomainThenHostname) {
    auto p = params("myhostname = mx.example\n");
    EXPECT_EQ(filter_route("scan:[127.0.0.1]:10025", "u@d.example", p).nexthop,
              "[127.0.0.1]:10025");
    Route r = filter_route("scan", "u@d.example", p);
    EXPECT_EQ(r.transport, "scan");
    EXPECT_EQ(r.nexthop, "d.example");
    EXPECT_EQ(filter_route("scan:", "user", p).nexthop, "mx.example");
    EXPECT_EQ(filter_route("scan", "u@d.example", params("default_filter_nexthop = hub\n")).nexthop,
              "hub");
    // The domain is what follows the last '@'; an empty one counts as none.
    EXPECT_EQ(filter_route("scan", "user@", p).nexthop, "mx.example");
    EXPECT_EQ(filter_route("scan", "a@b@c", p).nexthop, "c");
    EXPECT_EQ(filter_route("scan", "\"a@b\"@c", p).nexthop, "c");
}

TEST(Routing, ResolverFailureAndErrorRedirect) {
    Route f = resolved_route(reply("smtp", "d", "u@d", protocol::resolve_flag::fail | local));
    EXPECT_EQ(f.transport, "retry");
    EXPECT_EQ(f.nexthop, "4.3.0 address resolver failure");
    EXPECT_EQ(f.flags, 0);
    Route e = resolved_route(reply("smtp", "d", "u@d", protocol::resolve_flag::error));
    EXPECT_EQ(e.transport, "error");
    EXPECT_EQ(e.nexthop, "5.1.3 bad address syntax");
}

TEST(Routing, DoubleBounceIsDiscardedCaseInsensitively) {
    auto p = params();
    Route r = resolved_route(reply("local", "mx.example", "Double-Bounce@mx.example", local));
    apply_overrides(r, {}, p);
    EXPECT_TRUE(r.discard);
    Route remote = resolved_route(reply("smtp", "x", "double-bounce@x.example"));
    apply_overrides(remote, {}, p);
    EXPECT_FALSE(remote.discard);
}

// Stock redirects a force-expired message to retry before it looks for the
// double-bounce address, and the redirect drops the local class: the
// recipient is not discarded but goes to the defer log with the reason.
TEST(Routing, ForceExpiredDoubleBounceGoesToRetry) {
    Route r = resolved_route(reply("local", "mx.example", "double-bounce@mx.example", local));
    apply_overrides(r, {.force_expire = true}, params());
    EXPECT_FALSE(r.discard);
    EXPECT_EQ(r.transport, "retry");
    EXPECT_EQ(r.nexthop, "4.7.0 message is administratively expired");
}

TEST(Routing, NullRecipientBounces) {
    Route r = resolved_route(reply("smtp", "x", ""));
    apply_overrides(r, {}, params());
    EXPECT_EQ(r.transport, "error");
    EXPECT_EQ(r.nexthop, "5.1.3 null recipient address");
}

TEST(Routing, DeferTransportsUnlessFlushed) {
    auto p = params("defer_transports = smtp, relay\n");
    Route r = resolved_route(reply("relay", "x", "u@x"));
    apply_overrides(r, {}, p);
    EXPECT_EQ(r.transport, "retry");
    EXPECT_EQ(r.nexthop, "4.3.2 deferred transport");
    Route flushed = resolved_route(reply("relay", "x", "u@x"));
    apply_overrides(flushed, {.ignore_defer_transports = true}, p);
    EXPECT_EQ(flushed.transport, "relay");
}

TEST(Routing, VerifyLimitComesLast) {
    auto p = params("defer_transports = smtp\n");
    Route r = resolved_route(reply("smtp", "x", "u@x"));
    apply_overrides(r, {.verify_over_limit = true}, p);
    EXPECT_EQ(r.nexthop, "4.3.2 Too many address verification requests");
}

TEST(Routing, QueueNames) {
    auto p = params("recipient_delimiter = +-\n");
    Route r{"local", "MX.Example", "John+Box@MX.Example"};
    EXPECT_EQ(queue_name(r, false, p), "mx.example");
    EXPECT_EQ(queue_name(r, true, p), "john@mx.example");
    // The local part is all before the last '@', or all of an address without one.
    EXPECT_EQ(queue_name({"local", "mx", "John+Box"}, true, p), "john@mx");
    EXPECT_EQ(queue_name({"local", "mx", "a@b+x@c"}, true, p), "a@b@mx");
    Route retry{"retry", "4.3.2 Deferred Transport", "u@x"};
    EXPECT_EQ(queue_name(retry, true, p), "4.3.2 deferred transport");
}

TEST(Routing, ExtensionsAreKeptWhereSplitAddrKeepsThem) {
    auto p = params("recipient_delimiter = -\n");
    EXPECT_EQ(strip_extension("list-request", p), "list-request");
    EXPECT_EQ(strip_extension("List-REQUEST", p), "List-REQUEST"); // any case, as stock
    EXPECT_EQ(strip_extension("OWNER-list", p), "OWNER-list");
    EXPECT_EQ(strip_extension("-request", p), "-request"); // 8 characters: not special
    EXPECT_EQ(strip_extension("a-request", p), "a-request");
    EXPECT_EQ(strip_extension("joe-box", p), "joe");
    EXPECT_EQ(strip_extension("-joe", p), "-joe"); // never down to nothing
    EXPECT_EQ(strip_extension("Postmaster", p), "Postmaster");
    EXPECT_EQ(strip_extension("double-bounce", p), "double-bounce");
    auto off = params("recipient_delimiter = -\nowner_request_special = no\n");
    EXPECT_EQ(strip_extension("owner-list", off), "owner");
    auto plus = params("recipient_delimiter = +\n");
    EXPECT_EQ(strip_extension("owner-list+x", plus), "owner-list");
    EXPECT_EQ(strip_extension("joe", params()), "joe"); // no delimiter set
}
