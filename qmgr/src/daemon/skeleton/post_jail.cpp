#include "post_jail.hpp"

#include "health.hpp"
#include "metrics.hpp"
#include "shutdown.hpp"

namespace cqmgr::qmgr {

void post_jail(Daemon& d) {
    d.master.emplace(
        d.io, d.config.cl.transport,
        [&d] { restart_if_tables_changed(d.opened.tables, d.qm.get(), d.opened.metrics.get()); },
        [&d](std::string_view bytes) { d.qm->on_trigger(bytes); },
        [&d] { stop_daemon(d.io, d.qm.get(), d.opened.metrics.get()); });
    Preopened& o = d.opened;
    d.qm = std::make_unique<QueueManager>(d.io, d.config.cf, d.config.params, d.clock,
                                          o.flush_domains, *d.master, o.state_store,
                                          std::move(o.reply_rules), std::move(o.limit_tables));
    d.qm->use_priorities(std::move(o.priorities));
    d.qm->features().use_backoff_profiles(std::move(o.backoff_profiles));
    if (o.reply_actions) d.qm->use_reply_actions(std::move(*o.reply_actions));
    d.qm->use_senders(std::move(o.senders));
    // Destinations of transports that follow MX records join the provider
    // that all their MX hosts belong to, when a channel could be opened.
    if (o.mx_channel) {
        d.qm->features().use_mx(std::move(*o.mx_channel), std::move(o.mx_agents));
        o.mx_channel.reset();
    }
}

MetricsSnapshot daemon_metrics(const Daemon& d) {
    const QueueManager& qm = *d.qm;
    MetricsSnapshot s = take_metrics_snapshot(
        qm.scheduler(), qm.counters(), qm.messages_in_active(), qm.features().providers(),
        static_cast<size_t>(d.config.params.cqmgr_metrics_provider_limit));
    s.mx = qm.features().mx_stats();
    s.features = feature_snapshot(qm.scheduler(), d.config.params);
    qm.features().shared_stats(s.features);
    qm.features().sender_rule_stats(s.features);
    if (!d.config.params.cqmgr_state_database.empty()) {
        s.features.state_up = qm.destination_state().usable();
        s.features.state_commits = qm.destination_state().commits();
    }
    s.queues = qm.queue_gauges();
    return s;
}

unsigned daemon_readiness(const Daemon& d) {
    const QueueManager& qm = *d.qm;
    unsigned bits = 0;
    if (qm.feeder().incoming_scanned()) bits |= ready::incoming_scanned;
    if (qm.feeder().deferred_scanned()) bits |= ready::deferred_scanned;
    if (qm.rewrite_answered()) bits |= ready::rewrite_answered;
    return bits;
}

} // namespace cqmgr::qmgr
