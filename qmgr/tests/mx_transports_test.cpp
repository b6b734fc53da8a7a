// Which transports' destinations are looked up for a provider by MX set:
// smtp(8) services of master.cf with DNS lookups on, read as smtp(8) reads
// its settings (a service's -o first, then main.cf).
#include "mx_transports.hpp"
#include "temp_dir.hpp"
#include "test_params.hpp"

#include <gtest/gtest.h>

namespace cqmgr::qmgr {
namespace {

TEST(SmtpDnsDisabled, LevelFirstThenDisableDnsLookups) {
    EXPECT_FALSE(smtp_dns_disabled("", false));
    EXPECT_TRUE(smtp_dns_disabled("", true));
    EXPECT_TRUE(smtp_dns_disabled("disabled", false));
    EXPECT_TRUE(smtp_dns_disabled("Disabled", false));
    // A level set wins over disable_dns_lookups, as in smtp(8).
    EXPECT_FALSE(smtp_dns_disabled("enabled", true));
    EXPECT_FALSE(smtp_dns_disabled("dnssec", false));
}

// master.cf with smtp(8) as smtp, relay (DNS off by -o), fast (the level
// from a $reference) and lmtp; `main_cf` for the rest.
std::map<std::string, std::string> transports(const std::string& main_cf) {
    TempDir dir("cqmgr-mx-transports");
    dir.write("master.cf", "smtp      unix  -       -       n       -       -       smtp\n"
                           "relay     unix  -       -       n       -       -       smtp\n"
                           "  -o smtp_dns_support_level=disabled\n"
                           "fast      unix  -       -       n       -       -       smtp\n"
                           "  -o smtp_dns_support_level=$fast_level\n"
                           "lmtp      unix  -       -       n       -       -       lmtp\n"
                           "local     unix  -       n       n       -       -       local\n");
    testing::Config c("config_directory = " + dir.path().string() + "\nfast_level = enabled\n" +
                      main_cf);
    return mx_lookup_transports(c.cf, c.params);
}

TEST(MxLookupTransports, SmtpServicesWithDnsOn) {
    std::map<std::string, std::string> want{{"fast", "smtp"}, {"smtp", "smtp"}};
    EXPECT_EQ(transports(""), want);
    // disable_dns_lookups counts only where no level is set.
    EXPECT_EQ(transports("disable_dns_lookups = yes\n"),
              (std::map<std::string, std::string>{{"fast", "smtp"}}));
    EXPECT_EQ(transports("smtp_dns_support_level = disabled\n"),
              (std::map<std::string, std::string>{{"fast", "smtp"}}));
    EXPECT_EQ(transports("disable_dns_lookups = yes\nsmtp_dns_support_level = enabled\n"), want);
}

TEST(MxLookupTransports, UnreadableMasterCfGivesNone) {
    testing::Config c("config_directory = /nonexistent/cqmgr\n");
    EXPECT_TRUE(mx_lookup_transports(c.cf, c.params).empty());
}

} // namespace
} // namespace cqmgr::qmgr
