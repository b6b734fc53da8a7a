// Providers by domain and MX set, and which nexthops are looked up.
#include "provider_match.hpp"

#include <gtest/gtest.h>
#include <map>

using namespace cqmgr::qmgr;

namespace {

// cqmgr_provider_maps as a map; counts the questions.
struct Table {
    std::map<std::string, std::string, std::less<>> rows;
    mutable std::vector<std::string> asked{};
    ProviderLookup lookup() const {
        return [this](std::string_view key) -> std::optional<std::string> {
            asked.emplace_back(key);
            auto it = rows.find(key);
            if (it == rows.end()) return std::nullopt;
            return it->second;
        };
    }
};

using Hosts = std::vector<std::string>;

} // namespace

TEST(ProviderMatch, HostKeysWholeThenEachSuffix) {
    EXPECT_EQ(mx_host_keys("MX1.L.Google.COM."),
              (Hosts{"mx1.l.google.com", ".l.google.com", ".google.com", ".com"}));
    EXPECT_EQ(mx_host_keys("localhost"), Hosts{"localhost"});
    EXPECT_TRUE(mx_host_keys("").empty());
}

TEST(ProviderMatch, EveryHostUnderOneSuffix) {
    Table t{{{".google.com", "google"}, {".outlook.com", "microsoft"}}};
    EXPECT_EQ(provider_of("example.org", Hosts{"aspmx.l.google.com", "alt1.aspmx.l.google.com"},
                          t.lookup()),
              "google");
    // The domain first, then the first host whole and by its suffixes.
    EXPECT_EQ(t.asked, (Hosts{"example.org", "aspmx.l.google.com", ".l.google.com", ".google.com",
                              "alt1.aspmx.l.google.com", ".aspmx.l.google.com", ".l.google.com",
                              ".google.com"}));
    // One host outside every provider, or in another provider: none.
    EXPECT_EQ(provider_of("example.org", Hosts{"aspmx.l.google.com", "mx.example.org"}, t.lookup()),
              std::nullopt);
    EXPECT_EQ(provider_of("example.org",
                          Hosts{"aspmx.l.google.com", "x.mail.protection.outlook.com"}, t.lookup()),
              std::nullopt);
}

TEST(ProviderMatch, MostSpecificKeyOfEachHostCounts) {
    Table t{
        {{".google.com", "google"}, {".l.google.com", "gsuite"}, {"mx.special.net", "special"}}};
    EXPECT_EQ(provider_of("a.example", Hosts{"aspmx.l.google.com"}, t.lookup()), "gsuite");
    EXPECT_EQ(provider_of("a.example", Hosts{"aspmx.l.google.com", "smtp.google.com"}, t.lookup()),
              std::nullopt);
    // A whole name.
    EXPECT_EQ(provider_of("a.example", Hosts{"MX.Special.NET."}, t.lookup()), "special");
    EXPECT_EQ(provider_of("a.example", Hosts{"mx2.special.net"}, t.lookup()), std::nullopt);
}

TEST(ProviderMatch, TheDomainItselfListed) {
    Table t{{{"example.org", "hosted"}, {".google.com", "google"}}};
    // Whatever its MX hosts, and with none.
    EXPECT_EQ(provider_of("Example.ORG.", Hosts{"mx.elsewhere.net"}, t.lookup()), "hosted");
    EXPECT_EQ(provider_of("example.org", Hosts{}, t.lookup()), "hosted");
    // Only the domain itself, not its parents.
    EXPECT_EQ(provider_of("sub.example.org", Hosts{}, t.lookup()), std::nullopt);
}

TEST(ProviderMatch, NoHostsNoProvider) {
    Table t{{{".com", "everyone"}}};
    // A null MX, or no answer.
    EXPECT_EQ(provider_of("example.com", Hosts{}, t.lookup()), std::nullopt);
    // No MX records: the domain is its own host (MxAnswer::hosts).
    EXPECT_EQ(provider_of("example.com", Hosts{"example.com"}, t.lookup()), "everyone");
}

TEST(ProviderMatch, OnlySmtpToTheRecipientDomainIsLookedUp) {
    EXPECT_TRUE(mx_lookup_wanted("smtp", "example.com", "example.com"));
    EXPECT_TRUE(mx_lookup_wanted("smtp", "Example.COM.", "example.com"));
    EXPECT_TRUE(mx_lookup_wanted("smtp", "example.com", "EXAMPLE.com"));
    // Brackets, with or without a port; a port; a list.
    EXPECT_FALSE(mx_lookup_wanted("smtp", "[example.com]", "example.com"));
    EXPECT_FALSE(mx_lookup_wanted("smtp", "[example.com]:587", "example.com"));
    EXPECT_FALSE(mx_lookup_wanted("smtp", "example.com:2525", "example.com"));
    EXPECT_FALSE(mx_lookup_wanted("smtp", "example.com, example.net", "example.com"));
    EXPECT_FALSE(mx_lookup_wanted("smtp", "[192.0.2.1]", "example.com"));
    // A relayhost or a transport_maps nexthop to another host.
    EXPECT_FALSE(mx_lookup_wanted("smtp", "relay.isp.net", "example.com"));
    // Agents that do not deliver to the domain's MX hosts.
    for (const char* agent : {"lmtp", "local", "virtual", "pipe", "error", "discard", ""})
        EXPECT_FALSE(mx_lookup_wanted(agent, "example.com", "example.com")) << agent;
    // Not a domain.
    EXPECT_FALSE(mx_lookup_wanted("smtp", "192.0.2.1", "192.0.2.1"));
    EXPECT_FALSE(mx_lookup_wanted("smtp", "", ""));
    EXPECT_FALSE(mx_lookup_wanted("smtp", "exa mple.com", "exa mple.com"));
}
