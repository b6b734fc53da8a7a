#include "dispatcher.hpp"

#include "log.hpp"

#include <cctype>

namespace cqmgr::qmgr {

namespace {
// Stock qmgr allows this many connections per transport that an agent has
// not yet accepted and announced itself on.
constexpr int max_pending_per_transport = 2;
constexpr std::string_view suspended = "delivery temporarily suspended: ";

// True for an RFC 3463 status like 4.4.1 (class 2, 4 or 5).
bool dsn_valid(std::string_view s) {
    if (s.size() < 5 || (s[0] != '2' && s[0] != '4' && s[0] != '5') || s[1] != '.') return false;
    size_t i = 2, digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
    if (digits < 1 || digits > 3 || i >= s.size() || s[i] != '.') return false;
    ++i;
    digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
    return digits >= 1 && digits <= 3 && i == s.size();
}

} // namespace

Dispatcher::Dispatcher(asio::io_context& io, const conf::MainCf& cf, const Settings& settings,
                       EntryDone on_entry_done)
    : io_(io), cf_(cf), settings_(settings), on_entry_done_(std::move(on_entry_done)) {}

Transport& Dispatcher::transport(const std::string& name) {
    auto& slot = transports_[name];
    if (!slot) {
        slot = std::make_unique<Transport>();
        slot->name = name;
        slot->settings = settings_.for_transport(cf_, name);
        transport_rr_.push_back(slot.get());
    }
    return *slot;
}

Queue& Dispatcher::queue(Transport& t, const std::string& name, const std::string& nexthop) {
    auto& slot = t.queues[name];
    if (!slot) {
        slot = std::make_unique<Queue>();
        slot->transport = &t;
        slot->name = name;
        slot->nexthop = nexthop;
        slot->window = static_cast<int>(t.settings.initial_concurrency);
    }
    return *slot;
}

Queue& Dispatcher::retry_queue(const Dsn& dsn) {
    std::string name = dsn.status + " " + dsn.reason;
    return queue(transport("retry"), name, name);
}

void Dispatcher::add_recipient(Message& m, Queue& q, const queuefile::Recipient& r) {
    int64_t limit = q.transport->settings.dest_recipient_limit;
    // VERP mail goes one recipient per request.
    if (m.env.verp_delims) limit = 1;
    auto key = std::make_pair(&m, &q);
    auto it = open_entries_.find(key);
    if (it != open_entries_.end() &&
        (limit == 0 || static_cast<int64_t>(it->second->recipients.size()) < limit)) {
        it->second->recipients.push_back(r);
        return;
    }
    auto e = std::make_unique<Entry>();
    e->message = &m;
    e->queue = &q;
    e->recipients.push_back(r);
    m.refcount++;
    open_entries_[key] = e.get();
    enqueue(q, std::move(e));
}

void Dispatcher::enqueue(Queue& q, std::unique_ptr<Entry> e) {
    e->queue = &q;
    q.todo.push_back(std::move(e));
    if (!q.in_rotation) {
        q.in_rotation = true;
        q.transport->rotation.push_back(&q);
    }
}

int Dispatcher::selectable(Transport& t, int cap) {
    int n = 0;
    for (Queue* q : t.rotation) {
        if (q->dead) continue;
        n += std::min<int>(std::max(q->window - q->busy, 0), static_cast<int>(q->todo.size()));
        if (n >= cap) break;
    }
    return n;
}

void Dispatcher::pump() {
    // Coalesce: many calls in one loop pass cost one selection pass.
    if (pump_posted_) return;
    pump_posted_ = true;
    asio::post(io_, [this] {
        pump_posted_ = false;
        for (Transport* t : transport_rr_) {
            if (t->dead) continue;
            while (t->pending < max_pending_per_transport &&
                   selectable(*t, t->pending + 1) >= t->pending + 1) {
                t->pending++;
                asio::co_spawn(io_, run_connection(t), asio::detached);
            }
        }
    });
}

std::unique_ptr<Entry> Dispatcher::select_entry(Transport& t) {
    for (size_t n = t.rotation.size(); n > 0; --n) {
        Queue* q = t.rotation.front();
        t.rotation.pop_front();
        if (q->todo.empty()) {
            q->in_rotation = false;
            continue;
        }
        t.rotation.push_back(q);
        if (q->dead || q->busy >= q->window) continue;
        auto e = std::move(q->todo.front());
        q->todo.pop_front();
        open_entries_.erase({e->message, q});
        q->busy++;
        return e;
    }
    return nullptr;
}

awaitable<void> Dispatcher::run_connection(Transport* t) {
    auto conv = protocol::Conversation::create(io_.get_executor());
    std::string path = "private/" + t->name;
    auto ipc = std::chrono::seconds(settings_.qmgr_ipc_timeout);
    auto agent_wait = std::chrono::seconds(settings_.daemon_timeout);
    bool ok = co_await conv->connect(path, ipc);
    if (!ok) {
        t->pending--;
        log::warn("connect to transport " + path + ": " + conv->error());
        transport_dead(*t, {"4.3.0", "mail transport unavailable"});
        pump();
        co_return;
    }
    protocol::AttrList ann;
    ok = co_await conv->read_list(ann, agent_wait);
    t->pending--;
    if (!ok || !protocol::is_announcement(ann, protocol::delivery_protocol)) {
        log::warn(path + " socket: " +
                  (ok ? std::string("malformed response") : conv->error()));
        conv->close();
        transport_dead(*t, {"4.3.0", "mail transport unavailable"});
        pump();
        co_return;
    }
    auto e = select_entry(*t);
    if (!e) {
        // The work went elsewhere meanwhile; the agent just sees EOF.
        conv->close();
        pump();
        co_return;
    }
    pump();
    co_await deliver(conv, std::move(e));
}

awaitable<void> Dispatcher::deliver(std::shared_ptr<protocol::Conversation> conv,
                                    std::unique_ptr<Entry> e) {
    Queue& q = *e->queue;
    Transport& t = *q.transport;
    Message& m = *e->message;
    const auto& env = m.env;

    protocol::DeliveryRequest req;
    req.flags = env.tflags | (env.inspect ? protocol::del_flag::bounce : protocol::del_flag::deflt);
    req.queue_id = m.id;
    req.data_offset = env.data_offset;
    req.data_size = env.cont_length;
    req.nexthop = q.nexthop;
    req.encoding = env.encoding;
    req.smtputf8 = env.smtputf8;
    req.sender = *env.sender;
    req.envelope_id = env.dsn_envid;
    req.ret_flags = env.dsn_ret;
    req.stats.incoming_arrival = {env.arrival_sec, env.arrival_usec};
    req.stats.active_arrival = m.active_arrival;
    req.log_client_name = env.client_name;
    req.log_client_address = env.client_addr;
    req.log_client_port = env.client_port;
    req.log_protocol_name = env.client_proto;
    req.log_helo_name = env.client_helo;
    req.sasl_method = env.sasl_method;
    req.sasl_username = env.sasl_username;
    req.sasl_sender = env.sasl_sender;
    req.log_ident = env.log_ident;
    req.rewrite_context = env.rewrite_context;
    for (const auto& r : e->recipients)
        req.recipients.push_back({r.orig_rcpt, r.address, r.offset, r.dsn_orcpt, r.notify_flags});

    auto ipc = std::chrono::seconds(settings_.qmgr_ipc_timeout);
    auto agent_wait = std::chrono::seconds(settings_.daemon_timeout);
    bool crash = false;
    protocol::DeliveryReply reply;
    if (!co_await conv->write(req.encode(), ipc)) {
        log::warn("write to process (" + t.name + "): " + conv->error());
        crash = true;
    } else {
        protocol::AttrList list;
        if (!co_await conv->read_list(list, agent_wait)) {
            log::warn("private/" + t.name + " socket: " + conv->error());
            crash = true;
        } else {
            std::string err;
            auto r = protocol::decode_delivery_reply(list, &err);
            if (!r) {
                log::warn("private/" + t.name + " socket: malformed response: " + err);
                crash = true;
            } else {
                reply = std::move(*r);
            }
        }
    }
    conv->close();
    q.busy--;

    // Interpret the outcome as stock qmgr does (facts §4.4).
    if (crash) {
        reply.hop = {};
        reply.hop.status = "4.3.0";
        reply.hop.reason = "unknown mail transport error";
        reply.status = -1;
    }
    if (reply.status != 0) {
        m.flags |= 1;
        if (!reply.hop.status.empty()) {
            Dsn dsn{dsn_valid(reply.hop.status) ? reply.hop.status : "4.0.0",
                    std::string(suspended) +
                        (reply.hop.reason.empty() ? "unknown error" : reply.hop.reason)};
            if (!q.dead) queue_failure(q, dsn);
        }
    }
    if (!crash) {
        t.dead = false;
        if (reply.hop.reason.empty()) queue_success(q);
    }
    entry_finished(*e);
    pump();
}

void Dispatcher::entry_finished(Entry& e) {
    Message& m = *e.message;
    m.refcount--;
    on_entry_done_(m);
}

void Dispatcher::queue_success(Queue& q) {
    Transport& t = *q.transport;
    if (q.dead) {
        q.dead = false;
        q.window = std::max(q.busy, static_cast<int>(t.settings.initial_concurrency));
    }
    int64_t limit = t.settings.dest_concurrency_limit;
    if ((limit == 0 || q.window < limit) && q.window < q.busy + t.settings.initial_concurrency) {
        q.success += 1.0; // positive feedback: constant 1 (the 3.7 default)
        while (q.success >= 1.0) {
            q.window += 1;
            q.success -= 1.0;
            q.failure = 0;
        }
        if (limit > 0 && q.window > limit) q.window = static_cast<int>(limit);
    }
    q.fail_cohorts = 0;
}

void Dispatcher::queue_failure(Queue& q, const Dsn& dsn) {
    Transport& t = *q.transport;
    // The error and retry transports report suspended deliveries by design.
    if (t.name == "error" || t.name == "retry") return;
    q.fail_cohorts += 1.0 / std::max(q.window, 1);
    int64_t cohort_limit = t.settings.failed_cohort_limit;
    if (cohort_limit > 0 && q.fail_cohorts >= static_cast<double>(cohort_limit)) {
        q.dead = true;
        q.dead_dsn = dsn;
        q.window = 0;
        auto timer = std::make_shared<asio::steady_timer>(
            io_, std::chrono::seconds(settings_.minimal_backoff_time));
        timer->async_wait([this, &q, timer](const error_code& ec) {
            if (ec || !q.dead) return;
            q.dead = false;
            q.window = static_cast<int>(q.transport->settings.initial_concurrency);
            q.fail_cohorts = 0;
            pump();
        });
        defer_todo(q, dsn);
        return;
    }
    q.failure -= 1.0; // negative feedback: constant 1
    while (q.failure <= -1.0) {
        if (q.window > 1) q.window -= 1;
        q.failure += 1.0;
        q.success = 0;
    }
}

void Dispatcher::defer_todo(Queue& q, const Dsn& dsn) {
    // Hand everything waiting here to the retry transport, which logs each
    // recipient as deferred with the reason and updates the defer log.
    if (q.transport->name == "retry") return;
    Queue& rq = retry_queue(dsn);
    while (!q.todo.empty()) {
        auto e = std::move(q.todo.front());
        q.todo.pop_front();
        open_entries_.erase({e->message, &q});
        enqueue(rq, std::move(e));
    }
    pump();
}

void Dispatcher::transport_dead(Transport& t, const Dsn& dsn) {
    if (t.dead) return;
    t.dead = true;
    t.dead_dsn = dsn;
    auto timer = std::make_shared<asio::steady_timer>(
        io_, std::chrono::seconds(settings_.transport_retry_time));
    timer->async_wait([this, &t, timer](const error_code& ec) {
        if (ec) return;
        t.dead = false;
        pump();
    });
    for (auto& [name, q] : t.queues) defer_todo(*q, dsn);
}

void Dispatcher::flush_dead() {
    for (Transport* t : transport_rr_) {
        t->dead = false;
        for (auto& [name, q] : t->queues) {
            if (q->dead) {
                q->dead = false;
                q->window = static_cast<int>(t->settings.initial_concurrency);
                q->fail_cohorts = 0;
            }
        }
    }
    pump();
}

} // namespace cqmgr::qmgr
