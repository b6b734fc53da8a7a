#include "control_commands.hpp"

#include "control_time.hpp"
#include "log.hpp"

#include <algorithm>
#include <optional>

namespace cqmgr::qmgr {

namespace {

using Json = control::Json;
using Verb = control::Verb;

Json until_json(int64_t until) {
    return until == 0 ? Json(nullptr) : Json(until);
}

// "suspension" or "throttle", as the log lines name a kept setting.
std::string setting_name(core::AdminKind kind) {
    return kind == core::AdminKind::hold ? "suspension" : "throttle";
}

// The "deferred" text of a flush's reply: what became of the deferred
// mail for `site`.  Only the fast flush service can find a site's deferred
// mail; without it, the mail waits in deferred/ for its own retry time.
std::string deferred_text(ControlCommands::FlushDeferred d, const std::string& site) {
    using D = ControlCommands::FlushDeferred;
    switch (d) {
    case D::not_eligible:
        break;
    case D::asked:
        return "asked the flush service to deliver the deferred mail for " + site +
               ", as postqueue -s does";
    case D::service_asked:
        return "asked the flush service to deliver the deferred mail for " + site +
               ", as postqueue -s does, if fast_flush_domains (a lookup table) lists it";
    case D::busy:
        return "not asked: too many flushes are waiting for the flush service; try again later";
    }
    return "not eligible for fast flush (fast_flush_domains); deferred mail waits for its "
           "retry time, see postqueue -f";
}

} // namespace

ControlCommands::ControlCommands(core::Scheduler& sched, AdminState& state, const WallClock& clock,
                                 FlushSite flush_site, LogLine log_line)
    : sched_(sched), state_(state), clock_(clock), flush_site_(std::move(flush_site)),
      log_line_(std::move(log_line)) {}

bool ControlCommands::apply(const AdminRecord& setting) {
    if (setting.kind == core::AdminKind::hold)
        return sched_.set_limit(setting.target, core::LimitChange::hold(setting.hold));
    return sched_.set_limit(setting.target, core::LimitChange::cap(setting.cap));
}

std::vector<AdminRecord> ControlCommands::settings() const {
    return admin_records(sched_.limits().holds(), sched_.limits().caps());
}

Json ControlCommands::change(const core::AdminTarget& target) const {
    Json j{{"target", target.text()}};
    if (target.any_transport()) {
        Json queues = Json::array();
        for (const core::Queue* q : sched_.admin_queues(target))
            queues.push_back(q->transport->name + ":" + q->name);
        j["queues"] = std::move(queues);
    }
    return j;
}

std::string ControlCommands::until_text(int64_t until, const std::string& span) const {
    if (until == 0) return {};
    return " until " + iso_utc(until) + " (" + span + ")";
}

bool ControlCommands::fits(const AdminRecord& setting) const {
    std::vector<AdminRecord> records = settings();
    auto same = std::find_if(records.begin(), records.end(), [&](const AdminRecord& r) {
        return r.kind == setting.kind && r.target == setting.target;
    });
    if (same != records.end())
        *same = setting;
    else
        records.push_back(setting);
    return AdminState::fits(records);
}

Json ControlCommands::execute(const control::Request& r, int64_t uid) {
    if (r.is_query() || !r.target)
        log::panic("control: not a command: " + control::format_request(r));
    int64_t now = clock_.now();
    sched_.set_time(now);
    const core::AdminTarget target{r.target->transport, r.target->destination};
    const int64_t until = r.duration ? now + *r.duration : 0;
    const std::string span = r.duration ? std::to_string(*r.duration) + "s" : std::string();
    // What is kept has one limit, on saving and on loading: a setting that
    // would take the list past it is refused before it takes effect.
    std::optional<AdminRecord> setting;
    if (r.verb == Verb::suspend)
        setting = AdminRecord{core::AdminKind::hold, target, {until, r.reason, uid, now}, {}};
    else if (r.verb == Verb::throttle)
        setting = AdminRecord{core::AdminKind::cap, target, {}, {r.concurrency, until, uid, now}};
    if (setting && !fits(*setting))
        return control::error_reply("the suspensions and throttles kept would take more than " +
                                    std::to_string(state::max_control_bytes) +
                                    " bytes; resume or unthrottle some first");
    const std::string by = " by uid " + std::to_string(uid);
    Json changed = Json::array();
    bool settings_changed = false;
    FlushDeferred deferred = FlushDeferred::not_eligible;
    std::string line = "control: " + std::string(control::verb_name(r.verb)) + " " + target.text();
    // Each setting changed gives one object: its target and `fields`.
    auto note = [&](bool did, Json fields) {
        if (!did) return;
        Json j = change(target);
        j.update(fields);
        changed.push_back(std::move(j));
        settings_changed = true;
    };
    switch (r.verb) {
    case Verb::suspend:
        note(apply(*setting),
             {{"suspended", true}, {"until", until_json(until)}, {"reason", r.reason}});
        line += until_text(until, span) + by;
        if (!r.reason.empty()) line += ": " + r.reason;
        break;
    case Verb::resume:
        // With a sender group, only that group's reply rules' actions end.
        if (r.sender.empty()) {
            note(sched_.set_limit(target, core::LimitChange::hold(std::nullopt)),
                 {{"suspended", false}});
            // The reply rules' actions it covers end too (they keep themselves).
            if (actions_)
                for (const core::AdminTarget& ended : actions_->resume(target))
                    changed.push_back(Json{{"target", ended.text()}, {"rule", nullptr}});
        } else {
            line += " sender " + r.sender;
        }
        if (actions_)
            for (const auto& [t, group] : actions_->resume_senders(target, r.sender))
                changed.push_back(Json{{"target", t.text()}, {"sender", group}, {"rule", nullptr}});
        line += by;
        break;
    case Verb::throttle:
        note(apply(*setting),
             {{"throttle", {{"concurrency", r.concurrency}, {"until", until_json(until)}}}});
        line += " concurrency " + std::to_string(r.concurrency) + until_text(until, span) + by;
        break;
    case Verb::unthrottle:
        note(sched_.set_limit(target, core::LimitChange::cap(std::nullopt)),
             {{"throttle", nullptr}});
        line += by;
        break;
    case Verb::flush:
        for (const core::AdminTarget& revived : sched_.admin_flush(target))
            changed.push_back(Json{{"target", revived.text()}, {"revived", true}});
        // Its deferred mail, as postqueue -s asks for it.
        deferred = flush_site_ ? flush_site_(target.queue) : FlushDeferred::not_eligible;
        line += by;
        break;
    default:
        break; // a query: refused above
    }
    log_line_(line);
    Json reply = control::object_with_room(4);
    reply["ok"] = true;
    reply["changed"] = std::move(changed);
    if (r.verb == Verb::flush) reply["deferred"] = deferred_text(deferred, target.queue);
    if (settings_changed && !save())
        reply["warning"] = "the change is not kept across restarts (see the log)";
    return reply;
}

void ControlCommands::restore() {
    const int64_t now = clock_.now();
    sched_.set_time(now);
    bool dropped = false;
    for (const AdminRecord& r : state_.load()) {
        std::string what = setting_name(r.kind) + " of " + r.target.text();
        if (r.until() != 0 && r.until() <= now) {
            // It ended while no cqmgr ran: said once, then forgotten.
            log_line_("control: " + what + " expired at " + iso_utc(r.until()) +
                      " while cqmgr was not running");
            dropped = true;
            continue;
        }
        apply(r);
        std::string line = "control: restored " + what;
        std::string left = std::to_string(r.until() - now) + "s left";
        if (r.kind == core::AdminKind::hold) {
            line += until_text(r.hold.until, left) + " by uid " + std::to_string(r.hold.uid);
            if (!r.hold.reason.empty()) line += ": " + r.hold.reason;
        } else {
            line += " concurrency " + std::to_string(r.cap.concurrency) +
                    until_text(r.cap.until, left) + " by uid " + std::to_string(r.cap.uid);
        }
        log_line_(line);
    }
    if (dropped) save();
}

void ControlCommands::expired(core::AdminKind kind, const core::AdminTarget& target) {
    log_line_("control: " + setting_name(kind) + " of " + target.text() + " expired");
    save();
}

bool ControlCommands::save() {
    return state_.save(settings());
}

} // namespace cqmgr::qmgr
