#include "queue_manager.hpp"

#include "address.hpp"
#include "cqmgr/conf/config_error.hpp"
#include "cqmgr/queuefile/envelope.hpp"
#include "cqmgr/queuefile/update.hpp"
#include "delays.hpp"
#include "feedback_debug.hpp"
#include "log.hpp"
#include "notices.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

namespace cqmgr::qmgr {

namespace {
using queuefile::qmode::expire;
using queuefile::qmode::ready;
using queuefile::qmode::unthrottle;

// Recipients read per pass over the file, as stock caps it.
constexpr int read_batch = 5000;

// True when the message's end must go through the trace service: sendmail
// -v / -bv, a delay-cleared confirmation, or a DSN SUCCESS request.
bool wants_trace(const queuefile::Envelope& env) {
    using namespace protocol::del_flag;
    return (env.tflags & (usr_vrfy | record | rec_dly_sent)) ||
           (env.rflags & (queuefile::dsn_notify::success << 1));
}

// Case-insensitive equality (ASCII).
bool iequal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Orders recipients by lower-cased domain, then by address, keeping the file
// order of equal ones; each domain key is made once, not once per comparison.
void sort_by_domain(std::vector<queuefile::Recipient>& rcpts) {
    std::vector<std::string> domain;
    domain.reserve(rcpts.size());
    for (const auto& r : rcpts)
        domain.push_back(lower(std::string_view(r.address).substr(r.address.rfind('@') + 1)));
    std::vector<size_t> order(rcpts.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (int c = domain[a].compare(domain[b]); c != 0) return c < 0;
        return rcpts[a].address < rcpts[b].address;
    });
    std::vector<queuefile::Recipient> sorted;
    sorted.reserve(rcpts.size());
    for (size_t i : order)
        sorted.push_back(std::move(rcpts[i]));
    rcpts = std::move(sorted);
}

// Sets atime and mtime of `path` to `when`.
int set_time(const std::string& path, int64_t when) {
    utimbuf tb{static_cast<time_t>(when), static_cast<time_t>(when)};
    return ::utime(path.c_str(), &tb);
}

// mail_open_ok: a regular file with all of u=rwx.
bool open_ok(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & ready) == ready;
}
} // namespace

QueueManager::QueueManager(asio::io_context& io, const conf::MainCf& cf,
                           const conf::QmgrParams& params, const FlushDomains& flush_domains,
                           MasterLink& master)
    : io_(io), params_(params), flush_domains_(flush_domains), master_(master),
      layout_(params.hash_queue_names, static_cast<int>(params.hash_queue_depth)),
      resolver_(io.get_executor(), params.rewrite_service_name,
                std::chrono::seconds(params.qmgr_ipc_timeout)),
      transport_settings_(cf, params),
      sched_(
          scheduler_config(params), [this](const std::string& t) { return transport_settings_(t); },
          *this),
      delivery_(io, params, sched_), sched_timer_(io), deferred_timer_(io) {
    sched_.set_time(::time(nullptr));
}

int64_t QueueManager::now() const {
    return ::time(nullptr);
}

std::string QueueManager::log_addr(std::string_view addr) const {
    return params_.info_log_address_format == "internal" ? std::string(addr) : quote_local(addr);
}

void QueueManager::start() {
    // Whatever a previous queue manager left in active goes back to incoming
    // with mtime "now", so it is taken up again at once.
    for (const auto& id : queuefile::scan_queue("active")) {
        set_time(layout_.path("active", id), now());
        if (int err = layout_.move("active", "incoming", id); err && err != ENOENT)
            log::warn("move active/" + id + " to incoming: " + std::strerror(err));
    }
    request_scan(incoming_, 0);
    request_scan(deferred_, 0);
    arm_deferred_timer();
}

void QueueManager::arm_deferred_timer() {
    deferred_timer_.expires_after(std::chrono::seconds(params_.queue_run_delay));
    deferred_timer_.async_wait([this](const error_code& ec) {
        if (ec) return;
        request_scan(deferred_, 0);
        arm_deferred_timer();
    });
}

