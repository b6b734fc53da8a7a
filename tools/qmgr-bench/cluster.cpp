#include "cluster.hpp"

#include "clock.hpp"
#include "delivery_watch.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "mail_setup.hpp"
#include "metrics.hpp"
#include "net.hpp"
#include "process.hpp"
#include "qmgr_probe.hpp"
#include "redis_server.hpp"
#include "side_by_side.hpp"
#include "signals.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <unistd.h>

namespace bench {
namespace {

constexpr int connection_limit = 5;
// What the receiver enforces per anvil window for a shared rate of `rate`
// messages per second.  anvil counts in whole seconds and starts a new
// window only at the first event more than anvil_rate_time_unit (1 s)
// after the window began: a window spans one to two clock seconds, so 50/s
// evenly spaced puts up to 100 messages into one (measured: 97).  2 × rate
// + 10 (110 for 50/s) lets the rate through in any phase, and refuses
// anything much above it.
int receiver_rate_limit(int rate) {
    return 2 * rate + 10;
}

// One run's figures.
struct ClusterRun {
    int peak_connections = 0; // sampled (held over two samples 50 ms apart)
    // What the receiver saw: anvil's peak connection count and peak
    // message count in one rate window, and smtpd's refusals for the
    // connection count and for the message rate.
    int anvil_connections = 0;
    int anvil_messages = 0;
    int count_refusals = 0;
    int rate_refusals = 0;
    double rate = 0; // sent recipients per second, first to last delivery
    double drain = 0;
    std::uint64_t deferred = 0;
    std::uint64_t sent = 0;
};

// The receiver's figures, from the maillog of the instance it runs in
// (anvil logs its peaks when it exits and every anvil_status_update_time).
void read_receiver_log(const std::string& maillog, ClusterRun& r) {
    std::istringstream in(compat::read_file(maillog));
    std::string line;
    // The number after `key` in `line`, or -1.
    auto after = [&](const char* key) {
        size_t at = line.find(key);
        return at == std::string::npos ? -1 : std::atoi(line.c_str() + at + std::strlen(key));
    };
    while (std::getline(in, line)) {
        r.anvil_connections = std::max(r.anvil_connections, after("max connection count "));
        r.anvil_messages = std::max(r.anvil_messages, after("max message rate "));
        if (line.find("Connection concurrency limit exceeded") != std::string::npos)
            ++r.count_refusals;
        if (line.find("Message delivery request rate limit exceeded") != std::string::npos)
            ++r.rate_refusals;
    }
}

// Throws unless the queue manager of the instance with `maillog` used the
// shared limits all along: connected to Redis, never fell back to local ones
// (a run on local limits measures something else).
void expect_shared(const std::string& maillog) {
    std::string log = compat::read_file(maillog);
    if (log.find("postfix/qmgr[") == std::string::npos ||
        log.find(": connected\n") == std::string::npos)
        throw compat::Error("expected a line \"connected\" (to redis-server) in " + maillog +
                            ", found none");
    if (size_t at = log.find("; using local limits"); at != std::string::npos) {
        size_t begin = log.rfind('\n', at);
        begin = begin == std::string::npos ? 0 : begin + 1;
        throw compat::Error("expected the shared limits all along, found: " +
                            log.substr(begin, at - begin) + "; using local limits");
    }
}

// The main.cf both senders share; with a Redis socket, cqmgr's shared limits
// (their tables are written by write_limit_tables()).
MainCf sender_main_cf(std::uint16_t rx, const std::string& redis_socket, const std::string& conf) {
    MainCf cf = relay_to(rx);
    cf.insert(cf.end(), {{"in_flow_delay", "0"},
                         // A cached connection is one the receiver counts while
                         // no delivery uses it; a shared limit counts deliveries.
                         {"smtp_connection_cache_on_demand", "no"},
                         {"minimal_backoff_time", "10s"},
                         {"maximal_backoff_time", "20s"},
                         {"queue_run_delay", "5s"}});
    if (!redis_socket.empty()) {
        cf.insert(cf.end(),
                  {{"cqmgr_redis_server", "unix:" + redis_socket},
                   {"cqmgr_redis_key_prefix", "cqmgr:bench:"},
                   {"cqmgr_cluster_concurrency_limits", "texthash:" + conf + "/cqmgr_concurrency"},
                   {"cqmgr_rate_limits", "texthash:" + conf + "/cqmgr_rates"}});
    }
    return cf;
}

// The two lookup tables sender_main_cf() names, keyed by the nexthop.
void write_limit_tables(const std::string& conf, std::uint16_t rx, int rate) {
    std::string nexthop = "[127.0.0.1]:" + std::to_string(rx);
    compat::write_file(conf + "/cqmgr_concurrency",
                       nexthop + " " + std::to_string(connection_limit) + "\n");
    compat::write_file(conf + "/cqmgr_rates", nexthop + " " + std::to_string(rate) + "/s,1\n");
}

// Both senders against the receiver that lives in the first one's master.cf.
ClusterRun measure(compat::QmgrKind kind, const RunOptions& opts, const std::string& dir,
                   std::uint64_t per_sender, int rate) {
    auto ports = compat::allocate_ports(3); // smtpd A, smtpd B, receiver
    const std::uint16_t rx = ports[2];
    std::unique_ptr<RedisServer> redis;
    if (kind == compat::QmgrKind::Cqmgr) redis = std::make_unique<RedisServer>(dir);
    std::vector<std::unique_ptr<compat::Instance>> senders;
    for (int i = 0; i < 2; ++i) {
        std::string sub = dir + (i == 0 ? "/a" : "/b");
        compat::make_dir(sub, 0755, 0, 0);
        senders.push_back(std::make_unique<compat::Instance>(sub));
        compat::InstanceConfig cfg;
        cfg.qmgr = kind;
        cfg.cqmgr_path = opts.cqmgr_path;
        cfg.smtpd_port = ports[static_cast<size_t>(i)];
        cfg.master_exit_after = 1200;
        cfg.main_cf = sender_main_cf(rx, redis ? redis->socket() : "", sub + "/conf");
        if (i == 0) {
            cfg.main_cf.emplace_back("anvil_rate_time_unit", "1s");
            // anvil logs its peaks only then (not when it is stopped).
            cfg.main_cf.emplace_back("anvil_status_update_time", "1s");
            cfg.master_cf = {
                "127.0.0.1:" + std::to_string(rx) +
                " inet n - n - 20 smtpd -o smtpd_client_connection_count_limit=" +
                std::to_string(connection_limit) +
                " -o smtpd_client_message_rate_limit=" + std::to_string(receiver_rate_limit(rate)) +
                " -o smtpd_client_event_limit_exceptions="
                " -o smtpd_end_of_data_restrictions=check_client_access,"
                "static:DISCARD"};
        }
        senders.back()->create(cfg);
        if (redis) write_limit_tables(senders.back()->conf_dir(), rx, rate);
    }
    compat::ConnectionSampler connections({rx});
    for (auto& s : senders)
        s->start();
    std::vector<DeliveryWatch> watches;
    for (auto& s : senders)
        watches.emplace_back(s->maillog_path(), "");
    double started = boot_seconds();
    std::vector<compat::Process> injectors;
    for (int i = 0; i < 2; ++i)
        injectors.push_back(compat::Process::spawn(
            smtp_source(*senders[static_cast<size_t>(i)], ports[static_cast<size_t>(i)], per_sender,
                        5, "u@rx.example", "inject")));
    double deadline = started + 600;
    ClusterRun r;
    double first = 0, last = 0;
    for (;;) {
        compat::check_interrupted();
        std::uint64_t sent = 0, deferred = 0;
        for (auto& w : watches) {
            w.poll();
            sent += w.sent();
            deferred += w.deferred();
            if (!w.first_fatal().empty())
                throw compat::Error("expected no fatal or panic lines, found: " + w.first_fatal());
            if (w.first_sent_at() > 0 && (first == 0 || w.first_sent_at() < first))
                first = w.first_sent_at();
            last = std::max(last, w.last_sent_at());
        }
        r.sent = sent;
        r.deferred = deferred;
        if (sent >= 2 * per_sender) break;
        if (boot_seconds() > deadline)
            throw compat::Error("expected " + std::to_string(2 * per_sender) +
                                " deliveries within 600 s, found " + std::to_string(sent));
        pause(0.01);
    }
    connections.stop();
    r.peak_connections = connections.peak(0);
    r.drain = last - started;
    r.rate = last > first ? static_cast<double>(r.sent - 1) / (last - first) : 0;
    for (auto& s : senders)
        s->stop();
    read_receiver_log(senders[0]->maillog_path(), r);
    if (redis)
        for (auto& s : senders)
            expect_shared(s->maillog_path());
    return r;
}

// "%.Nf".
std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

} // namespace

// Alternates stock and cqmgr; a table of medians.
int run_cluster(const Session& session, const RunOptions& opts, int pairs, int rate) {
    const std::uint64_t per_sender = scaled(1500, session.scale);
    std::cout << "cluster: two senders with " << with_commas(per_sender)
              << " one-recipient messages each, one receiver allowing " << connection_limit
              << " connections and " << receiver_rate_limit(rate)
              << " messages per anvil window (1 to 2 s) from both together; cqmgr's shared limits "
              << connection_limit << " connections and " << rate << "/s\n"
              << std::flush;
    int failed = 0;
    auto runs = run_side_by_side<ClusterRun>(
        pairs, opts,
        [&](compat::QmgrKind kind, const std::string& dir) {
            return measure(kind, opts, dir, per_sender, rate);
        },
        [](const ClusterRun& r) {
            return "peak connections " + std::to_string(r.peak_connections) + " (anvil " +
                   std::to_string(r.anvil_connections) + "), rate " + fixed(r.rate, 1) +
                   "/s (anvil peak " + std::to_string(r.anvil_messages) + " a window), deferred " +
                   std::to_string(r.deferred) + " (refused: " + std::to_string(r.count_refusals) +
                   " count, " + std::to_string(r.rate_refusals) + " rate), drain " +
                   fixed(r.drain, 1) + " s";
        },
        failed);
    SideTable<ClusterRun> table(runs, "stock qmgr (no shared state)", "cqmgr (shared limits)");
    table.row(
        "peak connections at the receiver, anvil's count (limit " +
            std::to_string(connection_limit) + ")",
        [](const ClusterRun& r) { return r.anvil_connections; }, 0);
    table.row(
        "peak connections at the receiver, sampled every 50 ms",
        [](const ClusterRun& r) { return r.peak_connections; }, 0);
    table.row(
        "deliveries per second, first to last (shared limit " + std::to_string(rate) + ")",
        [](const ClusterRun& r) { return r.rate; }, 1);
    table.row(
        "status=deferred lines", [](const ClusterRun& r) { return r.deferred; }, 0);
    table.row(
        "refused by the receiver for the connection count",
        [](const ClusterRun& r) { return r.count_refusals; }, 0);
    table.row(
        "refused by the receiver for the message rate",
        [](const ClusterRun& r) { return r.rate_refusals; }, 0);
    table.row(
        "drain, injection start to last delivery (s)", [](const ClusterRun& r) { return r.drain; },
        1);
    std::ostringstream t;
    t << "\n### cluster\n\nMedians of " << runs["stock"].size() << " stock and "
      << runs["cqmgr"].size() << " cqmgr runs, alternated; cqmgr on both senders shares "
      << "the limits through one redis-server.\n\n"
      << table.str();
    std::cout << t.str() << std::flush;
    return failed ? 1 : 0;
}

} // namespace bench
