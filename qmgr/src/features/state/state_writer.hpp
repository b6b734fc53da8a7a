// Commits changed destination records to the state store on a thread of
// its own, so that the event loop never waits for the disk: submit() only
// moves the records into a pending map (the newest record per destination
// wins) and wakes the thread, which commits everything pending in one LMDB
// transaction, synchronously (see docs/design.md, "Destination state").
// Records handed over while a commit runs go into the next one.
//
// The thread also keeps the store from filling up over months: once an
// hour it deletes the records not changed for `horizon` seconds (a dead
// destination's is kept while it is dead), and a commit that finds the map
// full makes room (state::Store).  The records of a commit that failed
// stay pending and are tried again after a pause, unless the store is
// damaged beyond repair; a store that replaced a damaged file is reported
// through `on_rebuilt`, so that the caller hands over again what it keeps.
#pragma once

#include "cqmgr/state/store.hpp"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace cqmgr::qmgr {

class StateWriter {
  public:
    // `on_rebuilt` runs on the writer's thread.
    StateWriter(std::shared_ptr<state::Store> store, int64_t horizon,
                std::function<void()> on_rebuilt = {});
    ~StateWriter();
    StateWriter(const StateWriter&) = delete;
    StateWriter& operator=(const StateWriter&) = delete;

    // Hands over changed records at `now` (Unix seconds, the caller's
    // clock, which also times expiry); returns at once.
    void submit(std::vector<state::DestinationRecord> records, int64_t now);
    // Waits until everything submitted so far is committed (or failed).
    void drain();
    // Commits what is pending, then stops the thread (idempotent).
    void finish();
    // The warnings the thread has to report since the last call (commit
    // failures, once per run of failures, and the recovery after them;
    // what the store reported).
    std::vector<std::string> take_warnings();
    // Commits done and records written since the start.
    size_t commits() const;
    size_t written() const;
    // Whether the last commit failed, or the store can no longer be used
    // (the metrics' cqmgr_state_store_up).
    bool failing() const;

    // How often stale records are expired.
    static constexpr int64_t expiry_interval = 3600;
    // The pause before failed records are tried again.
    static constexpr std::chrono::seconds retry_delay{5};

  private:
    void run();

    std::shared_ptr<state::Store> store_;
    const int64_t horizon_;
    std::function<void()> on_rebuilt_;
    mutable std::mutex mu_;
    std::condition_variable wake_, idle_;
    std::unordered_map<std::string, state::DestinationRecord> pending_;
    int64_t now_ = 0;
    int64_t next_expiry_ = 0; // 0: not set yet (the load at start-up expired)
    bool busy_ = false;
    bool stop_ = false;
    bool exited_ = false; // the thread has ended
    size_t failures_ = 0; // commits failed in a row
    std::chrono::steady_clock::time_point retry_at_;
    size_t commits_ = 0;
    size_t written_ = 0;
    bool usable_ = true; // the store's usable() after the last commit
    uint64_t rebuilds_seen_ = 0;
    std::vector<std::string> warnings_;
    std::thread thread_;
};

} // namespace cqmgr::qmgr
