#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/qmgr_params.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::conf;

namespace {
QmgrParams::Options no_accounts{false};

// Loads `text` on top of the defaults for host "vm".
QmgrParams load(const std::string& text, std::vector<std::string>* warnings = nullptr) {
    MainCf cf;
    register_defaults(cf, "vm");
    EXPECT_TRUE(cf.load_text(text, "/etc/postfix/main.cf")) << cf.error();
    return QmgrParams::load(
        cf,
        [&](const std::string& w) {
            if (warnings) warnings->push_back(w);
        },
        no_accounts);
}

// The fatal text loading `text` gives ("" if it loads).
std::string fatal(const std::string& text) {
    try {
        load(text);
    } catch (const ConfigError& e) {
        return e.postfix_text();
    }
    return {};
}
} // namespace

TEST(QmgrParams, Defaults) {
    auto q = load("");
    EXPECT_EQ(q.qmgr_message_active_limit, 20000);
    EXPECT_EQ(q.queue_run_delay, 300);
    EXPECT_EQ(q.maximal_queue_lifetime, 432000);
    EXPECT_EQ(q.bounce_queue_lifetime, 432000);
    EXPECT_EQ(q.qmgr_daemon_timeout, 1000);
    EXPECT_EQ(q.default_destination_concurrency_positive_feedback, "1");
    EXPECT_EQ(q.hash_queue_names, (std::vector<std::string>{"deferred", "defer"}));
    EXPECT_EQ(q.myhostname, "vm.localdomain");
    EXPECT_EQ(q.syslog_name, "postfix");
    EXPECT_EQ(q.config_directory, "/etc/postfix");
    EXPECT_FALSE(q.smtputf8_enable);
    EXPECT_EQ(q.fast_flush_domains, "vm.localdomain, localhost.localdomain, localhost");
    EXPECT_EQ(q.ipc_timeout, 60); // qmgr_ipc_timeout replaces ipc_timeout
    EXPECT_EQ(q.max_idle, 0);
    EXPECT_EQ(std::get<int64_t>(q.values.at("max_idle")), 100);
    EXPECT_EQ(q.configured_max_idle, 100); // the control socket's idle limit
    EXPECT_EQ(std::get<int64_t>(q.values.at("message_size_limit")), 10240000);
    EXPECT_TRUE(q.defer_transports.empty());
    EXPECT_EQ(q.data_directory, "/var/lib/postfix"); // postconf -d data_directory
}

TEST(QmgrParams, EveryRowOfTheTableIsRead) {
    auto q = load("");
    for (auto table : {global_params(), qmgr_params(), cqmgr_params()})
        for (auto& p : table)
            EXPECT_EQ(q.values.count(p.name), p.reader == ParamReader::Master ? 0u : 1u) << p.name;
}

TEST(QmgrParams, ValuesAndUnits) {
    auto q = load("maximal_queue_lifetime = 2\n"
                  "bounce_queue_lifetime = 1h\n"
                  "queue_run_delay = 2m\n"
                  "defer_transports = smtp, relay\tlmtp\n"
                  "compatibility_level = 3.6\n"
                  "default_destination_concurrency_limit = -1\n"
                  "default_delivery_slot_discount = -5\n");
    EXPECT_EQ(q.maximal_queue_lifetime, 2 * 86400); // bare number in days
    EXPECT_EQ(q.bounce_queue_lifetime, 3600);
    EXPECT_EQ(q.queue_run_delay, 120);
    EXPECT_EQ(q.defer_transports, (std::vector<std::string>{"smtp", "relay", "lmtp"}));
    EXPECT_TRUE(q.smtputf8_enable);
    EXPECT_EQ(q.relay_domains, "");
    EXPECT_EQ(q.default_destination_concurrency_limit, -1); // no minimum in Postfix
    EXPECT_EQ(q.default_delivery_slot_discount, -5);        // only the maximum is checked
}

TEST(QmgrParams, StartUpAdjustmentsWarn) {
    std::vector<std::string> w;
    auto q = load("qmgr_message_active_limit = 500\n"
                  "qmgr_message_recipient_limit = 100\n"
                  "maximal_queue_lifetime = 1d\n"
                  "bounce_queue_lifetime = 2d\n",
                  &w);
    EXPECT_EQ(q.qmgr_message_recipient_limit, 500);
    EXPECT_EQ(q.bounce_queue_lifetime, 86400);
    ASSERT_EQ(w.size(), 2u);
    EXPECT_EQ(w[0], "qmgr_message_recipient_limit is smaller than qmgr_message_active_limit - "
                    "adjusting qmgr_message_recipient_limit");
    EXPECT_EQ(w[1], "bounce_queue_lifetime is larger than maximal_queue_lifetime - adjusting "
                    "bounce_queue_lifetime");
}

