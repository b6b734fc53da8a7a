#include "soak_config.hpp"

#include "fsutil.hpp"

namespace bench {

std::string soak_nexthop(const SoakPorts& p, SoakDest d) {
    return "[127.0.0.1]:" + std::to_string(p.rx.at(d));
}

std::string soak_queue(const SoakPorts& p, SoakDest d) {
    for (const auto& info : soak_destinations())
        if (info.dest == d) return info.transport + ":" + soak_nexthop(p, d);
    return soak_nexthop(p, d);
}

// Slow: 2 s before each DATA reply. Tarpit: 30 s before the greeting, and
// the session dropped at RSET, so that no cached session skips the wait.
// Bounce: every RCPT refused with a 550.
std::optional<std::vector<std::string>> soak_sink_args(SoakDest d) {
    switch (d) {
    case SoakDest::Fast:
    case SoakDest::Flap:
    case SoakDest::Dead:
        return std::vector<std::string>{};
    case SoakDest::Slow:
        return std::vector<std::string>{"-w", "2"};
    case SoakDest::Tarpit:
        return std::vector<std::string>{"-W", "connect:30", "-q", "rset"};
    case SoakDest::Bounce:
        return std::vector<std::string>{"-f", "RCPT", "-B",
                                        "550 5.1.1 Recipient address rejected: User unknown"};
    case SoakDest::Random4xx:
    case SoakDest::Limited:
    case SoakDest::Many:
        return std::nullopt;
    }
    return std::nullopt;
}

std::vector<std::string> soak_healed_tarpit_args() {
    return {};
}

// The same Postfix settings on both sides: short backoffs so that deferred
// mail comes back several times in a run, delay warnings (which the dead
// backlog must still send), long queue IDs (never reused, so that a queue
// ID names one file over the whole run), bounces to a discarding sender
// domain. cqmgr adds every feature of its own.
MainCf soak_sender_main_cf(bool cqmgr, const SoakPorts& p, const std::string& conf,
                           const std::string& redis_socket) {
    std::string map = "inline:{ sender.example=discard:";
    for (const auto& d : soak_destinations())
        if (d.dest != SoakDest::Many)
            map += ", " + soak_domain(d) + "=" + d.transport + ":" + soak_nexthop(p, d.dest);
    MainCf cf = {{"transport_maps", map + " }, texthash:" + conf + "/transport_many"},
                 {"enable_long_queue_ids", "yes"},
                 {"minimal_backoff_time", "20s"},
                 {"maximal_backoff_time", "120s"},
                 {"queue_run_delay", "20s"},
                 {"delay_warning_time", "5m"},
                 {"default_process_limit", "50"}};
    if (!cqmgr) return cf;
    cf.insert(cf.end(),
              {
                  // Lanes and shares.
                  {"cqmgr_priority_maps",
                   "inline:{ alerts@sender.example=urgent, news@sender.example=bulk }"},
                  {"cqmgr_priority_header_maps", "pcre:" + conf + "/priority_headers"},
                  {"cqmgr_urgent_agent_share", "10"},
                  {"cqmgr_bulk_agent_share", "10"},
                  {"cqmgr_destination_agent_share", "50%"},
                  {"relay_cqmgr_scheduler_policy", "finch"},
                  // Adaptive limits.
                  {"cqmgr_adaptive_limit_transports", "smtp, relay"},
                  {"cqmgr_adaptive_reply_rules", "pcre:" + conf + "/reply_rules"},
                  {"cqmgr_adaptive_probe_time", "120s"},
                  {"cqmgr_adaptive_forget_time", "600s"},
                  // Retries and the deferred queue.
                  {"cqmgr_backoff_jitter", "20"},
                  {"cqmgr_recovery_rate", "20"},
                  {"cqmgr_dead_backlog", "yes"},
                  {"cqmgr_deferred_due_index", "yes"},
                  {"cqmgr_resolve_cache_limit", "10000"},
                  // The state store, explicitly at its default.
                  {"cqmgr_state_database", "$data_directory/cqmgr-state.lmdb"},
                  // Limits shared through Redis.
                  {"cqmgr_redis_server", "unix:" + redis_socket},
                  {"cqmgr_redis_key_prefix", "cqmgr:soak:"},
                  {"cqmgr_cluster_lease_time", "15s"},
                  {"cqmgr_cluster_concurrency_limits", "texthash:" + conf + "/cqmgr_concurrency"},
                  {"cqmgr_rate_limits", "texthash:" + conf + "/cqmgr_rates"},
                  // Metrics, scraped by the soak; few series of their own.
                  {"cqmgr_metrics_listen", "127.0.0.1:" + std::to_string(p.metrics)},
                  {"cqmgr_metrics_destination_limit", "5"},
              });
    return cf;
}

// dX-Y.many.example goes to [127.0.X.Y] at the fast sink's port: a
// destination of its own for each domain. Without a private network
// namespace (where the fast sink listens on every loopback address) they
// all share the fast sink's nexthop. A texthash table of every domain, as
// transport_maps allows no regular-expression substitution.
void write_soak_transport(const std::string& conf, const SoakPorts& p, bool private_network) {
    std::string port = std::to_string(p.rx.at(SoakDest::Fast));
    std::string table;
    for (int x = 1; x <= soak_many_parts; ++x)
        for (int y = 1; y <= soak_many_parts; ++y)
            table += "d" + std::to_string(x) + "-" + std::to_string(y) + ".many.example smtp:[" +
                     (private_network ? "127.0." + std::to_string(x) + "." + std::to_string(y)
                                      : std::string("127.0.0.1")) +
                     "]:" + port + "\n";
    compat::write_file(conf + "/transport_many", table);
}

// Five connections at once to the slow destination across the cluster, 50
// deliveries a second to the fast one; urgent mail by header; one rule of
// the admin's own that takes a text away from the defaults.
void write_soak_tables(const std::string& conf, const SoakPorts& p) {
    compat::write_file(conf + "/priority_headers", "/^X-Priority: *1\\b/ urgent\n");
    compat::write_file(conf + "/reply_rules", "/Temporary local problem/ other\n");
    compat::write_file(conf + "/cqmgr_concurrency", soak_queue(p, SoakDest::Slow) + " 5\n");
    compat::write_file(conf + "/cqmgr_rates", soak_queue(p, SoakDest::Fast) + " 50/s\n");
}

// Two draws in 13 from the randmap name a restriction class that answers
// 4xx, so that about one RCPT in seven fails (measured: a DUNNO ends the
// search, one draw per recipient), with texts the adaptive limits classify as greylisting
// and (by the admin's rule) other. (A randmap result cannot be the reply
// itself: smtpd takes a result with spaces for a lookup table.) No rate
// limit text here: a random strike would teach a delay unrelated to the
// rate, and the destination's mail would pile up in the active queue.
// anvil counts rates over 10 s (see the limited listener).
MainCf soak_receiver_main_cf() {
    std::string draws = "randmap:{soak_greylist, soak_local";
    for (int i = 0; i < 11; ++i)
        draws += ", DUNNO";
    return {
        {"myhostname", "rx.example"},
        {"in_flow_delay", "0"},
        {"smtpd_client_event_limit_exceptions", ""},
        {"anvil_rate_time_unit", "10s"},
        {"smtpd_restriction_classes", "soak_greylist, soak_local"},
        {"soak_greylist",
         "check_recipient_access static:{450 4.2.0 Greylisted: please try again later}"},
        {"soak_local", "check_recipient_access static:{451 4.3.0 Temporary local problem}"},
        {"soak_random_4xx", "check_recipient_access " + draws + "}"},
    };
}

// Per side: the 4xx-at-random listener, and the limited one: three
// connections per client (a 421 above) and 20 messages per 10 s (a 450
// "too much mail" above), 1 s per DATA, so that the bursts of
// soak_message() strike both limits while the average (under one message
// a second) stays well below them, as a real limit is set. Both discard
// what they accept.
std::vector<std::string> soak_receiver_master_cf(const std::vector<SoakPorts>& sides) {
    std::vector<std::string> out;
    const std::string discard =
        " -o smtpd_end_of_data_restrictions=check_client_access,static:DISCARD";
    for (const auto& p : sides) {
        out.push_back("127.0.0.1:" + std::to_string(p.rx.at(SoakDest::Random4xx)) +
                      " inet n - n - 100 smtpd -o smtpd_recipient_restrictions=$soak_random_4xx" +
                      discard);
        out.push_back("127.0.0.1:" + std::to_string(p.rx.at(SoakDest::Limited)) +
                      " inet n - n - 100 smtpd -o smtpd_client_connection_count_limit=3"
                      " -o smtpd_client_message_rate_limit=20"
                      " -o smtpd_data_restrictions=sleep,1" +
                      discard);
    }
    return out;
}

} // namespace bench
