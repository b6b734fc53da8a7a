#include "cqmgr/core/simulation.hpp"

#include <cmath>
#include <deque>
#include <memory>
#include <queue>
#include <random>
#include <set>
#include <unordered_map>

namespace cqmgr::core {

namespace {

struct SimMsg : Message {
    double arrival = 0;
    const SimMessage* source = nullptr;
    struct Pending {
        std::string dest;
        Recipient rcpt;
    };
    std::deque<Pending> unread;
    // With a refill latency: the batch taken from the file, not yet assigned.
    std::vector<Pending> batch;
    bool reading = false;
};

struct Event {
    double time;
    long seq;
    enum class Kind { arrival, session_end, tick, batch, rate_pause_end, wake } kind;
    SimMsg* message = nullptr;
    Entry* entry = nullptr;
    bool ok = true;
    Transport* transport = nullptr;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

class Sim : public Driver {
  public:
    Sim(const SimConfig& cfg, SimHooks* hooks)
        : cfg_(cfg), hooks_(hooks), rng_(cfg.seed),
          sched_(
              cfg.scheduler,
              [this](const std::string& n) {
                  auto it = cfg_.transports.find(n);
                  return it != cfg_.transports.end() ? it->second : cfg_.default_transport;
              },
              *this) {
        for (const auto& d : cfg.destinations)
            dest_[d.name] = &d;
        for (const auto& p : cfg.providers)
            providers_[p.name].cfg = &p;
    }

    SimResult run() {
        for (const auto& sm : cfg_.messages) {
            auto m = std::make_unique<SimMsg>();
            m->id = sm.id;
            m->arrival = sm.arrival;
            m->lane = sm.lane;
            m->source = &sm;
            int n = 0;
            for (const auto& [dest, count] : sm.recipients)
                for (int i = 0; i < count; ++i) {
                    Recipient r(0, "r" + std::to_string(n++) + "." + sm.id + "@" + dest, "", "", 0);
                    finishes_[std::string(r.address())] = 0;
                    m->unread.push_back({dest, std::move(r)});
                }
            push({sm.arrival, 0, Event::Kind::arrival, m.get()});
            msgs_.push_back(std::move(m));
        }
        push({0, 0, Event::Kind::tick});
        while (!events_.empty()) {
            Event ev = events_.top();
            events_.pop();
            if (ev.time > cfg_.end_time) break;
            advance(ev.time);
            switch (ev.kind) {
            case Event::Kind::arrival:
                arrive(*ev.message);
                break;
            case Event::Kind::session_end:
                session_end(ev.entry, ev.ok);
                break;
            case Event::Kind::batch:
                batch_arrives(*ev.message);
                break;
            case Event::Kind::rate_pause_end:
                deliver_next(*ev.transport);
                break;
            case Event::Kind::wake:
                wakes_.erase(ev.time);
                hooks_->wake(sched_, now_);
                break;
            case Event::Kind::tick:
                sample();
                if (!idle()) push({now_ + cfg_.sample_every, 0, Event::Kind::tick});
                break;
            }
            pump();
            schedule_wake();
            // The windows move between samples (a 421 takes one back at
            // once): the timeline has each change too.
            if (ev.kind != Event::Kind::tick && windows_moved()) sample();
            if (cfg_.check_invariants_every > 0 && ++events_run_ % cfg_.check_invariants_every == 0)
                sched_.check_invariants();
            // Timers (dead queues, transports) need the clock to reach them.
            if (auto t = sched_.next_timer(); t && events_.empty())
                push({static_cast<double>(*t), 0, Event::Kind::tick});
        }
        if (res_.samples.empty() || res_.samples.back().time < now_) sample();
        finish_stats();
        for (const auto& [addr, n] : finishes_) {
            if (n == 0) res_.never_finished++;
            if (n > 1) res_.finished_twice++;
        }
        res_.end_time = now_;
        if (hooks_) hooks_->finish(res_);
        return std::move(res_);
    }

