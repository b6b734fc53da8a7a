#include "reply_actions.hpp"

#include "action_words.hpp"
#include "defer_log.hpp"
#include "entry_records.hpp"
#include "log.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

namespace {

// How many distinct replies of one delivery are matched: a receiver gives
// the same words for each recipient, and a few kinds of them at most.
constexpr size_t max_subjects = 4;

using action_words::doing;
using action_words::span;
using action_words::threshold;

} // namespace

core::RuleLimit ReplyActions::Active::limit() const {
    core::RuleLimit l;
    l.hold = parsed.kind == ReplyAction::Kind::suspend;
    using K = ReplyAction::Kind;
    l.concurrency =
        parsed.kind == K::throttle || parsed.kind == K::backoff ? parsed.concurrency : 0;
    l.pause = parsed.kind == K::rate || parsed.kind == K::backoff ? parsed.pause_seconds() : 0;
    l.until = until;
    return l;
}

ReplyActions::ReplyActions(RegexTable rules, CoreRequests& requests, const WallClock& clock,
                           DeferLogPath defer_log_path, Scopes scopes, BackoffProfiles profiles)
    : rules_(std::move(rules)), profiles_(std::move(profiles)), requests_(requests), clock_(clock),
      defer_log_path_(std::move(defer_log_path)), scopes_(std::move(scopes)),
      retry_transport_(core::SchedulerConfig{}.retry_transport) {
    rules_.warn_on_limit([](const std::string& w) { log::warn("cqmgr_reply_actions: " + w); });
    parsed_.reserve(rules_.size());
    for (size_t i = 0; i < rules_.size(); ++i) {
        auto a = action_of(rules_.result(i));
        parsed_.push_back(a ? std::optional(*a) : std::nullopt);
        bad_.push_back(a ? std::string() : a.error().message());
    }
}

Result<ReplyAction, ActionError> ReplyActions::action_of(std::string_view text) const {
    auto a = parse_reply_action(text);
    if (!a) return a;
    return profiles_.resolve(std::move(*a));
}

size_t ReplyActions::bad_rules() const {
    return static_cast<size_t>(std::count(parsed_.begin(), parsed_.end(), std::nullopt));
}

void ReplyActions::delivery_started(DeliveryEvent& ev) {
    // The adaptive limits take the same mark for the transports they cover.
    if (ev.started_ms >= 0) return;
    ev.defer_mark = file_size(defer_log_path_(ev.entry->message->id));
    ev.started_ms = ev.clock->now_ms();
}

void ReplyActions::delivery_ended(DeliveryEvent& ev) {
    delivered(*ev.entry, ev.result, ev.defer_mark);
}

std::vector<std::string> ReplyActions::subjects(const core::Entry& e, const core::DeliveryResult& r,
                                                int64_t mark) const {
    std::vector<std::string> out;
    auto add = [&](std::string_view status, std::string_view text) {
        // The rules see "STATUS TEXT", its first max_subject bytes.
        std::string key(status.substr(0, max_subject));
        key += ' ';
        key += text.substr(0, max_subject - std::min(max_subject, key.size()));
        if (out.size() < max_subjects && std::find(out.begin(), out.end(), key) == out.end())
            out.push_back(std::move(key));
    };
    if (!r.hop.reason.empty()) add(r.hop.status, r.hop.reason);
    // Recipients deferred or refused one by one: their words are in the
    // defer log (also when the session then failed as a whole, e.g. a
    // receiver that answered 421 to RCPT TO and hung up).
    for (const DeferRecord& rec : entry_records(e, defer_log_path_(e.message->id), mark))
        add(rec.status, rec.reason);
    return out;
}

void ReplyActions::delivered(const core::Entry& e, const core::DeliveryResult& r, int64_t mark) {
    if (r.kind != core::DeliveryResult::Kind::replied) return;
    const core::Queue& q = *e.queue;
    // The retry transport repeats a dead destination's reason: not a reply.
    if (q.transport->name == retry_transport_) return;
    if (r.status == 0) {
        // A success: the actions that end after N deliveries count it.
        if (counting_ == 0) return;
        for (const core::AdminTarget& t : {core::AdminTarget{q.transport->name, q.name},
                                           core::AdminTarget{q.transport->name, {}}}) {
            auto it = actives_.find(t);
            if (it == actives_.end() || it->second.deliveries == 0) continue;
            // Kept as counted at the action's start: a write per delivery
            // would cost more than a count after a restart is worth.
            if (--it->second.deliveries == 0)
                end_action(
                    t, "after " + std::to_string(it->second.parsed.until_delivered) + " deliveries",
                    true);
        }
        if (e.message->sender_group) sender_delivered(e);
        return;
    }
    if (rules_.size() == 0) return;
    const int64_t now_ms = clock_.now_ms();
    // One budget for the delivery, as the adaptive limits spend theirs.
    MatchBudget budget;
    std::vector<size_t> fired; // each rule counts once per delivery
    for (const std::string& words : subjects(e, r, mark)) {
        auto hit = rules_.match(words, budget);
        if (!hit || std::find(fired.begin(), fired.end(), hit->index) != fired.end()) continue;
        fired.push_back(hit->index);
        matched(hit->index, e, words, now_ms);
    }
}

