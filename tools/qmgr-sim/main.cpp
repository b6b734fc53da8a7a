// qmgr-sim: runs a delivery scenario (TOML) through cqmgr's real scheduler
// core on a simulated clock, and prints what happened: per destination the
// recipients delivered and deferred and the concurrency it ran at, per
// message when it was done, and optionally a timeline.  For admins tuning
// concurrency, feedback, preemption, priority lane and scheduler policy
// parameters before touching a live system.
//
//   qmgr-sim [--timeline] SCENARIO.toml
#include "cqmgr/conf/feedback.hpp"
#include "cqmgr/conf/scheduler_policy.hpp"
#include "cqmgr/core/simulation.hpp"
#include "scheduler_config.hpp"

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <toml++/toml.h>

using namespace cqmgr::core;

namespace {

[[noreturn]] void die(const std::string& why) {
    std::cerr << "qmgr-sim: " << why << "\n";
    std::exit(2);
}

// Reads an integer setting if present.
void get_int(const toml::table& t, const char* key, int& out) {
    if (auto v = t[key].value<int64_t>())
        out = static_cast<int>(*v);
    else if (t.contains(key))
        die(std::string("setting ") + key + ": expected an integer");
}

// Reads the transport settings, with Postfix's parameter names minus the
// transport prefix.
TransportConfig read_transport(const toml::table& t, TransportConfig c) {
    get_int(t, "destination_concurrency_limit", c.dest_concurrency_limit);
    get_int(t, "initial_destination_concurrency", c.init_dest_concurrency);
    get_int(t, "destination_recipient_limit", c.dest_recipient_limit);
    get_int(t, "recipient_limit", c.recipient_limit);
    get_int(t, "extra_recipient_limit", c.extra_recipient_limit);
    get_int(t, "recipient_refill_limit", c.refill_limit);
    get_int(t, "recipient_refill_delay", c.refill_delay);
    get_int(t, "delivery_slot_cost", c.slot_cost);
    get_int(t, "delivery_slot_loan", c.slot_loan);
    get_int(t, "delivery_slot_discount", c.slot_discount);
    get_int(t, "minimum_delivery_slots", c.min_slots);
    get_int(t, "destination_concurrency_failed_cohort_limit", c.fail_cohort_limit);
    get_int(t, "destination_rate_delay", c.dest_rate_delay);
    get_int(t, "transport_rate_delay", c.transport_rate_delay);
    // Priority lanes: the process limit (master.cf maxproc) and the shares.
    get_int(t, "process_limit", c.process_limit);
    get_int(t, "cqmgr_urgent_agent_share", c.urgent_share);
    get_int(t, "cqmgr_bulk_agent_share", c.bulk_share);
    // The job selection policy: "rak" (stock's preemption) or "finch".
    if (auto v = t["cqmgr_scheduler_policy"].value<std::string>()) {
        if (!cqmgr::conf::scheduler_policy_known(*v))
            die("cqmgr_scheduler_policy: \"" + *v + "\" (expected rak or finch)");
        c.policy = cqmgr::qmgr::core_policy(*v);
    } else if (t.contains("cqmgr_scheduler_policy")) {
        die("cqmgr_scheduler_policy: expected a string (\"rak\" or \"finch\")");
    }
    for (auto [key, field] :
         {std::pair{"destination_concurrency_positive_feedback", &c.pos_feedback},
          std::pair{"destination_concurrency_negative_feedback", &c.neg_feedback}}) {
        if (auto v = t[key].value<std::string>()) {
            auto fb = cqmgr::conf::parse_feedback(*v, true);
            if (!fb)
                die(std::string(key) + ": bad feedback \"" + *v +
                    "\" (expected N, N/M, N/concurrency or N/sqrt_concurrency)");
            *field = cqmgr::qmgr::core_feedback(*fb);
        }
    }
    if (auto v = t["readme_arithmetic"].value<bool>()) c.overshoot_guard = !*v;
    return c;
}

SimConfig load(const std::string& path) {
    toml::table doc;
    try {
        doc = toml::parse_file(path);
    } catch (const toml::parse_error& e) {
        std::ostringstream os;
        os << path << ":" << e.source().begin.line << ": " << e.description();
        die(os.str());
    }
    SimConfig c;
    if (auto s = doc["scheduler"].as_table()) {
        get_int(*s, "qmgr_message_recipient_limit", c.scheduler.message_recipient_limit);
        get_int(*s, "qmgr_message_recipient_minimum", c.scheduler.message_recipient_minimum);
        get_int(*s, "minimal_backoff_time", c.scheduler.minimal_backoff_time);
        get_int(*s, "transport_retry_time", c.scheduler.transport_retry_time);
    }
    if (auto t = doc["transport"].as_table()) {
        if (auto d = (*t)["default"].as_table())
            c.default_transport = read_transport(*d, c.default_transport);
        for (auto& [name, v] : *t) {
            if (name == "default") continue;
            auto tt = v.as_table();
            if (!tt) die("transport." + std::string(name.str()) + ": expected a table");
            c.transports[std::string(name.str())] = read_transport(*tt, c.default_transport);
        }
    }
    if (auto ds = doc["destination"].as_array())
        for (auto& dv : *ds) {
            auto d = dv.as_table();
            if (!d) die("destination: expected tables ([[destination]])");
            SimDestination sd;
            sd.name = (*d)["name"].value_or(std::string());
            if (sd.name.empty()) die("destination: name is required");
            sd.transport = (*d)["transport"].value_or(std::string("smtp"));
            sd.server_limit = static_cast<int>((*d)["server_limit"].value_or(int64_t{0}));
            sd.latency_per_rcpt = (*d)["latency"].value_or(1.0);
            sd.session_setup = (*d)["session_setup"].value_or(0.0);
            sd.down = (*d)["down"].value_or(false);
            sd.down_until = (*d)["down_until"].value_or(0.0);
            if (sd.down_until > 0) sd.down = true;
            sd.fail_ratio = (*d)["fail_ratio"].value_or(0.0);
            c.destinations.push_back(sd);
        }
    if (auto ms = doc["message"].as_array())
        for (auto& mv : *ms) {
            auto m = mv.as_table();
            if (!m) die("message: expected tables ([[message]])");
            int repeat = static_cast<int>((*m)["repeat"].value_or(int64_t{1}));
            double every = (*m)["every"].value_or(0.0);
            for (int i = 0; i < repeat; ++i) {
                SimMessage sm;
                sm.id = (*m)["id"].value_or(std::string("M"));
                if (repeat > 1) sm.id += "#" + std::to_string(i + 1);
                sm.arrival = (*m)["arrival"].value_or(0.0) + i * every;
                std::string lane = (*m)["lane"].value_or(std::string("normal"));
                if (lane == "urgent")
                    sm.lane = cqmgr::core::Lane::urgent;
                else if (lane == "bulk")
                    sm.lane = cqmgr::core::Lane::bulk;
                else if (lane != "normal")
                    die("message " + sm.id + ": lane must be urgent, normal or bulk");
                auto r = (*m)["recipients"].as_table();
                if (!r)
                    die("message " + sm.id +
                        ": recipients = { destination = count, ... } is required");
                for (auto& [dest, n] : *r) {
                    auto cnt = n.value<int64_t>();
                    if (!cnt)
                        die("message " + sm.id + ": recipient count for " +
                            std::string(dest.str()) + " must be an integer");
                    sm.recipients.emplace_back(std::string(dest.str()), static_cast<int>(*cnt));
                }
                c.messages.push_back(sm);
            }
        }
    c.end_time = doc["end_time"].value_or(1e9);
    c.sample_every = doc["sample_every"].value_or(1.0);
    // Seconds to read and resolve a batch of recipients (0: at once).
    c.refill_latency = doc["refill_latency"].value_or(0.0);
    for (const auto& m : c.messages)
        for (const auto& [d, n] : m.recipients) {
            bool known = false;
            for (const auto& sd : c.destinations)
                known = known || sd.name == d;
            if (!known) die("message " + m.id + ": unknown destination " + d);
        }
    return c;
}

} // namespace

