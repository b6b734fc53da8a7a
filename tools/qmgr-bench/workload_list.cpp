#include "error.hpp"
#include "workload.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

using Factory = std::unique_ptr<Workload> (*)(const Session&);

// Names and factories in the default order.
const std::vector<std::pair<std::string, Factory>>& registry() {
    static const std::vector<std::pair<std::string, Factory>> r = {
        {"flush", make_flush},
        {"fanout", make_fanout},
        {"deferred-restart", make_deferred_restart},
        {"intake", make_intake},
        {"slow-receiver", make_slow_receiver},
    };
    return r;
}

} // namespace

// The registry's names.
std::vector<std::string> workload_names() {
    std::vector<std::string> out;
    for (const auto& [name, f] : registry())
        out.push_back(name);
    return out;
}

// Looks the name up in the registry.
std::unique_ptr<Workload> make_workload(const std::string& name, const Session& session) {
    for (const auto& [n, f] : registry())
        if (n == name) return f(session);
    std::string known;
    for (const auto& n : workload_names())
        known += (known.empty() ? "" : ", ") + n;
    throw compat::Error("expected a workload name (" + known + "), found '" + name + "'");
}

} // namespace bench