TEST(QmgrParams, BadValuesStopLikeStockQmgr) {
    EXPECT_EQ(fatal("qmgr_message_active_limit = 12x\n"),
              "bad numerical configuration: qmgr_message_active_limit = 12x");
    EXPECT_EQ(fatal("qmgr_message_active_limit = 0\n"),
              "invalid qmgr_message_active_limit parameter value 0 < 1");
    EXPECT_EQ(fatal("default_delivery_slot_discount = 101\n"),
              "invalid default_delivery_slot_discount parameter value 101 > 100");
    EXPECT_EQ(fatal("queue_run_delay = 0\n"), "invalid queue_run_delay: 0 (min 1)");
    EXPECT_EQ(fatal("maximal_queue_lifetime = 101\n"),
              "invalid maximal_queue_lifetime: 8726400 (max 8640000)");
    EXPECT_EQ(fatal("minimal_backoff_time = 5 m\n"),
              "parameter minimal_backoff_time: bad time value or unit: 5 m");
    EXPECT_EQ(fatal("disable_verp_bounces = true\n"),
              "bad boolean configuration: disable_verp_bounces = true");
    EXPECT_EQ(fatal("default_destination_concurrency_positive_feedback =\n"),
              "bad string length 0 < 1: default_destination_concurrency_positive_feedback = ");
    EXPECT_EQ(fatal("compatibility_level = 3.x\n"),
              "malformed compatibility level syntax: \"3.x\"");
    EXPECT_EQ(fatal("syslog_facility = mailx\n"),
              "file /etc/postfix/main.cf: parameter syslog_facility: unrecognized value: mailx");
    EXPECT_EQ(fatal("myhostname = bad..name\n"),
              "file /etc/postfix/main.cf: parameter myhostname: bad parameter value: bad..name");
    EXPECT_EQ(fatal("relayhost = VM.localdomain\n"),
              "myhostname and relayhost parameter settings must not be identical: vm.localdomain");
    EXPECT_EQ(fatal("myorigin = a, b\n"),
              "myorigin parameter setting must not contain multiple values: a, b");
    EXPECT_EQ(fatal("default_verp_delimiters = +x\n"),
              "file /etc/postfix/main.cf: parameters default_verp_delimiters and "
              "verp_delimiter_filter: bad second VERP delimiter character");
    EXPECT_EQ(fatal("hash_queue_depth = 0\n"), "invalid hash_queue_depth parameter value 0 < 1");
    EXPECT_EQ(fatal("in_flow_delay = 11\n"), "invalid in_flow_delay: 11 (max 10)");
    EXPECT_EQ(fatal("max_use = 0\n"), "invalid max_use parameter value 0 < 1");
    EXPECT_EQ(fatal("line_length_limit = 100\n"),
              "invalid line_length_limit parameter value 100 < 512");
    EXPECT_EQ(fatal("message_size_limit = 10M\n"),
              "bad numerical configuration: message_size_limit = 10M");
    EXPECT_EQ(fatal("queue_directory =\n"), "bad string length 0 < 1: queue_directory = ");
    EXPECT_EQ(fatal("default_filter_nexthop = ${oops\n"),
              "dictionary mail_dict: macro processing error");
}

TEST(QmgrParams, FirstErrorInPostfixOrderWins) {
    // Globals are read before qmgr's tables; within qmgr, ints before times.
    EXPECT_EQ(fatal("queue_run_delay = x\nqmgr_message_active_limit = x\nmax_use = x\n"),
              "bad numerical configuration: max_use = x");
    EXPECT_EQ(fatal("queue_run_delay = x\nqmgr_message_active_limit = x\n"),
              "bad numerical configuration: qmgr_message_active_limit = x");
}

TEST(QmgrParams, ErrorsNameFileAndLine) {
    try {
        load("\n\nqmgr_ipc_timeout = forever\n");
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()), "/etc/postfix/main.cf, line 3: parameter "
                                         "qmgr_ipc_timeout: bad time value or unit: forever");
    }
}