void QueueManager::on_trigger(std::string_view bytes) {
    int mods = 0;
    bool scan_incoming = false, scan_deferred = false;
    for (char c : bytes) {
        switch (c) {
        case 'A':
            mods |= scan_flag::all;
            break;
        case 'F':
            mods |= scan_flag::flush;
            sched_.set_time(now());
            sched_.flush_dead();
            break;
        case 'I':
        case 'W':
            scan_incoming = true;
            break;
        case 'D':
            scan_deferred = true;
            break;
        default:
            break; // includes the NUL that trigger clients append
        }
    }
    for (Scan* s : {&incoming_, &deferred_}) {
        if (s->running) s->flags |= mods;
        s->next_flags |= mods;
    }
    if (scan_incoming) request_scan(incoming_, 0);
    if (scan_deferred) request_scan(deferred_, 0);
}

void QueueManager::request_scan(Scan& s, int flags) {
    s.next_flags |= flags;
    if (s.running) {
        s.restart = true;
        return;
    }
    s.running = true;
    s.restart = false;
    s.flags = s.next_flags;
    s.next_flags = 0;
    s.scanner.start(s.queue);
    schedule_feed();
}

std::string QueueManager::next_from_scan(Scan& s, mode_t& mode) {
    while (s.running) {
        auto next = s.scanner.next();
        if (!next) {
            s.running = false;
            if (s.restart) request_scan(s, 0);
            continue;
        }
        std::string id = std::move(*next);
        if (messages_.count(id)) continue;
        struct stat st;
        std::string path = layout_.path(s.queue, id);
        if (::lstat(path.c_str(), &st) < 0) continue;
        if (!S_ISREG(st.st_mode) || (st.st_mode & ready) != ready) continue;
        if (!(s.flags & scan_flag::all) && st.st_mtime > now() + 1) continue;
        mode = st.st_mode;
        return id;
    }
    return {};
}

void QueueManager::schedule_feed() {
    if (feed_posted_) return;
    feed_posted_ = true;
    asio::post(io_, [this] { feed(); });
}

void QueueManager::feed() {
    feed_posted_ = false;
    bool fed_incoming = false;
    if (static_cast<int64_t>(messages_.size()) < params_.qmgr_message_active_limit) {
        // Alternate between the scans so neither starves the other.
        for (int attempt = 0; attempt < 2; ++attempt) {
            feed_toggle_ = !feed_toggle_;
            Scan& s = feed_toggle_ ? incoming_ : deferred_;
            mode_t mode = 0;
            std::string id = next_from_scan(s, mode);
            if (id.empty()) continue;
            fed_incoming = &s == &incoming_;
            int flags = s.flags;
            // Claim the slot now so the same ID is not fed twice.
            messages_.emplace(id, nullptr);
            asio::co_spawn(io_, activate(id, s.queue, flags, mode), asio::detached);
            break;
        }
        if (incoming_.running || deferred_.running) schedule_feed();
    }
    master_.feed_tokens(static_cast<int>(params_.default_process_limit), fed_incoming,
                        incoming_.running);
}

