#include "cqmgr/conf/master_cf.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::conf;

namespace {
const char* kSample = R"(#
# comment
smtp      inet  n       -       y       -       -       smtpd
pickup    unix  n       -       y       60      1       pickup
qmgr      unix  n       -       n       300     1       qmgr
  -o qmgr_ipc_timeout=30s
relay     unix  -       -       n       -       -       smtp
  -o { smtp_helo_name = relay host } -o syslog_name=postfix/$service_name
local     unix  -       n       n       -       -       local
retry     unix  -       -       n       -       -       error
filter    unix  -       n       n       30?     0       /opt/bin/filter -v {arg with  spaces} -o x=y
showq     unix  n       -       y       -       -       showq
  -o relay_destination_concurrency_limit=3 -o default_destination_recipient_limit=9
  -o minimal_backoff_time=10s
)";

MasterCf load(const char* text) {
    MasterCf m;
    EXPECT_TRUE(m.load_text(text, "/etc/postfix/master.cf")) << m.error();
    return m;
}

// The error loading `text` gives.
std::string error(const char* text) {
    MasterCf m;
    EXPECT_FALSE(m.load_text(text, "master.cf"));
    return m.error();
}
} // namespace

TEST(MasterCf, Fields) {
    auto m = load(kSample);
    ASSERT_EQ(m.services().size(), 8u);
    auto* q = m.find("qmgr");
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->private_field, "n");
    EXPECT_EQ(q->unprivileged_field, "-");
    EXPECT_EQ(q->wakeup_field, "300");
    EXPECT_EQ(q->maxproc_field, "1");
    EXPECT_EQ(q->command, "qmgr");
    EXPECT_EQ(q->args, (std::vector<std::string>{"-o", "qmgr_ipc_timeout=30s"}));
    EXPECT_EQ(q->where, "/etc/postfix/master.cf: line 5");
    auto* f = m.find("filter");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->args, (std::vector<std::string>{"-v", "arg with  spaces", "-o", "x=y"}));
    EXPECT_EQ(m.find("smtp"), nullptr);
    EXPECT_NE(m.find("smtp", "inet"), nullptr);
}

TEST(MasterCf, Overrides) {
    auto m = load(kSample);
    auto* r = m.find("relay");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->override_value("smtp_helo_name"), "relay host");
    EXPECT_EQ(r->override_value("syslog_name"), "postfix/$service_name");
    // "-v" is an option, then a non-option word ends the options.
    EXPECT_TRUE(m.find("filter")->overrides().empty());

    MasterService s;
    s.args = {"-vo", "a=1", "-ob=2", "-o",  "c = 3", "-n", "x",
              "-o",  "a=4", "-o",    "bad", "--",    "-o", "d=5"};
    EXPECT_EQ(s.overrides(), (std::vector<std::pair<std::string, std::string>>{
                                 {"a", "1"}, {"b", "2"}, {"c", "3"}, {"a", "4"}}));
    EXPECT_EQ(s.override_value("a"), "4");
    // An attached value may contain 'o' (postconf -P splits it; master does not).
    s.args = {"-oqmgr_clog_warn_time=$qmgr_ipc_timeout"};
    EXPECT_EQ(s.override_value("qmgr_clog_warn_time"), "$qmgr_ipc_timeout");
}

TEST(MasterCf, TransportsAndIneffectiveSettings) {
    auto m = load(kSample);
    EXPECT_EQ(m.transport_names(), (std::vector<std::string>{"relay", "local", "retry", "filter"}));
    auto ineffective = m.qmgr_settings_on_other_services();
    EXPECT_EQ(ineffective, (std::vector<std::pair<std::string, std::string>>{
                               {"showq", "relay_destination_concurrency_limit"},
                               {"showq", "default_destination_recipient_limit"}}));
}

