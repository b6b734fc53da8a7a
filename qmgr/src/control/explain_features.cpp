#include "explain_features.hpp"

#include "cluster_limits.hpp"
#include "control_queries.hpp"
#include "explain_text.hpp"
#include "providers.hpp"
#include "reply_actions.hpp"
#include "sender_limit.hpp"

namespace cqmgr::qmgr {

namespace {

using Bound = LimitLine::Bound;

// The table key of a providers' scope ("provider:smtp:google" ->
// "smtp:google").
std::string provider_key(const std::string& scope) {
    const std::string prefix = "provider:";
    return scope.starts_with(prefix) ? scope.substr(prefix.size()) : scope;
}

// "the queues of provider google" (or of its provider, when the
// membership is not known here).
std::string provider_queues_words(const ExplainSubject& s) {
    const Providers* p = s.src.providers;
    const std::string* name = p ? p->provider_of(s.transport.name, s.queue.name) : nullptr;
    return "the queues of " + (name ? "provider " + *name : std::string("its provider"));
}

// How a reply rule's action ends: at its time, after N deliveries, or by
// cqmgrctl resume.
std::string rule_end(const core::RuleLimit& r, const ReplyActions::Active* a, int64_t now) {
    std::string end = until_words(r.until, now, "");
    if (a && a->deliveries > 0)
        end += (end.empty() ? " until " : " or ") + std::to_string(a->deliveries) +
               " more deliveries succeed";
    return end.empty() ? " until cqmgrctl resume" : end;
}

// The line of a reply rule's action on sender group `group`'s mail here
// (a sender scope) that stops it now (`part`'s rule); `all`: nothing else
// waits that could start.  Other senders' mail is not bound by it.
void sender_rule_line(const ExplainSubject& s, const core::SenderPart& part,
                      const std::string& group, bool all, std::vector<LimitLine>& lines) {
    const core::RuleLimit& r = part.rule->limit;
    const ReplyActions::Active* a =
        s.src.actions ? s.src.actions->sender_active({s.transport.name, s.queue.name}, group)
                      : nullptr;
    std::string d =
        "sender group " + (group.empty() ? std::to_string(part.rule->group) : group) + " ";
    d += r.hold        ? std::string("suspended")
         : r.pause > 0 ? "paused " + std::to_string(r.pause) + "s after each delivery"
                       : "throttled to " + std::to_string(r.concurrency) + " at once";
    d += " by " +
         (a ? "reply rule " + a->rule + " (\"" + a->action + "\") since " +
                  when_text(a->since, s.now)
            : std::string("a reply rule's action")) +
         rule_end(r, a, s.now) + ", " + std::to_string(part.busy) + " in flight here, " +
         std::to_string(part.stopped(0)) + " of its entries wait";
    if (part.rule->paused_until > 0)
        d += "; its next start at " + when_text(part.rule->paused_until, s.now);
    d += all ? "; no other mail waits here that could start"
             : "; other senders' mail here goes ahead";
    if (all || r.hold)
        lines.push_back({Bound::stop, 0, "reply-rule", d, all});
    else if (r.pause > 0)
        lines.push_back({Bound::rate, 1.0 / r.pause, "reply-rule", d, false});
    else
        lines.push_back({Bound::concurrency, double(r.concurrency), "reply-rule", d, false});
}

} // namespace

void provider_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const ClusterLimits* limits = s.src.provider_limits;
    auto v = limits ? limits->gate_view(s.queue) : std::nullopt;
    if (!v) return;
    const std::string across = " across " + provider_queues_words(s);
    if (v->allowance) {
        std::string d;
        if (v->limit > 0) {
            d = "cqmgr_provider_concurrency_limits " + provider_key(v->lease_scope) + " = " +
                std::to_string(v->limit) + across + " (scope " + v->lease_scope + "); ";
            d += v->shared
                     ? "leases held here: " + std::to_string(v->leases) + " by this destination, " +
                           std::to_string(v->scope_leases) + " in the scope (shared through Redis)"
                     : "in flight or closing on this host: " +
                           std::to_string(limits->scope_busy(v->lease_scope)) + " in the scope, " +
                           std::to_string(s.queue.busy_count()) +
                           " of them here (this host keeps the limit on its own count)";
        }
        if (v->rate)
            d += std::string(v->limit > 0 ? "; " : "") +
                 "the provider's rate tokens held: " + std::to_string(v->tokens);
        lines.push_back({Bound::concurrency, double(*v->allowance), "provider", d});
    }
    if (v->rate)
        lines.push_back(
            {Bound::rate, v->rate->per_second(), "provider",
             "cqmgr_provider_rate_limits " + provider_key(v->rate_scope) + " = " + v->rate->text() +
                 across + " (scope " + v->rate_scope + ", " +
                 (v->rate_shared ? "the cluster's cell in Redis)" : "a cell on this host)")});
}