TEST(QmgrParams, UnreadParametersDoNotMatter) {
    // Stock qmgr never expands parameters it does not read.
    auto q = load("smtpd_banner = ${broken\nsomething_else = 12x\n");
    EXPECT_EQ(q.qmgr_message_active_limit, 20000);
}

TEST(QmgrParams, CommandLineOverridesWin) {
    MainCf cf;
    register_defaults(cf, "vm");
    ASSERT_TRUE(cf.load_text("qmgr_ipc_timeout = 30s\n"));
    cf.set("qmgr_ipc_timeout", "45");
    cf.set("max_idle", "0"); // -i 0 is refused by every daemon
    try {
        QmgrParams::load(cf, {}, no_accounts);
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.postfix_text(), "invalid max_idle: 0 (min 1)");
        EXPECT_EQ(e.where(), "command line");
    }
    cf.set("max_idle", "10");
    auto q = QmgrParams::load(cf, {}, no_accounts);
    EXPECT_EQ(q.qmgr_ipc_timeout, 45);
    EXPECT_EQ(q.configured_max_idle, 10);
    EXPECT_EQ(q.max_idle, 0);
}

TEST(QmgrParams, WorksWithoutRegisteredDefaults) {
    MainCf cf;
    ASSERT_TRUE(cf.load_text("queue_run_delay = 1m\n"));
    auto q = QmgrParams::load(cf, {}, no_accounts);
    EXPECT_EQ(q.queue_run_delay, 60);
    EXPECT_EQ(q.maximal_backoff_time, 4000);
}

TEST(QmgrParams, ControlSocket) {
    EXPECT_EQ(load("").cqmgr_control_socket, "private/cqmgr");
    EXPECT_EQ(load("cqmgr_control_socket =\n").cqmgr_control_socket, "");
    EXPECT_EQ(load("cqmgr_control_socket = $queue_directory/ctl\n").cqmgr_control_socket,
              "/var/spool/postfix/ctl");
    MainCf cf;
    register_defaults(cf, "vm");
    cf.set("cqmgr_control_socket", "private/other");
    EXPECT_EQ(QmgrParams::load(cf, {}, no_accounts).cqmgr_control_socket, "private/other");
}

TEST(QmgrParams, StateDatabase) {
    EXPECT_EQ(load("").cqmgr_state_database, "/var/lib/postfix/cqmgr-state.lmdb");
    EXPECT_EQ(load("data_directory = /d\n").cqmgr_state_database, "/d/cqmgr-state.lmdb");
    EXPECT_EQ(load("cqmgr_state_database =\n").cqmgr_state_database, "");
    EXPECT_EQ(load("cqmgr_state_database = $queue_directory/s.lmdb\n").cqmgr_state_database,
              "/var/spool/postfix/s.lmdb");
}

TEST(QmgrParams, MetricsParametersAreOffByDefault) {
    auto q = load("");
    EXPECT_EQ(q.cqmgr_metrics_listen, "");
    EXPECT_EQ(q.cqmgr_metrics_destination_limit, 50);
    EXPECT_EQ(q.cqmgr_health_stall_time, 10);
}

