#include "cqmgr/conf/transport_params.hpp"

#include "cqmgr/conf/param_table.hpp"

namespace cqmgr::conf {

namespace {

// Reads a feedback value: `name`, else the global's text.  A malformed
// value warns and gives the neutral feedback 1.  `param` gets the name of
// the parameter the value is attributed to.
Feedback feedback(const MainCf& cf, const std::string& name, const TransportSuffix& s,
                  std::string_view global_name, const std::string& global_value,
                  const MainCf::Warn& warn, std::string& param) {
    std::string value = cf.is_known(name) ? cf.str(name, global_value, s.min, s.max) : global_value;
    param = value != global_value ? name : std::string(global_name);
    if (auto fb = parse_feedback(value)) return *fb;
    if (warn) warn(param + ": ignoring malformed or unreasonable feedback: " + value);
    return Feedback{};
}

// Reads <transport><suffix> with its type and bounds into its member of
// `p`, or copies the typed global when it is unset (Postfix checks the
// global too; it already passed).
void read_suffix(const MainCf& cf, const QmgrParams& g, const std::string& t,
                 const TransportSuffix& s, const MainCf::Warn& warn, TransportParams& p) {
    std::string name = t + std::string(s.suffix);
    // `local` has registered defaults of its own for two of them (2 and 1).
    const ParamSpec& global = t == "local" && s.local ? *s.local : *s.global;
    bool own = cf.is_known(name);
    switch (s.type) {
    case ParamType::Int:
        p.*s.field.number = own ? cf.integer(name, 0, s.min, s.max) : g.*global.field.number;
        return;
    case ParamType::Time:
        p.*s.field.number = own ? cf.time(name, "0s", 's', s.min, s.max) : g.*global.field.number;
        return;
    case ParamType::Percent:
        p.*s.field.number = own ? cf.percent(name, 0) : g.*global.field.number;
        return;
    case ParamType::String:
        if (s.field.feedback) {
            p.*s.field.feedback =
                feedback(cf, name, s, global.name, g.*global.field.text, warn, p.*s.field.text);
            return;
        }
        p.*s.field.text = own ? cf.str(name, "", s.min, s.max) : g.*global.field.text;
        if (own && global.check) global.check(cf, name, p.*s.field.text);
        return;
    case ParamType::Long:
    case ParamType::Bool:
        return; // not per transport (the suffix tables refuse it when they compile)
    }
}

} // namespace

TransportParams read_transport_params(const MainCf& cf, const QmgrParams& g, const std::string& t,
                                      const MainCf::Warn& warn) {
    TransportParams p;
    p.name = t;
    for (const TransportSuffix& s : transport_suffixes())
        read_suffix(cf, g, t, s, warn, p);
    if (p.destination_rate_delay > 0) p.destination_concurrency_limit = 1;
    if (p.destination_concurrency_limit != 0 &&
        p.destination_concurrency_limit < p.initial_destination_concurrency)
        p.initial_destination_concurrency = p.destination_concurrency_limit;
    for (const TransportSuffix& s : cqmgr_transport_suffixes())
        read_suffix(cf, g, t, s, warn, p);
    return p;
}

TransportTable::TransportTable(const MainCf& cf, const QmgrParams& globals, MainCf::Warn warn)
    : cf_(cf), globals_(globals), warn_(std::move(warn)) {}

const TransportParams& TransportTable::get(const std::string& transport) {
    if (auto it = cache_.find(transport); it != cache_.end()) return it->second;
    return cache_.emplace(transport, read_transport_params(cf_, globals_, transport, warn_))
        .first->second;
}

} // namespace cqmgr::conf