awaitable<void> QueueManager::activate(std::string id, std::string from_queue, int scan_flags,
                                       mode_t mode) {
    auto forget = [&] {
        messages_.erase(id);
        schedule_feed();
    };
    // The scan's lstat was the readiness check, as stock makes one per file;
    // a file that went away since is noticed by the rename.
    std::string src = layout_.path(from_queue, id);
    if (int err = layout_.move(from_queue, "active", id)) {
        if (err != ENOENT)
            log::warn("move " + src + " to " + layout_.path("active", id) + ": " +
                      std::strerror(err));
        forget();
        co_return;
    }
    std::string path = layout_.path("active", id);
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        log::warn(id + ": open " + path + ": " + std::strerror(errno));
        forget();
        co_return;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) < 0) {
        // Another queue manager's agent still has it: put it back for later.
        if (errno == EWOULDBLOCK)
            log::info(id + ": skipped, still being delivered");
        else
            log::warn(id + ": lock " + path + ": " + std::strerror(errno));
        ::close(fd);
        set_time(path, now() + 60);
        layout_.move("active", "incoming", id);
        forget();
        co_return;
    }

    auto msg = std::make_unique<Message>();
    Message& m = *msg;
    m.id = id;
    m.force_expire = mode & expire;
    m.unthrottle = mode & unthrottle;
    m.scan_flags = scan_flags;
    sched_.set_time(now());
    sched_.message_add(m);

    // The first pass reads every non-recipient record and the first batch
    // of recipients, sized by how full the active queue is.
    auto r = queuefile::read_envelope(fd, m.env, sched_.first_batch_limit(m), path);
    if (r.sender_seen)
        log::info(id + ": from=<" + log_addr(*m.env.sender) +
                  ">, size=" + std::to_string(r.opened_size) +
                  ", nrcpt=" + std::to_string(r.opened_nrcpt) + " (queue active)");
    for (const auto& w : m.env.warnings)
        log::warn(id + ": " + w);
    m.env.warnings.clear();
    if (!r.ok) {
        log_read_error(id, path, r);
        ::close(fd);
        save_corrupt(id);
        forget();
        co_return;
    }
    if (m.unthrottle) ::fchmod(fd, mode & 07777 & ~unthrottle);
    // After a delay warning went out, optionally confirm the final delivery.
    if (params_.confirm_delay_cleared && m.env.warn_time < 0)
        m.env.tflags |= protocol::del_flag::rec_dly_sent;
    m.single_rcpt = m.env.verp_delims.has_value();
    if (m.env.tflags & protocol::del_flag::mta_vrfy) verify_probes_++;

    // A fresh attempt starts with a fresh defer log, except for a message
    // that is being force-expired with reasons already on file: that log is
    // what goes back to the sender.
    std::string deflog = layout_.path("defer", id);
    struct stat dst;
    bool keep_deflog = m.force_expire && ::stat(deflog.c_str(), &dst) == 0 && dst.st_size > 0;
    if (!keep_deflog && ::unlink(deflog.c_str()) < 0 && errno != ENOENT)
        log::warn("remove " + deflog + ": " + std::strerror(errno));
    ::close(fd); // drops the lock: agents and bounce take shared locks

    timeval tv;
    ::gettimeofday(&tv, nullptr);
    m.active_arrival = {tv.tv_sec, tv.tv_usec};
    messages_[id] = std::move(msg);
    if (keep_deflog) {
        m.flags = 1;
        m.env.rcpt_offset = 0;
        m.env.recipients.clear();
        co_await finish(&m);
        co_return;
    }
    m.reading = true;
    co_await assign_recipients(m, std::move(m.env.recipients));
}

awaitable<bool> QueueManager::read_batch(Message& m, int limit, int fd) {
    bool own = fd < 0;
    std::string path = layout_.path("active", m.id);
    if (own) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    // A batch that cannot be read ends the reading: the message is finished
    // with what it has and retried later (the file keeps the rest).
    auto give_up = [&] {
        m.env.rcpt_offset = 0;
        m.flags |= 1;
        m.reading = false;
        sched_.batch_done(m, false, 0);
        maybe_finish(m);
    };
    if (fd < 0) {
        log::warn(m.id + ": open " + path + ": " + std::strerror(errno));
        give_up();
        co_return false;
    }
    auto r = queuefile::read_envelope(fd, m.env, limit, path);
    if (own) ::close(fd);
    for (const auto& w : m.env.warnings)
        log::warn(m.id + ": " + w);
    m.env.warnings.clear();
    if (!r.ok) {
        // The file changed under us; leave the rest for the next attempt.
        log_read_error(m.id, path, r);
        give_up();
        co_return false;
    }
    co_await assign_recipients(m, std::move(m.env.recipients));
    co_return true;
}

void QueueManager::refill(core::Message& cm, int limit) {
    auto& m = static_cast<Message&>(cm);
    if (m.reading || m.finishing || m.env.rcpt_offset == 0) {
        sched_.batch_done(m, m.env.rcpt_offset != 0, m.env.rcpt_unread);
        return;
    }
    m.reading = true;
    asio::co_spawn(
        io_, [this, &m, limit]() -> awaitable<void> { co_await read_batch(m, limit); },
        asio::detached);
}

