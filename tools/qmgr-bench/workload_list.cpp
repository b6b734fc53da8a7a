#include "error.hpp"
#include "workload.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

using Factory = std::unique_ptr<Workload> (*)(const Session&);

struct Known {
    std::string name;
    Factory make;
    bool by_default; // run when no --workload is given
};

// Names and factories in the default order; the later issues' workloads
// measure opt-in features and run only when named.
const std::vector<Known>& registry() {
    static const std::vector<Known> r = {
        {"flush", make_flush, true},
        {"fanout", make_fanout, true},
        {"deferred-restart", make_deferred_restart, true},
        {"intake", make_intake, true},
        {"slow-receiver", make_slow_receiver, true},
        {"concurrency-421", make_concurrency_421, false},
        {"outage-recovery", make_outage_recovery, false},
        {"urgent-amid-bulk", make_urgent_amid_bulk, false},
        {"tarpit-alone", make_tarpit_alone, false},
        {"tarpit", make_tarpit, false},
        {"dead-backlog", make_dead_backlog, false},
        {"intrinsic", make_intrinsic, false},
        {"intrinsic-fanout", make_intrinsic_fanout, false},
        {"memory", make_memory, false},
        {"restart-active", make_restart_active, false},
        {"deferred-scale", make_deferred_scale, false},
        {"hostile-reply", make_hostile_reply, false},
        {"hostile-reply-off", make_hostile_reply_off, false},
        {"provider", make_provider, false},
        {"reply-rule", make_reply_rule, false},
        {"learned-rate", make_learned_rate, false},
        {"tenant", make_tenant, false},
    };
    return r;
}

} // namespace

// The registry's names, all or those run by default.
std::vector<std::string> workload_names(bool all) {
    std::vector<std::string> out;
    for (const auto& k : registry())
        if (all || k.by_default) out.push_back(k.name);
    return out;
}

// Looks the name up in the registry.
std::unique_ptr<Workload> make_workload(const std::string& name, const Session& session) {
    for (const auto& k : registry())
        if (k.name == name) return k.make(session);
    std::string known;
    for (const auto& n : workload_names(true))
        known += (known.empty() ? "" : ", ") + n;
    throw compat::Error("expected a workload name (" + known + "), found '" + name + "'");
}

} // namespace bench
