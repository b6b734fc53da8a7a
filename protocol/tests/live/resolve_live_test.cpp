// trivial-rewrite, live: a table of addresses resolved by the real daemon
// and compared with what main.cf and the transport table (postmap -q) say,
// every resolve flag we can provoke, the rewrite request, long addresses,
// and many callers sharing one connection.
#include "cqmgr/protocol/conversation.hpp"
#include "cqmgr/protocol/rewrite_client.hpp"
#include "live_env.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::protocol;
using live::run;
using live::awaitable;
namespace asio = boost::asio;

namespace {

struct Expect {
    std::string address;
    std::string transport;
    std::string nexthop;
    int flags; // exact second `flags` value
    std::string recipient = ""; // "" means: the address itself
};

// Splits a transport table value "transport:nexthop".
std::pair<std::string, std::string> split_entry(const std::string& v) {
    auto colon = v.find(':');
    return {v.substr(0, colon), colon == std::string::npos ? "" : v.substr(colon + 1)};
}

// Resolves every address on one shared client.
awaitable<std::vector<ResolveResult>> resolve_all(std::string request_class,
                                                  std::vector<std::string> addresses) {
    RewriteClient c(co_await asio::this_coro::executor, "private/rewrite");
    std::vector<ResolveResult> out;
    for (const auto& a : addresses)
        out.push_back(co_await c.resolve(request_class, "sender@example.org", a));
    EXPECT_EQ(c.connects(), 1) << "one connection for all requests";
    co_return out;
}

} // namespace

TEST(LiveResolve, AddressTableMatchesConfiguration) {
    using namespace resolve_flag;
    const std::string myhostname = live::postconf("myhostname");
    // A class transport setting "transport[:nexthop]" (expanded, as
    // trivial-rewrite sees it): an explicit nexthop wins over the domain.
    auto by_class = [](const std::string& param, const std::string& domain) {
        auto [t, n] = split_entry(live::postconf_expanded(param));
        return std::pair{t, n.empty() ? domain : n};
    };
    const std::string table = "texthash:" + live::env().conf_dir + "/transport";
    auto map = [&](const std::string& key) {
        auto v = live::postmap_query(key, table);
        EXPECT_TRUE(v) << "postmap -q " << key;
        return split_entry(v.value_or(":"));
    };
    auto [loc_t, loc_n] = by_class("local_transport", "test.example");
    auto [lh_t, lh_n] = by_class("local_transport", "localhost");
    auto [lit_t, lit_n] = by_class("local_transport", "[127.0.0.1]");
    auto [vrt_t, vrt_n] = by_class("virtual_transport", "vmail.example");
    auto [rel_t, rel_n] = by_class("relay_transport", "relay.example");
    auto [def_t, def_n] = by_class("default_transport", "other.example");
    auto [ovr_t, ovr_n] = map("override.example");
    auto [err_t, err_n] = map("err.example");
    auto [rty_t, rty_n] = map("retry.example");
    auto [dsc_t, dsc_n] = map("disc.example");
    auto [hop_t, hop_n] = map("hoponly.example");
    auto [usr_t, usr_n] = map("someone@peruser.example");
    ASSERT_EQ(hop_t, "") << "the hoponly entry keeps the class transport";
    // What trivial-rewrite leaves in transport and nexthop when it gives up
    // on the syntax before choosing a transport (its resolver starts them
    // out as these strings); qmgr must not use them.
    const std::string no_channel = "CHANNEL NOT UPDATED", no_nexthop = "NEXTHOP NOT UPDATED";

    const std::vector<Expect> table_rows = {
        // Address classes from main.cf.
        {"nobody@test.example", loc_t, loc_n, class_local},
        {"nobody@localhost", lh_t, lh_n, class_local},
        {"nobody", loc_t, loc_n, class_local, "nobody@" + myhostname},
        {"nobody@[127.0.0.1]", lit_t, lit_n, class_local},
        {"user@vmail.example", vrt_t, vrt_n, class_virtual},
        {"user@relay.example", rel_t, rel_n, class_relay},
        {"user@other.example", def_t, def_n, class_default},
        // Virtual alias domains resolve to error: (cleanup expands aliases).
        {"known@alias.example", "error", "5.1.1 User unknown in virtual alias table", class_alias},
        // transport_maps overrides, as postmap -q reports them.
        {"user@override.example", ovr_t, ovr_n, class_default},
        {"user@err.example", err_t, err_n, class_default},
        {"user@retry.example", rty_t, rty_n, class_default},
        {"user@disc.example", dsc_t, dsc_n, class_default},
        {"user@hoponly.example", def_t, hop_n, class_default},
        {"someone@peruser.example", usr_t, usr_n, class_default},
        // Routing operators in the local part.
        {"a%b@other.example", def_t, def_n, routed | class_default},
        {"a!b@other.example", def_t, def_n, routed | class_default},
        // Bad syntax: ERROR plus the default class, no transport chosen.
        {"user@bad..domain", no_channel, no_nexthop, error | class_default},
        {"user@[300.1.1.1]", no_channel, no_nexthop, error | class_default},
        // A local part starting with '-' (allow_min_user=no): ERROR after
        // the transport was chosen.
        {"-user@test.example", loc_t, loc_n, error | class_local},
    };
    std::vector<std::string> addrs;
    for (const auto& e : table_rows)
        addrs.push_back(e.address);
    auto results = run(resolve_all(std::string(resolve_class::regular), addrs));
    ASSERT_EQ(results.size(), table_rows.size());
    for (size_t i = 0; i < table_rows.size(); ++i) {
        const auto& e = table_rows[i];
        const auto& r = results[i];
        SCOPED_TRACE(e.address);
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_EQ(r->server_flags, 0);
        EXPECT_EQ(r->transport, e.transport);
        EXPECT_EQ(r->nexthop, e.nexthop);
        EXPECT_EQ(r->flags, e.flags) << std::hex << r->flags;
        EXPECT_EQ(r->recipient, e.recipient.empty() ? e.address : e.recipient);
        EXPECT_FALSE(r->is_final()) << "trivial-rewrite never sets RESOLVE_FLAG_FINAL";
    }
}

