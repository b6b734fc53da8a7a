#include "postfix_config.hpp"

#include "cqmgr/conf/config_error.hpp"
#include "cqmgr/conf/feedback.hpp"
#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/conf/master_cf.hpp"
#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/conf/transport_params.hpp"
#include "scheduler_config.hpp"
#include "sim_features.hpp"

#include <fstream>
#include <set>
#include <sstream>

namespace cqmgr::sim {

namespace {

// The text of `path`; throws ConfigProblem when it cannot be read.
std::string slurp(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw ConfigProblem(path + ": cannot read it");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// main.cf with Postfix's defaults, the workload's main_cf and -o over it.
void load_main_cf(conf::MainCf& cf, const PostfixSources& src, const Workload& w) {
    conf::register_defaults(cf);
    bool ok = true;
    if (!src.main_cf.empty())
        ok = cf.load_text(slurp(src.main_cf), src.main_cf);
    else if (!src.config_dir.empty())
        ok = cf.load_dir(src.config_dir);
    if (!ok || !cf.load_text(w.main_cf, w.origin)) throw ConfigProblem(cf.error());
    for (const auto& [name, value] : src.overrides)
        cf.set(name, value);
}

// master.cf's services: the file's, then the workload's master_cf lines
// (which replace the file's limit for the services they name).
struct Services {
    bool any = false; // a master.cf was given (else every transport has the default limit)
    std::set<std::string> transports;
    std::map<std::string, int64_t> limits;
};

Services load_master_cf(const PostfixSources& src, const Workload& w, int64_t default_limit,
                        const conf::MasterCf::Warn& warn) {
    Services out;
    conf::MasterContext context;
    context.default_process_limit = default_limit;
    auto add = [&](std::string_view text, const std::string& origin) {
        conf::MasterCf master(warn);
        if (!master.load_text(text, origin)) throw ConfigProblem(master.error());
        out.any = true;
        for (const auto& t : master.transport_names())
            out.transports.insert(t);
        for (const auto& [service, limit] : conf::process_limits(master, context))
            out.limits[service] = limit;
    };
    if (!src.master_cf.empty())
        add(slurp(src.master_cf), src.master_cf);
    else if (!src.config_dir.empty())
        add(slurp(src.config_dir + "/master.cf"), src.config_dir + "/master.cf");
    if (!w.master_cf.empty()) add(w.master_cf, "workload master_cf");
    return out;
}

// N/sqrt_concurrency, which Postfix 3.7 refuses (and replaces by 1) but
// its published measurements use: the simulator takes it as written.
void sqrt_feedback(const conf::MainCf& cf, const std::string& param, core::Feedback& out,
                   const std::function<void(const std::string&)>& warn) {
    if (param.empty()) return;
    auto fb = conf::parse_feedback(cf.str(param), true);
    if (!fb || !fb->sqrt) return;
    out = qmgr::core_feedback(*fb);
    warn(param + " = " + cf.str(param) + ": simulated as written (Postfix 3.7 would use 1)");
}

} // namespace

void apply_postfix_config(const PostfixSources& src, Workload& w,
                          const std::function<void(const std::string&)>& warn) {
    core::SimConfig& sim = w.sim;
    conf::MainCf cf(warn);
    try {
        load_main_cf(cf, src, w);
        conf::QmgrParams::Options options;
        options.check_accounts = false; // this machine's accounts are not the mail server's
        auto params = conf::QmgrParams::load(cf, warn, options);
        Services services = load_master_cf(src, w, params.default_process_limit, warn);
        // The workload's lanes play the part of a priority table: the
        // agent shares then apply as in the daemon.
        for (const auto& m : sim.messages)
            if (m.lane != core::Lane::normal) params.cqmgr_priority_maps = {"workload lanes"};
        sim.scheduler = qmgr::scheduler_config(params);
        w.hooks = make_features(params, w, warn);
        std::set<std::string> names = {sim.scheduler.retry_transport};
        for (const auto& d : sim.destinations) {
            names.insert(d.transport);
            // Without master.cf, each service runs as stock's "-" would.
            if (!services.any) services.limits[d.transport] = params.default_process_limit;
        }
        params.transport_process_limits = services.limits;
        for (const auto& name : names) {
            bool used = name != sim.scheduler.retry_transport;
            if (used && services.any && !services.transports.count(name))
                throw ConfigProblem("master.cf has no unix service " + name +
                                    " with a private socket (its mail would stay queued)");
            auto tp = conf::read_transport_params(cf, params, name, warn);
            core::TransportConfig tc = qmgr::transport_config(tp);
            qmgr::share_config(tc, tp, params);
            qmgr::policy_config(tc, tp, params);
            sqrt_feedback(cf, tp.positive_feedback_param, tc.pos_feedback, warn);
            sqrt_feedback(cf, tp.negative_feedback_param, tc.neg_feedback, warn);
            tc.overshoot_guard = !w.readme_arithmetic;
            sim.transports[name] = tc;
            if (!used) sim.default_transport = tc;
            if (auto l = services.limits.find(name); used && l != services.limits.end())
                sim.process_limits[name] = static_cast<int>(l->second);
        }
    } catch (const conf::ConfigError& e) {
        if (!e.warning().empty()) warn(e.warning());
        throw ConfigProblem(e.what());
    }
}

} // namespace cqmgr::sim