    // ---- Driver ----
    void refill(Message& m, int limit) override {
        auto& sm = static_cast<SimMsg&>(m);
        if (cfg_.refill_latency <= 0) return read(sm, limit);
        // A batch is on its way already, or nothing is left: answer at
        // once, as the daemon does.
        if (sm.reading || sm.unread.empty())
            return sched_.batch_done(sm, !sm.unread.empty(), static_cast<int>(sm.unread.size()));
        take(sm, limit);
    }
    void message_done(Message& m) override {
        res_.message_done[m.id] = now_;
        auto& sm = static_cast<SimMsg&>(m);
        if (sm.reading) return; // the batch on its way brings us back here
        if (!sm.unread.empty()) {
            // Everything in core is done but the file has more: read on.
            if (cfg_.refill_latency > 0) return take(sm, sched_.reread_limit(sm));
            read(sm, sched_.reread_limit(sm));
            if (sm.refcount > 0) return;
        }
        sched_.message_free(m);
    }
    void defer_recipients(Message&, const std::vector<Recipient>& rcpts, const Dsn&) override {
        res_.deferred += static_cast<int>(rcpts.size());
        tally(rcpts);
    }
    std::optional<int> queue_gate(const Queue& q) override {
        return hooks_ ? hooks_->queue_gate(q) : std::nullopt;
    }
    void queue_freed(const Queue& q) override {
        if (hooks_) hooks_->queue_freed(q);
    }
    void admin_expired(AdminKind kind, const AdminTarget& target) override {
        if (hooks_) hooks_->admin_expired(kind, target, now_);
    }
    void sender_rule_expired(const AdminTarget& target, SenderGroup g) override {
        if (hooks_) hooks_->sender_rule_expired(target, g, now_);
    }

