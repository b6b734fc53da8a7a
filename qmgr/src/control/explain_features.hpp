// What explain shows of the features that bring limits of their own
// (control_explain.hpp's ExplainHooks): a provider's limits, the action
// of a reply rule, and the sender groups' limits, each one source; and
// the hooks that plug them in, with the providers' members for
// `cqmgrctl explain PROVIDER`.
#pragma once

#include "control_explain.hpp"
#include "cqmgr/core/sender.hpp"

#include <functional>
#include <string>
#include <vector>

namespace cqmgr::qmgr {

class Providers;

// The providers' limits that cover the queue (ControlSources::
// provider_limits, scopes "provider:KEY"): its share of the provider's
// concurrency, with the leases or deliveries counted in the scope, and
// the provider's rate.
void provider_lines(const ExplainSubject& s, std::vector<LimitLine>& lines);

// The action of a reply rule that bounds the queue (core::Limits::rule):
// a hold, a cap or a pause, with the rule, the reply that made it act,
// its target and its end (ControlSources::actions).
void rule_lines(const ExplainSubject& s, std::vector<LimitLine>& lines);

// The name of sender group `g` (the key of cqmgr_sender_limits that
// answered), or "" when it is not known.
using SenderGroupName = std::function<std::string(core::SenderGroup g)>;

// The sender groups at their limit on the queue: each with its limit, its
// deliveries in flight and its mail waiting there; and those a reply
// rule's action on their mail there stops (a sender scope), with the rule.
// They hold back their own mail only, so they bound the queue (a stop)
// only while no other mail waits there that could start.
LimitSource sender_group_source(SenderGroupName name);

// Waiting entries of `q`, not held back, that sender groups at their
// limits stop now (what the job walk passes over).
int sender_stopped_entries(const core::Queue& q);

// The hooks of the daemon's features: the three sources, and the members
// of `providers` (nullptr: there are no providers).
ExplainHooks feature_explain_hooks(const Providers* providers, SenderGroupName sender_names);

} // namespace cqmgr::qmgr
