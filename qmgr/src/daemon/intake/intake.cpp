#include "intake.hpp"

#include "address.hpp"
#include "cqmgr/common/address.hpp"
#include "cqmgr/queuefile/header_block.hpp"
#include "log.hpp"
#include "probes.hpp"
#include "recipient_order.hpp"
#include "routing.hpp"
#include "scan.hpp"
#include "status_line.hpp"

#include <algorithm>
#include <unistd.h>

namespace cqmgr::qmgr {

namespace {
// How much of a message's header block cqmgr_priority_header_maps and
// cqmgr_sender_class_header_maps may read: one bounded read, whatever the
// header's size, shared by both.
constexpr size_t max_header_bytes = 64 * 1024;
using queuefile::qmode::expire;
using queuefile::qmode::unthrottle;
} // namespace

Intake::Intake(const conf::QmgrParams& params, const WallClock& clock,
               const queuefile::ActiveQueue& store, StoreRetry& retry, Resolver& resolver,
               core::Scheduler& sched, DeferFn defer)
    : params_(params), clock_(clock), store_(store), retry_(retry), resolver_(resolver),
      sched_(sched), defer_(std::move(defer)) {}

std::string Intake::log_addr(std::string_view addr) const {
    return log_address(addr, params_.info_log_address_format == "internal");
}

Intake::Claimed Intake::claim(const std::string& id, const std::string& queue, int scan_flags,
                              mode_t mode) {
    Claimed out;
    if (log::verbose()) log::debug("qmgr_message_alloc: active " + id);
    auto c = store_.claim(queue, id);
    if (c.step != queuefile::ActiveQueue::Claim::Step::none) {
        out.pause = not_claimed(id, queue, c);
        return out;
    }

    auto msg = std::make_unique<Message>();
    Message& m = *msg;
    m.id = id;
    m.force_expire = mode & expire;
    m.unthrottle = mode & unthrottle;
    m.scan_flags = scan_flags;
    sched_.set_time(clock_.now());
    sched_.message_add(m);

    // The first pass reads every non-recipient record and the first batch
    // of recipients, sized by how full the active queue is.
    auto r = store_.read(id, m.env, sched_.first_batch_limit(m), c.fd);
    if (r.sender_seen)
        log::info(id + ": from=<" + log_addr(*m.env.sender()) +
                  ">, size=" + std::to_string(r.opened_size) +
                  ", nrcpt=" + std::to_string(r.opened_nrcpt) + " (queue active)");
    for (const auto& w : r.warnings)
        log::warn(id + ": " + w);
    if (!r.ok) {
        log_read_error(id, r);
        ::close(c.fd);
        out.corrupt = true;
        return out;
    }
    if (m.unthrottle)
        if (auto e = store_.clear_mode(c.fd, id, mode, unthrottle)) log::warn(e->text);
    // After a delay warning went out, optionally confirm the final delivery.
    if (params_.confirm_delay_cleared && m.env.warn_time < 0)
        m.env.tflags |= protocol::del_flag::rec_dly_sent;
    m.single_rcpt = m.env.verp_delims().has_value();
    queuefile::HeaderLinesOnce headers(c.fd, m.env.data_offset, max_header_bytes);
    if (!priorities_.empty()) m.lane = classify(m, headers);
    // Once per message, before its first recipient reaches the scheduler.
    if (!senders_.empty())
        m.sender_group = senders_.group(
            m.env.sender().value_or(""), sched_,
            [&headers]() -> const std::vector<std::string>& { return headers.lines(); });
    if (m.env.tflags & protocol::del_flag::mta_vrfy) verify_probes_++;

    // A fresh attempt starts with a fresh defer log, except for a message
    // that is being force-expired with reasons already on file: that log is
    // what goes back to the sender.
    out.keep_defer_log = m.force_expire &&
                         store_.log_state("defer", id) == queuefile::ActiveQueue::LogState::present;
    if (!out.keep_defer_log)
        if (auto e = store_.remove_log("defer", id); e && !e->gone())
            log::warn("qmgr_message_alloc: " + id + ": " + e->text);
    ::close(c.fd); // drops the lock: agents and bounce take shared locks
    m.active_arrival = clock_.precise();
    if (out.keep_defer_log) {
        admit(m);
        m.flags = message_flag::defer;
        m.env.rcpt_offset = 0;
        m.env.recipients.clear();
    }
    out.message = std::move(msg);
    return out;
}

bool Intake::not_claimed(const std::string& id, const std::string& queue,
                         const queuefile::ActiveQueue::Claim& c) {
    using Step = queuefile::ActiveQueue::Claim::Step;
    switch (c.step) {
    case Step::none:
        break;
    case Step::move:
        // Gone meanwhile (postsuper): stock's warning.  Else the file stays
        // where it is and feeding pauses.
        if (c.error->gone()) {
            log::warn(c.error->text);
            return false;
        }
        retry_.report("qmgr_active_feed", *c.error);
        return true;
    case Step::open:
        log::warn(c.error->text);
        if (c.error->gone()) return false;
        // Not readable now (out of descriptors, say): back to incoming.
        retry_.run("qmgr_active_defer", [this, id] { return store_.release(id, clock_.now()); });
        return true;
    case Step::lock:
        if (queue == "active") {
            // Left by a queue manager whose agent still delivers it: back to
            // incoming as stock's start-up moves it, whose scan skips it.
            retry_.run("qmgr_move", [this, id] { return store_.recover(id, clock_.now()); });
            return false;
        }
        // Another queue manager's agent still has it: back for later.
        log::info(id + ": skipped, still being delivered");
        retry_.run("qmgr_active_defer",
                   [this, id] { return store_.release(id, clock_.now() + 60); });
        return false;
    }
    return false;
}

core::Lane Intake::classify(const Message& m, queuefile::HeaderLinesOnce& headers) const {
    // The first batch's recipient domains, each once.
    std::vector<std::string> domains;
    for (const auto& r : m.env.recipients) {
        std::string d = lower(split_address(r.address()).domain);
        if (std::find(domains.begin(), domains.end(), d) == domains.end())
            domains.push_back(std::move(d));
    }
    std::optional<core::Lane> lane = priorities_.classify(m.env.sender().value_or(""), domains);
    if (!lane && priorities_.wants_headers()) lane = priorities_.classify_headers(headers.lines());
    core::Lane out = lane.value_or(core::Lane::normal);
    if (out != core::Lane::normal) log::info(m.id + ": priority lane " + core::lane_name(out));
    return out;
}

Intake::BatchRead Intake::read_batch(Message& m, int limit) {
    if (log::verbose())
        log::debug("qmgr_message_realloc: active " + m.id + " offset " +
                   std::to_string(m.env.rcpt_offset) + " limit " + std::to_string(limit));
    auto r = store_.read(m.id, m.env, limit);
    for (const auto& w : r.warnings)
        log::warn(m.id + ": " + w);
    if (r.ok) return BatchRead::ok;
    if (r.open_errno == ENOENT) {
        // Gone (postsuper): stock's warning, and the end that follows
        // finds nothing to quarantine.
        log::warn(r.error);
        return BatchRead::failed;
    }
    if (r.open_errno != 0) {
        // Out of descriptors or memory, an I/O error: nothing is wrong with
        // the file.  Stock exits here and leaves it to its successor; the
        // batch is read again later (warnings rate-limited).
        retry_.report("qmgr_message_realloc", {r.open_errno, r.error});
        return BatchRead::again;
    }
    log_read_error(m.id, r);
    return BatchRead::failed;
}

bool Intake::assign_now(Message& m, Batch& b) {
    const auto& env = m.env;
    b.rcpts = std::move(m.env.recipients);
    m.env.recipients.clear();
    b.trace_only = env.tflags & (protocol::del_flag::mta_vrfy | protocol::del_flag::usr_vrfy);
    b.request_class = (env.tflags & protocol::del_flag::mta_vrfy) ? "verify" : "resolve";
    b.context.force_expire = m.force_expire;
    b.context.ignore_defer_transports = (m.scan_flags & scan_flag::flush) || m.unthrottle;
    if (env.redirect() && !b.rcpts.empty()) {
        // Only the first recipient stays, redirected to the canonical form
        // of the redirect address (assign_rest asks trivial-rewrite).
        b.redirect_pending = true;
        return false;
    }
    // Like stock: sort by domain, then address, so that recipients for
    // one destination group into the same entries and repeated addresses
    // hit the resolver cache.
    sort_by_domain(b.rcpts);
    return route_known(m, b);
}

awaitable<void> Intake::assign_rest(Message& m, Batch b) {
    const auto& env = m.env;
    if (b.redirect_pending) {
        b.rcpts.resize(1);
        std::string canonical =
            unquote_local(co_await resolver_.rewrite("local", quote_local(*env.redirect())));
        b.rcpts[0].set_address(canonical);
        m.env.rcpt_offset = 0;
        m.env.rcpt_unread = 0;
        b.redirect_pending = false;
    }
    while (!route_known(m, b)) {
        // No co_await inside a conditional expression: GCC 12 miscompiles
        // the temporaries of one (the daemon crashed on them).
        queuefile::Recipient& rcpt = b.rcpts[b.next];
        protocol::ResolveReply reply = co_await resolver_.resolve(
            b.request_class, std::string(*env.sender()), std::string(rcpt.address()));
        place(m, b, rcpt, resolved_route(std::move(reply)));
        ++b.next;
    }
}

bool Intake::route_known(Message& m, Batch& b) {
    const auto& env = m.env;
    bool filtered = env.filter() && !b.trace_only && !env.redirect();
    for (; b.next < b.rcpts.size(); ++b.next) {
        queuefile::Recipient& rcpt = b.rcpts[b.next];
        if (filtered) {
            place(m, b, rcpt, filter_route(*env.filter(), rcpt.address(), params_));
            continue;
        }
        std::optional<protocol::ResolveReply> reply =
            resolver_.cached(b.request_class, *env.sender(), rcpt.address());
        if (!reply) return false;
        place(m, b, rcpt, resolved_route(std::move(*reply)));
    }
    assign_targets(m, b);
    return true;
}

void Intake::place(Message& m, Batch& b, queuefile::Recipient& rcpt, Route route) {
    rcpt.set_address(route.address);
    b.context.verify_over_limit = (m.env.tflags & protocol::del_flag::mta_vrfy) &&
                                  verify_probes_ > params_.address_verify_pending_request_limit;
    apply_overrides(route, b.context, params_);
    if (route.discard) {
        discard_double_bounce(m, rcpt);
        return;
    }
    bool per_recipient = sched_.transport(route.transport).cfg.dest_recipient_limit == 1;
    std::string queue = queue_name(route, per_recipient, params_);
    if (log::verbose())
        log::debug("qmgr_message_resolve: " + m.id + ": " + std::string(rcpt.address()) +
                   " -> transport " + route.transport + " queue " + queue + " nexthop " +
                   route.nexthop);
    // Reserved only now: a message waiting for its first answer from the
    // resolver, behind others, holds no room for its routes.
    if (b.targets.empty()) b.targets.reserve(b.rcpts.size());
    b.targets.push_back(
        {std::move(route.transport), std::move(route.nexthop), std::move(queue), std::move(rcpt)});
}

void Intake::assign_targets(Message& m, Batch& b) {
    // Assign the whole batch at once, against the scheduler's state now.
    admit(m);
    sched_.set_time(clock_.now());
    for (auto& tg : b.targets) {
        core::Transport& t = sched_.transport(tg.transport);
        if (params_.cqmgr_recovery_rate > 0 || params_.cqmgr_dead_backlog)
            m.add_destination(t.name + ":" + tg.nexthop);
        core::Dsn why;
        if (core::Queue* q = sched_.route(t, tg.queue, tg.nexthop, why, m.unthrottle)) {
            if (q->transport != &t && log::verbose())
                log::debug("qmgr_message_resolve: " + m.id + ": " + std::string(tg.rcpt.address()) +
                           " -> " + q->transport->name + " queue " + q->name + " (" + t.name + "/" +
                           tg.queue + " is dead)");
            CQMGR_PROBE_RECIPIENT_ASSIGN(m.id.c_str(), tg.rcpt.address_c_str(),
                                         q->transport->name.c_str(), q->name.c_str());
            sched_.assign(m, *q, std::move(tg.rcpt));
        } else {
            if (log::verbose())
                log::debug("qmgr_message_resolve: " + m.id + ": " + std::string(tg.rcpt.address()) +
                           " deferred in place: " + why.status + " " + why.reason);
            defer_(m, {tg.rcpt}, why); // retry is dead as well
        }
    }
}

void Intake::discard_double_bounce(Message& m, const queuefile::Recipient& r) const {
    log::info(status_line({m.id, "2.0.0", "sent", "undeliverable postmaster notification discarded",
                           params_.info_log_address_format == "internal"},
                          r, m.env, m.active_arrival, clock_.precise()));
    // Mark the recipient done in the queue file, as stock does.
    if (auto e = store_.mark_done(m.id, r.offset())) {
        log::warn(m.id + ": " + e->text);
        m.flags |= message_flag::defer; // keep the message rather than lose track
    }
}

void Intake::admit(Message& m) {
    if (m.admitted) return;
    m.admitted = true;
    ++admitted_;
}

void Intake::forget(const Message& m) {
    if (m.env.tflags & protocol::del_flag::mta_vrfy) verify_probes_--;
    if (m.admitted) --admitted_;
}

void Intake::log_read_error(const std::string& id, const queuefile::ReadResult& r) const {
    // Stock's record reader complains first about a damaged record, then
    // qmgr says what it made of it; the wordings carry different prefixes.
    std::string path = store_.path("active", id);
    if (!r.record_warning.empty()) log::warn(path + ": " + r.record_warning);
    switch (r.error_prefix) {
    case queuefile::ErrorPrefix::none:
        log::warn(r.error);
        break;
    case queuefile::ErrorPrefix::file_path:
        log::warn(path + ": " + r.error);
        break;
    case queuefile::ErrorPrefix::queue_id:
        log::warn(id + ": " + r.error);
        break;
    }
}

} // namespace cqmgr::qmgr
