// The control socket's commands (docs/control-protocol.md): suspend,
// resume, flush, throttle and unthrottle, executed against the scheduler
// and kept in AdminState, each logged as one qmgr line and answered with a
// JSON reply that says what changed.
//
// A command arrives as the control::Request that control/ parsed from its
// line; the grammar validated it, and nothing here checks it again.  The
// words change here, from the protocol's to the daemon's: what the
// protocol calls a suspension and a throttle is, on the daemon's side and
// in the core, an administrator's hold and cap (core/admin.hpp,
// AdminRecord), as the core's own "throttle" is what Postfix's feedback
// does to a dead destination.  (The store's document keeps the protocol's
// words; AdminState translates.)
#pragma once

#include "admin_state.hpp"
#include "clock.hpp"
#include "cqmgr/control/reply.hpp"
#include "cqmgr/control/request.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "reply_actions.hpp"

#include <functional>
#include <string>
#include <vector>

namespace cqmgr::qmgr {

class ControlCommands {
  public:
    // Where the log lines go (log::info in the daemon).
    using LogLine = std::function<void(const std::string&)>;
    // What a flush does about the deferred mail of its site.
    enum class FlushDeferred {
        not_eligible,  // fast_flush_domains rules the site out: nothing asked
        asked,         // flush(8) was asked to deliver it
        service_asked, // asked; fast_flush_domains has a table, flush(8) decides
        busy           // not asked: too many flushes wait for flush(8) already
    };
    // Asks the flush(8) service to deliver the deferred mail of a site,
    // when fast_flush_domains covers it (asynchronous; the daemon logs a
    // failure), and says whether it asked.
    using FlushSite = std::function<FlushDeferred(const std::string& site)>;

    ControlCommands(core::Scheduler& sched, AdminState& state, const WallClock& clock,
                    FlushSite flush_site, LogLine log_line);

    // Executes the command `r` (not a query) of the client with user ID
    // `uid` and returns the reply: {"ok":true,"changed":[...]} with one
    // object per setting or destination changed (empty when nothing
    // changed), or {"ok":false,"error":TEXT} for a suspend or throttle that
    // would take the kept settings past their limit
    // (state::max_control_bytes; nothing changes then).
    // Objects in "changed", with their keys in this order:
    //   suspend     {"target","suspended":true,"until":T|null,"reason":TEXT}
    //   resume      {"target","suspended":false}, and {"target","rule":null}
    //               for each reply rule's action it ended, and
    //               {"target","sender","rule":null} for each on a sender
    //               group's mail (with `sender GROUP`, only that group's
    //               end, and the suspension stays)
    //   throttle    {"target","throttle":{"concurrency":N,"until":T|null}}
    //   unthrottle  {"target","throttle":null}
    //   flush       {"target","revived":true}, one per queue or transport revived
    // A target without a transport also lists the queues it covers now as
    // "queues":["smtp:example.com",...], after "target".  When the settings
    // could not be saved, the reply also has "warning":TEXT (the command
    // took effect).  A flush's reply also has "deferred":TEXT, what became
    // of the destination's deferred mail (flush(8) asked, or not eligible).
    control::Json execute(const control::Request& r, int64_t uid);

    // Gives the scheduler the kept settings (at start, before any mail),
    // logging each ("control: restored suspension of ..."); those that
    // ended while cqmgr was not running are logged as expired and dropped
    // from the store.
    void restore();
    // The scheduler ended a setting by itself (Driver::admin_expired):
    // logged, and no longer kept.
    void expired(core::AdminKind kind, const core::AdminTarget& target);
    // The reply rules' actions that resume ends too (nullptr: none).
    void use_rule_actions(ReplyActions* actions) { actions_ = actions; }
    // Where the settings are kept (the reply rules' actions are kept there
    // too).
    const AdminState& state() const { return state_; }

  private:
    // Places the hold or cap of `setting` in the scheduler: the one way a
    // setting gets there, from a command or from the store.  True when
    // anything changed.
    bool apply(const AdminRecord& setting);
    // The settings the scheduler holds now.
    std::vector<AdminRecord> settings() const;
    // The changed-object for `target` (with "queues" for bare names).
    control::Json change(const core::AdminTarget& target) const;
    // " until ISO (SPAN)" for a setting that ends, "" without an end.
    std::string until_text(int64_t until, const std::string& span) const;
    // Saves the settings; false when they could not be saved.
    bool save();
    // Whether the kept settings stay within their limit with `setting`
    // (replacing one of its kind for its target).
    bool fits(const AdminRecord& setting) const;

    core::Scheduler& sched_;
    AdminState& state_;
    const WallClock& clock_;
    FlushSite flush_site_;
    LogLine log_line_;
    ReplyActions* actions_ = nullptr;
};

} // namespace cqmgr::qmgr