TEST(QmgrParams, AdaptiveAndJitterParameters) {
    auto q = load("");
    EXPECT_TRUE(q.cqmgr_adaptive_limit_transports.empty());
    EXPECT_EQ(q.cqmgr_adaptive_reply_rules, "");
    EXPECT_EQ(q.cqmgr_adaptive_probe_deliveries, 500);
    EXPECT_EQ(q.cqmgr_adaptive_probe_time, 300);
    EXPECT_EQ(q.cqmgr_adaptive_forget_time, 3600);
    EXPECT_EQ(q.cqmgr_adaptive_rate_margin, 10);
    EXPECT_EQ(q.cqmgr_backoff_jitter, 0);
    q = load("cqmgr_adaptive_limit_transports = smtp, relay\n"
             "cqmgr_adaptive_reply_rules = pcre:/etc/postfix/reply_rules\n"
             "cqmgr_adaptive_probe_deliveries = 0\ncqmgr_adaptive_probe_time = 10m\n"
             "cqmgr_adaptive_forget_time = 2h\ncqmgr_backoff_jitter = 20\n");
    EXPECT_EQ(q.cqmgr_adaptive_limit_transports, (std::vector<std::string>{"smtp", "relay"}));
    EXPECT_EQ(q.cqmgr_adaptive_reply_rules, "pcre:/etc/postfix/reply_rules");
    EXPECT_EQ(q.cqmgr_adaptive_probe_deliveries, 0);
    EXPECT_EQ(q.cqmgr_adaptive_probe_time, 600);
    EXPECT_EQ(q.cqmgr_adaptive_forget_time, 7200);
    EXPECT_EQ(q.cqmgr_backoff_jitter, 20);
    EXPECT_EQ(fatal("cqmgr_backoff_jitter = 101\n"),
              "invalid cqmgr_backoff_jitter parameter value 101 > 100");
    EXPECT_EQ(fatal("cqmgr_backoff_jitter = -5\n"),
              "invalid cqmgr_backoff_jitter parameter value -5 < 0");
    EXPECT_EQ(q.cqmgr_adaptive_limit_scope, "destination");
    EXPECT_EQ(load("cqmgr_adaptive_limit_scope = provider\n").cqmgr_adaptive_limit_scope,
              "provider");
    EXPECT_EQ(fatal("cqmgr_adaptive_limit_scope = domain\n"),
              "invalid cqmgr_adaptive_limit_scope parameter value \"domain\" (expected "
              "destination or provider)");
    EXPECT_EQ(q.cqmgr_adaptive_rate_model, "pace");
    EXPECT_EQ(q.cqmgr_adaptive_rate_window, 60);
    EXPECT_EQ(load("cqmgr_adaptive_rate_model = window\n").cqmgr_adaptive_rate_model, "window");
    EXPECT_EQ(load("cqmgr_adaptive_rate_window = 10s\n").cqmgr_adaptive_rate_window, 10);
    EXPECT_EQ(fatal("cqmgr_adaptive_rate_model = fixed\n"),
              "invalid cqmgr_adaptive_rate_model parameter value \"fixed\" (expected pace or "
              "window)");
}

TEST(QmgrParams, PriorityLaneParameters) {
    auto q = load("");
    EXPECT_FALSE(q.lanes());
    EXPECT_EQ(q.cqmgr_urgent_agent_share, 0);
    EXPECT_EQ(q.cqmgr_bulk_agent_share, 10);
    q = load("cqmgr_priority_maps = inline:{ a.example=urgent, b.example=bulk }, "
             "texthash:/etc/postfix/priority\n"
             "cqmgr_priority_header_maps = pcre:/etc/postfix/priority_headers\n"
             "cqmgr_urgent_agent_share = 20\ncqmgr_bulk_agent_share = 30\n");
    EXPECT_TRUE(q.lanes());
    EXPECT_EQ(q.cqmgr_priority_maps,
              (std::vector<std::string>{"inline:{ a.example=urgent, b.example=bulk }",
                                        "texthash:/etc/postfix/priority"}));
    EXPECT_EQ(q.cqmgr_priority_header_maps,
              (std::vector<std::string>{"pcre:/etc/postfix/priority_headers"}));
    EXPECT_EQ(q.cqmgr_urgent_agent_share, 20);
    EXPECT_EQ(q.cqmgr_bulk_agent_share, 30);
    EXPECT_EQ(fatal("cqmgr_urgent_agent_share = 101\n"),
              "invalid cqmgr_urgent_agent_share parameter value 101 > 100");
    EXPECT_EQ(fatal("cqmgr_bulk_agent_share = -1\n"),
              "invalid cqmgr_bulk_agent_share parameter value -1 < 0");
}

TEST(QmgrParams, DestinationAgentShare) {
    auto q = load("");
    EXPECT_EQ(q.cqmgr_destination_agent_share, 0);
    EXPECT_FALSE(q.destination_shares);
    q = load("cqmgr_destination_agent_share = 50%\n");
    EXPECT_EQ(q.cqmgr_destination_agent_share, 50);
    EXPECT_TRUE(q.destination_shares);
    EXPECT_EQ(load("cqmgr_destination_agent_share = 25\n").cqmgr_destination_agent_share, 25);
    // One transport's share alone turns the shares on.
    q = load("smtp_cqmgr_destination_agent_share = 30%\n");
    EXPECT_EQ(q.cqmgr_destination_agent_share, 0);
    EXPECT_TRUE(q.destination_shares);
    EXPECT_FALSE(load("smtp_cqmgr_destination_agent_share = 0\n").destination_shares);
    EXPECT_EQ(fatal("cqmgr_destination_agent_share = 101%\n"),
              "invalid cqmgr_destination_agent_share parameter value 101 > 100");
    EXPECT_EQ(fatal("cqmgr_destination_agent_share = -1\n"),
              "invalid cqmgr_destination_agent_share parameter value -1 < 0");
    EXPECT_EQ(fatal("cqmgr_destination_agent_share = half\n"),
              "bad numerical configuration: cqmgr_destination_agent_share = half");
}

