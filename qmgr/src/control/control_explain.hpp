// The reply to the control socket's `explain` query
// (docs/control-protocol.md): why mail to a destination is, or is not,
// going out.  For each queue of the destination (one transport, or every
// transport that has a queue of that name, or every queue of a provider)
// it gives the effective concurrency and rate that selection uses, every
// limit that bounds them with its source and which of them binds now
// (explain_limits.hpp), the last deferral's reason and time, the next
// retry when cqmgr knows it, and what waits in the active queue.
//
// The limits come from a list of sources, each one small function that
// appends its lines for a queue.  The daemon's own sources (dead, admin,
// cluster, learned, share, main.cf) are built in; the features that come
// with their own limits (providers, reply rules, sender groups) add theirs
// through ExplainHooks without touching this file.
#pragma once

#include "cqmgr/control/reply.hpp"
#include "cqmgr/control/request.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "explain_limits.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cqmgr::qmgr {

struct ControlSources;

// What a limit source sees of one queue.
struct ExplainSubject {
    const ControlSources& src;
    const core::Transport& transport;
    const core::Queue& queue;
    int64_t now = 0; // Unix seconds
    // Another destination of the transport has mail that it could send
    // now: what makes the destination share bind (share.cpp).
    bool others_wait = false;
};

// Appends the lines one source knows of for `s` (nothing when none of its
// limits covers the queue).
using LimitSource = std::function<void(const ExplainSubject& s, std::vector<LimitLine>& lines)>;

// How the features that bring their own limits plug into explain.
struct ExplainHooks {
    // Their limits: called in order after the daemon's specific sources
    // (dead, admin, cluster, learned, share) and before main.cf's, so that
    // among equal values theirs binds rather than the concurrency window.
    std::vector<LimitSource> sources;
    // The queues of provider `name`, as {transport, queue}, or nothing when
    // no provider has that name (unset: there are no providers).  explain
    // asks it when no transport has a queue named so.
    std::function<std::optional<std::vector<core::AdminTarget>>(const std::string& name)>
        provider_queues;
};

// The reply to `explain target`.
control::Json explain_reply(const ControlSources& src, const control::Target& target);

// The daemon's own sources, in the order explain asks them (exposed for
// tests).
void dead_lines(const ExplainSubject& s, std::vector<LimitLine>& lines);
void admin_lines(const ExplainSubject& s, std::vector<LimitLine>& lines);
void cluster_lines(const ExplainSubject& s, std::vector<LimitLine>& lines);
void learned_lines(const ExplainSubject& s, std::vector<LimitLine>& lines);
void share_lines(const ExplainSubject& s, std::vector<LimitLine>& lines);
void main_cf_lines(const ExplainSubject& s, std::vector<LimitLine>& lines);

} // namespace cqmgr::qmgr
