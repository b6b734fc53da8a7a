#include "queue_manager.hpp"

#include "cqmgr/queuefile/envelope.hpp"
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

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Sets atime and mtime of `path` to `when`.
int set_time(const std::string& path, int64_t when) {
    utimbuf tb{static_cast<time_t>(when), static_cast<time_t>(when)};
    return ::utime(path.c_str(), &tb);
}

// mail_open_ok: a regular file with all of u=rwx.
bool open_ok(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           (st.st_mode & ready) == ready;
}
} // namespace

QueueManager::QueueManager(asio::io_context& io, const conf::MainCf& cf, const Settings& settings,
                           MasterLink& master)
    : io_(io), cf_(cf), settings_(settings), master_(master),
      layout_(settings.hash_queue_names, static_cast<int>(settings.hash_queue_depth)),
      resolver_(io.get_executor(), settings.rewrite_service_name,
                std::chrono::seconds(settings.qmgr_ipc_timeout)),
      dispatcher_(io, cf, settings, [this](Message& m) { on_entry_done(m); }),
      deferred_timer_(io) {}

int64_t QueueManager::now() const { return ::time(nullptr); }

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
    deferred_timer_.expires_after(std::chrono::seconds(settings_.queue_run_delay));
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
        case 'A': mods |= scan_flag::all; break;
        case 'F':
            mods |= scan_flag::flush;
            dispatcher_.flush_dead();
            break;
        case 'I':
        case 'W': scan_incoming = true; break;
        case 'D': scan_deferred = true; break;
        default: break; // includes the NUL that trigger clients append
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
    auto ids = queuefile::scan_queue(s.queue);
    s.ids.assign(ids.begin(), ids.end());
    schedule_feed();
}