TEST(QmgrParams, SchedulerPolicy) {
    auto q = load("");
    EXPECT_EQ(q.cqmgr_scheduler_policy, "rak");
    EXPECT_FALSE(q.finch_policy_used);
    q = load("cqmgr_scheduler_policy = finch\n");
    EXPECT_EQ(q.cqmgr_scheduler_policy, "finch");
    EXPECT_TRUE(q.finch_policy_used);
    // One transport's finch is enough for master.cf's process limits.
    q = load("relay_cqmgr_scheduler_policy = finch\n");
    EXPECT_EQ(q.cqmgr_scheduler_policy, "rak");
    EXPECT_TRUE(q.finch_policy_used);
    EXPECT_FALSE(load("relay_cqmgr_scheduler_policy = rak\n").finch_policy_used);
    EXPECT_EQ(fatal("cqmgr_scheduler_policy = nqmgr\n"),
              "invalid cqmgr_scheduler_policy parameter value \"nqmgr\" (expected rak or finch)");
}

TEST(QmgrParams, MetricsParameters) {
    auto q = load("cqmgr_metrics_listen = 127.0.0.1:9154\ncqmgr_metrics_destination_limit = 0\n");
    EXPECT_EQ(q.cqmgr_metrics_listen, "127.0.0.1:9154");
    EXPECT_EQ(q.cqmgr_metrics_destination_limit, 0);
    EXPECT_EQ(load("cqmgr_metrics_listen = 9154\n").cqmgr_metrics_listen, "9154");
    EXPECT_EQ(load("cqmgr_metrics_listen = [::1]:9154\n").cqmgr_metrics_listen, "[::1]:9154");
    EXPECT_EQ(load("port = 9100\ncqmgr_metrics_listen = 127.0.0.1:$port\n").cqmgr_metrics_listen,
              "127.0.0.1:9100");
    for (const char* bad : {"localhost:9154", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
                            "127.0.0.256:80", "1.2.3:80", "127.0.0.1:80s", "[::1:80", ":80"})
        EXPECT_EQ(fatal(std::string("cqmgr_metrics_listen = ") + bad + "\n"),
                  std::string("file /etc/postfix/main.cf: parameter cqmgr_metrics_listen: bad "
                              "value: \"") +
                      bad + "\" (expected PORT, IPv4:PORT or [IPv6]:PORT)")
            << bad;
    EXPECT_EQ(fatal("cqmgr_metrics_destination_limit = -1\n"),
              "invalid cqmgr_metrics_destination_limit parameter value -1 < 0");
    EXPECT_EQ(fatal("cqmgr_metrics_destination_limit = x\n"),
              "bad numerical configuration: cqmgr_metrics_destination_limit = x");
    EXPECT_EQ(load("cqmgr_health_stall_time = 1m\n").cqmgr_health_stall_time, 60);
    EXPECT_EQ(load("cqmgr_health_stall_time = 3\n").cqmgr_health_stall_time, 3);
    EXPECT_EQ(fatal("cqmgr_health_stall_time = 0\n"), "invalid cqmgr_health_stall_time: 0 (min 1)");
}

TEST(QmgrParams, DnsServers) {
    EXPECT_TRUE(load("").cqmgr_dns_servers.empty());
    EXPECT_EQ(load("cqmgr_dns_servers = 127.0.0.1:5353, [::1]:53 10.0.0.1\n").cqmgr_dns_servers,
              (std::vector<std::string>{"127.0.0.1:5353", "[::1]:53", "10.0.0.1"}));
    EXPECT_EQ(load("cqmgr_dns_servers = [::1]\n").cqmgr_dns_servers,
              std::vector<std::string>{"[::1]"});
    for (const char* bad :
         {"localhost:53", "127.0.0.1:", "127.0.0.1:0", "53", "::1", "[::1", ":53", "1.2.3:53"})
        EXPECT_EQ(fatal(std::string("cqmgr_dns_servers = 127.0.0.1 ") + bad + "\n"),
                  std::string("file /etc/postfix/main.cf: parameter cqmgr_dns_servers: bad "
                              "value: \"") +
                      bad + "\" (expected IPv4[:PORT] or [IPv6][:PORT])")
            << bad;
}