TEST(LiveResolve, VerifyClassUsesTheVerifyMaps) {
    // address_verify_transport_maps names a table that cannot be opened:
    // only request=verify sees the lookup failure.
    auto regular = run(resolve_all(std::string(resolve_class::regular), {"user@other.example"}));
    auto verify = run(resolve_all(std::string(resolve_class::verify), {"user@other.example"}));
    ASSERT_TRUE(regular[0]) << regular[0].error().message();
    ASSERT_TRUE(verify[0]) << verify[0].error().message();
    EXPECT_FALSE(regular[0]->is_fail());
    EXPECT_TRUE(verify[0]->is_fail()) << std::hex << verify[0]->flags;
    // The class was found before the failing transport lookup.
    EXPECT_EQ(verify[0]->flags, resolve_flag::fail | resolve_flag::class_default);
}

TEST(LiveResolve, RewriteRequests) {
    auto results = run([]() -> awaitable<std::vector<RewriteResult>> {
        RewriteClient c(co_await asio::this_coro::executor, "private/rewrite");
        std::vector<RewriteResult> out;
        out.push_back(co_await c.rewrite("local", "nobody"));
        out.push_back(co_await c.rewrite("local", "someone@other.example"));
        out.push_back(co_await c.rewrite("local", "nobody@test"));
        // Resolve and rewrite share the connection.
        auto r = co_await c.resolve("resolve", "", "nobody@test.example");
        EXPECT_TRUE(r) << r.error().message();
        EXPECT_EQ(c.connects(), 1);
        co_return out;
    }());
    for (const auto& r : results)
        ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(*results[0], "nobody@" + live::postconf("myorigin"));
    EXPECT_EQ(*results[1], "someone@other.example");
    // append_dot_mydomain is off at compatibility level >= 1.
    EXPECT_EQ(*results[2], "nobody@test");
}

TEST(LiveResolve, ManyCallersShareOneConnection) {
    auto n = run([]() -> awaitable<int> {
        auto ex = co_await asio::this_coro::executor;
        RewriteClient c(ex, "private/rewrite");
        int done = 0;
        for (int i = 0; i < 50; ++i)
            asio::co_spawn(ex, [&c, &done, i]() -> awaitable<void> {
                std::string a = "u" + std::to_string(i) + "@other.example";
                auto r = co_await c.resolve("resolve", "", a);
                EXPECT_TRUE(r) << r.error().message();
                EXPECT_EQ(r->recipient, a);
                ++done;
            }, asio::detached);
        while (done < 50) {
            asio::steady_timer t(ex, std::chrono::milliseconds(5));
            co_await t.async_wait(asio::use_awaitable);
        }
        EXPECT_EQ(c.connects(), 1);
        co_return done;
    }());
    EXPECT_EQ(n, 50);
}

TEST(LiveResolve, LongAddressesHaveNoServerLimit) {
    // Is there any string length limit on the server side
    // (docs/postfix-facts.md §3.4)?  Send a 1 MB local part and read the
    // echo with raised client limits.
    for (size_t len : {size_t(100 * 1024), size_t(1024 * 1024)}) {
        SCOPED_TRACE(len);
        std::string addr = std::string(len, 'a') + "@other.example";
        auto reply = run([addr]() -> awaitable<std::optional<ResolveReply>> {
            auto conv = Conversation::create(co_await asio::this_coro::executor);
            AttrLimits lim;
            lim.max_value = 4 * 1024 * 1024;
            conv->set_limits(lim);
            auto t = std::chrono::seconds(20);
            AttrList ann, list;
            if (!co_await conv->connect("private/rewrite", t) || !co_await conv->read_list(ann, t) ||
                !co_await conv->write(encode_resolve_request("resolve", "", addr), t) ||
                !co_await conv->read_list(list, t)) {
                ADD_FAILURE() << conv->error();
                co_return std::nullopt;
            }
            auto r = decode_resolve_reply(list);
            EXPECT_TRUE(r) << r.error().message();
            if (!r) co_return std::nullopt;
            co_return *r;
        }());
        ASSERT_TRUE(reply);
        EXPECT_EQ(reply->recipient.size(), addr.size());
        EXPECT_EQ(reply->transport, live::postconf("default_transport"));
    }
}