void rule_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const std::optional<core::RuleLimit>& r = s.queue.limits.rule;
    if (!r || !r->any()) return;
    const ReplyActions::Active* a = s.src.actions ? s.src.actions->covering(s.queue) : nullptr;
    std::string by = "a reply rule's action";
    if (a)
        by = "reply rule " + a->rule + " (\"" + a->action + "\") on " + a->target.text() +
             " since " + when_text(a->since, s.now) +
             (a->reason.empty() ? std::string() : ", from \"" + a->reason + "\"");
    const std::string end = rule_end(*r, a, s.now);
    if (r->hold) lines.push_back({Bound::stop, 0, "reply-rule", "suspended by " + by + end});
    if (r->concurrency > 0)
        lines.push_back(
            {Bound::concurrency, double(r->concurrency), "reply-rule",
             "throttled to " + std::to_string(r->concurrency) + " at once by " + by + end});
    if (r->pause > 0) {
        lines.push_back({Bound::concurrency, 1, "reply-rule",
                         "one delivery at a time while the rule's pause applies"});
        lines.push_back({Bound::rate, 1.0 / r->pause, "reply-rule",
                         "a pause of " + std::to_string(r->pause) +
                             "s after each delivery, set by " + by + end});
    }
}

int sender_stopped_entries(const core::Queue& q) {
    int n = 0;
    if (q.sender_todo == 0) return 0;
    for (const core::SenderPart& part : q.senders)
        n += part.stopped(part.room(q.transport->senders.at(part.load)));
    return n;
}

LimitSource sender_group_source(SenderGroupName name) {
    return [name = std::move(name)](const ExplainSubject& s, std::vector<LimitLine>& lines) {
        const core::Queue& q = s.queue;
        if (q.senders.empty()) return;
        // Nothing else waits that could start: the groups at their limits
        // are what stops the queue now.
        const int stopped = sender_stopped_entries(q);
        const bool all = stopped > 0 && stopped >= q.selectable_count();
        for (const core::SenderPart& part : q.senders) {
            const core::SenderLoad& l = q.transport->senders.at(part.load);
            if (part.room(l) > 0) continue;
            std::string group = name ? name(l.group) : std::string();
            // Its load has room: a reply rule's action on its mail stops it.
            if (l.room() > 0) {
                sender_rule_line(s, part, group, all, lines);
                continue;
            }
            const core::SenderLimit& lim = l.limit;
            const bool by_concurrency = lim.concurrency > 0 && l.busy >= lim.concurrency;
            std::string d = "cqmgr_sender_limits " +
                            (group.empty() ? "group " + std::to_string(l.group) : group) + " (" +
                            sender_limit_text(lim) + "): at its " +
                            (by_concurrency ? "concurrency limit" : "rate") + ", " +
                            std::to_string(part.busy) + " in flight here" +
                            (l.parts > 1 ? " (" + std::to_string(l.busy) + " in its scope)" : "") +
                            ", " + std::to_string(part.stopped(0)) + " of its entries wait";
            if (!by_concurrency && l.timer_due > 0)
                d += "; its rate allows the next start at " + when_text(l.timer_due, s.now);
            d += all ? "; no other mail waits here that could start"
                     : "; other senders' mail here goes ahead";
            if (all)
                lines.push_back({Bound::stop, 0, "sender-group", d});
            else if (by_concurrency)
                lines.push_back(
                    {Bound::concurrency, double(lim.concurrency), "sender-group", d, false});
            else
                lines.push_back({Bound::rate, 1.0 / lim.interval(), "sender-group", d, false});
        }
    };
}

ExplainHooks feature_explain_hooks(const Providers* providers, SenderGroupName sender_names) {
    ExplainHooks h;
    h.sources = {rule_lines, provider_lines, sender_group_source(std::move(sender_names))};
    if (providers)
        h.provider_queues = [providers](const std::string& name) {
            std::optional<std::vector<core::AdminTarget>> out;
            auto it = providers->members().find(name);
            if (it == providers->members().end()) return out;
            out.emplace();
            for (const auto& [transport, queue] : it->second)
                out->push_back({transport, queue});
            return out;
        };
    return h;
}

} // namespace cqmgr::qmgr