awaitable<void> QueueManager::assign_recipients(Message& m,
                                                std::vector<queuefile::Recipient> rcpts) {
    using namespace protocol::resolve_flag;
    const auto& env = m.env;
    bool trace_only = env.tflags & 0x300;
    std::string request_class = (env.tflags & protocol::del_flag::mta_vrfy) ? "verify" : "resolve";
    if (env.redirect && !rcpts.empty()) {
        // Only the first recipient stays, redirected to the canonical form
        // of the redirect address; no more recipients are read.
        rcpts.resize(1);
        rcpts[0].address =
            unquote_local(co_await resolver_.rewrite("local", quote_local(*env.redirect)));
        m.env.rcpt_offset = 0;
    } else {
        // Like stock: sort by domain, then address, so that recipients for
        // one destination group into the same entries and repeated
        // addresses hit the resolver cache.
        sort_by_domain(rcpts);
    }
    struct Target {
        std::string transport, queue, nexthop;
        queuefile::Recipient rcpt;
    };
    std::vector<Target> targets;
    targets.reserve(rcpts.size());
    for (auto& rcpt : rcpts) {
        std::string transport, nexthop;
        if (env.filter && !trace_only && !env.redirect) {
            auto colon = env.filter->find(':');
            transport = env.filter->substr(0, colon);
            if (colon != std::string::npos) nexthop = env.filter->substr(colon + 1);
            if (nexthop.empty()) nexthop = params_.default_filter_nexthop;
            if (nexthop.empty()) {
                auto at = rcpt.address.rfind('@');
                if (at != std::string::npos) nexthop = rcpt.address.substr(at + 1);
            }
            if (nexthop.empty()) nexthop = params_.myhostname;
        } else {
            auto reply = co_await resolver_.resolve(request_class, *env.sender, rcpt.address);
            transport = reply.transport;
            nexthop = reply.nexthop;
            if (reply.flags & fail) {
                transport = "retry";
                nexthop = "4.3.0 address resolver failure";
            } else if (reply.flags & error) {
                transport = "error";
                nexthop = "5.1.3 bad address syntax";
            }
            if (reply.recipient != rcpt.address) rcpt.address = reply.recipient;
            // Mail for the local double-bounce address is discarded here.
            if (!(reply.flags & (fail | error)) && (reply.flags & class_local) &&
                iequal(local_part(rcpt.address), params_.double_bounce_sender)) {
                discard_double_bounce(m, rcpt);
                continue;
            }
        }
        if (rcpt.address.empty()) {
            transport = "error";
            nexthop = "5.1.3 null recipient address";
        }
        if (m.force_expire) {
            transport = "retry";
            nexthop = "4.7.0 message is administratively expired";
        }
        if ((env.tflags & protocol::del_flag::mta_vrfy) &&
            verify_probes_ > params_.address_verify_pending_request_limit) {
            transport = "retry";
            nexthop = "4.3.2 Too many address verification requests";
        }
        if (transport != "retry" && transport != "error" && !(m.scan_flags & scan_flag::flush) &&
            !m.unthrottle &&
            std::find(params_.defer_transports.begin(), params_.defer_transports.end(),
                      transport) != params_.defer_transports.end()) {
            transport = "retry";
            nexthop = "4.3.2 deferred transport";
        }
        std::string qname = lower(nexthop);
        if (transport != "error" && transport != "retry" &&
            sched_.transport(transport).cfg.dest_recipient_limit == 1) {
            // Per-recipient queues: localpart@nexthop.
            std::string local = rcpt.address.substr(0, rcpt.address.rfind('@'));
            const std::string& delims = params_.recipient_delimiter;
            // owner-list and list-request keep their '-' (owner_request_special).
            bool owner_request =
                params_.owner_request_special && delims.find('-') != std::string::npos &&
                (local.rfind("owner-", 0) == 0 ||
                 (local.size() > 8 && local.compare(local.size() - 8, 8, "-request") == 0));
            if (!delims.empty() && !owner_request && !iequal(local, "postmaster") &&
                !iequal(local, "MAILER-DAEMON") && !iequal(local, params_.double_bounce_sender)) {
                auto cut = local.find_first_of(delims);
                if (cut != std::string::npos && cut > 0) local.resize(cut);
            }
            qname = lower(local + "@" + nexthop);
        }
        targets.push_back(
            {std::move(transport), std::move(qname), std::move(nexthop), std::move(rcpt)});
    }
    // Assign the whole batch at once, against the scheduler's state now.
    sched_.set_time(now());
    for (auto& tg : targets) {
        core::Transport& t = sched_.transport(tg.transport);
        core::Dsn why;
        if (core::Queue* q = sched_.route(t, tg.queue, tg.nexthop, why, m.unthrottle))
            sched_.assign(m, *q, std::move(tg.rcpt));
        else
            defer_recipients(m, {tg.rcpt}, why); // retry is dead as well
    }
    m.reading = false;
    sched_.batch_done(m, m.env.rcpt_offset != 0, m.env.rcpt_unread);
    delivery_.pump();
    maybe_finish(m);
}

