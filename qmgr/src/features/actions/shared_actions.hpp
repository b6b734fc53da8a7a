// The reply rules' actions shared across a cluster (with
// cqmgr_redis_server; docs/admin-guide.md, "Reply rules that act"): a host
// whose rule acts on a destination, a transport or a provider, or on a
// sender group's mail to one, puts the action on the cluster's board in
// Redis (shared_action.hpp: its scope, group, rule, reason and end); every
// host reads the board once a second (one
// short step while nothing changed: its version) and applies the actions
// of other hosts with the same end (ReplyActions::adopt, one log line
// each).  An action ended early (`cqmgrctl resume`, or its N deliveries on
// the host that counted them) is put back on the board as ended, and every
// host ends it; one that ends at its time ends everywhere by itself.
//
// Redis away: each host goes on with the actions it has (local
// behaviour); what it does meanwhile is put on the board when Redis is
// back.  Redis restarted (the board lost): at each new connection a host
// puts every action it has in force, and every early end it remembers, on
// the board again; the board keeps one record per scope and never takes an
// ended action back in force, nor an older action over a later one, so
// nothing is lost and nothing comes twice.  Records leave the board at
// their action's end (or a day after an action that only N deliveries
// end), so the board holds what is in force and no more.
//
// The connection is the destination cluster limits' (ClusterLimits::
// shared()): no second one, and no log line of its own.
#pragma once

#include "clock.hpp"
#include "cqmgr/cluster/shared_state.hpp"
#include "cqmgr/protocol/asio.hpp"
#include "reply_actions.hpp"
#include "shared_action.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>

namespace cqmgr::qmgr {

class SharedActions {
  public:
    // The board's name in Redis (<prefix>board:reply-actions).
    static constexpr const char* board = "reply-actions";
    // How long an action that only N deliveries end stays on the board.
    static constexpr int64_t count_only_ms = 86'400'000;

    // `actions` and `shared` outlive this; `host` names this host
    // (myhostname) in the others' log lines.
    SharedActions(asio::io_context& io, ReplyActions& actions, cluster::SharedState& shared,
                  const WallClock& clock, std::string host,
                  std::chrono::milliseconds poll = std::chrono::seconds(1));
    ~SharedActions();

    // Starts sharing: hooks into the actions and reads the board.
    void start();
    // One turn (the timer's): after a new connection every action and end
    // kept here goes on the board; then the board is read.
    void tick();

  private:
    // Puts `a` on the board, in force or ended.
    void put(const SharedAction& a, bool ended);
    // The board as read: actions of other hosts are applied, ends ended.
    void read(const cluster::BoardAnswer& answer);
    // Forgets what has expired.
    void prune(int64_t now_ms);
    // When `a`'s record leaves the board (Unix ms).
    int64_t expiry_ms(const SharedAction& a) const;
    void arm();

    ReplyActions& actions_;
    cluster::SharedState& shared_;
    const WallClock& clock_;
    std::string host_;
    std::chrono::milliseconds poll_;
    asio::steady_timer timer_;
    uint64_t synced_ = 0; // the connection everything was put on
    bool reading_ = false;
    std::string version_; // of the board, as last read
    // The actions known here (taken, applied or seen on the board) and
    // those ended early, by id, with when their records leave the board.
    std::unordered_map<std::string, int64_t> known_;
    std::unordered_map<std::string, std::pair<SharedAction, int64_t>> ended_;
    // False once this is gone: answers and the timer still on their way
    // do nothing then.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

} // namespace cqmgr::qmgr
