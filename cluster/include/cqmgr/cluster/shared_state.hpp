// What cqmgr hosts share, as the queue manager sees it: dead marks,
// concurrency leases, rate cells and boards of records (the reply rules'
// actions), each step answered asynchronously.
// RedisSharedState keeps them in Redis (redis_shared_state.hpp); the
// daemon's cluster limits (qmgr/src/features/cluster/cluster_limits.hpp)
// use only this interface, so that their tests can put a deterministic fake
// in its place.
#pragma once

#include "cqmgr/cluster/rate_spec.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cqmgr::cluster {

struct DeadMark {
    std::string status; // e.g. 4.4.1
    std::string reason;
    int64_t remaining_ms = 0; // until it expires
};

struct LeaseAnswer {
    bool failed = false; // Redis did not answer: decide locally
    bool granted = false;
    int64_t live = 0; // leases held in the cluster after the step
    // Refused while the store has just lost its state (see lease_acquire):
    // no new lease for this long (ms); 0 when refused for being full.
    double retry_after_ms = 0;
};

struct RenewAnswer {
    bool failed = false; // Redis did not answer
    int64_t live = 0;    // leases held in the cluster after the step
    // For each id renewed, in order: whether it is held now (false: the
    // store had lost it and the limit left no room to take it again).
    std::vector<bool> kept;
};

struct RateAnswer {
    bool failed = false; // Redis did not answer: decide locally
    bool allowed = false;
    double retry_after_ms = 0; // when not allowed
    double wait_ms = 0;        // when allowed: until the booked start is due (0: now)
};

// A record of a shared board: the reply rules' actions in force across the
// cluster (the queue manager's shared_actions.hpp).  `field` names what it
// is about (a board holds one record per field), `id` the one action it
// is, `since_ms` orders two actions of one field (the later wins), `ended`
// says the action was ended early (a record that ended is never put back
// in force under the same id), `expires_ms` when it leaves the board (Unix
// ms), `value` the hosts' own text.  The id and the value are one line
// each.
struct BoardRecord {
    std::string field;
    std::string id;
    int64_t since_ms = 0;
    bool ended = false;
    int64_t expires_ms = 0;
    std::string value;
    bool operator==(const BoardRecord&) const = default;
};

struct BoardAnswer {
    bool failed = false;  // Redis did not answer
    std::string version;  // the board's version now ("": none yet)
    bool changed = false; // not the version known: `records` is the board
    std::vector<BoardRecord> records;

    // Redis did not answer.
    static BoardAnswer failure() {
        BoardAnswer a;
        a.failed = true;
        return a;
    }
};

class SharedState {
  public:
    // Told that the connection came up (true) or went away (false); never
    // from inside a call of this interface.
    using StateFn = std::function<void(bool up)>;
    // (scope, lease id) pairs.
    using Leases = std::vector<std::pair<std::string, std::string>>;

    virtual ~SharedState() = default;

    // Connects, and keeps reconnecting until close(); `state` hears of
    // each change.
    virtual void start(StateFn state) = 0;
    // Drops the connection for good.
    virtual void close() = 0;
    // The connection is up: steps are answered (else they fail at once).
    virtual bool up() const = 0;
    // Which connection this is (counted from 1, one more at each connect
    // that comes up), so that a host can tell a reconnect it did not hear
    // of from the connection it has synchronised with.
    virtual uint64_t connection() const = 0;

    // Marks a destination dead for `ttl_ms`; `done(ok)`.
    virtual void dead_set(const std::string& transport, const std::string& queue,
                          const DeadMark& mark, int64_t ttl_ms,
                          std::function<void(bool ok)> done = {}) = 0;
    // Reads a destination's dead mark; `done(failed, mark)`.
    virtual void dead_get(const std::string& transport, const std::string& queue,
                          std::function<void(bool failed, std::optional<DeadMark>)> done) = 0;
    // Clears a dead mark (the destination answered again).
    virtual void dead_clear(const std::string& transport, const std::string& queue) = 0;

    // Takes lease `id` in `scope` if fewer than `limit` live leases are
    // held there (holding it already renews it); it lasts `ttl_ms`.  A
    // store that has lost its state (restarted, or failed over to a replica
    // that had not seen the last steps) grants no new lease for `ttl_ms`
    // after its first step: every lease taken before then has either been
    // taken again (lease_renew) by now or has expired on its host.
    virtual void lease_acquire(const std::string& scope, const std::string& id, int limit,
                               int64_t ttl_ms, std::function<void(const LeaseAnswer&)> done) = 0;
    // Renews the leases `ids` for another `ttl_ms`, in order; a lease the
    // store lost is taken again only while fewer than `limit` live leases
    // are held in `scope` (all hosts' leases counted), so that the cluster
    // sees what is in use and never more than the limit.
    virtual void lease_renew(const std::string& scope, const std::vector<std::string>& ids,
                             int limit, int64_t ttl_ms,
                             std::function<void(const RenewAnswer&)> done) = 0;
    // Gives lease `id` back.
    virtual void lease_release(const std::string& scope, const std::string& id,
                               std::function<void(bool ok)> done = {}) = 0;

    // Takes one start from the GCRA cell of `scope` at `rate`, now or
    // booked up to `horizon_ms` ahead (see gcra_take()).  `own_tat_ms`: the
    // asking host's own theoretical arrival time, in ms from now (0 or
    // less: none); the cell is taken to be at least there, so that a cell
    // the store lost (a restart) does not let this host start again at once.
    virtual void rate_take(const std::string& scope, const RateSpec& rate, double horizon_ms,
                           double own_tat_ms, std::function<void(const RateAnswer&)> done) = 0;

    // Gives `leases` back before the process exits, blocking (there is no
    // loop left to wait on), each step within the command deadline.  False
    // when that could not be done (the leases then expire by themselves).
    virtual bool release_blocking(const Leases& leases) = 0;

    // Puts `record` on board `board`, unless a record of the same field
    // wins over it: one of the same id that has ended (or that is in force
    // while `record` is too), or one of a later action (a later since_ms,
    // then a greater id).  A record past its expiry is no record.  Each
    // change of the board changes its version.
    virtual void board_put(const std::string& board, const BoardRecord& record,
                           std::function<void(bool ok)> done = {}) = 0;
    // Reads board `board`: its version, and every record not yet expired
    // when that is not `known`.
    virtual void board_read(const std::string& board, const std::string& known,
                            std::function<void(const BoardAnswer&)> done) = 0;
};

} // namespace cqmgr::cluster