void QueueManager::discard_double_bounce(Message& m, const queuefile::Recipient& r) {
    log::info(m.id + ": to=<" + log_addr(r.address) + ">" +
              (!r.orig_rcpt.empty() && !iequal(r.orig_rcpt, r.address)
                   ? ", orig_to=<" + log_addr(r.orig_rcpt) + ">"
                   : "") +
              ", relay=none, " +
              delay_text(m.env.arrival_sec, m.env.arrival_usec, m.active_arrival) +
              ", dsn=2.0.0, status=sent (undeliverable postmaster notification discarded)");
    // Mark the recipient done in the queue file, as stock does.
    if (auto err = queuefile::mark_recipient_done(layout_.path("active", m.id), r.offset)) {
        log::warn(m.id + ": " + err->message());
        m.flags |= 1; // keep the message rather than lose track
    }
}

void QueueManager::message_done(core::Message& cm) {
    maybe_finish(static_cast<Message&>(cm));
}

void QueueManager::maybe_finish(Message& m) {
    if (m.refcount == 0 && !m.reading && !m.finishing && m.io_pending == 0) {
        m.finishing = true;
        // Forgetting the message waits for the next turn either way: we may
        // be inside a scheduler callback that still uses it.
        if (finish_now(m))
            asio::post(io_, [this, mp = &m] { remove_message(mp); });
        else
            asio::co_spawn(io_, finish(&m), asio::detached);
    }
}

bool QueueManager::finish_now(Message& m) {
    // The common end, every recipient done with nothing to report, needs no
    // service and no await: remove the file at once, in the same turn as the
    // last agent's reply.  The agent closes its descriptor right after it
    // replies; an unlink that comes first leaves the freeing of the file's
    // blocks to that close, in the agent, instead of in this single thread
    // (on ext4 with discard, a tenth of the queue manager's CPU at 50,000
    // messages, measured).  finish() checks the same conditions in the same
    // order and would only come to the same removal later.
    if (m.flags || m.env.rcpt_offset != 0 || wants_trace(m.env)) return false;
    struct stat st;
    if (::stat(layout_.path("bounce", m.id).c_str(), &st) == 0 || errno != ENOENT) return false;
    remove_finished(m.id);
    return true;
}

void QueueManager::remove_finished(const std::string& id) {
    // Stock's wording when the file went away meanwhile (postsuper).
    if (remove_queue_file(layout_.path("active", id)) == 0)
        log::info(id + ": removed");
    else
        log::warn("qmgr_active_done_3_generic: remove " + id +
                  " from active: " + std::strerror(errno));
}

void QueueManager::warn(const std::string& text) {
    log::warn(text);
}

void QueueManager::queue_feedback(const core::Queue& q, bool positive, double step) {
    if (params_.destination_concurrency_feedback_debug) log_queue_feedback(q, positive, step);
}

void QueueManager::queue_window(const core::Queue& q, bool positive) {
    if (params_.destination_concurrency_feedback_debug) log_queue_window(q, positive);
}

void QueueManager::wakeup() {
    delivery_.pump();
    arm_scheduler_timer();
}

