// A deterministic stand-in for the shared state of cluster limits (what
// Redis keeps), for unit tests of ClusterLimits: one FakeStore that several
// hosts share, and for each host a FakeShared whose steps wait until the
// test lets the store take them (process), and whose answers wait until
// the test hands them back (deliver), so that a test orders reconnects,
// renewals and deliveries' ends as it likes.  The store does what the Lua
// scripts do, on a clock the test moves.
#pragma once

#include "cqmgr/cluster/shared_state.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <string>

namespace cqmgr::qmgr::testing {

struct FakeStore {
    double now = 0; // ms on the store's clock
    // Which server this is (Redis's run_id), which one the store last saw
    // (the instance key), and the fence after a change (ms, its clock).
    int instance = 1, seen = 1;
    double fence_until = 0;
    // scope -> lease id -> expiry
    std::map<std::string, std::map<std::string, double>> leases;
    // The most leases any scope ever had at once.
    std::map<std::string, int> peak;
    std::map<std::string, double> cells;                        // rate scope -> TAT
    std::map<std::string, std::pair<std::string, double>> dead; // key -> value, expiry
    // Boards: board -> field -> record, and each board's version (the
    // store's clock is Unix ms for the records' expiry).
    std::map<std::string, std::map<std::string, cluster::BoardRecord>> boards;
    std::map<std::string, int> board_versions;

    int live(const std::string& scope) {
        auto& set = leases[scope];
        std::erase_if(set, [&](const auto& kv) { return kv.second <= now; });
        return static_cast<int>(set.size());
    }
    void count(const std::string& scope) { peak[scope] = std::max(peak[scope], live(scope)); }
    // The records of `board` not yet expired.
    std::vector<cluster::BoardRecord> board_records(const std::string& board) {
        auto& b = boards[board];
        std::erase_if(b, [&](const auto& kv) { return kv.second.expires_ms <= now; });
        std::vector<cluster::BoardRecord> out;
        for (const auto& [field, r] : b)
            out.push_back(r);
        return out;
    }
    std::string board_version(const std::string& board) const {
        auto it = board_versions.find(board);
        if (it == board_versions.end()) return "";
        return std::to_string(instance) + ":" + std::to_string(it->second);
    }
    // What the board script does: `r` goes in unless a record of its field
    // wins (the same id ended, or in force while `r` is too; a later one).
    void board_put(const std::string& board, const cluster::BoardRecord& r) {
        board_records(board);
        if (static_cast<double>(r.expires_ms) <= now) return;
        auto& b = boards[board];
        if (auto it = b.find(r.field); it != b.end()) {
            const cluster::BoardRecord& cur = it->second;
            if (cur.id == r.id
                    ? (cur.ended || !r.ended)
                    : (cur.since_ms > r.since_ms || (cur.since_ms == r.since_ms && cur.id > r.id)))
                return;
        }
        b[r.field] = r;
        board_versions[board]++;
    }
    // The scripts' fence: ms left in it (set by the first step on a server
    // that is not the one the store last saw).
    double fence(int64_t ttl) {
        if (seen != instance) {
            seen = instance;
            fence_until = now + static_cast<double>(ttl);
        }
        return std::max(fence_until - now, 0.0);
    }
    // A restart without persistence: everything is forgotten.
    void restart() {
        leases.clear();
        cells.clear();
        dead.clear();
        boards.clear();
        board_versions.clear();
        seen = 0;
        fence_until = 0;
        instance++;
    }
    // A failover to a replica that had not yet seen the last steps: the
    // state as it was in `before`, on another server.
    void fail_over_to(const FakeStore& before) {
        leases = before.leases;
        cells = before.cells;
        dead = before.dead;
        boards = before.boards;
        board_versions = before.board_versions;
        seen = before.seen;
        fence_until = before.fence_until;
        instance++;
    }
};

class FakeShared : public cluster::SharedState {
  public:
    explicit FakeShared(FakeStore& store) : store_(store) {}