std::string QueueManager::next_from_scan(Scan& s) {
    while (s.running) {
        if (s.ids.empty()) {
            s.running = false;
            if (s.restart) request_scan(s, 0);
            continue;
        }
        std::string id = std::move(s.ids.front());
        s.ids.pop_front();
        if (messages_.count(id)) continue;
        struct stat st;
        std::string path = layout_.path(s.queue, id);
        if (::lstat(path.c_str(), &st) < 0) continue;
        if (!S_ISREG(st.st_mode) || (st.st_mode & ready) != ready) continue;
        if (!(s.flags & scan_flag::all) && st.st_mtime > now() + 1) continue;
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
    if (static_cast<int64_t>(messages_.size()) < settings_.message_active_limit) {
        // Alternate between the scans so neither starves the other.
        for (int attempt = 0; attempt < 2; ++attempt) {
            feed_toggle_ = !feed_toggle_;
            Scan& s = feed_toggle_ ? incoming_ : deferred_;
            std::string id = next_from_scan(s);
            if (id.empty()) continue;
            fed_incoming = &s == &incoming_;
            int flags = s.flags;
            // Claim the slot now so the same ID is not fed twice.
            messages_.emplace(id, nullptr);
            asio::co_spawn(io_, activate(id, s.queue, flags), asio::detached);
            break;
        }
        if (incoming_.running || deferred_.running) schedule_feed();
    }
    master_.feed_tokens(static_cast<int>(settings_.default_process_limit), fed_incoming,
                        incoming_.running);
}

awaitable<void> QueueManager::activate(std::string id, std::string from_queue, int scan_flags) {
    auto forget = [&] {
        messages_.erase(id);
        schedule_feed();
    };
    std::string src = layout_.path(from_queue, id);
    struct stat st;
    if (::lstat(src.c_str(), &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & ready) != ready) {
        forget();
        co_return;
    }
    if (int err = layout_.move(from_queue, "active", id)) {
        if (err != ENOENT)
            log::warn("move " + src + " to " + layout_.path("active", id) + ": " + std::strerror(err));
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
        if (errno == EWOULDBLOCK) log::info(id + ": skipped, still being delivered");
        else log::warn(id + ": lock " + path + ": " + std::strerror(errno));
        ::close(fd);
        set_time(path, now() + 60);
        layout_.move("active", "incoming", id);
        forget();
        co_return;
    }

    auto msg = std::make_unique<Message>();
    Message& m = *msg;
    m.id = id;
    m.from_incoming = from_queue == "incoming";
    m.force_expire = st.st_mode & expire;
    m.unthrottle = st.st_mode & unthrottle;

    // Interim: read every recipient now.  Recipient pools with refills
    // driven by the scheduler come with the scheduler core (issue #6).
    auto r = queuefile::read_envelope(fd, m.env, read_batch);
    auto opened = r;
    std::vector<queuefile::Recipient> all = std::move(m.env.recipients);
    while (r.ok && m.env.rcpt_offset) {
        r = queuefile::read_envelope(fd, m.env, read_batch);
        for (auto& x : m.env.recipients) all.push_back(std::move(x));
    }
    if (opened.sender_seen)
        log::info(id + ": from=<" + *m.env.sender + ">, size=" + std::to_string(opened.opened_size) +
                  ", nrcpt=" + std::to_string(opened.opened_nrcpt) + " (queue active)");
    for (const auto& w : m.env.warnings) log::warn(id + ": " + w);
    if (!r.ok) {
        // Stock words this one without the queue ID.
        if (r.error.rfind("Unexpected record type", 0) == 0) log::warn(r.error);
        else log::warn(id + ": " + r.error);
        ::close(fd);
        save_corrupt(id);
        forget();
        co_return;
    }
    if (m.unthrottle) ::fchmod(fd, st.st_mode & 07777 & ~unthrottle);
    // After a delay warning went out, optionally confirm the final delivery.
    if (settings_.confirm_delay_cleared && m.env.warn_time < 0)
        m.env.tflags |= protocol::del_flag::rec_dly_sent;

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
    m.env.recipients = std::move(all);
    messages_[id] = std::move(msg);
    if (keep_deflog) {
        m.flags = 1;
        m.resolving = false;
        asio::co_spawn(io_, finish(&m), asio::detached);
        co_return;
    }
    co_await assign_recipients(m, scan_flags);
}

awaitable<void> QueueManager::assign_recipients(Message& m, int scan_flags) {
    using namespace protocol::resolve_flag;
    const auto& env = m.env;
    m.resolving = true;
    bool trace_only = env.tflags & 0x300;
    std::string request_class = (env.tflags & protocol::del_flag::mta_vrfy) ? "verify" : "resolve";
    auto recipients = std::move(m.env.recipients);
    m.env.recipients.clear();
    if (env.redirect && !recipients.empty()) {
        recipients.resize(1);
        recipients[0].address = *env.redirect;
    }
    for (auto& rcpt : recipients) {
        std::string transport, nexthop;
        int rflags = 0;
        if (env.filter && !trace_only && !env.redirect) {
            auto colon = env.filter->find(':');
            transport = env.filter->substr(0, colon);
            if (colon != std::string::npos) nexthop = env.filter->substr(colon + 1);
            if (nexthop.empty()) nexthop = settings_.default_filter_nexthop;
            if (nexthop.empty()) {
                auto at = rcpt.address.rfind('@');
                if (at != std::string::npos) nexthop = rcpt.address.substr(at + 1);
            }
            if (nexthop.empty()) nexthop = settings_.myhostname;
        } else {
            auto reply = co_await resolver_.resolve(request_class, *env.sender, rcpt.address);
            rflags = reply.flags;
            transport = reply.transport;
            nexthop = reply.nexthop;
            if (rflags & fail) {
                transport = "retry";
                nexthop = "4.3.0 address resolver failure";
                rflags = 0;
            } else if (rflags & error) {
                transport = "error";
                nexthop = "5.1.3 bad address syntax";
                rflags = 0;
            }
            if (reply.recipient != rcpt.address) rcpt.address = reply.recipient;
        }
        if (rcpt.address.empty()) {
            transport = "error";
            nexthop = "5.1.3 null recipient address";
        }
        if (m.force_expire) {
            transport = "retry";
            nexthop = "4.7.0 message is administratively expired";
        }
        if (transport != "retry" && transport != "error" && !(scan_flags & scan_flag::flush) &&
            !m.unthrottle &&
            std::find(settings_.defer_transports.begin(), settings_.defer_transports.end(),
                      transport) != settings_.defer_transports.end()) {
            transport = "retry";
            nexthop = "4.3.2 deferred transport";
        }

        Transport& t = dispatcher_.transport(transport);
        Queue* q;
        if (t.dead) {
            q = &dispatcher_.retry_queue(t.dead_dsn);
        } else {
            std::string qname = lower(nexthop);
            if (t.settings.dest_recipient_limit == 1 && transport != "error" && transport != "retry") {
                // Per-recipient queues: localpart@nexthop.
                std::string local = rcpt.address.substr(0, rcpt.address.rfind('@'));
                std::string delims = cf_.str("recipient_delimiter");
                if (!delims.empty() && local != "postmaster" && local != "MAILER-DAEMON" &&
                    local != settings_.double_bounce_sender) {
                    auto cut = local.find_first_of(delims);
                    if (cut != std::string::npos && cut > 0) local.resize(cut);
                }
                qname = lower(local + "@" + nexthop);
            }
            q = &dispatcher_.queue(t, qname, nexthop);
            if (q->dead) q = &dispatcher_.retry_queue(q->dead_dsn);
        }
        dispatcher_.add_recipient(m, *q, rcpt);
        dispatcher_.pump();
    }
    m.resolving = false;
    if (m.refcount == 0) co_await finish(&m);
}

void QueueManager::on_entry_done(Message& m) {
    if (m.refcount == 0 && !m.resolving) asio::co_spawn(io_, finish(&m), asio::detached);
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
    bool verp = env.verp_delims && !settings_.disable_verp_bounces;
    auto with_verp = [&](protocol::NoticeRequest n) {
        if (verp) {
            n.nrequest = protocol::bounce_cmd::verp;
            n.verp_delimiters = *env.verp_delims;
        }
        return n;
    };

    // 1. Recipients that bounced: have the bounce service send the notice.
    std::string bouncelog = layout_.path("bounce", id);
    struct stat st;
    if (::stat(bouncelog.c_str(), &st) == 0) {
        if (st.st_size == 0) {
            if (::unlink(bouncelog.c_str()) < 0 && errno != ENOENT)
                log::warn("remove " + bouncelog + ": " + std::strerror(errno));
        } else {
            m->flags |= co_await send_notice(settings_.bounce_service_name,
                                             with_verp(notice(protocol::bounce_cmd::flush, 0)));
        }
    }

    // 2. An agent that found the file corrupt took away its ready bits.
    std::string path = layout_.path("active", id);
    if (m->flags && !open_ok(path)) {
        save_corrupt(id);
        remove_message(m);
        co_return;
    }

    // 3. Trace reports: sendmail -v / -bv, and DSN SUCCESS notices.
    using namespace protocol::del_flag;
    if ((env.tflags & (usr_vrfy | record | rec_dly_sent)) ||
        (env.rflags & (queuefile::dsn_notify::success << 1))) {
        auto n = notice(protocol::bounce_cmd::trace, env.tflags);
        int status = co_await send_notice(settings_.trace_service_name, n);
        if (status == 0 && env.tflags == record && env.tflags_offset > 0) {
            int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
            if (fd >= 0) {
                if (::pwrite(fd, "K", 1, env.tflags_offset) != 1)
                    log::warn(id + ": update trace flags record: " + std::strerror(errno));
                ::close(fd);
            }
        }
        m->flags |= status;
    }

    // 4. Still undelivered: expire, or warn about the delay.
    if (m->flags) {
        int64_t t = now();
        int64_t life = env.sender->empty() ? settings_.bounce_queue_lifetime
                                            : settings_.maximal_queue_lifetime;
        if (m->force_expire || t >= env.create_time + life) {
            log::info(id + ": from=<" + *env.sender + ">, status=" +
                      (m->force_expire ? "force-expired" : "expired") + ", returned to sender");
            m->flags = co_await send_notice(
                settings_.defer_service_name,
                with_verp(notice(protocol::bounce_cmd::flush, protocol::bounce_flag::delrcpt)));
        } else if (env.warn_time > 0 && t >= env.warn_time - 1) {
            int status = co_await send_notice(settings_.defer_service_name,
                                              notice(protocol::bounce_cmd::warn, 0));
            if (status == 0 && env.warn_offset > 0) {
                std::string rec = queuefile::encode_record('W', "             -1");
                int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
                if (fd >= 0) {
                    if (::pwrite(fd, rec.data(), rec.size(), env.warn_offset) !=
                        static_cast<ssize_t>(rec.size()))
                        log::warn(id + ": update warning time record: " + std::strerror(errno));
                    ::close(fd);
                }
            }
        }
    }

    // 5. Final disposition.
    if (m->flags) {
        int64_t t = now();
        int64_t delay = env.create_time > 0 ? t - env.create_time : settings_.minimal_backoff_time;
        delay = std::clamp(delay, settings_.minimal_backoff_time, settings_.maximal_backoff_time);
        if (set_time(path, t + delay) < 0 && errno != ENOENT)
            log::warn("set time of " + path + ": " + std::strerror(errno));
        if (int err = layout_.move("active", "deferred", id); err && err != ENOENT)
            log::warn("move " + path + " to deferred: " + std::strerror(err));
    } else {
        if (::unlink(path.c_str()) == 0) log::info(id + ": removed");
        else if (errno != ENOENT) log::warn("remove " + path + ": " + std::strerror(errno));
    }
    remove_message(m);
}

void QueueManager::remove_message(Message* m) {
    messages_.erase(m->id);
    schedule_feed();
}

void QueueManager::save_corrupt(const std::string& id) {
    log::warn("saving corrupt file \"" + id + "\" from queue \"active\" to queue \"corrupt\"");
    if (int err = layout_.move("active", "corrupt", id); err && err != ENOENT)
        log::warn("move active/" + id + " to corrupt: " + std::strerror(err));
}

} // namespace cqmgr::qmgr
