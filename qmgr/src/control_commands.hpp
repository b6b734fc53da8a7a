// The control socket's commands (docs/control-protocol.md): suspend,
// resume, flush, throttle and unthrottle, executed against the scheduler
// and kept in AdminState, each logged as one qmgr line and answered with a
// JSON reply that says what changed.
#pragma once

#include "admin_state.hpp"
#include "clock.hpp"
#include "cqmgr/core/scheduler.hpp"

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace cqmgr::qmgr {

// One parsed command.  The protocol parser fills it from the request line:
//
//   request                                      kind        transport  destination
//   suspend TRANSPORT [for D] [reason TEXT...]   suspend     TRANSPORT  ""
//   suspend TRANSPORT:DEST [for D] [reason ...]  suspend     TRANSPORT  DEST
//   resume TRANSPORT[:DEST]                      resume      TRANSPORT  DEST or ""
//   flush [TRANSPORT:]DEST                       flush       TRANSPORT or ""  DEST
//   throttle [TRANSPORT:]DEST N [for D]          throttle    TRANSPORT or ""  DEST
//   unthrottle [TRANSPORT:]DEST                  unthrottle  TRANSPORT or ""  DEST
//
// An empty `transport` with a destination means that destination on every
// transport that has it, now or later.  `duration` is D in seconds (the
// parser converts Postfix time units), 0 when "for D" was not given: then
// the setting lasts until it is undone.  `reason` is the words after
// "reason" joined with single spaces ("" when none).  `concurrency` is N
// (throttle only).  `uid` is the client's uid from SO_PEERCRED.  execute()
// checks everything again and answers a malformed command with an error.
struct ControlCommand {
    enum class Kind { suspend, resume, flush, throttle, unthrottle };
    Kind kind = Kind::suspend;
    std::string transport;
    std::string destination;
    int64_t duration = 0;
    std::string reason;
    int concurrency = 0;
    int64_t uid = 0;
};

// The longest duration a command may give (365 days).
inline constexpr int64_t max_control_duration = 365 * 86400;

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

    // Executes `cmd` and returns the reply: {"ok":true,"changed":[...]} with
    // one object per setting or destination changed (empty when nothing
    // changed), or {"ok":false,"error":TEXT} for a malformed command or a
    // suspend or throttle that would take the kept settings past their
    // limit (state::max_control_bytes; nothing changes then).
    // Objects in "changed":
    //   suspend     {"target","suspended":true,"until":T|null,"reason":TEXT}
    //   resume      {"target","suspended":false}
    //   throttle    {"target","throttle":{"concurrency":N,"until":T|null}}
    //   unthrottle  {"target","throttle":null}
    //   flush       {"target","revived":true}, one per queue or transport revived
    // A target without a transport also lists the queues it covers now as
    // "queues":["smtp:example.com",...].  When the settings could not be
    // saved, the reply also has "warning":TEXT (the command took effect).
    // A flush's reply also has "deferred":TEXT, what became of the
    // destination's deferred mail (flush(8) asked, or not eligible).
    nlohmann::json execute(const ControlCommand& cmd);

    // Gives the scheduler the kept settings (at start, before any mail),
    // logging each ("control: restored suspension of ..."); those that
    // ended while cqmgr was not running are logged as expired and dropped
    // from the file.
    void restore();
    // The scheduler ended a setting by itself (Driver::admin_expired):
    // logged, and no longer kept.
    void expired(core::AdminKind kind, const core::AdminTarget& target);

  private:
    // The command's validity problem, if any.
    static std::string check(const ControlCommand& cmd);
    // The changed-object for `target` (with "queues" for bare names).
    nlohmann::json change(const core::AdminTarget& target) const;
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
};

} // namespace cqmgr::qmgr