  private:
    // Counts one finish (delivery or deferral) for each recipient.
    template <class Range> void tally(const Range& rcpts) {
        for (const auto& r : rcpts)
            finishes_[std::string(r.address())]++;
    }
    void push(Event e) {
        e.seq = seq_++;
        events_.push(e);
    }
    void advance(double t) {
        // Time-weighted concurrency per destination.
        for (auto& [name, st] : active_) {
            double dt = t - now_;
            if (dt > 0 && st > 0) {
                auto& acc = acc_[name];
                acc.w += dt;
                acc.s += dt * st;
                acc.s2 += dt * st * st;
            }
        }
        now_ = t;
        sched_.set_time(static_cast<int64_t>(std::floor(t)));
    }
    // True when nothing is in flight and nothing more will arrive.
    bool idle() const {
        for (const auto& m : msgs_)
            if (!m->unread.empty() || m->refcount > 0 || m->reading) return false;
        return sessions_ == 0 && pending_arrivals() == 0;
    }
    int pending_arrivals() const {
        int n = 0;
        for (const auto& m : msgs_)
            if (m->arrival > now_) ++n;
        return n;
    }
    // Reads up to `limit` recipients and assigns them at once.
    void read(SimMsg& m, int limit) {
        take_batch(m, limit);
        assign_batch(m);
    }
    // Takes up to `limit` recipients from the file now and assigns them
    // refill_latency seconds later.
    void take(SimMsg& m, int limit) {
        take_batch(m, limit);
        m.reading = true;
        push({now_ + cfg_.refill_latency, 0, Event::Kind::batch, &m});
    }
    // Moves up to `limit` recipients from the file to the batch.
    void take_batch(SimMsg& m, int limit) {
        for (int n = 0; !m.unread.empty() && n < limit; ++n) {
            m.batch.push_back(std::move(m.unread.front()));
            m.unread.pop_front();
        }
    }
    // Assigns the batch, all at once, and tells the scheduler what is left.
    void assign_batch(SimMsg& m) {
        auto batch = std::move(m.batch);
        m.batch.clear();
        for (auto& p : batch) {
            Transport& t = sched_.transport(dest_.at(p.dest)->transport);
            sched_.assign(m, sched_.queue_for(t, p.dest, p.dest), std::move(p.rcpt));
        }
        sched_.batch_done(m, !m.unread.empty(), static_cast<int>(m.unread.size()));
        res_.max_in_core_recipients =
            std::max(res_.max_in_core_recipients, sched_.recipient_count());
    }
    // A batch taken earlier is resolved.
    void batch_arrives(SimMsg& m) {
        m.reading = false;
        assign_batch(m);
        if (m.refcount == 0) message_done(m);
    }
    void arrive(SimMsg& m) {
        if (hooks_) hooks_->message_arrives(sched_, m, *m.source);
        sched_.message_add(m);
        if (cfg_.refill_latency > 0) return take(m, sched_.first_batch_limit(m));
        read(m, sched_.first_batch_limit(m));
        if (m.refcount == 0) message_done(m);
    }
    // Connects agents to every transport that wants one: at once while the
    // transport has a free agent, else when one finishes.
    void pump() {
        while (Transport* t = sched_.select_transport()) {
            auto& a = agents_[t];
            if (int limit = process_limit(*t); limit > 0 && a.busy >= limit) {
                a.waiting++; // the scheduler asks for at most two at a time
                continue;
            }
            // Opening more connections after one that got nothing would
            // find nothing either.
            if (!connect(*t)) break;
        }
    }
    // The agent processes transport `t` may run at once (0: no limit).
    int process_limit(const Transport& t) const {
        auto it = cfg_.process_limits.find(t.name);
        return it == cfg_.process_limits.end() ? 0 : it->second;
    }
    // An agent of `t` announces itself; false if it got no entry.
    bool connect(Transport& t) {
        auto& a = agents_[&t];
        a.busy++;
        res_.max_busy_agents[t.name] = std::max(res_.max_busy_agents[t.name], a.busy);
        sched_.connection_ready(t);
        // With a transport rate delay the agent waits before it gets its
        // entry, as in the daemon.
        if (int delay = t.cfg.transport_rate_delay; delay > 0) {
            push({now_ + delay, 0, Event::Kind::rate_pause_end, nullptr, nullptr, true, &t});
            return true;
        }
        return deliver_next(t);
    }
    // An agent of `t` is done; a connection waiting for one gets it.
    void release_agent(Transport& t) {
        auto& a = agents_[&t];
        a.busy--;
        if (a.waiting > 0) {
            a.waiting--;
            connect(t);
        }
    }
    // Hands a ready agent of `t` its entry; false if there was none.
    bool deliver_next(Transport& t) {
        Entry* e = sched_.select_entry(t);
        if (!e) {
            res_.idle_connections++;
            release_agent(t);
            return false;
        }
        res_.selections[t.name].push_back(e->message->id);
        start(e);
        return true;
    }
    void start(Entry* e) {
        const std::string& dname = e->queue->nexthop;
        auto it = dest_.find(dname);
        if (it == dest_.end()) {
            // Retry transport: the error agent defers at once.
            res_.deferred += static_cast<int>(e->rcpts.size());
            tally(e->rcpts);
            e->message->flags |= core::message_flag::defer;
            Transport& t = *e->queue->transport;
            sched_.delivery_done(e, DeliveryResult{DeliveryResult::Kind::replied, -1, {}});
            release_agent(t);
            return;
        }
        const SimDestination& d = *it->second;
        int n = static_cast<int>(e->rcpts.size());
        res_.attempts++;
        if (hooks_) hooks_->delivery_started(sched_, *e, now_);
        if (d.down && (d.down_until == 0 || now_ < d.down_until)) {
            fail(e, "4.4.1", "connect to " + d.name + ": Connection refused");
            return;
        }
        if (d.server_limit > 0 && active_[d.name] >= d.server_limit) {
            fail(e, "4.7.0", "host " + d.name + " said: 421 too many connections");
            return;
        }
        Receiver* shared = receiver(d);
        if (shared) {
            auto& ps = res_.providers[shared->cfg->name];
            ps.max_connections = std::max(ps.max_connections, shared->active + 1);
            if (const std::string* reply = shared->refuses(now_)) {
                ps.refused++;
                fail(e, reply_status(*reply), "host " + d.name + " said: " + *reply);
                return;
            }
            shared->accept(now_);
            ps.sessions++;
            ps.max_sessions = std::max(ps.max_sessions, shared->active);
        }
        active_[d.name]++;
        ++sessions_;
        auto& st = res_.destinations[d.name];
        st.max_concurrency = std::max(st.max_concurrency, active_[d.name]);
        bool ok = true;
        if (d.fail_ratio > 0) ok = std::uniform_real_distribution<>(0, 1)(rng_) >= d.fail_ratio;
        res_.deliveries.push_back(
            {now_, now_ + d.session_setup + n * d.latency_per_rcpt, e->message->id, d.name, n, ok});
        push({now_ + d.session_setup + n * d.latency_per_rcpt, 0, Event::Kind::session_end, nullptr,
              e, ok});
    }
    void fail(Entry* e, const std::string& status, const std::string& reason) {
        const std::string& dname = e->queue->nexthop;
        int n = static_cast<int>(e->rcpts.size());
        res_.deferred += n;
        res_.destinations[dname].deferred += n;
        if (Receiver* shared = receiver(*dest_.at(dname)))
            res_.providers[shared->cfg->name].deferred += n;
        tally(e->rcpts);
        res_.deliveries.push_back({now_, now_, e->message->id, dname, n, false});
        Transport& t = *e->queue->transport;
        DeliveryResult r{DeliveryResult::Kind::replied, -1, {status, reason}};
        if (hooks_) hooks_->delivery_ended(sched_, *e, r, now_);
        sched_.delivery_done(e, r);
        release_agent(t);
    }
    void session_end(Entry* e, bool ok) {
        const std::string dname = e->queue->nexthop;
        active_[dname]--;
        --sessions_;
        int n = static_cast<int>(e->rcpts.size());
        Transport& t = *e->queue->transport;
        tally(e->rcpts);
        Receiver* shared = receiver(*dest_.at(dname));
        if (shared) {
            shared->active--;
            (ok ? res_.providers[shared->cfg->name].delivered
                : res_.providers[shared->cfg->name].deferred) += n;
        }
        DeliveryResult r;
        if (ok) {
            res_.delivered += n;
            res_.destinations[dname].delivered += n;
        } else {
            res_.deferred += n;
            res_.destinations[dname].deferred += n;
            r = DeliveryResult{DeliveryResult::Kind::replied, -1, {"4.4.2", "lost connection"}};
        }
        if (hooks_) hooks_->delivery_ended(sched_, *e, r, now_);
        sched_.delivery_done(e, r);
        release_agent(t);
    }
    // Records the state of the run now (SimSample).
    // The scheduler's window for destination `d`; -1 when it has no queue.
    int window(const SimDestination& d) const {
        auto t = sched_.transports().find(d.transport);
        if (t == sched_.transports().end()) return -1;
        auto q = t->second->queue_by_name.find(d.name);
        return q == t->second->queue_by_name.end() ? -1 : q->second->window;
    }
    // True when a window differs from the last sample's.
    bool windows_moved() const {
        if (res_.samples.empty()) return false;
        const auto& last = res_.samples.back().destinations;
        for (const auto& d : cfg_.destinations)
            if (auto it = last.find(d.name); it != last.end() && it->second.window != window(d))
                return true;
        return false;
    }
    // Records the state of the run now (SimSample), in place of a sample
    // taken earlier at the same instant.
    void sample() {
        SimSample s;
        s.time = now_;
        s.delivered = res_.delivered;
        s.deferred = res_.deferred;
        s.messages_done = static_cast<int>(res_.message_done.size());
        for (const auto& [t, a] : agents_)
            s.transports[t->name] = {a.busy, a.waiting};
        for (const auto& d : cfg_.destinations) {
            auto& st = res_.destinations[d.name];
            auto& ds = s.destinations[d.name];
            ds.sessions = active_[d.name];
            ds.delivered = st.delivered;
            ds.deferred = st.deferred;
            ds.window = window(d);
            if (Queue* q = sched_.find_queue(d.transport, d.name)) ds.held = q->limits.stopped();
        }
        for (const auto& [name, p] : providers_)
            s.provider_sessions[name] = p.active;
        if (!res_.samples.empty() && res_.samples.back().time == now_) res_.samples.pop_back();
        res_.samples.push_back(std::move(s));
    }
    void finish_stats() {
        for (auto& [name, st] : res_.destinations) {
            auto& a = acc_[name];
            if (a.w > 0) {
                st.concurrency_mean = a.s / a.w;
                st.concurrency_stddev = std::sqrt(
                    std::max(0.0, a.s2 / a.w - st.concurrency_mean * st.concurrency_mean));
            }
        }
        for (const auto& [tn, t] : sched_.transports()) {
            for (const auto& [qn, q] : t->queue_by_name)
                if (q->dead() && res_.destinations.count(qn))
                    res_.destinations[qn].declared_dead = true;
            res_.indexed_searches += t->candidates.indexed_searches;
            res_.scanned_searches += t->candidates.scanned_searches;
            res_.relabels += t->candidates.relabels;
            res_.early_entries += t->early_entries;
        }
    }

