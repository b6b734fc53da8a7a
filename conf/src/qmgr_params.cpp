#include "cqmgr/conf/qmgr_params.hpp"

#include "cqmgr/conf/param_table.hpp"
#include "mail_params.hpp"
#include "table_reader.hpp"

namespace cqmgr::conf {

namespace {

// cqmgr's own parameters, in table order.  Whether master.cf's process
// limits will be needed (a destination share or a finch policy, globally or
// for any transport) is noted on the way; a transport's own policy is
// checked when the transport is first used (as stock checks its
// per-transport values).
void read_cqmgr(TableReader& r, const MainCf& cf, QmgrParams& q) {
    auto C = cqmgr_params();
    r.read(C, C.front().name, "cqmgr_destination_agent_share");
    q.destination_shares = r.i("cqmgr_destination_agent_share") > 0;
    for (const std::string& name : cf.explicit_names())
        if (name.ends_with("_cqmgr_destination_agent_share") && cf.percent(name, 0) > 0)
            q.destination_shares = true;
    r.read(C, "cqmgr_scheduler_policy", C.back().name);
    q.finch_policy_used = r.s("cqmgr_scheduler_policy") == "finch";
    for (const std::string& name : cf.explicit_names())
        if (name.ends_with("_cqmgr_scheduler_policy") && cf.str(name) == "finch")
            q.finch_policy_used = true;
}

// qmgr's start-up adjustments (qmgr_post_init), with its warnings.
void post_init(QmgrParams& q, const MainCf::Warn& warn) {
    auto say = [&](const std::string& text) {
        if (warn) warn(text);
    };
    if (q.qmgr_message_recipient_limit < q.qmgr_message_active_limit) {
        say("qmgr_message_recipient_limit is smaller than qmgr_message_active_limit - adjusting "
            "qmgr_message_recipient_limit");
        q.qmgr_message_recipient_limit = q.qmgr_message_active_limit;
    }
    if (q.bounce_queue_lifetime > q.maximal_queue_lifetime) {
        say("bounce_queue_lifetime is larger than maximal_queue_lifetime - adjusting "
            "bounce_queue_lifetime");
        q.bounce_queue_lifetime = q.maximal_queue_lifetime;
    }
    q.ipc_timeout = q.qmgr_ipc_timeout;
    q.max_idle = 0;
    q.max_use = 0;
}

} // namespace

QmgrParams QmgrParams::load(const MainCf& cf, const MainCf::Warn& warn) {
    return load(cf, warn, Options{});
}

QmgrParams QmgrParams::load(const MainCf& given, const MainCf::Warn& warn, Options options) {
    MainCf cf = given;
    register_defaults(cf, system_hostname(), /*only_missing=*/true);
    QmgrParams q;
    TableReader r(cf, q);
    read_mail_params(r, cf, q, options);
    r.read(qmgr_params());
    read_cqmgr(r, cf, q);
    for (auto table : {global_params(), qmgr_params(), cqmgr_params()})
        r.fill(table);
    post_init(q, warn);
    return q;
}

} // namespace cqmgr::conf