    // ---- what the test does ----
    // The connection comes up (the host hears of it on deliver_notice()).
    void connect() {
        up_ = true;
        connection_++;
        notices_.push_back(true);
    }
    // The connection is lost: steps not yet taken fail (their answers wait
    // for deliver()), answers already on their way still come.
    void disconnect() {
        up_ = false;
        for (auto& step : steps_)
            answers_.push_back(step.fail);
        steps_.clear();
        notices_.push_back(false);
    }
    // Hands the oldest state change to the host, as the client's posted
    // notice does (dropped when the state changed again meanwhile).
    bool deliver_notice() {
        if (notices_.empty()) return false;
        bool up = notices_.front();
        notices_.pop_front();
        if (up == up_ && state_) state_(up);
        return true;
    }
    // The store takes the oldest step.
    bool process() {
        if (steps_.empty()) return false;
        auto step = std::move(steps_.front());
        steps_.pop_front();
        answers_.push_back(step.run());
        return true;
    }
    // The oldest answer reaches the host.
    bool deliver() {
        if (answers_.empty()) return false;
        auto a = std::move(answers_.front());
        answers_.pop_front();
        a();
        return true;
    }
    size_t steps_waiting() const { return steps_.size(); }
    size_t answers_waiting() const { return answers_.size(); }
    size_t notices_waiting() const { return notices_.size(); }
    // Counts of the steps asked for, by kind.
    int acquires = 0, renewals = 0, releases = 0, rate_takes = 0;
    // What the next rate_take answers (none: the store's GCRA).
    std::optional<cluster::RateAnswer> rate_answer;

    // ---- SharedState ----
    void start(StateFn state) override {
        state_ = std::move(state);
        started_ = true;
    }
    void close() override { up_ = false; }
    bool up() const override { return up_; }
    uint64_t connection() const override { return connection_; }

