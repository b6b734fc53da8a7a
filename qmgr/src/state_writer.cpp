#include "state_writer.hpp"

#include <utility>

namespace cqmgr::qmgr {

StateWriter::StateWriter(std::unique_ptr<state::Store> store)
    : store_(std::move(store)), thread_([this] { run(); }) {}

StateWriter::~StateWriter() {
    finish();
}

void StateWriter::submit(std::vector<state::DestinationRecord> records) {
    {
        std::lock_guard lock(mu_);
        for (auto& r : records) {
            std::string key = state::record_key(r.transport, r.destination);
            pending_.insert_or_assign(std::move(key), std::move(r));
        }
    }
    wake_.notify_one();
}

void StateWriter::drain() {
    std::unique_lock lock(mu_);
    idle_.wait(lock, [this] { return (pending_.empty() && !busy_) || exited_; });
}

bool StateWriter::drain_for(std::chrono::milliseconds limit) {
    std::unique_lock lock(mu_);
    return idle_.wait_for(lock, limit, [this] { return (pending_.empty() && !busy_) || exited_; });
}

void StateWriter::finish() {
    {
        std::lock_guard lock(mu_);
        if (stop_) return;
        stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

std::vector<std::string> StateWriter::take_warnings() {
    std::lock_guard lock(mu_);
    return std::exchange(warnings_, {});
}

size_t StateWriter::commits() const {
    std::lock_guard lock(mu_);
    return commits_;
}

size_t StateWriter::written() const {
    std::lock_guard lock(mu_);
    return written_;
}

void StateWriter::run() {
    std::unique_lock lock(mu_);
    for (;;) {
        wake_.wait(lock, [this] { return stop_ || !pending_.empty(); });
        if (pending_.empty()) break; // stopping, and nothing left
        state::Store::Batch batch;
        batch.puts.reserve(pending_.size());
        for (auto& [key, r] : pending_)
            batch.puts.push_back(std::move(r));
        pending_.clear();
        busy_ = true;
        lock.unlock();
        std::string error;
        bool ok = store_->apply(batch, error);
        lock.lock();
        busy_ = false;
        if (ok) {
            commits_++;
            written_ += batch.puts.size();
            if (failures_ > 0)
                warnings_.push_back("state: " + store_->path() + ": written again after " +
                                    std::to_string(failures_) + " failed commits");
            failures_ = 0;
        } else if (failures_++ == 0) {
            // The records of a failed commit are dropped: the state is
            // advice, and the next change of each destination writes it
            // again.
            warnings_.push_back("state: " + store_->path() + ": " + error +
                                "; changes are not kept until writes succeed again");
        }
        if (pending_.empty()) idle_.notify_all();
    }
    exited_ = true;
    idle_.notify_all();
}

} // namespace cqmgr::qmgr
