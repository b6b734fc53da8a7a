#include "summary.hpp"

#include "natural_order.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace cqmgr::sim {

namespace {

// printf into a string.
template <typename... Args> std::string format(const char* fmt, Args... args) {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

} // namespace

void print_summary(const core::SimConfig& config, const core::SimResult& r, std::ostream& out) {
    int finished = r.delivered + r.deferred;
    out << format("simulated %.1f s: %d recipients delivered, %d deferred (%.1f%%)\n", r.end_time,
                  r.delivered, r.deferred, finished ? 100.0 * r.deferred / finished : 0.0);
    out << format("most recipients in core at once: %d\n", r.max_in_core_recipients);
    if (config.refill_latency > 0)
        out << format("entries sent before their refill landed: %ld; agents given no request: %d\n",
                      r.early_entries, r.idle_connections);

    out << format("\n%-24s %12s %14s\n", "transport", "agents max", "process limit");
    for (const auto& [t, busy] : r.max_busy_agents) {
        auto l = config.process_limits.find(t);
        std::string limit = l == config.process_limits.end() ? "-" : std::to_string(l->second);
        out << format("%-24s %12d %14s\n", t.c_str(), busy, limit.c_str());
    }

    out << format("\n%-24s %10s %10s %10s %8s %6s\n", "destination", "delivered", "deferred",
                  "conc.avg", "stddev", "max");
    for (const auto& [name, st] : r.destinations)
        out << format("%-24s %10d %10d %10.2f %8.2f %6d %s\n", name.c_str(), st.delivered,
                      st.deferred, st.concurrency_mean, st.concurrency_stddev, st.max_concurrency,
                      st.declared_dead ? "dead" : "");

    std::vector<const core::SimMessage*> messages;
    for (const auto& m : config.messages)
        messages.push_back(&m);
    std::stable_sort(messages.begin(), messages.end(),
                     [](auto a, auto b) { return natural_less(a->id, b->id); });
    out << format("\n%-24s %10s %10s %10s\n", "message", "arrival", "done at", "delay");
    for (const auto* m : messages) {
        auto done = r.message_done.find(m->id);
        if (done == r.message_done.end())
            out << format("%-24s %10.1f %10s %10s\n", m->id.c_str(), m->arrival, "-", "-");
        else
            out << format("%-24s %10.1f %10.1f %10.1f\n", m->id.c_str(), m->arrival, done->second,
                          done->second - m->arrival);
    }
}

void print_timeline(const core::SimResult& r, std::ostream& out) {
    out << "\ntime     sessions per destination\n";
    for (const auto& s : r.samples) {
        out << format("%7.1f ", s.time);
        for (const auto& [name, d] : s.destinations)
            out << " " << name << "=" << d.sessions;
        out << "\n";
    }
}

} // namespace cqmgr::sim