    // A shared receiver's state (SimProvider).
    struct Receiver {
        const SimProvider* cfg = nullptr;
        int active = 0;             // sessions now
        std::deque<double> accepts; // within the last message_period
        double blocked_until = -1;

        // The reply that refuses a session at `now`, or null to accept it.
        const std::string* refuses(double now) {
            if (now < blocked_until) return &cfg->rate_reply;
            if (cfg->session_limit > 0 && active >= cfg->session_limit) return &cfg->session_reply;
            if (cfg->message_limit > 0) {
                // (A microsecond's slack: a receiver's clock is no finer,
                // and a sender spaced exactly at the rate is within it.)
                while (!accepts.empty() && accepts.front() <= now - cfg->message_period + 1e-6)
                    accepts.pop_front();
                if (static_cast<int>(accepts.size()) >= cfg->message_limit) {
                    if (cfg->block_for > 0) blocked_until = now + cfg->block_for;
                    return &cfg->rate_reply;
                }
            }
            return nullptr;
        }
        void accept(double now) {
            active++;
            if (cfg->message_limit > 0) accepts.push_back(now);
        }
    };
    // The shared receiver of `d`, if it names one that exists.
    Receiver* receiver(const SimDestination& d) {
        if (d.provider.empty()) return nullptr;
        auto it = providers_.find(d.provider);
        return it == providers_.end() ? nullptr : &it->second;
    }
    // The enhanced status code of an SMTP reply ("421 4.7.0 ..."), or the
    // class's generic one.
    static std::string reply_status(const std::string& reply) {
        auto sp = reply.find(' ');
        if (sp != std::string::npos) {
            auto end = reply.find(' ', sp + 1);
            std::string code = reply.substr(sp + 1, end == std::string::npos ? end : end - sp - 1);
            if (code.size() >= 5 && (code[0] == '4' || code[0] == '5') && code[1] == '.')
                return code;
        }
        return reply.size() > 0 && reply[0] == '5' ? "5.0.0" : "4.0.0";
    }
    // Has the hooks woken when they next want to be (at most one pending
    // wake for each time, and none later than an earlier one pending).
    void schedule_wake() {
        if (!hooks_) return;
        double t = hooks_->next_wake();
        if (!std::isfinite(t)) return;
        t = std::max(t, now_);
        if (!wakes_.empty() && *wakes_.begin() <= t) return;
        wakes_.insert(t);
        push({t, 0, Event::Kind::wake});
    }

    struct Acc {
        double w = 0, s = 0, s2 = 0;
    };
    // A transport's agents: busy ones, and connections waiting for one.
    struct Agents {
        int busy = 0, waiting = 0;
    };
    const SimConfig& cfg_;
    SimHooks* hooks_;
    std::mt19937 rng_;
    Scheduler sched_;
    std::map<std::string, const SimDestination*> dest_;
    std::vector<std::unique_ptr<SimMsg>> msgs_;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
    long seq_ = 0;
    long events_run_ = 0;
    double now_ = 0;
    int sessions_ = 0;
    std::map<std::string, int> active_;
    std::map<Transport*, Agents> agents_;
    std::map<std::string, Acc> acc_;
    std::unordered_map<std::string, int> finishes_;
    std::map<std::string, Receiver> providers_;
    std::set<double> wakes_; // pending wake events' times
    SimResult res_;
};

} // namespace

SimResult simulate(const SimConfig& cfg, SimHooks* hooks) {
    Sim sim(cfg, hooks);
    return sim.run();
}

} // namespace cqmgr::core