int main(int argc, char** argv) {
    bool timeline = false;
    std::string path;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--timeline")
            timeline = true;
        else if (a.size() && a[0] == '-')
            die("unknown option " + a + " (usage: qmgr-sim [--timeline] SCENARIO.toml)");
        else
            path = a;
    }
    if (path.empty()) die("usage: qmgr-sim [--timeline] SCENARIO.toml");
    SimConfig cfg = load(path);
    SimResult r = simulate(cfg);

    std::printf("simulated %.1f s: %d recipients delivered, %d deferred (%.1f%%)\n", r.end_time,
                r.delivered, r.deferred,
                r.delivered + r.deferred ? 100.0 * r.deferred / (r.delivered + r.deferred) : 0.0);
    std::printf("most recipients in core at once: %d\n", r.max_in_core_recipients);
    if (cfg.refill_latency > 0)
        std::printf("entries sent before their refill landed: %ld; agents given no request: %d\n",
                    r.early_entries, r.idle_connections);
    std::printf("\n");
    std::printf("%-24s %10s %10s %10s %8s %6s %s\n", "destination", "delivered", "deferred",
                "conc.avg", "stddev", "max", "");
    for (const auto& [name, st] : r.destinations)
        std::printf("%-24s %10d %10d %10.2f %8.2f %6d %s\n", name.c_str(), st.delivered,
                    st.deferred, st.concurrency_mean, st.concurrency_stddev, st.max_concurrency,
                    st.declared_dead ? "dead" : "");
    std::printf("\n%-24s %10s\n", "message", "done at");
    for (const auto& [id, t] : r.message_done)
        std::printf("%-24s %10.1f\n", id.c_str(), t);
    if (timeline) {
        std::printf("\ntime     concurrency per destination\n");
        size_t n = 0;
        for (const auto& [name, st] : r.destinations)
            n = std::max(n, st.timeline.size());
        for (size_t i = 0; i < n; ++i) {
            bool first = true;
            for (const auto& [name, st] : r.destinations) {
                if (i >= st.timeline.size()) continue;
                if (first) std::printf("%7.1f ", st.timeline[i].first);
                first = false;
                std::printf(" %s=%d", name.c_str(), st.timeline[i].second);
            }
            std::printf("\n");
        }
    }
    return 0;
}
