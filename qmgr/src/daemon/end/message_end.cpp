#include "message_end.hpp"

#include "end_plan.hpp"
#include "log.hpp"
#include "notices.hpp"
#include "probes.hpp"
#include "status_line.hpp"

namespace cqmgr::qmgr {

namespace {
using LogState = queuefile::ActiveQueue::LogState;

// A notice about `m` to one of the bounce daemon's services.
protocol::NoticeRequest notice(const Message& m, int nrequest, int flags) {
    protocol::NoticeRequest n;
    n.nrequest = nrequest;
    n.flags = flags;
    n.queue_id = m.id;
    n.encoding = m.env.encoding();
    n.smtputf8 = m.env.smtputf8;
    n.sender = *m.env.sender();
    n.envelope_id = m.env.dsn_envid();
    n.ret_flags = m.env.dsn_ret;
    return n;
}

// The same notice in its VERP form, for a VERP message unless
// disable_verp_bounces says otherwise.
protocol::NoticeRequest maybe_verp(const Message& m, protocol::NoticeRequest n, bool verp_off) {
    if (m.env.verp_delims() && !verp_off) {
        n.nrequest = protocol::bounce_cmd::verp;
        n.verp_delimiters = *m.env.verp_delims();
    }
    return n;
}
} // namespace

MessageEnd::MessageEnd(const conf::QmgrParams& params, const WallClock& clock,
                       const queuefile::ActiveQueue& store, StoreRetry& retry, Intake& intake,
                       core::Scheduler& sched, Counters& counters, RecoveryRamp& ramp,
                       ServiceSlots& slots)
    : params_(params), clock_(clock), store_(store), retry_(retry), intake_(intake), sched_(sched),
      counters_(counters), ramp_(ramp), slots_(slots) {}

bool MessageEnd::finish_now(const Message& m) {
    // The agent closes its descriptor right after it replies; an unlink
    // that comes first leaves the freeing of the file's blocks to that
    // close, in the agent, instead of in this single thread (on ext4 with
    // discard, a tenth of the queue manager's CPU at 50,000 messages,
    // measured).  finish() checks the same conditions in the same order and
    // would only come to the same removal later.
    if (m.flags || m.env.rcpt_offset != 0 || wants_trace(m.env)) return false;
    if (store_.log_state("bounce", m.id) != LogState::absent) return false;
    remove(m.id);
    return true;
}

awaitable<MessageEnd::Outcome> MessageEnd::finish(Message& m) {
    const std::string id = m.id;

    // 1. Recipients that bounced: have the bounce service send the notice.
    switch (store_.log_state("bounce", id)) {
    case LogState::absent:
        break;
    case LogState::empty:
        if (auto e = store_.remove_log("bounce", id); e && !e->gone()) log::warn(e->text);
        break;
    case LogState::present:
        log::debug("qmgr_active_done: bounce " + id);
        counters_.messages_bounced++;
        m.flags |= co_await send_notice(
            slots_, params_.bounce_service_name,
            maybe_verp(m, notice(m, protocol::bounce_cmd::flush, 0), params_.disable_verp_bounces),
            ipc_timeout());
        break;
    }
    // 2. An agent that found the file corrupt took away its ready bits.
    if (m.flags && !store_.intact(id)) {
        quarantine(id);
        co_return Outcome::over;
    }
    // 3. More recipients in the file: they come first.  A file that can no
    // longer be read is corrupt; one that cannot be opened for now (out of
    // descriptors, an I/O error) stays in active/ and is read again after
    // a backoff, where stock exits and leaves it to its successor.
    if (m.env.rcpt_offset != 0) {
        for (int failures = 0;;) {
            sched_.set_time(clock_.now());
            Intake::BatchRead r = intake_.read_batch(m, sched_.reread_limit(m));
            if (r == Intake::BatchRead::ok) co_return Outcome::more;
            if (r == Intake::BatchRead::failed) break;
            co_await retry_.backoff(++failures);
        }
        quarantine(id);
        co_return Outcome::over;
    }
    // 4. Trace reports: sendmail -v / -bv, and DSN SUCCESS notices.
    if (wants_trace(m.env)) {
        int status = co_await send_notice(slots_, params_.trace_service_name,
                                          notice(m, protocol::bounce_cmd::trace, m.env.tflags),
                                          ipc_timeout());
        if (status == 0 && m.env.tflags_offset > 0)
            if (auto e = store_.kill_record(id, m.env.tflags_offset))
                log::warn(id + ": " + e->text);
        m.flags |= status;
    }
    // 5. Still undelivered: expire, or warn about the delay.
    if (m.flags) {
        Undelivered fate = undelivered_fate(m.env, m.force_expire, clock_.now(), params_);
        if (fate == Undelivered::expired || fate == Undelivered::force_expired) {
            log::info(id + ": from=<" +
                      log_address(*m.env.sender(), params_.info_log_address_format == "internal") +
                      ">, status=" + expiry_word(fate) + ", returned to sender");
            counters_.messages_expired++;
            m.flags = co_await send_notice(
                slots_, params_.defer_service_name,
                maybe_verp(m,
                           notice(m, protocol::bounce_cmd::flush, protocol::bounce_flag::delrcpt),
                           params_.disable_verp_bounces),
                ipc_timeout());
        } else if (fate == Undelivered::warn) {
            log::debug("qmgr_active_done_25_generic: sending defer warning for " + id);
            int status =
                co_await send_notice(slots_, params_.defer_service_name,
                                     notice(m, protocol::bounce_cmd::warn, 0), ipc_timeout());
            if (status == 0 && m.env.warn_offset > 0) {
                if (auto e = store_.rewrite_warn_time(id, m.env.warn_offset))
                    log::warn(id + ": " + e->text);
                else
                    m.env.warn_time = 0; // sent: none due (for the deferred index)
            }
        }
    }
    // 6. Away from active: deferred until the next attempt, or removed.
    if (m.flags) {
        int64_t delay =
            next_attempt_delay(m.env.create_time, clock_.now(), params_, jitter_random_);
        int64_t when = clock_.now() + delay;
        log::debug("wakeup " + id + " after " + std::to_string(when - clock_.now()) + " secs");
        counters_.messages_deferred++;
        CQMGR_PROBE_MESSAGE_DONE(id.c_str(), "deferred");
        ramp_.deferred(m);
        retry_.run("qmgr_active_defer", [this, id, when] { return store_.defer_until(id, when); });
    } else {
        remove(id);
    }
    co_return Outcome::over;
}

void MessageEnd::quarantine(const std::string& id) {
    counters_.messages_quarantined++;
    CQMGR_PROBE_MESSAGE_DONE(id.c_str(), "corrupt");
    retry_.run(
        "qmgr_active_corrupt", [this, id] { return store_.quarantine(id); },
        [id](const queuefile::StoreResult& r) {
            // A file already gone (postsuper -h/-d) is no news, as in stock.
            if (!r)
                log::warn("saving corrupt file \"" + id +
                          "\" from queue \"active\" to queue \"corrupt\"");
        });
}

void MessageEnd::remove(const std::string& id) {
    counters_.messages_removed++;
    CQMGR_PROBE_MESSAGE_DONE(id.c_str(), "removed");
    retry_.run(
        "qmgr_active_done_3_generic", [this, id] { return store_.remove(id); },
        [id](const queuefile::StoreResult& r) {
            // Stock's wording when the file went away meanwhile (postsuper).
            if (!r)
                log::info(id + ": removed");
            else
                log::warn(r->text);
        });
}

} // namespace cqmgr::qmgr