    void dead_set(const std::string& transport, const std::string& queue,
                  const cluster::DeadMark& mark, int64_t ttl_ms,
                  std::function<void(bool ok)> done) override {
        std::string key = transport + ":" + queue;
        ask(
            [this, key, mark, ttl_ms] {
                store_.dead[key] = {mark.status + "\t" + mark.reason, store_.now + ttl_ms};
            },
            [done](bool ok) {
                if (done) done(ok);
            });
    }
    void
    dead_get(const std::string& transport, const std::string& queue,
             std::function<void(bool failed, std::optional<cluster::DeadMark>)> done) override {
        std::string key = transport + ":" + queue;
        auto mark = std::make_shared<std::optional<cluster::DeadMark>>();
        ask(
            [this, key, mark] {
                auto it = store_.dead.find(key);
                if (it == store_.dead.end() || it->second.second <= store_.now) return;
                const std::string& v = it->second.first;
                auto tab = v.find('\t');
                *mark = cluster::DeadMark{v.substr(0, tab), v.substr(tab + 1),
                                          static_cast<int64_t>(it->second.second - store_.now)};
            },
            [done, mark](bool ok) { done(!ok, ok ? *mark : std::nullopt); });
    }
    void dead_clear(const std::string& transport, const std::string& queue) override {
        std::string key = transport + ":" + queue;
        ask([this, key] { store_.dead.erase(key); }, [](bool) {});
    }
    void lease_acquire(const std::string& scope, const std::string& id, int limit, int64_t ttl_ms,
                       std::function<void(const cluster::LeaseAnswer&)> done) override {
        acquires++;
        auto a = std::make_shared<cluster::LeaseAnswer>();
        ask(
            [this, scope, id, limit, ttl_ms, a] {
                double fence = store_.fence(ttl_ms);
                int live = store_.live(scope);
                auto& set = store_.leases[scope];
                if (!set.contains(id) && (fence > 0 || live >= limit)) {
                    a->live = live;
                    a->retry_after_ms = fence;
                    return;
                }
                set[id] = store_.now + static_cast<double>(ttl_ms);
                a->granted = true;
                a->live = store_.live(scope);
                store_.count(scope);
            },
            [done, a](bool ok) {
                if (!ok) a->failed = true, a->granted = false;
                done(*a);
            });
    }
    void lease_renew(const std::string& scope, const std::vector<std::string>& ids, int limit,
                     int64_t ttl_ms,
                     std::function<void(const cluster::RenewAnswer&)> done) override {
        renewals++;
        auto a = std::make_shared<cluster::RenewAnswer>();
        ask(
            [this, scope, ids, limit, ttl_ms, a] {
                store_.fence(ttl_ms);
                int live = store_.live(scope);
                auto& set = store_.leases[scope];
                for (const auto& id : ids) {
                    bool held = set.contains(id);
                    if (held || live < limit) {
                        set[id] = store_.now + static_cast<double>(ttl_ms);
                        if (!held) live++;
                    }
                    a->kept.push_back(held || set.contains(id));
                }
                a->live = live;
                store_.count(scope);
            },
            [done, a](bool ok) {
                if (!ok) {
                    *a = cluster::RenewAnswer{};
                    a->failed = true;
                }
                done(*a);
            });
    }
    void lease_release(const std::string& scope, const std::string& id,
                       std::function<void(bool ok)> done) override {
        releases++;
        ask([this, scope, id] { store_.leases[scope].erase(id); },
            [done](bool ok) {
                if (done) done(ok);
            });
    }
    void rate_take(const std::string& scope, const cluster::RateSpec& rate, double horizon_ms,
                   double own_tat_ms,
                   std::function<void(const cluster::RateAnswer&)> done) override {
        (void)horizon_ms;
        rate_takes++;
        auto a = std::make_shared<cluster::RateAnswer>();
        auto fixed = rate_answer;
        ask(
            [this, scope, rate, own_tat_ms, a, fixed] {
                if (fixed) {
                    *a = *fixed;
                    return;
                }
                double& tat = store_.cells[scope];
                tat = std::max({tat, store_.now, store_.now + own_tat_ms});
                double wait = tat - rate.interval_ms() * (rate.burst - 1) - store_.now;
                if (wait > 0) {
                    a->retry_after_ms = wait;
                    return;
                }
                a->allowed = true;
                tat += rate.interval_ms();
            },
            [done, a](bool ok) {
                if (!ok) *a = cluster::RateAnswer{true};
                done(*a);
            });
    }
    void board_put(const std::string& board, const cluster::BoardRecord& record,
                   std::function<void(bool ok)> done) override {
        ask([this, board, record] { store_.board_put(board, record); },
            [done](bool ok) {
                if (done) done(ok);
            });
    }
    void board_read(const std::string& board, const std::string& known,
                    std::function<void(const cluster::BoardAnswer&)> done) override {
        auto a = std::make_shared<cluster::BoardAnswer>();
        ask(
            [this, board, known, a] {
                a->version = store_.board_version(board);
                a->changed = a->version != known;
                if (a->changed) a->records = store_.board_records(board);
            },
            [done, a](bool ok) {
                if (!ok) *a = cluster::BoardAnswer::failure();
                done(*a);
            });
    }
    bool release_blocking(const Leases& leases) override {
        if (!up_) return false;
        for (const auto& [scope, id] : leases)
            store_.leases[scope].erase(id);
        return true;
    }

  private:
    struct Step {
        std::function<std::function<void()>()> run; // the store's work; returns the answer
        std::function<void()> fail;                 // the answer when it is never taken
    };
    // Queues a step: `effect` runs when the store takes it, `answer(ok)`
    // when the host gets the answer.  Down: it fails at once (its answer
    // still waits for deliver(), as the client posts it).
    void ask(std::function<void()> effect, std::function<void(bool ok)> answer) {
        auto fail = [answer] { answer(false); };
        if (!up_) {
            answers_.push_back(fail);
            return;
        }
        steps_.push_back({[effect, answer]() -> std::function<void()> {
                              effect();
                              return [answer] { answer(true); };
                          },
                          fail});
    }

    FakeStore& store_;
    StateFn state_;
    bool up_ = false;
    bool started_ = false;
    uint64_t connection_ = 0;
    std::deque<Step> steps_;
    std::deque<std::function<void()>> answers_;
    std::deque<bool> notices_;
};

} // namespace cqmgr::qmgr::testing
