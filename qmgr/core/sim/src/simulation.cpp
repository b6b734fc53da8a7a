#include "cqmgr/core/simulation.hpp"

#include <cmath>
#include <deque>
#include <memory>
#include <queue>
#include <random>
#include <unordered_map>

namespace cqmgr::core {

namespace {

struct SimMsg : Message {
    double arrival = 0;
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
    enum class Kind { arrival, session_end, tick, batch, rate_pause_end } kind;
    SimMsg* message = nullptr;
    Entry* entry = nullptr;
    bool ok = true;
    Transport* transport = nullptr;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

class Sim : public Driver {
  public:
    explicit Sim(const SimConfig& cfg)
        : cfg_(cfg), rng_(cfg.seed),
          sched_(
              cfg.scheduler,
              [this](const std::string& n) {
                  auto it = cfg_.transports.find(n);
                  return it != cfg_.transports.end() ? it->second : cfg_.default_transport;
              },
              *this) {
        for (const auto& d : cfg.destinations)
            dest_[d.name] = &d;
    }

    SimResult run() {
        for (const auto& sm : cfg_.messages) {
            auto m = std::make_unique<SimMsg>();
            m->id = sm.id;
            m->arrival = sm.arrival;
            m->lane = sm.lane;
            int n = 0;
            for (const auto& [dest, count] : sm.recipients)
                for (int i = 0; i < count; ++i) {
                    Recipient r;
                    r.address = "r" + std::to_string(n++) + "." + sm.id + "@" + dest;
                    finishes_[r.address] = 0;
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
            case Event::Kind::tick:
                sample();
                if (!idle()) push({now_ + cfg_.sample_every, 0, Event::Kind::tick});
                break;
            }
            pump();
            if (cfg_.check_invariants_every > 0 && ++events_run_ % cfg_.check_invariants_every == 0)
                sched_.check_invariants();
            // Timers (dead queues, transports) need the clock to reach them.
            if (auto t = sched_.next_timer(); t && events_.empty())
                push({static_cast<double>(*t), 0, Event::Kind::tick});
        }
        finish_stats();
        for (const auto& [addr, n] : finishes_) {
            if (n == 0) res_.never_finished++;
            if (n > 1) res_.finished_twice++;
        }
        res_.end_time = now_;
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
            if (cfg_.refill_latency > 0) return take(sm, sched_.first_batch_limit(sm));
            read(sm, sched_.first_batch_limit(sm));
            if (sm.refcount > 0) return;
        }
        sched_.message_free(m);
    }
    void defer_recipients(Message&, const std::vector<Recipient>& rcpts, const Dsn&) override {
        res_.deferred += static_cast<int>(rcpts.size());
        tally(rcpts);
    }

  private:
    // Counts one finish (delivery or deferral) for each recipient.
    void tally(const std::vector<Recipient>& rcpts) {
        for (const auto& r : rcpts)
            finishes_[r.address]++;
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
        sched_.message_add(m);
        if (cfg_.refill_latency > 0) return take(m, sched_.first_batch_limit(m));
        read(m, sched_.first_batch_limit(m));
        if (m.refcount == 0) message_done(m);
    }
    // Connects agents (at once) to every transport that wants one; with a
    // process limit, as master does, no more than that many at once: a
    // connection beyond waits until an agent of its transport is free.
    void pump() {
        for (auto& [t, n] : waiting_)
            while (n > 0 && !agents_full(*t)) {
                --n;
                // The work it was asked for may have gone to another agent.
                int idle = res_.idle_connections;
                bool used = agent_ready(*t);
                res_.idle_after_wait += res_.idle_connections - idle;
                res_.idle_connections = idle;
                if (!used) break;
            }
        while (Transport* t = sched_.select_transport()) {
            if (agents_full(*t)) {
                waiting_[t]++;
                continue;
            }
            // Opening more connections after one that got nothing would
            // find nothing either.
            if (!agent_ready(*t)) break;
        }
    }
    // True when every agent of `t` (TransportConfig::process_limit, 0 = no
    // limit) is delivering.
    bool agents_full(const Transport& t) const {
        int busy = 0;
        for (int n : t.lane_busy)
            busy += n;
        return t.cfg.process_limit > 0 && busy >= t.cfg.process_limit;
    }
    // An agent of `t` announced itself; false if it got nothing to do.
    bool agent_ready(Transport& t) {
        sched_.connection_ready(t);
        // With a transport rate delay the agent waits before it gets its
        // entry, as in the daemon.
        if (int delay = t.cfg.transport_rate_delay; delay > 0) {
            push({now_ + delay, 0, Event::Kind::rate_pause_end, nullptr, nullptr, true, &t});
            return true;
        }
        return deliver_next(t);
    }
    // Hands a ready agent of `t` its entry; false if there was none.
    bool deliver_next(Transport& t) {
        Entry* e = sched_.select_entry(t);
        if (!e) {
            res_.idle_connections++;
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
            e->message->flags |= 1;
            sched_.delivery_done(e, DeliveryResult{DeliveryResult::Kind::replied, -1, {}});
            return;
        }
        const SimDestination& d = *it->second;
        int n = static_cast<int>(e->rcpts.size());
        if (d.down && (d.down_until == 0 || now_ < d.down_until)) {
            fail(e, "4.4.1", "connect to " + d.name + ": Connection refused");
            return;
        }
        if (d.server_limit > 0 && active_[d.name] >= d.server_limit) {
            fail(e, "4.7.0", "host " + d.name + " said: 421 too many connections");
            return;
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
        tally(e->rcpts);
        res_.deliveries.push_back({now_, now_, e->message->id, dname, n, false});
        sched_.delivery_done(e,
                             DeliveryResult{DeliveryResult::Kind::replied, -1, {status, reason}});
    }
    void session_end(Entry* e, bool ok) {
        const std::string dname = e->queue->nexthop;
        active_[dname]--;
        --sessions_;
        int n = static_cast<int>(e->rcpts.size());
        tally(e->rcpts);
        if (ok) {
            res_.delivered += n;
            res_.destinations[dname].delivered += n;
            sched_.delivery_done(e, DeliveryResult{});
        } else {
            res_.deferred += n;
            res_.destinations[dname].deferred += n;
            sched_.delivery_done(
                e, DeliveryResult{DeliveryResult::Kind::replied, -1, {"4.4.2", "lost connection"}});
        }
    }
    void sample() {
        for (const auto& d : cfg_.destinations)
            res_.destinations[d.name].timeline.emplace_back(now_, active_[d.name]);
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

    struct Acc {
        double w = 0, s = 0, s2 = 0;
    };
    const SimConfig& cfg_;
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
    std::map<Transport*, int> waiting_; // connections waiting for a free agent
    std::map<std::string, Acc> acc_;
    std::unordered_map<std::string, int> finishes_;
    SimResult res_;
};

} // namespace

SimResult simulate(const SimConfig& cfg) {
    Sim sim(cfg);
    return sim.run();
}

} // namespace cqmgr::core