void QueueManager::arm_scheduler_timer() {
    auto due = sched_.next_timer();
    if (!due || (sched_timer_due_ != 0 && sched_timer_due_ <= *due)) return;
    sched_timer_due_ = *due;
    sched_timer_.expires_after(std::chrono::seconds(std::max<int64_t>(*due - now(), 0)));
    sched_timer_.async_wait([this](const error_code& ec) {
        if (ec) return;
        sched_timer_due_ = 0;
        sched_.set_time(now());
        delivery_.pump();
        arm_scheduler_timer();
    });
}

void QueueManager::defer_recipients(core::Message& cm,
                                    const std::vector<queuefile::Recipient>& rcpts,
                                    const core::Dsn& dsn) {
    auto& m = static_cast<Message&>(cm);
    m.flags |= 1;
    for (const auto& r : rcpts) {
        m.io_pending++;
        asio::co_spawn(io_, append_deferral(&m, r, dsn), asio::detached);
    }
}

awaitable<void> QueueManager::append_deferral(Message* m, queuefile::Recipient r, core::Dsn dsn) {
    // The retry transport cannot take these: record the deferral ourselves,
    // as stock's defer_append does: the defer log, the log line, then the
    // fast flush log.
    if (dsn.status.empty() || dsn.status[0] != '4') dsn.status = "4.0.0";
    // Awaited in a statement of its own: GCC 12 miscompiled this co_await as
    // an if condition (the daemon died of SIGILL).
    int status = co_await send_deferral(params_.defer_service_name, m->id, m->env.tflags, r,
                                        dsn.status, dsn.reason);
    if (status != 0) log::warn(m->id + ": " + params_.defer_service_name + " service failure");
    log::info(m->id + ": to=<" + log_addr(r.address) + ">" +
              (!r.orig_rcpt.empty() && !iequal(r.orig_rcpt, r.address)
                   ? ", orig_to=<" + log_addr(r.orig_rcpt) + ">"
                   : "") +
              ", relay=none, " +
              delay_text(m->env.arrival_sec, m->env.arrival_usec, m->active_arrival) +
              ", dsn=" + dsn.status + ", status=deferred (" + dsn.reason + ")");
    co_await flush_add_deferred(flush_domains_, params_.flush_service_name, m->id, r.address);
    m->io_pending--;
    maybe_finish(*m);
}

