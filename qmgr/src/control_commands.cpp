#include "control_commands.hpp"

#include <algorithm>
#include <ctime>
#include <optional>

namespace cqmgr::qmgr {

namespace {

using json = nlohmann::json;
using Kind = ControlCommand::Kind;

const char* kind_name(Kind k) {
    switch (k) {
    case Kind::suspend:
        return "suspend";
    case Kind::resume:
        return "resume";
    case Kind::flush:
        return "flush";
    case Kind::throttle:
        return "throttle";
    case Kind::unthrottle:
        return "unthrottle";
    }
    return "?";
}

json until_json(int64_t until) {
    return until == 0 ? json(nullptr) : json(until);
}

// Unix seconds as ISO 8601 in UTC, e.g. 2026-11-24T06:00:00Z.
std::string iso_utc(int64_t t) {
    time_t tt = static_cast<time_t>(t);
    struct tm tm;
    ::gmtime_r(&tt, &tm);
    char buf[32];
    ::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
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

json error_reply(const std::string& text) {
    return json{{"ok", false}, {"error", text}};
}

} // namespace

ControlCommands::ControlCommands(core::Scheduler& sched, AdminState& state, const WallClock& clock,
                                 FlushSite flush_site, LogLine log_line)
    : sched_(sched), state_(state), clock_(clock), flush_site_(std::move(flush_site)),
      log_line_(std::move(log_line)) {}

std::string ControlCommands::check(const ControlCommand& cmd) {
    std::string name = kind_name(cmd.kind);
    bool by_transport = cmd.kind == Kind::suspend || cmd.kind == Kind::resume;
    if (by_transport && cmd.transport.empty())
        return name + " needs TRANSPORT or TRANSPORT:DESTINATION";
    if (!by_transport && cmd.destination.empty()) return name + " needs a destination";
    if (cmd.kind == Kind::throttle && cmd.concurrency < 1) return "concurrency must be at least 1";
    if (cmd.duration < 0 || cmd.duration > max_control_duration)
        return "duration must be more than 0 and at most 365 days";
    return {};
}

json ControlCommands::change(const core::AdminTarget& target) const {
    json j{{"target", target.text()}};
    if (target.any_transport()) {
        json queues = json::array();
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
    std::vector<AdminRecord> records =
        admin_records(sched_.limits().holds(), sched_.limits().caps());
    auto same = std::find_if(records.begin(), records.end(), [&](const AdminRecord& r) {
        return r.kind == setting.kind && r.target == setting.target;
    });
    if (same != records.end())
        *same = setting;
    else
        records.push_back(setting);
    return AdminState::fits(records);
}

json ControlCommands::execute(const ControlCommand& cmd) {
    if (std::string why = check(cmd); !why.empty()) return error_reply(why);
    int64_t now = clock_.now();
    sched_.set_time(now);
    const core::AdminTarget target{cmd.transport, cmd.destination};
    const int64_t until = cmd.duration > 0 ? now + cmd.duration : 0;
    // What is kept has one limit, on saving and on loading: a setting that
    // would take the list past it is refused before it takes effect.
    std::optional<AdminRecord> setting;
    if (cmd.kind == Kind::suspend)
        setting = AdminRecord{core::AdminKind::hold, target, {until, cmd.reason, cmd.uid}, {}};
    else if (cmd.kind == Kind::throttle)
        setting = AdminRecord{core::AdminKind::cap, target, {}, {cmd.concurrency, until, cmd.uid}};
    if (setting && !fits(*setting))
        return error_reply("the suspensions and throttles kept would take more than " +
                           std::to_string(state::max_control_bytes) +
                           " bytes; resume or unthrottle some first");
    const std::string by = " by uid " + std::to_string(cmd.uid);
    json changed = json::array();
    bool settings_changed = false;
    FlushDeferred deferred = FlushDeferred::not_eligible;
    std::string line = std::string("control: ") + kind_name(cmd.kind) + " " + target.text();
    // Each setting changed gives one object: its target and `fields`.
    auto note = [&](bool did, json fields) {
        if (!did) return;
        json j = change(target);
        j.update(fields);
        changed.push_back(std::move(j));
        settings_changed = true;
    };
    switch (cmd.kind) {
    case Kind::suspend:
        note(sched_.set_limit(target,
                              core::LimitChange::hold(core::AdminHold{until, cmd.reason, cmd.uid})),
             {{"suspended", true}, {"until", until_json(until)}, {"reason", cmd.reason}});
        line += until_text(until, std::to_string(cmd.duration) + "s") + by;
        if (!cmd.reason.empty()) line += ": " + cmd.reason;
        break;
    case Kind::resume:
        note(sched_.set_limit(target, core::LimitChange::hold(std::nullopt)),
             {{"suspended", false}});
        line += by;
        break;
    case Kind::throttle:
        note(sched_.set_limit(
                 target, core::LimitChange::cap(core::AdminCap{cmd.concurrency, until, cmd.uid})),
             {{"throttle", {{"concurrency", cmd.concurrency}, {"until", until_json(until)}}}});
        line += " concurrency " + std::to_string(cmd.concurrency) +
                until_text(until, std::to_string(cmd.duration) + "s") + by;
        break;
    case Kind::unthrottle:
        note(sched_.set_limit(target, core::LimitChange::cap(std::nullopt)),
             {{"throttle", nullptr}});
        line += by;
        break;
    case Kind::flush:
        for (const core::AdminTarget& r : sched_.admin_flush(target))
            changed.push_back(json{{"target", r.text()}, {"revived", true}});
        // Its deferred mail, as postqueue -s asks for it.
        deferred = flush_site_ ? flush_site_(cmd.destination) : FlushDeferred::not_eligible;
        line += by;
        break;
    }
    log_line_(line);
    json reply{{"ok", true}, {"changed", std::move(changed)}};
    if (cmd.kind == Kind::flush) reply["deferred"] = deferred_text(deferred, cmd.destination);
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
        std::string line = "control: restored " + what;
        std::string left = std::to_string(r.until() - now) + "s left";
        if (r.kind == core::AdminKind::hold) {
            sched_.set_limit(r.target, core::LimitChange::hold(r.hold));
            line += until_text(r.hold.until, left) + " by uid " + std::to_string(r.hold.uid);
            if (!r.hold.reason.empty()) line += ": " + r.hold.reason;
        } else {
            sched_.set_limit(r.target, core::LimitChange::cap(r.cap));
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
    return state_.save(admin_records(sched_.limits().holds(), sched_.limits().caps()));
}

} // namespace cqmgr::qmgr