void ReplyActions::matched(size_t rule, const core::Entry& e, const std::string& words,
                           int64_t now_ms) {
    const std::string where = rules_.label() + ", line " + std::to_string(rules_.line(rule));
    const std::optional<ReplyAction>& a = parsed_[rule];
    if (!a) {
        // As stock treats a table's bad result: a warning that names the
        // table and the key, and the rule does nothing.
        const std::string& why = bad_[rule];
        if (auto text =
                limiter_.filter(where,
                                where + ": bad result \"" + rules_.result(rule) + "\" for \"" +
                                    words + "\": " + why + "; the rule is ignored",
                                now_ms / 1000))
            log::warn("cqmgr_reply_actions: " + *text);
        return;
    }
    const core::Queue& q = *e.queue;
    const std::string& transport = q.transport->name;
    // The scope's key, for the threshold, and the targets the action
    // covers.
    std::string key;
    std::vector<core::AdminTarget> targets;
    using S = ReplyAction::Scope;
    std::string group;
    if (a->scope == S::sender_destination || a->scope == S::sender_provider) {
        group = scopes_.sender_group ? scopes_.sender_group(e) : std::string();
        if (group.empty()) return; // no sender groups known
    }
    switch (a->scope) {
    case S::destination:
    case S::sender_destination:
        targets.push_back({transport, q.name});
        key = targets.back().text();
        break;
    case S::transport:
        targets.push_back({transport, {}});
        key = transport;
        break;
    case S::provider:
    case S::sender_provider: {
        std::string provider = scopes_.provider ? scopes_.provider(q) : std::string();
        if (provider.empty()) return; // a destination in no provider
        key = transport + ":provider " + provider;
        if (scopes_.provider_queues)
            for (const std::string& name : scopes_.provider_queues(transport, provider))
                targets.push_back({transport, name});
        break;
    }
    }
    if (!group.empty()) key = "sender " + group + " " + key;
    if (!windows_.hit(rule, key, a->after_count, a->after_period_ms, now_ms)) return;
    const std::string result = rules_.result(rule);
    if (a->kind == ReplyAction::Kind::warn) {
        log::warn("cqmgr: " + key + ": reply rule " + where + " (\"" + result + "\")" +
                  threshold(*a) + ": \"" + words + "\"");
        return;
    }
    // A scope of several queues is logged once, for the scope: a burst of
    // one line per member would be noise, and a provider may have
    // thousands.
    const bool one_line =
        targets.size() > 1 || (targets.size() == 1 && key != targets.front().text());
    int started = 0;
    const core::AdminTarget* first = nullptr; // started, for the cluster
    for (const core::AdminTarget& target : targets) {
        // The same rule again while its action is in force: nothing new.
        const Active* now = group.empty() ? active(target) : sender_active(target, group);
        if (now && now->rule == where) continue;
        Active act;
        act.target = target;
        act.rule = where;
        act.action = result;
        act.parsed = *a;
        act.reason = words;
        act.since = now_ms / 1000;
        act.until = a->duration_ms > 0 ? act.since + a->duration_seconds() : 0;
        act.deliveries = a->until_delivered;
        if (one_line) act.scope = key;
        act.group = group;
        act.group_number = group.empty() ? 0 : e.message->sender_group;
        if (group.empty())
            start(std::move(act), key, words, !one_line);
        else
            sender_start(std::move(act));
        if (started++ == 0) first = &target;
    }
    if (first) shared_started(*first, group);
    if (one_line && started > 0)
        log::info("cqmgr: " + key + ": reply rule " + where + " (\"" + result + "\"): " +
                  doing(*a) + threshold(*a) + " of " + key + ", " + std::to_string(started) +
                  (started == 1 ? " destination" : " destinations") + ", from \"" + words + "\"");
}

void ReplyActions::start(Active a, const std::string& key, const std::string& words, bool log) {
    const core::AdminTarget target = a.target;
    if (log) {
        std::string line = "cqmgr: " + target.text() + ": reply rule " + a.rule + " (\"" +
                           a.action + "\"): " + doing(a.parsed) + threshold(a.parsed);
        if (key != target.text()) line += " of " + key;
        line += ", from \"" + words + "\"";
        log::info(line);
    }
    requests_.set_limit(target, core::LimitChange::rule(a.limit()));
    keep_active(actives_, target, std::move(a));
}

