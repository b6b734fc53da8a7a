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

// Sessions the shared receivers refused.
int refused(const core::SimResult& r) {
    int n = 0;
    for (const auto& [name, st] : r.providers)
        n += st.refused;
    return n;
}

} // namespace

void print_summary(const core::SimConfig& config, const core::SimResult& r, std::ostream& out) {
    int finished = r.delivered + r.deferred;
    out << format("simulated %.1f s: %d recipients delivered, %d deferred (%.1f%%)\n", r.end_time,
                  r.delivered, r.deferred, finished ? 100.0 * r.deferred / finished : 0.0);
    out << format("most recipients in core at once: %d\n", r.max_in_core_recipients);
    if (!config.providers.empty() || !r.events.empty())
        out << format("delivery attempts: %d, of which refused by a receiver: %d\n", r.attempts,
                      refused(r));
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

    if (!r.providers.empty()) {
        out << format("\n%-24s %10s %10s %10s %10s %8s %8s\n", "provider (receiver)", "delivered",
                      "deferred", "conns max", "sess. max", "limit", "refused");
        for (const auto& p : config.providers) {
            auto st = r.providers.count(p.name) ? r.providers.at(p.name) : core::SimProviderStats{};
            std::string limit = p.session_limit > 0 ? std::to_string(p.session_limit) : "-";
            out << format("%-24s %10d %10d %10d %10d %8s %8d\n", p.name.c_str(), st.delivered,
                          st.deferred, st.max_connections, st.max_sessions, limit.c_str(),
                          st.refused);
        }
    }
    if (!r.events.empty()) {
        // One line for the targets of one action (a provider's members).
        out << format("\n%10s %-9s %-32s %s\n", "time", "action", "target", "rule");
        for (size_t i = 0, n; i < r.events.size(); i += n) {
            const auto& e = r.events[i];
            for (n = 1; i + n < r.events.size(); ++n) {
                const auto& o = r.events[i + n];
                if (o.time != e.time || o.what != e.what || o.text != e.text) break;
            }
            std::string target = e.target + (n > 1 ? " +" + std::to_string(n - 1) : "");
            out << format("%10.1f %-9s %-32s ", e.time, e.what.c_str(), target.c_str()) << e.text
                << "\n";
        }
    }

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
