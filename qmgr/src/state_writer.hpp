// Commits changed destination records to the state store on a thread of
// its own, so that the event loop never waits for the disk: submit() only
// moves the records into a pending map (the newest record per destination
// wins) and wakes the thread, which commits everything pending in one LMDB
// transaction, synchronously (see docs/design.md, "Destination state").
// Records handed over while a commit runs go into the next one.
#pragma once

#include "cqmgr/state/store.hpp"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace cqmgr::qmgr {

class StateWriter {
  public:
    explicit StateWriter(std::unique_ptr<state::Store> store);
    ~StateWriter();
    StateWriter(const StateWriter&) = delete;
    StateWriter& operator=(const StateWriter&) = delete;

    // Hands over changed records; returns at once.
    void submit(std::vector<state::DestinationRecord> records);
    // Waits until everything submitted so far is committed (or failed).
    void drain();
    // Commits what is pending, then stops the thread (idempotent).
    void finish();
    // The warnings the thread has to report since the last call (commit
    // failures, once per run of failures, and the recovery after them).
    std::vector<std::string> take_warnings();
    // Commits done and records written since the start.
    size_t commits() const;
    size_t written() const;

  private:
    void run();

    std::unique_ptr<state::Store> store_;
    mutable std::mutex mu_;
    std::condition_variable wake_, idle_;
    std::unordered_map<std::string, state::DestinationRecord> pending_;
    bool busy_ = false;
    bool stop_ = false;
    bool exited_ = false; // the thread has ended
    size_t failures_ = 0; // commits failed in a row
    size_t commits_ = 0;
    size_t written_ = 0;
    std::vector<std::string> warnings_;
    std::thread thread_;
};

} // namespace cqmgr::qmgr