TEST(MasterCf, Errors) {
    EXPECT_EQ(error("qmgr unix n - n 300 1\n"), "master.cf: line 1: missing \"command\" field");
    EXPECT_EQ(error("qmgr\n"), "master.cf: line 1: missing \"transport type\" field");
    EXPECT_EQ(error("qmgr tcp n - n 300 1 qmgr\n"), "master.cf: line 1: bad transport type: tcp");
    EXPECT_EQ(error("qmgr unix x - n 300 1 qmgr\n"),
              "master.cf: line 1: field \"private\": bad value: \"x\"");
    EXPECT_EQ(error("qmgr unix n - yes 300 1 qmgr\n"),
              "master.cf: line 1: field \"chroot\": bad value: \"yes\"");
    EXPECT_EQ(error("qmgr unix n - n x300 1 qmgr\n"),
              "master.cf: line 1: field \"wakeup_time\": bad value: \"x300\"");
    EXPECT_EQ(error("smtp inet - - n - - smtpd\n"),
              "master.cf: line 1: inet service cannot be private");
    EXPECT_EQ(error("# c\n\nqmgr unix n - n 300 1 qmgr -o {a=b\n"),
              "master.cf: line 3: missing '}' in \"{a=b\"");
    EXPECT_EQ(error("qmgr unix n - n 300 1 qmgr {a}b\n"),
              "master.cf: line 1: syntax error after '}' in \"{a}b\"");
}

TEST(MasterCf, SpawnOfTheStockQmgrEntry) {
    auto m = load(kSample);
    auto spawn = master_spawn(*m.find("qmgr"), MasterContext{});
    EXPECT_EQ(spawn.path, "/usr/lib/postfix/sbin/qmgr");
    EXPECT_EQ(spawn.argv, (std::vector<std::string>{"qmgr", "-l", "-t", "unix", "-u", "-o",
                                                    "qmgr_ipc_timeout=30s"}));
    EXPECT_EQ(spawn.wakeup, 300);
    EXPECT_FALSE(spawn.conditional_wakeup);
    EXPECT_FALSE(spawn.private_socket);
}

TEST(MasterCf, SpawnDefaultsAndFlags) {
    auto m = load(kSample);
    MasterContext ctx;
    ctx.default_process_limit = 42;
    ctx.master_debug = true;
    auto relay = master_spawn(*m.find("relay"), ctx);
    EXPECT_EQ(relay.max_proc, 42);
    EXPECT_TRUE(relay.private_socket);
    EXPECT_EQ(relay.argv[0], "smtp");
    EXPECT_EQ((std::vector<std::string>(relay.argv.begin() + 1, relay.argv.begin() + 7)),
              (std::vector<std::string>{"-n", "relay", "-t", "unix", "-d", "-u"}));
    auto filter = master_spawn(*m.find("filter"), MasterContext{});
    EXPECT_EQ(filter.path, "/usr/lib/postfix/sbin//opt/bin/filter");
    EXPECT_EQ(filter.wakeup, 30);
    EXPECT_TRUE(filter.conditional_wakeup);
    // basename(command) is the service name: no -n.
    EXPECT_EQ(filter.argv, (std::vector<std::string>{"/opt/bin/filter", "-z", "-t", "unix", "-v",
                                                     "arg with  spaces", "-o", "x=y"}));
    // chroot "-" is y below compatibility level 1.
    auto c = load("cleanup unix n - - - 0 cleanup\n");
    MasterContext old;
    old.compat_level = 0;
    auto spawn = master_spawn(c.services()[0], old);
    EXPECT_TRUE(spawn.chroot);
    EXPECT_EQ(spawn.argv, (std::vector<std::string>{"cleanup", "-z", "-t", "unix", "-u", "-c"}));
    MasterContext level2;
    level2.compat_level = 2L << 20;
    EXPECT_FALSE(master_spawn(c.services()[0], level2).chroot);
    auto smtpd = master_spawn(*m.find("smtp", "inet"), MasterContext{});
    EXPECT_NE(std::find(smtpd.argv.begin(), smtpd.argv.end(), "stress="), smtpd.argv.end());
}

TEST(MasterCf, ProcessLimitsOfUnixServices) {
    auto m = load(kSample);
    MasterContext ctx;
    ctx.default_process_limit = 40;
    auto limits = process_limits(m, ctx);
    EXPECT_EQ(limits.at("relay"), 40); // "-": default_process_limit
    EXPECT_EQ(limits.at("pickup"), 1);
    EXPECT_EQ(limits.count("filter"), 0u); // 0: no limit
    EXPECT_EQ(limits.count("smtp"), 0u);   // inet, not a transport
    EXPECT_EQ(limits.size(), 6u);          // pickup qmgr relay local retry showq
}
