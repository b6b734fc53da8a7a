#include "timeline_csv.hpp"

#include <iomanip>
#include <set>
#include <sstream>

namespace cqmgr::sim {

std::vector<Column> timeline_columns(const core::SimConfig& config, const core::SimResult& result) {
    using Sample = core::SimSample;
    std::vector<Column> cols = {
        {"time", [](const Sample& s) { return std::optional(s.time); }},
        {"delivered", [](const Sample& s) { return std::optional<double>(s.delivered); }},
        {"deferred", [](const Sample& s) { return std::optional<double>(s.deferred); }},
        {"messages_done", [](const Sample& s) { return std::optional<double>(s.messages_done); }},
    };
    std::set<std::string> transports;
    for (const auto& d : config.destinations)
        transports.insert(d.transport);
    for (const auto& s : result.samples)
        for (const auto& [t, _] : s.transports)
            transports.insert(t);
    for (const auto& t : transports) {
        auto state = [t](const Sample& s) {
            auto it = s.transports.find(t);
            return it == s.transports.end() ? Sample::TransportState{} : it->second;
        };
        cols.push_back({"agents:" + t,
                        [state](const Sample& s) { return std::optional<double>(state(s).busy); }});
        cols.push_back({"waiting:" + t, [state](const Sample& s) {
                            return std::optional<double>(state(s).waiting);
                        }});
    }
    // With a feature that stops queues (a reply rule's suspension), when it does.
    const bool has_rules = !result.events.empty();
    for (const auto& d : config.destinations) {
        auto state = [name = d.name](const Sample& s) {
            auto it = s.destinations.find(name);
            return it == s.destinations.end() ? Sample::DestinationState{} : it->second;
        };
        cols.push_back({"window:" + d.name, [state](const Sample& s) {
                            int w = state(s).window;
                            return w < 0 ? std::nullopt : std::optional<double>(w);
                        }});
        cols.push_back({"sessions:" + d.name, [state](const Sample& s) {
                            return std::optional<double>(state(s).sessions);
                        }});
        cols.push_back({"delivered:" + d.name, [state](const Sample& s) {
                            return std::optional<double>(state(s).delivered);
                        }});
        cols.push_back({"deferred:" + d.name, [state](const Sample& s) {
                            return std::optional<double>(state(s).deferred);
                        }});
        if (has_rules)
            cols.push_back({"held:" + d.name, [state](const Sample& s) {
                                return std::optional<double>(state(s).held ? 1 : 0);
                            }});
    }
    for (const auto& p : config.providers)
        cols.push_back({"sessions:provider:" + p.name, [name = p.name](const Sample& s) {
                            auto it = s.provider_sessions.find(name);
                            return std::optional<double>(
                                it == s.provider_sessions.end() ? 0 : it->second);
                        }});
    return cols;
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

void write_csv(const std::vector<Column>& columns, const core::SimResult& result,
               std::ostream& out) {
    for (size_t i = 0; i < columns.size(); ++i)
        out << (i ? "," : "") << csv_field(columns[i].name);
    out << "\n";
    for (const auto& s : result.samples) {
        for (size_t i = 0; i < columns.size(); ++i) {
            if (i) out << ',';
            if (auto v = columns[i].value(s)) {
                std::ostringstream num;
                num << std::setprecision(10) << *v;
                out << num.str();
            }
        }
        out << "\n";
    }
}

} // namespace cqmgr::sim