awaitable<void> QueueManager::finish(Message* m) {
    const std::string id = m->id;
    const auto& env = m->env;
    auto notice = [&](int nrequest, int flags) {
        protocol::NoticeRequest n;
        n.nrequest = nrequest;
        n.flags = flags;
        n.queue_id = id;
        n.encoding = env.encoding;
        n.smtputf8 = env.smtputf8;
        n.sender = *env.sender;
        n.envelope_id = env.dsn_envid;
        n.ret_flags = env.dsn_ret;
        return n;
    };
    bool verp = env.verp_delims && !params_.disable_verp_bounces;
    auto with_verp = [&](protocol::NoticeRequest n) {
        if (verp) {
            n.nrequest = protocol::bounce_cmd::verp;
            n.verp_delimiters = *env.verp_delims;
        }
        return n;
    };
    std::string path = layout_.path("active", id);

    for (;;) {
        // 1. Recipients that bounced: have the bounce service send the notice.
        std::string bouncelog = layout_.path("bounce", id);
        struct stat st;
        if (::stat(bouncelog.c_str(), &st) == 0) {
            if (st.st_size == 0) {
                if (::unlink(bouncelog.c_str()) < 0 && errno != ENOENT)
                    log::warn("remove " + bouncelog + ": " + std::strerror(errno));
            } else {
                m->flags |= co_await send_notice(params_.bounce_service_name,
                                                 with_verp(notice(protocol::bounce_cmd::flush, 0)));
            }
        }
        // 2. An agent that found the file corrupt took away its ready bits.
        if (m->flags && !open_ok(path)) {
            save_corrupt(id);
            remove_message(m);
            co_return;
        }
        // 3. More recipients in the file: read the next batch first.
        if (m->env.rcpt_offset == 0) break;
        m->reading = true;
        sched_.set_time(now());
        co_await read_batch(*m, sched_.first_batch_limit(*m));
        if (m->refcount > 0 || m->io_pending > 0) {
            // They are on their way; the last one brings us back here.
            m->finishing = false;
            maybe_finish(*m);
            co_return;
        }
    }

    // 4. Trace reports: sendmail -v / -bv, and DSN SUCCESS notices.
    if (wants_trace(env)) {
        int status = co_await send_notice(params_.trace_service_name,
                                          notice(protocol::bounce_cmd::trace, env.tflags));
        if (status == 0 && env.tflags == protocol::del_flag::record && env.tflags_offset > 0) {
            if (auto err = queuefile::kill_record(path, env.tflags_offset))
                log::warn(id + ": " + err->message());
        }
        m->flags |= status;
    }

    // 5. Still undelivered: expire, or warn about the delay.
    if (m->flags) {
        int64_t t = now();
        int64_t life =
            env.sender->empty() ? params_.bounce_queue_lifetime : params_.maximal_queue_lifetime;
        if (m->force_expire || t >= env.create_time + life) {
            log::info(id + ": from=<" + log_addr(*env.sender) + ">, status=" +
                      (m->force_expire ? "force-expired" : "expired") + ", returned to sender");
            m->flags = co_await send_notice(
                params_.defer_service_name,
                with_verp(notice(protocol::bounce_cmd::flush, protocol::bounce_flag::delrcpt)));
        } else if (env.warn_time > 0 && t >= env.warn_time - 1) {
            int status = co_await send_notice(params_.defer_service_name,
                                              notice(protocol::bounce_cmd::warn, 0));
            if (status == 0 && env.warn_offset > 0) {
                if (auto err = queuefile::rewrite_warn_time(path, env.warn_offset))
                    log::warn(id + ": " + err->message());
            }
        }
    }

    // 6. Final disposition.
    if (m->flags) {
        int64_t t = now();
        int64_t delay = env.create_time > 0 ? t - env.create_time : params_.minimal_backoff_time;
        delay = std::clamp(delay, params_.minimal_backoff_time, params_.maximal_backoff_time);
        if (set_time(path, t + delay) < 0 && errno != ENOENT)
            log::warn("set time of " + path + ": " + std::strerror(errno));
        if (int err = layout_.move("active", "deferred", id); err && err != ENOENT)
            log::warn("move " + path + " to deferred: " + std::strerror(err));
    } else {
        remove_finished(id);
    }
    remove_message(m);
}

int QueueManager::remove_queue_file(const std::string& path) {
    if (!params_.dont_remove) return ::unlink(path.c_str());
    // dont_remove = yes: keep it in saved/, adding '+' until the name is free.
    std::string target = "saved/" + path.substr(path.rfind('/') + 1);
    struct stat st;
    while (::lstat(target.c_str(), &st) == 0)
        target += '+';
    return ::rename(path.c_str(), target.c_str());
}

void QueueManager::log_read_error(const std::string& id, const std::string& path,
                                  const queuefile::ReadResult& r) {
    // Stock's record reader complains first about a damaged record, then
    // qmgr says what it made of it; the wordings carry different prefixes.
    if (!r.record_warning.empty()) log::warn(path + ": " + r.record_warning);
    if (r.error.rfind("Unexpected record type", 0) == 0)
        log::warn(r.error);
    else if (r.error.rfind("malformed pointer record", 0) == 0 ||
             r.error.rfind("too many reverse jump", 0) == 0)
        log::warn(path + ": " + r.error);
    else
        log::warn(id + ": " + r.error);
}

void QueueManager::remove_message(Message* m) {
    if (m->env.tflags & protocol::del_flag::mta_vrfy) verify_probes_--;
    sched_.message_free(*m);
    std::string id = m->id;
    messages_.erase(id); // destroys *m
    schedule_feed();
}

void QueueManager::save_corrupt(const std::string& id) {
    // Like stock: a file that is already gone (postsuper -h/-d) is no news.
    int err = layout_.move("active", "corrupt", id);
    if (err == 0)
        log::warn("saving corrupt file \"" + id + "\" from queue \"active\" to queue \"corrupt\"");
    else if (err != ENOENT)
        log::warn("move active/" + id + " to corrupt: " + std::strerror(err));
}

} // namespace cqmgr::qmgr