void ReplyActions::end_action(const core::AdminTarget& target, const std::string& why, bool tell) {
    auto it = actives_.find(target);
    if (it == actives_.end()) return;
    // Ended early here (by resume, or its deliveries): ended in the cluster.
    if (log_end(it->second, target.text(), why, tell) && tell) shared_ended(it->second);
    if (it->second.deliveries > 0) --counting_;
    actives_.erase(it);
    windows_.forget(target.text());
    if (tell) requests_.set_limit(target, core::LimitChange::rule(std::nullopt));
    changed();
}

bool ReplyActions::log_end(const Active& a, const std::string& who, const std::string& why,
                           bool tell) {
    bool last = true; // of its scope
    if (!a.scope.empty()) {
        auto n = scoped_.find(a.rule + '\n' + a.scope);
        if (n != scoped_.end() && --n->second > 0)
            last = false;
        else if (n != scoped_.end())
            scoped_.erase(n);
    }
    if (a.scope.empty() || tell) {
        log::info("cqmgr: " + who + ": reply rule " + a.rule + " (\"" + a.action +
                  "\"): " + action_kind_name(a.parsed.kind) + " ended " + why);
    } else if (last) {
        // The last member of a scope logged once: the scope's end, once.
        log::info("cqmgr: " + a.scope + ": reply rule " + a.rule + " (\"" + a.action +
                  "\"): " + action_kind_name(a.parsed.kind) + " ended " + why);
    }
    return last;
}

std::vector<core::AdminTarget> ReplyActions::resume(const core::AdminTarget& target) {
    std::vector<core::AdminTarget> ended;
    for (const auto& [t, a] : actives_) {
        bool covered = target.any_transport()     ? t.queue == target.queue
                       : target.whole_transport() ? t.transport == target.transport
                                                  : t == target;
        if (covered) ended.push_back(t);
    }
    for (const core::AdminTarget& t : ended)
        end_action(t, "by resume", true);
    return ended;
}

void ReplyActions::expired(const core::AdminTarget& target) {
    end_action(target, "at its time", false);
}

void ReplyActions::restore(std::vector<Active> kept) {
    const int64_t now = clock_.now();
    bool dropped = false;
    for (Active& a : kept) {
        auto parsed = action_of(a.action);
        if (!parsed || parsed->kind == ReplyAction::Kind::warn || a.target.transport.empty()) {
            log::warn("cqmgr: " + a.target.text() + ": kept reply rule action \"" + a.action +
                      "\" is not one" + (parsed ? "" : " (" + parsed.error().message() + ")") +
                      "; dropped");
            dropped = true;
            continue;
        }
        a.parsed = *parsed;
        const std::string who =
            (a.group.empty() ? "" : "sender " + a.group + " ") + a.target.text();
        if (a.until != 0 && a.until <= now) {
            log::info("cqmgr: " + who + ": reply rule " + a.rule + " (\"" + a.action + "\"): " +
                      action_kind_name(a.parsed.kind) + " ended while cqmgr was not running");
            dropped = true;
            continue;
        }
        if (!a.group.empty() && !sender_restore(a)) {
            dropped = true;
            continue;
        }
        log::info("cqmgr: " + who + ": reply rule " + a.rule + " (\"" + a.action +
                  "\"): " + action_kind_name(a.parsed.kind) + " restored" +
                  (a.until ? ", " + span(a.until - now) + " left" : std::string()) +
                  (a.deliveries ? ", " + std::to_string(a.deliveries) + " deliveries left"
                                : std::string()));
        if (a.deliveries > 0) ++counting_;
        core::AdminTarget target = a.target;
        if (!a.group.empty()) {
            requests_.set_sender_rule(target, a.group_number, a.limit());
            SenderKey key{target, a.group};
            sender_actives_.insert_or_assign(std::move(key), std::move(a));
            continue;
        }
        requests_.set_limit(target, core::LimitChange::rule(a.limit()));
        actives_.insert_or_assign(target, std::move(a));
    }
    if (dropped) changed();
}

const ReplyActions::Active* ReplyActions::active(const core::AdminTarget& target) const {
    auto it = actives_.find(target);
    return it == actives_.end() ? nullptr : &it->second;
}

const ReplyActions::Active* ReplyActions::covering(const core::Queue& q) const {
    if (actives_.empty()) return nullptr;
    if (const Active* a = active({q.transport->name, q.name})) return a;
    return active({q.transport->name, {}});
}

} // namespace cqmgr::qmgr
